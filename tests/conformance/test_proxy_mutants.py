"""Seeded bugs in the recording and replay tools (SPEC R-REC), each caught by the Python tests.

The catalogue in conformance/mutants/ is judged by conformance cases through an adapter. The
R-REC requirements are pending there (the proxy, the replay server and the pytest plugin are
tools of the suite, not behaviour of an implementation), so their seeded bugs live in
conformance/mutants/pytest/: the same edit format, with ``tests`` naming the pytest tests that
must fail instead of ``kills``. The project is copied once; the named tests must pass on the
unmutated copy (the baseline), and each bug is applied to it in turn, its tests run in a child
pytest process, and the file restored.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance._cases import PROJECT_ROOT
from conformance._mutants import _apply, _copy_project, _Edit

MUTANTS_DIR = PROJECT_ROOT / "conformance" / "mutants" / "pytest"
MUTANTS = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(MUTANTS_DIR.glob("*.json"))}
HIDDEN = ("PYTHONSAFEPATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def pytest_run(copy: Path, tests: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    env.update(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf", *tests],
        check=False, cwd=copy, env=env, capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the project whose listed tests pass before any bug is seeded."""
    target = tmp_path_factory.mktemp("project")
    _copy_project(PROJECT_ROOT, target)
    skipped = shutil.ignore_patterns("__pycache__")
    shutil.copytree(PROJECT_ROOT / "tests", target / "tests", ignore=skipped)
    shutil.copy(PROJECT_ROOT / "pyproject.toml", target)
    listed = sorted({test for mutant in MUTANTS.values() for test in mutant["tests"]})
    baseline = pytest_run(target, listed)
    assert baseline.returncode == 0, f"the listed tests fail without any bug:\n{baseline.stdout}"
    yield target


def test_every_r_rec_requirement_has_a_seeded_bug() -> None:
    cited = {mutant["description"].partition(":")[0] for mutant in MUTANTS.values()}
    assert {f"R-REC-{n}" for n in range(1, 8)} <= cited  # bugs of other pending requirements (R-ERR-7) live here too


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_python_tests_catch_the_seeded_bug(name: str, copy: Path) -> None:
    mutant: dict[str, Any] = MUTANTS[name]
    assert set(mutant) == {"id", "description", "file", "find", "replace", "tests"}
    assert mutant["id"] == name
    original = (copy / mutant["file"]).read_text(encoding="utf-8")
    _apply([_Edit(mutant["file"], mutant["find"], mutant["replace"])], copy)
    try:
        result = pytest_run(copy, mutant["tests"])
    finally:
        (copy / mutant["file"]).write_text(original, encoding="utf-8")
    surviving = [test for test in mutant["tests"] if f"FAILED {test}" not in result.stdout]
    assert result.returncode == 1 and not surviving, f"{name} survives:\n{result.stdout}"
