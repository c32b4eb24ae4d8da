"""``mutants --auto``: AST mutant generation on a sample source, and one tiny run on a toy project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import PROJECT_ROOT
from conformance._cli import main
from conformance.mutation._automut import (
    EQUIVALENT_FILE,
    _selected,
    find_mutants,
    load_equivalents,
    mutants_of_source,
    sample,
)

from .test_mutants import make_project

SAMPLE = '''"""A sample module: 1 docstring, 2 numbers in it."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    LIMIT_TYPE = 3

LIMIT = 10


def grow(n: int, flag: bool = False) -> int:
    assert n >= 0
    if n < LIMIT and flag:  # é < ü
        n += len("é") * n
    while not flag:
        flag = n != 3
    return n // 2 if n is not None else n


def has(items: list[str], text: str) -> bool:
    return "x" + text in items


def name(text: str) -> str | None:
    return text
'''

EXPECTED = {
    "<module>:int+1:1": "LIMIT = 11",
    "<module>:int-1:1": "LIMIT = 9",
    "grow:not-if:1": "if not (n < LIMIT and flag):  # é < ü",
    "grow:and-or:1": "if n < LIMIT or flag:  # é < ü",
    "grow:lt-le:1": "if n <= LIMIT and flag:  # é < ü",
    "grow:iadd-isub:1": 'n -= len("é") * n',
    "grow:mul-floordiv:1": 'n += len("é") // n',
    "grow:not-while:1": "while flag:",
    "grow:ne-eq:1": "flag = n == 3",
    "grow:int+1:1": "flag = n != 4",
    "grow:int-1:1": "flag = n != 2",
    "grow:return-empty:1": "return 0",
    "grow:not-ifexp:1": "return n // 2 if not (n is not None) else n",
    "grow:isnot-is:1": "return n // 2 if n is None else n",
    "grow:floordiv-mul:1": "return n * 2 if n is not None else n",
    "grow:int+1:2": "return n // 3 if n is not None else n",
    "grow:int-1:2": "return n // 1 if n is not None else n",
    "has:return-not:1": 'return not ("x" + text in items)',
    "has:in-notin:1": 'return "x" + text not in items',
    "name:return-none:1": "return None",
}


def test_every_operator_applies_where_it_fits_and_nowhere_else() -> None:
    # Not in the docstring, annotations, defaults that are bools, asserts, TYPE_CHECKING
    # blocks, nor "x" + text (a TypeError, not a porting mistake).
    mutants = mutants_of_source(SAMPLE, "harness9_ref/sample.py")
    assert {m.key.removeprefix("sample.py:"): m.after for m in mutants} == EXPECTED
    assert all(m.file == "harness9_ref/sample.py" and m.module == "sample" for m in mutants)


def test_the_rest_of_the_file_stays_byte_identical() -> None:
    lines = SAMPLE.split("\n")
    for mutant in mutants_of_source(SAMPLE, "harness9_ref/sample.py"):
        changed = mutant.source.split("\n")
        assert len(changed) == len(lines)
        assert [i for i, (a, b) in enumerate(zip(lines, changed)) if a != b] == [mutant.line - 1]
        assert mutant.before == lines[mutant.line - 1].strip()


def test_asking_for_keys_gives_exactly_those_mutants() -> None:
    mutants = mutants_of_source(SAMPLE, "harness9_ref/sample.py")
    chosen = mutants[::3]
    keys = {m.key for m in chosen} | {"sample.py:grow:no-such-operator:1"}
    assert mutants_of_source(SAMPLE, "harness9_ref/sample.py", keys) == chosen


def test_sampling_is_deterministic_by_seed_and_keeps_file_order() -> None:
    mutants = mutants_of_source(SAMPLE, "harness9_ref/sample.py")
    first = sample(mutants, 5, 1)
    assert first == sample(mutants, 5, 1)
    assert len(first) == 5 and first == [m for m in mutants if m in first]
    assert {tuple(m.key for m in sample(mutants, 5, seed)) for seed in range(6)} != {
        tuple(m.key for m in first)
    }
    assert sample(mutants, None, 0) == sample(mutants, 99, 0) == mutants


def test_module_selection_leaves_out_the_ui_the_command_line_and_test_helpers() -> None:
    assert _selected("memory/context/_tokens.py", None)
    assert not _selected("tui/_app.py", None) and not _selected("cli/_run_prompt.py", ["*"])
    assert not _selected("testing.py", None) and not _selected("offline.py", ["*"])
    # The PostgreSQL store only when a server is given: no case runs it otherwise.
    assert _selected("memory/storage/_pg_db.py", None)
    assert not _selected("memory/storage/_pg_db.py", ["memory"], postgres=False)
    assert _selected("memory/storage/_sqlite_db.py", ["memory"], postgres=False)


def test_functions_no_op_calls_are_left_out_and_their_neighbours_kept() -> None:
    scopes = {m.key.split(":")[1] for m in find_mutants(PROJECT_ROOT, ["text/_report.py"])}
    assert "run_error" in scopes and "compaction_notice" in scopes
    assert "without_type_name" not in scopes  # an internal error's wording: no case can stage one
    # The AGENTS.md files are found by the program the cli op runs (R-INST-1): drawn.
    scopes = {m.key.split(":")[1] for m in find_mutants(PROJECT_ROOT, ["engine/_instructions.py"])}
    assert {"find_instruction_files", "read_instruction_file", "instruction_from_bytes"} <= scopes
    assert _selected("provider/openai/_stream.py", ["provider"])
    assert _selected("provider/openai/_stream.py", ["provider/openai/*"])
    assert not _selected("memory/context/_tokens.py", ["schema", "engine"])


def test_equivalents_need_a_reason_and_name_existing_mutants(tmp_path: Path) -> None:
    path = tmp_path / "equivalent.txt"
    path.write_text("# comment\n\na:b:c:1  same either way\n", encoding="utf-8")
    assert load_equivalents(path) == {"a:b:c:1": "same either way"}
    path.write_text("a:b:c:1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="without a reason"):
        load_equivalents(path)
    listed = load_equivalents(PROJECT_ROOT / EQUIVALENT_FILE)
    keys = {m.key for m in find_mutants(PROJECT_ROOT, keys=listed)}
    assert not set(listed) - keys, "stale entries in conformance/mutants/equivalent.txt"


TOY = '''"""A toy implementation of format_token_count below 1000."""


def fmt(n: int) -> str:
    if n < 0:
        return "-" + str(-n)
    return str(n)
'''

# Every mutant of TOY, and its fate against the toy cases (n = 5, 7, 9).
TOY_FATES = {
    "__init__.py:fmt:not-if:1": "killed",
    "__init__.py:fmt:lt-le:1": "survived",
    "__init__.py:fmt:int+1:1": "survived",
    "__init__.py:fmt:int-1:1": "survived",
    "__init__.py:fmt:return-empty:1": "survived",
    "__init__.py:fmt:return-empty:2": "killed",
}


def test_a_tiny_sampled_run_reports_rates_survivors_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path)
    (root / "harness9_ref" / "__init__.py").write_text(TOY, encoding="utf-8")
    assert {m.key for m in find_mutants(root)} == set(TOY_FATES)
    (root / EQUIVALENT_FILE).parent.mkdir(parents=True)
    (root / EQUIVALENT_FILE).write_text(
        "__init__.py:fmt:int-1:1  n < -1 and n < 0 differ only for n = -1, not counted here\n",
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    argv = ["mutants", "--auto", "--root", str(root), "--sample", "3", "--seed", "1"]
    assert main([*argv, "--workers", "2", "--timeout", "5", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    drawn = [m.key for m in sample(find_mutants(root), 3, 1)]
    run = [key for key in drawn if key != "__init__.py:fmt:int-1:1"]
    assert out.startswith(f"3 of 6 mutants (seed 1); {3 - len(run)} of them known equivalents")
    data = json.loads(report.read_text(encoding="utf-8"))
    judged = {m["key"]: m["status"] for m in data["mutants"]}
    assert list(judged) == run and judged == {key: TOY_FATES[key] for key in run}
    killed = sum(status == "killed" for status in judged.values())
    assert data["overall"]["kill_rate"] == pytest.approx(killed / len(run))
    assert f"overall: kill rate {killed / len(run):.1%}" in out
    for key, status in judged.items():
        assert (f"[{key}]" in out) == (status == "survived")


def test_auto_flags_need_auto_and_the_catalogue_flags_do_not_mix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mutants", "--sample", "3"]) == 2
    assert "need --auto" in capsys.readouterr().err
    assert main(["mutants", "--postgres", "postgresql://u@/db"]) == 2
    assert "need --auto" in capsys.readouterr().err
    assert main(["mutants", "--auto", "--only", "x"]) == 2
    assert "do not apply" in capsys.readouterr().err
