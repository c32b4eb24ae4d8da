"""The package works without curses; only the screen module imports it (SPEC R-TUI-13)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "harness9_ref"
BLOCK_CURSES = "import sys; sys.modules['curses'] = None; sys.modules['_curses'] = None; "


def python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS9_HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLM_MODEL"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=False
    )


def test_only_the_screen_module_imports_curses() -> None:
    importers = sorted(
        str(path.relative_to(ROOT))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^\s*(import curses|from curses\b)", path.read_text(encoding="utf-8"), re.M)
    )
    assert importers == ["harness9_ref/tui/_screen.py"]


def test_importing_the_ui_and_cli_packages_does_not_import_curses(tmp_path: Path) -> None:
    code = "import sys, harness9_ref.tui, harness9_ref.cli, harness9_ref.__main__; print('curses' in sys.modules)"
    result = python(code, tmp_path)
    assert (result.returncode, result.stdout.strip(), result.stderr) == (0, "False", "")


def test_without_curses_the_ui_says_so_in_one_line_and_exits_1(tmp_path: Path) -> None:
    result = python(
        BLOCK_CURSES + "from harness9_ref.cli import main; raise SystemExit(main(['--provider', 'offline']))", tmp_path
    )
    assert result.returncode == 1
    assert result.stderr == (
        "harness9-ref: error: the terminal UI needs the curses module, which this Python does not have; "
        "'harness9-ref run PROMPT' works without it\n"
    )
    assert not (tmp_path / "home" / "sessions.db").exists()  # it failed before creating anything


def test_without_curses_run_still_works(tmp_path: Path) -> None:
    code = (
        BLOCK_CURSES
        + "from harness9_ref.cli import main; raise SystemExit(main(['--provider', 'offline', 'run', 'hi']))"
    )
    result = python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('Offline reply to "hi".')
    assert result.stderr.startswith("session: ")
