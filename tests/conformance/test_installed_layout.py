"""The runner works from the package as a wheel installs it, from any folder.

A wheel has no project root: ``fixtures/`` and ``SPEC.md`` travel inside ``conformance/``
(setup.py copies them there). Here the project is built by setuptools' own ``build_py`` (the
step that lays out what the wheel holds) from a copy of the checkout, and the runner is run on
that layout alone, without site-packages (``-S``: not even this checkout's editable install),
from a folder that is no part of either.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import PROJECT_ROOT
from conformance.runner._backends import POSTGRES_ENV

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: whole programs of the suite's tooling

# What the build reads: the packages, the files setup.py ships, the metadata's files.
SOURCES = ("harness9_ref", "conformance", "fixtures", "SPEC.md", "README.md", "LICENSE", "pyproject.toml", "setup.py")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source, lib = tmp_path_factory.mktemp("checkout"), tmp_path_factory.mktemp("site")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        path = PROJECT_ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copyfile(path, source / name)
    built = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=source, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return lib


def _conformance(lib: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Without site-packages there is no psycopg: a server given for other tests is not this run's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != POSTGRES_ENV}
    env["PYTHONPATH"] = str(lib)
    return subprocess.run(
        [sys.executable, "-S", "-m", "conformance", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_the_layout_carries_fixtures_and_spec(installed: Path) -> None:
    assert (installed / "conformance" / "fixtures" / "providers" / "anthropic" / "cache-hit" / "exchange.json").is_file()
    assert (installed / "conformance" / "fixtures" / "sessions" / "reference-v1.db").is_file()
    assert (installed / "conformance" / "SPEC.md").is_file()
    assert not (installed / "fixtures").exists()


def test_cases_that_need_fixtures_run_from_any_folder(installed: Path, tmp_path: Path) -> None:
    done = _conformance(
        installed, tmp_path, "run", "-v",
        "--filter", "parse_anthropic/cache-hit-whole", "--filter", "call_anthropic/cache-hit-whole",
        "--filter", "sessions/get-limit-reads-only-its-rows", "--filter", "format/n-1000",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored" in done.stdout
    assert str(PROJECT_ROOT) not in done.stdout


def test_lint_and_show_from_any_folder(installed: Path, tmp_path: Path) -> None:
    linted = _conformance(installed, tmp_path, "lint")
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "no problem found" in linted.stdout
    shown = _conformance(installed, tmp_path, "show", "sessions/get-limit-reads-only-its-rows")
    assert shown.returncode == 0, shown.stderr
    assert str(installed / "conformance" / "cases" / "sessions") in shown.stdout


def test_without_fixtures_the_runner_says_where_it_looked(installed: Path, tmp_path: Path) -> None:
    lib = tmp_path / "site"
    shutil.copytree(installed, lib, ignore=shutil.ignore_patterns("fixtures"))
    done = _conformance(lib, tmp_path, "run", "--filter", "parse_anthropic/cache-hit-whole")
    assert done.returncode == 2
    looked = f"{lib / 'fixtures'} and {lib / 'conformance' / 'fixtures'}"
    assert done.stderr == (
        f"error: the cases need the fixtures folder, found in neither {looked}; run from a checkout "
        "of the project or install it from a wheel built by its setup.py\n"
    )
    assert done.stdout == ""
    assert _conformance(lib, tmp_path, "run", "--filter", "format/n-1000").returncode == 0
