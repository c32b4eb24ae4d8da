"""The runner against misbehaving fake adapters: each fault is reported and the run goes on."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from conformance import Adapter, AdapterError, SuiteResult, load_cases, run_suite
from conformance._cli import main
from conformance.runner._report import suite_ok

from .toy import case_data, fake, write_json


def run(cases_dir: Path, adapter: list[str], **options: object) -> SuiteResult:
    return run_suite(load_cases(cases_dir), adapter, **options)  # type: ignore[arg-type]


def outcomes(suite: SuiteResult) -> list[str]:
    return [result.outcome for result in suite.results]


def test_correct_adapter_passes_every_case(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("good"))
    assert outcomes(suite) == ["passed"] * 3
    assert suite_ok(suite)
    assert suite.implementation == {"name": "fake", "version": "0", "language": "python"}


def test_crash_errors_that_case_quoting_stderr_and_the_restarted_adapter_goes_on(
    cases_dir: Path, tmp_path: Path
) -> None:
    suite = run(cases_dir, fake("crash_first", str(tmp_path / "crashed")))
    assert outcomes(suite) == ["errored", "passed", "passed"]
    detail = suite.results[0].detail
    assert "adapter exited with status 3" in detail
    assert "crashing on purpose" in detail
    assert "hint:" in detail
    assert not suite_ok(suite)


def test_hang_times_out_and_the_restarted_adapter_goes_on(cases_dir: Path, tmp_path: Path) -> None:
    suite = run(cases_dir, fake("hang_first", str(tmp_path / "hung")), timeout=0.5)
    assert outcomes(suite) == ["errored", "passed", "passed"]
    assert "no answer within 0.5 s" in suite.results[0].detail
    assert "--timeout" in suite.results[0].detail


def test_wrong_seq_is_errored(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("wrong_seq"))
    assert outcomes(suite) == ["errored"] * 3
    assert "answered seq 2 to the request with seq 1" in suite.results[0].detail


def test_junk_on_stdout_is_errored(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("junk"))
    assert outcomes(suite) == ["errored"] * 3
    detail = suite.results[0].detail
    assert 'not JSON on stdout: "Loading model... done"' in detail
    assert "stderr" in detail


def test_answer_of_the_wrong_shape_is_errored(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("bad_shape"))
    assert outcomes(suite) == ["errored"] * 3
    assert "answer has none of output, error, skipped" in suite.results[0].detail


def test_skipping_adapter_skips_with_its_reason(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("skip_all"))
    assert outcomes(suite) == ["skipped"] * 3
    assert suite.results[0].detail == "not implemented yet"
    assert suite_ok(suite)


def test_undeclared_op_is_unsupported_not_passed(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("no_ops"))
    assert outcomes(suite) == ["unsupported"] * 3
    assert "does not declare op 'format_token_count'" in suite.results[0].detail


def test_wrong_answers_fail_with_the_pointer_and_both_values(cases_dir: Path) -> None:
    suite = run(cases_dir, fake("wrong"))
    assert outcomes(suite) == ["failed"] * 3
    assert suite.results[0].detail == '(root): expected "5", got "6"'


def test_expected_error_passes_on_its_code_even_without_a_message(tmp_path: Path) -> None:
    case = case_data(expect={"error": {"code": "invalid_input"}})
    write_json(tmp_path / "fmt" / "bad.json", case)
    assert outcomes(run(tmp_path, fake("error_no_message"))) == ["passed"]


def test_validate_accepts_a_well_behaved_adapter(cases_dir: Path) -> None:
    assert outcomes(run(cases_dir, fake("good"), validate=True)) == ["passed"] * 3


def test_validate_errors_a_message_that_breaks_the_protocol_schema(tmp_path: Path) -> None:
    case = case_data(expect={"error": {"code": "invalid_input"}})
    write_json(tmp_path / "fmt" / "bad.json", case)
    suite = run(tmp_path, fake("error_no_message"), validate=True)
    assert outcomes(suite) == ["errored"]
    detail = suite.results[0].detail
    assert "run response violates conformance/schema/protocol-v1/run.json#/$defs/response" in detail
    assert 'missing required key "message"' in detail


def test_adapter_speaking_another_protocol_cannot_start(cases_dir: Path) -> None:
    with pytest.raises(AdapterError, match="does not speak protocol 1"):
        run(cases_dir, fake("old_protocol"))


def test_missing_adapter_program_cannot_start(cases_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match="cannot start adapter"):
        run(cases_dir, [str(tmp_path / "no-such-adapter")])


def test_run_starts_an_adapter_that_was_not_started_and_close_stops_it() -> None:
    adapter = Adapter(fake("good"))
    response = adapter.run("format_token_count", {"n": 12})
    assert (response.kind, response.output) == ("output", "12")
    assert adapter.ops == {"format_token_count"}
    adapter.close()
    adapter.close()  # closing twice is harmless



def test_what_an_adapter_declared_is_its_start_answer_even_before_it_was_started() -> None:
    """``run_case`` judges by ``declared`` and ``backends`` first: an adapter nobody started yet
    must answer them from its handshake, never from the defaults of an adapter not yet asked."""
    adapter = Adapter(fake("porting", "own-ids"))
    try:
        assert adapter.declared.own_ids
        assert "session" in adapter.ops and "sqlite" in adapter.backends
    finally:
        adapter.close()

def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    """Exit code, stdout lines without the profiles' last line (test_profiles.py), stderr."""
    code = main(list(args))
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    if code != 2:
        assert out[-1].startswith("harness9 conformance: "), out
        out.pop()
    return code, out, captured.err


def test_cli_on_success_prints_only_the_area_line_and_the_summary(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(
        capsys, "run", "--adapter", shlex.join(fake("good")), "--cases", str(cases_dir)
    )
    assert (code, out, err) == (
        0,
        [
            "R-FMT: 1 requirement, all cases pass",
            "3 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored",
        ],
        "",
    )


def test_cli_prints_one_line_per_failure_then_the_summary(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(
        capsys, "run", "--adapter", shlex.join(fake("wrong")), "--cases", str(cases_dir)
    )
    assert code == 1
    assert out == [
        'AAAAA1 (fmt/n-5) [R-FMT-1] (root): expected "5", got "6"',
        'AAAAA2 (fmt/n-7) [R-FMT-1] (root): expected "7", got "8"',
        'AAAAA3 (fmt/n-9) [R-FMT-1] (root): expected "9", got "10"',
        "R-FMT-1: 3 of 3 cases fail (AAAAA1, AAAAA2, AAAAA3); 3 failed",
        "0 passed, 3 failed, 0 skipped, 0 unsupported, 0 errored",
    ]


def test_cli_prints_errored_cases_with_their_reason(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(
        capsys, "run", "--adapter", shlex.join(fake("wrong_seq")), "--cases", str(cases_dir)
    )
    assert code == 1
    assert out[0].startswith("AAAAA1 (fmt/n-5) [R-FMT-1] errored: answered seq 2")
    assert out[-1] == "0 passed, 0 failed, 0 skipped, 0 unsupported, 3 errored"


def test_cli_verbose_prints_every_case(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("run", "--adapter", shlex.join(fake("skip_all")), "--cases", str(cases_dir), "-v")
    code, out, _ = cli(capsys, *args)
    assert code == 0
    assert out[0] == "AAAAA1 (fmt/n-5) [R-FMT-1] skipped: not implemented yet"
    assert out[3] == "R-FMT-1: 0 of 3 cases fail; 3 skipped"
    assert len(out) == 5


@pytest.mark.parametrize(
    ("pattern", "expected"), [("AAAAA2", 1), ("fmt/n-7", 1), ("fmt/*", 3), ("AAAAA?", 3)]
)
def test_cli_filter_matches_ids_and_names(
    cases_dir: Path, capsys: pytest.CaptureFixture[str], pattern: str, expected: int
) -> None:
    args = ("run", "--adapter", shlex.join(fake("good")), "--cases", str(cases_dir))
    code, out, _ = cli(capsys, *args, "--filter", pattern)
    assert code == 0
    assert out[-1] == f"{expected} passed, 0 failed, 0 skipped, 0 unsupported, 0 errored"


def test_cli_filter_matching_nothing_is_an_error(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "run", "--cases", str(cases_dir), "--filter", "ZZZ*")
    assert (code, out) == (2, [])
    assert "no case matches --filter ZZZ*" in err


def test_known_failures_are_counted_apart(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("# port bugs\n\nAAAAA1  # off by one\n", encoding="utf-8")
    args = ("run", "--adapter", shlex.join(fake("wrong")), "--cases", str(cases_dir))
    code, out, _ = cli(capsys, *args, "--known-failures", str(known))
    assert code == 1
    assert [line.split()[0] for line in out[:-1]] == ["AAAAA2", "AAAAA3", "R-FMT-1:"]
    assert out[-1] == "0 passed, 2 failed, 0 skipped, 0 unsupported, 0 errored, 1 known failures"


def test_known_failure_that_passes_is_reported_and_fails_the_run(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("AAAAA1\n", encoding="utf-8")
    args = ("run", "--adapter", shlex.join(fake("good")), "--cases", str(cases_dir))
    code, out, _ = cli(capsys, *args, "--known-failures", str(known))
    assert code == 1
    assert out == [
        "AAAAA1 (fmt/n-5) [R-FMT-1] unexpectedly passed, remove it from the known-failures file",
        "R-FMT-1: 1 of 3 cases fails (AAAAA1); 2 passed, 1 failed",
        "2 passed, 1 failed, 0 skipped, 0 unsupported, 0 errored, 0 known failures",
    ]


def test_known_failures_only_failing_as_listed_exits_zero(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("AAAAA1\nAAAAA2\nAAAAA3\n", encoding="utf-8")
    args = ("run", "--adapter", shlex.join(fake("wrong")), "--cases", str(cases_dir))
    code, out, _ = cli(capsys, *args, "--known-failures", str(known))
    assert (code, out) == (
        0,
        [
            "R-FMT-1: 0 of 3 cases fail; 3 known failures",
            "0 passed, 0 failed, 0 skipped, 0 unsupported, 0 errored, 3 known failures",
        ],
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [("AAAAA1\nNOPE99\n", "not case ids: NOPE99"), ("AAAAA1 AAAAA2\n", "expected one id")],
)
def test_bad_known_failures_file_is_an_error(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    known = tmp_path / "known.txt"
    known.write_text(content, encoding="utf-8")
    code, out, err = cli(capsys, "run", "--cases", str(cases_dir), "--known-failures", str(known))
    assert (code, out) == (2, [])
    assert message in err


def test_broken_case_file_is_reported_as_a_bug_in_the_suite(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cases_dir / "fmt" / "broken.json").write_text("{", encoding="utf-8")
    code, out, err = cli(capsys, "run", "--cases", str(cases_dir))
    assert (code, out) == (2, [])
    assert "BUG IN TEST CASE:" in err
    assert "broken.json: invalid JSON" in err


def test_empty_case_directory_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "run", "--cases", str(tmp_path))
    assert code == 2
    assert "no cases found" in err


def test_adapter_that_cannot_start_is_an_error(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("run", "--adapter", shlex.join(fake("old_protocol")), "--cases", str(cases_dir))
    code, out, err = cli(capsys, *args)
    assert (code, out) == (2, [])
    assert "failed to start" in err
