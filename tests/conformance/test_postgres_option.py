"""``--postgres`` (and its environment variable) is checked before any case runs (R-PG-2).

The runner is standard library only; only this option needs psycopg, so a missing driver or a
server that cannot be reached must be one line and exit status 2, never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance._cli import main
from conformance.runner._backends import POSTGRES_ENV
from conformance.runner._cases import PROJECT_ROOT

NOWHERE = "postgresql://u@/db?host=/nonexistent-h9-socket-folder"
WITHOUT_PSYCOPG = "import sys; sys.modules['psycopg'] = None; from conformance._cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("command", [["run", "--filter", "sessions/*"], ["mutants", "--auto", "--sample", "1"]])
def test_without_psycopg_the_option_is_one_line(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_PSYCOPG, *command, "--postgres", NOWHERE],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 2
    assert result.stderr == "error: running the session cases on PostgreSQL needs psycopg: pip install 'psycopg[binary]'\n"


def test_an_unreachable_server_from_the_environment_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")
    monkeypatch.setenv(POSTGRES_ENV, NOWHERE)
    assert main(["run", "--filter", "sessions/*", "--report", "json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot reach the PostgreSQL server of --postgres or ${POSTGRES_ENV}: ")
    assert err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()
