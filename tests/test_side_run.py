"""The second pytest process of tests/side_run.py: its tests are reported as if run here."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import PROJECT_ROOT
from tests import forks
from tests.side_run import ITEMS_ENV, OPT_OUT_ENV, REPORTS_ENV

CONFTEST = """
from tests import side_run

def pytest_configure(config):
    side_run.configure(config, ("test_side.py",))
"""
SIDE = """
import os, pytest

def test_passes():
    assert os.environ["H9_SIDE_REPORTS"]  # it runs in the second process

def test_fails():
    assert 1 == 2, "seeded failure"

@pytest.mark.skip(reason="seeded skip")
def test_skipped():
    pass

@pytest.mark.parametrize("text", ["a b", "tab\\there", "line\\nbreak"])
def test_odd_ids(text):
    assert text
"""
MAIN = """
import os

def test_here():
    assert "H9_SIDE_REPORTS" not in os.environ
"""


def run(project: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    inherited = {k: v for k, v in os.environ.items() if k not in (ITEMS_ENV, REPORTS_ENV, OPT_OUT_ENV)}
    environment = {**inherited, "PYTHONPATH": str(PROJECT_ROOT), **env}
    forked = forks.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "--junitxml", "junit.xml", "-o",
         "junit_family=xunit2", *args],
        project, environment, timeout=120, preload=forks.pytest_modules(),
    )
    done = subprocess.CompletedProcess(forked.args, forked.returncode, forked.stdout.decode(), forked.stderr.decode())
    outcomes = {}
    for case in ET.parse(project / "junit.xml").iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "skipped", "error")]
        outcomes[case.get("name", "")] = kinds[0] if kinds else "passed"
    return done, outcomes


@pytest.mark.parametrize("paths", [(), ("test_main.py", "test_side.py")], ids=["started-early", "given-paths"])
def test_side_tests_are_reported_in_their_place_with_their_outcomes(tmp_path: Path, paths: tuple[str, ...]) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_side.py").write_text(SIDE, encoding="utf-8")
    (tmp_path / "test_main.py").write_text(MAIN, encoding="utf-8")
    done, outcomes = run(tmp_path, *paths)
    assert done.returncode == 1
    assert "1 failed, 5 passed, 1 skipped" in done.stdout
    assert "seeded failure" in done.stdout and "seeded skip" in done.stdout
    assert outcomes["test_fails"] == "failure" and outcomes["test_skipped"] == "skipped"
    assert outcomes["test_passes"] == "passed" and outcomes["test_here"] == "passed"
    assert outcomes["test_odd_ids[line\\nbreak]"] == "passed"

    alone, _ = run(tmp_path, **{OPT_OUT_ENV: "1"})  # everything in one process: test_passes fails
    assert "2 failed, 4 passed, 1 skipped" in alone.stdout


def test_a_second_process_that_dies_fails_its_tests_with_its_output(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_main.py").write_text(MAIN, encoding="utf-8")
    (tmp_path / "test_side.py").write_text("import os\nif os.environ.get('H9_SIDE_REPORTS'):\n    os._exit(3)\n"
                                           "def test_gone(): pass\n", encoding="utf-8")
    done, outcomes = run(tmp_path)
    assert done.returncode == 1
    assert outcomes["test_gone"] == "failure"
    assert "the second pytest process ended without running this test" in done.stdout


def test_a_second_process_started_early_but_handed_nothing_ends_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_side.py").write_text(SIDE, encoding="utf-8")
    (tmp_path / "test_main.py").write_text(MAIN, encoding="utf-8")
    before = set(Path(tempfile.gettempdir()).glob("h9-side-*"))
    main_only, outcomes = run(tmp_path, "-k", "test_here")
    assert main_only.returncode == 0 and "1 passed, 6 deselected" in main_only.stdout
    assert outcomes == {"test_here": "passed"}
    side_only, _ = run(tmp_path, "-k", "test_passes")  # nothing left here to run beside it
    assert side_only.returncode == 1 and "1 failed, 6 deselected" in side_only.stdout
    assert set(Path(tempfile.gettempdir()).glob("h9-side-*")) <= before


def test_the_second_process_runs_its_modules_in_the_order_given(tmp_path: Path) -> None:
    """It collects them in the reverse order (tests/side_run.py), and runs them in the given one."""
    conftest = CONFTEST.replace('("test_side.py",)', '("test_side_a.py", "test_side_b.py")')
    (tmp_path / "conftest.py").write_text(conftest, encoding="utf-8")
    for name in ("a", "b"):
        (tmp_path / f"test_side_{name}.py").write_text(
            f"def test_{name}():\n    with open('ran.txt', 'a') as log:\n        log.write('{name}')\n",
            encoding="utf-8",
        )
    (tmp_path / "test_main.py").write_text(MAIN, encoding="utf-8")
    done, _ = run(tmp_path)
    assert done.returncode == 0, done.stdout
    assert (tmp_path / "ran.txt").read_text(encoding="utf-8") == "ab"


def test_in_a_whole_suite_run_the_second_process_starts_its_tests_while_the_first_collects(tmp_path: Path) -> None:
    """Nothing is left out of a whole-suite run, so the second process does not wait for the list."""
    conftest = CONFTEST + """
import os, time

def pytest_collection_modifyitems(items):
    if not os.environ.get("H9_SIDE_REPORTS"):  # the first process: wait here for the second's test
        deadline = time.monotonic() + 20
        while not os.path.exists("ran.txt") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert os.path.exists("ran.txt"), "the second process ran nothing before this one's list"
"""
    (tmp_path / "conftest.py").write_text(conftest, encoding="utf-8")
    (tmp_path / "test_side.py").write_text("def test_side():\n    open('ran.txt', 'w').close()\n", encoding="utf-8")
    (tmp_path / "test_main.py").write_text(MAIN, encoding="utf-8")
    done, outcomes = run(tmp_path)
    assert done.returncode == 0, done.stdout
    assert outcomes == {"test_side": "passed", "test_here": "passed"}
