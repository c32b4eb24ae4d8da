"""Seeded bugs of pending requirements (SPEC R-REC, R-PG, R-CASE, R-RUN, R-PROF, R-MTX, R-FORK, R-INST, R-APPR):
their catalogue is complete.

The bugs live in conformance/mutants/pytest/; ``python -m conformance mutants --catalogue all``,
a step of CI, judges that the Python tests they name catch each one
(conformance/mutation/_pytest_mutants.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance._cli import main
from conformance.mutation._mutant_copy import Edit, patched
from conformance.mutation._pytest_mutants import PYTEST_DIR, load_catalogue
from conformance.runner._cases import PROJECT_ROOT, defined_requirement_ids, read_id_list

from .test_mutants import MUTANTS as MUTANT_CASES
from .test_mutants import make_project
from .toy import write_json

MUTANTS = load_catalogue(PROJECT_ROOT / "conformance" / "mutants" / PYTEST_DIR)

# Families whose pending requirements must each have a seeded bug here.
FAMILIES = ("R-REC-", "R-PG-", "R-RUN-", "R-PROF-", "R-MTX-", "R-FORK-", "R-INST-", "R-APPR-", "R-LANG-")


def test_every_pending_requirement_of_these_families_has_a_seeded_bug() -> None:
    cited = {mutant["description"].partition(":")[0] for mutant in MUTANTS.values()}
    defined = defined_requirement_ids(PROJECT_ROOT / "SPEC.md")
    assert cited <= set(defined)
    pending = read_id_list(PROJECT_ROOT / "conformance" / "pending.txt")
    assert {r for r in pending if r.startswith(FAMILIES)} <= cited
    # The catalogue judges R-PG's cases on SQLite only, so every R-PG requirement has its bug
    # in the PostgreSQL code here too.
    assert {r for r in defined if r.startswith("R-PG-")} <= cited


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_seeded_bug_is_well_formed_and_applies_once(name: str) -> None:
    mutant: dict[str, Any] = MUTANTS[name]
    assert set(mutant) == {"id", "description", "file", "find", "replace", "tests"}
    assert mutant["id"] == name
    text = (PROJECT_ROOT / mutant["file"]).read_text(encoding="utf-8")
    patched(Edit(mutant["file"], mutant["find"], mutant["replace"]), text)  # Broken unless it applies once
    for test in mutant["tests"]:
        path, _, name = test.partition("::")
        assert (PROJECT_ROOT / path).is_file(), test
        function = name.split("::")[-1].split("[")[0]  # a class's test or a parametrized one: its function
        assert f"def {function}(" in (PROJECT_ROOT / path).read_text(encoding="utf-8"), test


TOY_TESTS = """from harness9_ref import fmt


def test_fmt() -> None:
    assert fmt(5) == "5"


def test_skipped() -> None:
    import pytest

    pytest.skip("never runs")
"""


def by_tests(mutant_id: str, tests: list[str], find: str, replace: str) -> dict[str, Any]:
    return {"id": mutant_id, "description": f"the {mutant_id} mistake", "file": "harness9_ref/__init__.py",
            "find": find, "replace": replace, "tests": tests}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy project of test_mutants with a tests/ folder and both catalogues.

    Its conformance package gets the real one's subpackages: the children's pytest, with the copy
    first on its path, loads the ``h9`` plugin (conformance.traffic.pytest_plugin) from it.
    """
    root = make_project(tmp_path_factory.mktemp("toy"))
    for package in ("runner", "porting", "traffic", "mutation"):
        shutil.copytree(PROJECT_ROOT / "conformance" / package, root / "conformance" / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tests").mkdir()
    (root / "tests" / "test_toy.py").write_text(TOY_TESTS, encoding="utf-8")
    mutants = root / "conformance" / "mutants"
    write_json(mutants / "off-by-one.json", MUTANT_CASES["off-by-one"])
    write_json(mutants / "pytest" / "caught.json", by_tests("caught", ["tests/test_toy.py::test_fmt"], "str(n)", "str(n + 1)"))
    write_json(mutants / "pytest" / "uncaught.json", by_tests("uncaught", ["tests/test_toy.py::test_fmt"], "str(n)", "f'{n}'"))
    write_json(mutants / "pytest" / "skips.json", by_tests("skips", ["tests/test_toy.py::test_skipped"], "str(n)", "f'{n}'"))
    return root


@pytest.mark.tooling  # tier 2 of tests/README.md: child pytest runs
def test_only_judges_bugs_of_both_catalogues_the_pytest_ones_each_in_a_child_pytest(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mutants", "--root", str(toy), "--only", "off-by-one", "caught", "uncaught"]) == 1
    out = capsys.readouterr().out
    assert "off-by-one: killed: caught by AAAAA1" in out
    assert "uncaught survives" in out and "caught survives" not in out.replace("uncaught survives", "")
    assert out.endswith("2 of 2 seeded bugs judged by the tests, 1 problems\n")
    assert main(["mutants", "--root", str(toy), "--only", "caught"]) == 0
    assert capsys.readouterr().out == "1 of 1 seeded bugs judged by the tests, 0 problems\n"


@pytest.mark.tooling  # tier 2 of tests/README.md: child pytest runs
def test_a_named_test_that_skips_on_the_unmutated_copy_is_a_problem(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mutants", "--root", str(toy), "--catalogue", "pytest", "--only", "skips"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("a listed test skips, so it cannot fail:")
    assert out.endswith("0 of 1 seeded bugs judged by the tests, 1 problems\n")


def test_the_default_catalogue_is_the_case_judged_one(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--root", str(toy)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "off-by-one: killed: caught by AAAAA1, AAAAA3",
        "1 killed, 0 survived, 0 weak, 0 broken",
    ]


def test_without_the_projects_tests_the_pytest_catalogue_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutants = str(PROJECT_ROOT / "conformance" / "mutants")
    assert main(["mutants", "--root", str(tmp_path), "--mutants", mutants, "--catalogue", "pytest"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the pytest-judged seeded bugs need the project's tests, and ")
    assert "an installed conformance package has none" in err


def test_an_id_in_neither_catalogue_is_one_line(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--root", str(toy), "--only", "caught", "nope"]) == 2
    assert capsys.readouterr().err.strip().endswith("has id nope nor in " + str(toy / "conformance" / "mutants" / "pytest"))
