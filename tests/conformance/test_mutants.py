"""The mutant runner on a toy project: killed, weak, survived and broken mutants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance import load_cases
from conformance._cli import main
from conformance.mutation._mutants import BaselineError, run_mutants

from .toy import toy_suite, write_json

TOY_PACKAGE = '''"""A toy implementation of format_token_count below 1000."""


def fmt(n: int) -> str:
    return str(n)
'''

# The toy reference adapter: the fakes' protocol loop, answering from the toy package.
TOY_ADAPTER = """import json
import sys

from harness9_ref import fmt

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    if request["cmd"] == "start":
        reply = {"protocol": 1, "implementation": {"name": "toy", "version": "0", "language": "python"},
                 "ops": ["format_token_count"]}
    else:
        reply = {"seq": request["seq"], "output": fmt(request["input"]["n"])}
    print(json.dumps(reply), flush=True)
"""


def mutant(mutant_id: str, kills: list[str], **edit: Any) -> dict[str, Any]:
    return {"id": mutant_id, "description": f"the {mutant_id} mistake", "kills": kills, **edit}


def single(find: str, replace: str, file: str = "harness9_ref/__init__.py") -> dict[str, str]:
    return {"file": file, "find": find, "replace": replace}


def make_project(root: Path) -> Path:
    (root / "harness9_ref").mkdir(parents=True)
    (root / "harness9_ref" / "__init__.py").write_text(TOY_PACKAGE, encoding="utf-8")
    (root / "conformance").mkdir()
    (root / "conformance" / "__init__.py").write_text("", encoding="utf-8")
    (root / "conformance" / "reference_adapter.py").write_text(TOY_ADAPTER, encoding="utf-8")
    toy_suite(root / "conformance" / "cases")
    return root


MUTANTS = {
    "off-by-one": mutant("off-by-one", ["AAAAA1", "AAAAA3"], **single("str(n)", "str(n + 1)")),
    "two-edits": mutant(
        "two-edits",
        ["AAAAA2"],
        edits=[single("str(n)", "str(n) + '!'"), single("return", "return '' +")],
    ),
    "only-seven": mutant(
        "only-seven", ["AAAAA1", "AAAAA2"], **single("str(n)", "str(n) if n != 7 else '8'")
    ),
    "unlisted-seven": mutant(
        "unlisted-seven", ["AAAAA1"], **single("str(n)", "str(n) if n != 7 else '8'")
    ),
    "harmless": mutant("harmless", ["AAAAA1"], **single("str(n)", "f'{n}'")),
    "stale": mutant("stale", ["AAAAA1"], **single("repr(n)", "str(n)")),
    "ambiguous": mutant("ambiguous", ["AAAAA1"], **single("n", "m")),
    "no-file": mutant("no-file", ["AAAAA1"], **single("x", "y", "harness9_ref/nope.py")),
    "outside": mutant("outside", ["AAAAA1"], **single("x", "y", "conformance/../../x.py")),
    "unknown-kill": mutant("unknown-kill", ["ZZZZZ9"], **single("str(n)", "str(n + 1)")),
    "no-kills": mutant("no-kills", [], **single("str(n)", "str(n + 1)")),
    "both-forms": mutant(
        "both-forms", ["AAAAA1"], edits=[single("str(n)", "1")], **single("str(n)", "1")
    ),
    "syntax-error": mutant("syntax-error", ["AAAAA1"], **single("return", "retur")),
}

EXPECTED = {
    "off-by-one": ("killed", "caught by AAAAA1, AAAAA3"),
    "two-edits": ("killed", "caught by AAAAA2"),
    "only-seven": ("weak", "listed AAAAA1 passed; caught only by AAAAA2"),
    "unlisted-seven": ("weak", "listed AAAAA1 passed; caught only by AAAAA2"),
    "harmless": ("survived", "no case fails"),
    "stale": ("broken", "the find text occurs 0 times, expected exactly once"),
    "ambiguous": ("broken", "the find text occurs 8 times"),
    "no-file": ("broken", "harness9_ref/nope.py: no such file in the project copy"),
    "outside": ("broken", "conformance/../../x.py: outside the project copy"),
    "unknown-kill": ("broken", "kills names cases that do not exist: ZZZZZ9"),
    "no-kills": ("broken", "/kills: expected at least 1 items"),
    "both-forms": ("broken", "matches 2 of the oneOf alternatives"),
    "syntax-error": ("broken", "the patched reference adapter does not start"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("toy"))
    for name, data in MUTANTS.items():
        write_json(root / "conformance" / "mutants" / f"{name}.json", data)
    (root / "conformance" / "mutants" / "garbled.json").write_text("{", encoding="utf-8")
    return root


def test_mutants_are_judged_one_line_each_then_counted(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Even with the original project on the path and the working directory kept off it, the
    # adapter must import the patched copy.
    monkeypatch.setenv("PYTHONPATH", str(project))
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    assert main(["mutants", "--root", str(project), "--timeout", "5"]) == 1
    *lines, summary = capsys.readouterr().out.splitlines()
    judged = {line.split(": ", 1)[0]: line.split(": ", 2)[1:] for line in lines}
    assert judged.pop("garbled")[0] == "broken"
    assert judged.keys() == EXPECTED.keys()
    for name, (status, detail) in EXPECTED.items():
        assert judged[name][0] == status, (name, judged[name])
        assert detail in judged[name][1], (name, judged[name])
    assert summary == "2 killed, 1 survived, 2 weak, 9 broken"


def test_only_runs_one_mutant_and_succeeds_when_it_is_killed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mutants", "--root", str(project), "--only", "off-by-one"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "off-by-one: killed: caught by AAAAA1, AAAAA3",
        "1 killed, 0 survived, 0 weak, 0 broken",
    ]


def test_only_naming_no_mutant_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mutants", "--root", str(project), "--only", "nope"]) == 2
    assert "no mutant in" in capsys.readouterr().err


def test_a_project_that_already_fails_cases_judges_no_mutant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path)
    package = root / "harness9_ref" / "__init__.py"
    package.write_text(TOY_PACKAGE.replace("str(n)", "str(-n)"), encoding="utf-8")
    write_json(root / "conformance" / "mutants" / "m.json", MUTANTS["off-by-one"])
    assert main(["mutants", "--root", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "3 cases fail without any mutant" in captured.err
    assert "AAAAA1 (fmt/n-5)" in captured.err


def test_missing_mutants_directory_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path)
    assert main(["mutants", "--root", str(root)]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_the_targeted_scope_gives_the_full_scopes_verdicts_when_the_cases_share_a_requirement(project: Path) -> None:
    # Every toy case cites R-FMT-1, so the targeted scope tries the same cases as the full one.
    cases = load_cases(project / "conformance" / "cases")
    mutants = project / "conformance" / "mutants"
    full = run_mutants(project, mutants, cases, timeout=5)
    targeted = run_mutants(project, mutants, cases, timeout=5, scope="targeted")
    judged = [(r.id, r.status, r.detail) for r in full if r.status != "broken"]  # a broken one names its temporary copy
    assert [(r.id, r.status, r.detail) for r in targeted if r.status != "broken"] == judged
    assert [r.id for r in targeted if r.status == "broken"] == [r.id for r in full if r.status == "broken"]
    assert {r.id: r.status for r in full if r.id in EXPECTED} == {k: v[0] for k, v in EXPECTED.items()}


def test_the_targeted_scope_checks_the_baseline_only_for_cases_that_catch_a_mutant(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    package = root / "harness9_ref" / "__init__.py"
    package.write_text(TOY_PACKAGE.replace("str(n)", "str(n) if n != 9 else '?'"), encoding="utf-8")  # AAAAA3 fails
    mutants = root / "conformance" / "mutants"
    write_json(mutants / "m.json", mutant("m", ["AAAAA1"], **single("str(n)", "str(n + 1)")))
    cases = load_cases(root / "conformance" / "cases")
    with pytest.raises(BaselineError):
        run_mutants(root, mutants, cases, timeout=5)
    (killed,) = run_mutants(root, mutants, cases, timeout=5, scope="targeted")
    assert (killed.status, killed.detail) == ("killed", "caught by AAAAA1")
    write_json(mutants / "m.json", mutant("m", ["AAAAA3"], **single("str(n)", "str(n + 1)")))
    with pytest.raises(BaselineError) as raised:
        run_mutants(root, mutants, cases, timeout=5, scope="targeted")
    assert raised.value.failures == ["AAAAA3 (fmt/n-9)"]
