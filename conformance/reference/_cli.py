"""The ``cli`` op of the reference adapter: ``python -m harness9_ref`` run as a user runs it.

The runner lays out the folder and gives each command's whole environment (a private ``HOME``,
the locale, the case's variables); this op adds only what the reference needs to start at all
and no option of SPEC reads: ``PATH``, ``PYTHONPATH`` (the package this adapter runs) and
``PYTHONUTF8`` (its streams are UTF-8 whatever locale a case names, R-CLI-26). A database a
case prepares with session steps is written first, through this adapter's own ``session`` op.
conformance/PORTING.md describes the op.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import harness9_ref
from conformance.reference._memory import InvalidInput
from conformance.reference._session import op_session

__all__ = ["op_cli"]

# The folder this adapter imported harness9_ref from, links not resolved: a seeded bug's copy of
# the project links its unedited files to a template, and the program must run the copy's code.
PACKAGE_ROOT: Final = Path(harness9_ref.__file__).parent.parent
# Passed on from the adapter's own environment: where programs are, and (in a seeded bug's copy)
# that no bytecode is written through its links.
INHERITED: Final = ("PATH", "PYTHONDONTWRITEBYTECODE")
PROGRAM: Final = (sys.executable, "-m", "harness9_ref")


def _prepare(inp: Mapping[str, Any]) -> None:
    """Write the case's sessions with the ``session`` op's steps; a step that fails is a broken case."""
    prepared = inp["sessions"]
    results = op_session({"database": inp["database"], "tool_results_dir": inp["tool_results_dir"], **prepared})
    failed = [(n, step) for n, step in enumerate(results["steps"]) if "error" in step]
    if failed:
        raise InvalidInput(f"the sessions' step {failed[0][0]} failed: {failed[0][1]['error']}")


def _argument(value: str | Mapping[str, str]) -> str | bytes:
    """An argument as the program receives it: text as UTF-8, ``{"hex": …}`` as those bytes (R-CLI-26)."""
    return bytes.fromhex(value["hex"]) if isinstance(value, Mapping) else value


def _run(command: Mapping[str, Any], workdir: str, timeout: float) -> dict[str, Any]:
    env = {**{name: os.environ[name] for name in INHERITED if name in os.environ},
           "PYTHONPATH": str(PACKAGE_ROOT), "PYTHONUTF8": "1", **command["env"]}
    stdin = command.get("stdin")
    with subprocess.Popen(
        [*PROGRAM, *map(_argument, command["argv"])], cwd=workdir, env=env, start_new_session=True,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as process:
        try:
            out, err = process.communicate(None if stdin is None else stdin.encode("utf-8"), timeout=timeout)
            status: int | None = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its whole group: the commands it started too
            out, err = process.communicate()
            status = None
    return {"exit": status, "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace")}


def op_cli(inp: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run each command in order in ``workdir``; one ``{"exit", "stdout", "stderr"}`` each."""
    if "sessions" in inp:
        _prepare(inp)
    timeout = float(inp["timeout"])
    return [_run(command, inp["workdir"], timeout) for command in inp["commands"]]
