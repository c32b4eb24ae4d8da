"""The runner's tools for a porter (SPEC R-RUN): crashes as errors, traces, repeats, show, known failures."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from conformance import load_cases, run_suite
from conformance._cli import main
from conformance.runner._report import suite_ok

from .toy import case_data, fake, write_json


def test_an_internal_error_answer_counts_errored_not_failed(cases_dir: Path) -> None:
    """R-RUN-1: an adapter that caught its own crash has given no answer to judge."""
    suite = run_suite(load_cases(cases_dir), fake("internal_error"))
    assert [result.outcome for result in suite.results] == ["errored"] * 3
    detail = suite.results[0].detail
    assert "internal error: ZeroDivisionError: division by zero" in detail
    assert "hint:" in detail
    assert not suite_ok(suite)


def test_an_expected_error_is_not_met_by_an_internal_error(tmp_path: Path) -> None:
    write_json(tmp_path / "cases" / "fmt" / "err.json", case_data(expect={"error": {"code": "internal_error"}}))
    suite = run_suite(load_cases(tmp_path / "cases"), fake("internal_error"))
    assert suite.results[0].outcome == "errored"


def test_trace_prints_each_request_and_answer_of_a_failing_case_only(
    cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-RUN-3: the protocol lines, as sent and received, under the failure line."""
    write_json(cases_dir / "fmt" / "z-wrong.json", case_data("AAAAA4", 8, expect={"output": "nine"}))
    code = main(["run", "--cases", str(cases_dir), "--adapter", shlex.join(fake("good")), "--trace"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    failure = next(n for n, line in enumerate(out) if line.startswith("AAAAA4 (fmt/z-wrong)"))
    sent, received = out[failure + 1], out[failure + 2]
    assert json.loads(sent.removeprefix("    > ")) == {
        "cmd": "run", "seq": 4, "op": "format_token_count", "input": {"n": 8}
    }
    assert json.loads(received.removeprefix("    < ")) == {"seq": 4, "output": "8"}
    assert sum(line.startswith("    ") for line in out) == 2  # the passing cases print no trace


def test_trace_shows_a_crash_as_closed_stdout(cases_dir: Path, tmp_path: Path) -> None:
    suite = run_suite(load_cases(cases_dir), fake("crash_first", str(tmp_path / "crashed")), trace=True)
    first = suite.results[0]
    assert first.outcome == "errored"
    assert first.trace[0].startswith('> {"cmd": "run", "seq": 1')
    assert first.trace[1] == "< (stdout closed)"
    assert suite.results[1].trace == ()


def test_repeat_fails_a_case_whose_outcome_changes(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """R-RUN-4: runs 1 … 6 alternate right and wrong, so every case passes once and fails once."""
    code = main(["run", "--cases", str(cases_dir), "--adapter", shlex.join(fake("alternating")), "--repeat", "2"])
    out = capsys.readouterr().out
    assert code == 1
    assert "outcome changes over 2 runs (passed, failed): (root): expected \"5\", got \"50\"" in out
    assert "3 of 3 cases changed outcome over 2 runs: AAAAA1, AAAAA2, AAAAA3" in out
    assert "0 passed, 3 failed" in out


def test_repeat_keeps_a_steady_outcome(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--cases", str(cases_dir), "--adapter", shlex.join(fake("good")), "--repeat", "3"]) == 0
    out = capsys.readouterr().out
    assert "0 of 3 cases changed outcome over 3 runs" in out
    assert "3 passed, 0 failed" in out


def test_a_changing_outcome_is_no_known_failure(cases_dir: Path, tmp_path: Path) -> None:
    known = tmp_path / "known.txt"
    known.write_text("AAAAA1\nAAAAA2\nAAAAA3\n", encoding="utf-8")
    code = main(["run", "--cases", str(cases_dir), "--adapter", shlex.join(fake("alternating")),
                 "--repeat", "2", "--known-failures", str(known)])
    assert code == 1


def test_repeat_must_be_a_positive_count(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--cases", str(cases_dir), "--repeat", "0"])
    assert exit_info.value.code == 2
    assert "must be a positive integer, got 0" in capsys.readouterr().err


def test_show_prints_what_is_sent_and_expected(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """R-RUN-3: by id or by name."""
    for wanted in ("AAAAA2", "fmt/n-7"):
        assert main(["show", wanted, "--cases", str(cases_dir)]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "AAAAA2 (fmt/n-7) [R-FMT-1]"
        request = json.loads(out[out.index(next(line for line in out if line.startswith("sends"))) + 1])
        assert request == {"cmd": "run", "seq": 1, "op": "format_token_count", "input": {"n": 7}}
        expects = out.index("expects:")
        assert json.loads("\n".join(out[expects + 1:])) == {"output": "7"}


def test_show_prepares_what_the_runner_prepares(capsys: pytest.CaptureFixture[str]) -> None:
    """A provider_parse case sends the chunks the runner cuts from its fixture, not the fixture's name."""
    assert main(["show", "parse_openai/text-whole"]) == 0
    out = capsys.readouterr().out.splitlines()
    request = json.loads(out[out.index(next(line for line in out if line.startswith("sends"))) + 1])
    assert request["op"] == "provider_parse"
    assert "fixture" not in request["input"]
    assert request["input"]["chunks"]


def test_show_an_unknown_case_is_one_line(cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "NOPE99", "--cases", str(cases_dir)]) == 2
    err = capsys.readouterr().err
    assert err == "error: no case has the id or name 'NOPE99' (an id such as QXE4KR, or <area>/<slug>)\n"


def _write_run(cases_dir: Path, adapter: str, path: Path, *extra: str) -> int:
    return main(["run", "--cases", str(cases_dir), "--adapter", shlex.join(fake(adapter)),
                 "--write-known-failures", str(path), *extra])


def test_write_known_failures_lists_the_failing_cases(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-RUN-2a: a new file lists every failing case; the run it was written from still fails,
    one with it as its known failures does not."""
    path = tmp_path / "known.txt"
    assert _write_run(cases_dir, "wrong", path) == 1
    assert f"wrote {path}: 3 entries, 3 added, 0 removed" in capsys.readouterr().out
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# Known failures of fake 0, one case id a line (# starts a comment)."
    assert lines[-3:] == ["AAAAA1  # fmt/n-5", "AAAAA2  # fmt/n-7", "AAAAA3  # fmt/n-9"]
    known = ["run", "--cases", str(cases_dir), "--adapter", shlex.join(fake("wrong")), "--known-failures", str(path)]
    assert main(known) == 0


def test_write_known_failures_keeps_groups_comments_and_order(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An update removes what passed, keeps what it did not run or did not contradict, and adds
    the rest at the end; written again from the same run, it is the same file."""
    write_json(cases_dir / "fmt" / "z-wrong.json", case_data("AAAAA4", 8, expect={"output": "nine"}))
    write_json(cases_dir / "fmt" / "z-wrong2.json", case_data("AAAAA5", 6, spec=["R-FMT-2"], expect={"output": "six"}))
    path = tmp_path / "known.txt"
    original = [
        "# [G1] a group: why these fail.",
        "AAAAA2  # fmt/n-7, passes now",
        "# also fails here: AAAAA4 (listed below)",
        "",
        "# [G2] by requirement, and a case the run leaves out",
        "R-FMT-2",
        "AAAAA3",
    ]
    path.write_text("\n".join(original) + "\n", encoding="utf-8")
    argv = ["--filter", "fmt/n-7", "--filter", "fmt/z-*"]
    assert _write_run(cases_dir, "good", path, *argv) == 1
    assert f"wrote {path}: 3 entries, 1 added, 1 removed" in capsys.readouterr().out
    text = path.read_text(encoding="utf-8")
    assert text.splitlines() == [
        "# [G1] a group: why these fail.",
        "# also fails here: AAAAA4 (listed below)",
        "",
        "# [G2] by requirement, and a case the run leaves out",
        "R-FMT-2",
        "AAAAA3",
        "",
        "# Failing in the run that wrote this file, in no group yet:",
        "AAAAA4  # fmt/z-wrong",
    ]
    assert _write_run(cases_dir, "good", path, *argv, "--known-failures", str(path)) == 0
    assert path.read_text(encoding="utf-8") == text


def test_write_known_failures_drops_a_requirement_no_case_fails(
    cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "known.txt"
    path.write_text("R-FMT-1  # all of them\n", encoding="utf-8")
    assert _write_run(cases_dir, "good", path) == 0
    assert f"wrote {path}: 0 entries, 0 added, 1 removed" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == "\n"


def test_write_known_failures_leaves_out_a_changing_case(cases_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    assert _write_run(cases_dir, "alternating", path, "--repeat", "2") == 1
    assert "AAAAA" not in path.read_text(encoding="utf-8")
