"""``fixtures/sessions/build.py`` still builds every session fixture (fixtures/sessions/README.md).

The committed files are what cases read; the script says how each was made, and it must keep
running as the format grows (a plain ``INSERT INTO sessions VALUES`` of three values broke
when R-DB-13 added two columns). It runs on a copy, so the committed bytes are never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "sessions"


def test_the_build_script_makes_every_committed_session_fixture(tmp_path: Path) -> None:
    folder = tmp_path / "fixtures" / "sessions"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "build.py", folder / "build.py")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(folder / "build.py")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    built = {path.name for path in folder.iterdir() if path.name != "build.py"}
    assert built == {path.name for path in FIXTURES.glob("*.db")}
