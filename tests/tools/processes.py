"""Looking at real processes from the tool tests (SPEC R-TOOL-6, R-INT-1, R-INT-2).

A process counts as gone once it has exited: a zombie that its parent (often init, slow to
collect orphans in a container) has not collected yet runs nothing, so it counts as gone.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from harness9_ref.tools import Registry

__all__ = ["bash", "is_gone", "pids", "wait_for_files", "wait_gone"]


def bash(registry: Registry, command: str) -> str:
    return registry.execute("bash", json.dumps({"command": command}))


def is_gone(pid: int) -> bool:
    """True when ``pid`` has exited (a zombie nobody reaped counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if is_gone(pid):
            return True
        time.sleep(0.02)
    return is_gone(pid)


def wait_for_files(folder: Path, *names: str, seconds: float = 5.0) -> None:
    """Wait until every file exists and is not empty (a command writes its pids into them)."""
    deadline = time.monotonic() + seconds
    while not all((folder / name).is_file() and (folder / name).stat().st_size for name in names):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the command did not write {names}")
        time.sleep(0.01)


def pids(folder: Path, *names: str) -> list[int]:
    """The pids written into the files ``names`` of ``folder``, one per file."""
    return [int((folder / name).read_text(encoding="ascii")) for name in names]
