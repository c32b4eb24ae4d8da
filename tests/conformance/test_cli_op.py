"""The ``cli`` op's runner side (SPEC §21, conformance/PORTING.md ``cli``): the folder it lays out,
the environment it sends, the placeholders and views it judges an answer by, and its verdicts on
ports that answer wrongly or declare what its cases cannot take.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import Case, run_case
from conformance.porting._porting import Declarations
from conformance.runner._cli_folder import cli_prepared
from conformance.runner._runner import _allowance
from conformance.runner._verdicts import Response
from tests.reference import suite_cases

CHOSEN = "5a0e6d1c-2f0b-4c3e-9d7a-1b2c3d4e5f60"
FRESH = ("11111111-2222-4333-8444-555555555555", "66666666-7777-4888-9999-aaaaaaaaaaaa")


def test_the_folder_holds_the_case_files_with_their_paths_filled_in() -> None:
    spec = {
        "files": {"home/.harness9/allow.json": '{"d": "{workdir}"}', "work/AGENTS.md": "Use tabs.\n"},
        "commands": [{"argv": ["--db", "{root}/x.db", "sessions"], "env": {"LANG": None, "HARNESS9_LANG": "zh"}, "stdin": "hi"}],
    }
    with cli_prepared(spec) as folder:
        root, sent = folder.root, folder.send
        assert json.loads((root / "home/.harness9/allow.json").read_text(encoding="utf-8")) == {"d": str(root / "work")}
        assert (root / "work/AGENTS.md").read_text(encoding="utf-8") == "Use tabs.\n"
        assert sent["workdir"] == str(root / "work") and sent["home"] == str(root / "home")
        assert "database" not in sent and "sessions" not in sent
        # The whole environment: the private home and UTC; LANG removed by the case's null.
        assert sent["commands"] == [{
            "argv": ["--db", f"{root}/x.db", "sessions"],
            "env": {"HOME": str(root / "home"), "TZ": "UTC", "HARNESS9_LANG": "zh"},
            "stdin": "hi",
        }]
    assert not root.exists()


def test_a_case_with_sessions_gets_the_default_database_to_prepare() -> None:
    steps = {"steps": [{"do": "new", "id": CHOSEN}]}
    with cli_prepared({"sessions": steps, "commands": [{"argv": ["sessions"]}]}) as folder:
        assert folder.send["database"] == str(folder.root / "home/.harness9/sessions.db")
        assert folder.send["tool_results_dir"] == str(folder.root / "home/.harness9/tool-results")
        assert folder.send["sessions"] == steps


def test_the_answer_is_normalised_then_viewed_as_the_case_expects() -> None:
    spec = {"commands": [{"argv": ["run", CHOSEN]}, {"argv": ["sessions"]}]}
    with cli_prepared(spec, {"openai": "http://127.0.0.1:4321/v1"}) as folder:
        work, now = folder.send["workdir"], time.time()
        minute = time.strftime("%Y-%m-%d %H:%M", time.gmtime(now))
        output = [
            {"exit": 0, "stdout": f'{{"type":"session","data":{{"id":"{FRESH[0]}"}}}}\n{{"type":"done","data":{{"turns":1}}}}\n',
             "stderr": f"read {work}/a.txt at 127.0.0.1:4321 from http://127.0.0.1:4321/v1\nsession: {FRESH[0]}\n"},
            {"exit": 0, "stdout": f"{FRESH[1]}  {minute}  x\n{CHOSEN}  2023-11-14 22:13  y\n", "stderr": ""},
        ]
        expected = [
            {"exit": 0, "stdout_json": None, "stdout_json_has": [{"type": "done"}, {"type": "error"}], "stderr": None},
            {"stdout": None, "stdout_has": ["{now}", "absent"], "stderr_lacks": ["", "x"]},
        ]
        views = folder.answer(output, spec, expected, (now, now))
    assert views == [
        {"exit": 0,
         "stdout_json": [{"type": "session", "data": {"id": "{id1}"}}, {"type": "done", "data": {"turns": 1}}],
         "stdout_json_has": [{"type": "done"}, 'no line of stdout holds it: {\'type\': \'error\'}'],
         "stderr": "read {workdir}/a.txt at {server} from {openai_base_url}\nsession: {id1}\n"},
        {"stdout": f"{{id2}}  {{now}}  x\n{CHOSEN}  2023-11-14 22:13  y\n",
         "stdout_has": ["{now}", f"absent from stdout: {{id2}}  {{now}}  x\n{CHOSEN}  2023-11-14 22:13  y\n"],
         "stderr_lacks": ["present in stderr: ", "x"]},
    ]


def test_an_answer_that_is_not_one_object_per_command_is_compared_whole() -> None:
    with cli_prepared({"commands": [{"argv": ["sessions"]}]}) as folder:
        assert folder.answer({"exit": 0}, {}, [{"exit": 0}], (0.0, 0.0)) == {"exit": 0}
        assert folder.answer([], {}, [{"exit": 0}], (0.0, 0.0)) == []
        assert folder.answer([{"exit": 0}], {}, [{"exit": 0, "stdout_text": ""}], (0.0, 0.0)) == [
            {"exit": 0, "stdout_text": "not a view of a command's answer; one of exit, stdout, stderr, stdout_json, "
             "stdout_json_has, stdout_has, stderr_has, stdout_lacks, stderr_lacks"}
        ]


def test_the_answer_may_wait_for_each_command_s_own_bound() -> None:
    assert _allowance("cli", {"commands": [{}, {}, {}], "timeout": 15.0}) == 45.0
    assert _allowance("cli", {"commands": "x", "timeout": 15.0}) == 0.0
    assert _allowance("session", {"commands": [{}], "timeout": 15.0}) == 0.0


@dataclass
class Scripted:
    """A port whose ``cli`` answers are given: what a wrong program or adapter would say."""

    answer: Response
    ops: frozenset[str] = frozenset({"cli"})
    backends: tuple[str, ...] = ("sqlite",)
    declared: Declarations = field(default_factory=Declarations)
    sent: list[Mapping[str, Any]] = field(default_factory=list)

    def run(self, op: str, input: Mapping[str, Any]) -> Response:
        if op not in self.ops:  # as conformance.Adapter answers without sending
            return Response("unsupported", message=f"the adapter does not declare op {op!r}")
        self.sent.append(input)
        return self.answer


def _case(slug: str) -> Case:
    return next(case for case in suite_cases() if case.area == "cli" and case.slug == slug)


def test_a_wrong_program_fails_and_an_op_not_declared_is_unsupported() -> None:
    case = _case("provider-without-key-refused")
    right = [{"exit": 1, "stdout": "", "stderr": "harness9-ref: error: --provider openai needs OPENAI_API_KEY\n"},
             {"exit": 1, "stdout": "", "stderr": "harness9-ref: error: --provider anthropic needs ANTHROPIC_API_KEY\n"}]
    assert run_case(Scripted(Response("output", output=right)), case).status == "passed"
    offline = [{**right[0], "exit": 0}, right[1]]
    verdict = run_case(Scripted(Response("output", output=offline)), case)
    assert (verdict.status, verdict.detail) == ("failed", "/0/exit: expected 1, got 0")
    assert run_case(Scripted(Response("output"), ops=frozenset()), case).status == "unsupported"


def test_own_ids_or_clock_leave_the_cases_with_prepared_sessions_unsupported() -> None:
    port = Scripted(Response("output", output=[]), declared=Declarations(own_ids=True))
    verdict = run_case(port, _case("sessions-listing"))
    assert verdict.status == "unsupported" and "session steps" in verdict.detail
    assert not port.sent
    assert run_case(port, _case("provider-without-key-refused")).status == "failed"  # no sessions: judged


def test_the_folder_is_observed_after_the_run() -> None:
    case = _case("db-folder-missing")

    class Writer(Scripted):
        def run(self, op: str, input: Mapping[str, Any]) -> Response:
            Path(input["workdir"], "stray").write_text("", encoding="utf-8")
            return super().run(op, input)

    verdict = run_case(Writer(Response("output", output=[{}, {}])), case)
    assert verdict.status == "failed"
    assert verdict.detail == "/output/0/exit: expected 1, got null"  # a member not answered
    said = "harness9-ref: error: {} {{root}}/nowhere/s.db: the folder {{root}}/nowhere does not exist\n"
    port = Writer(Response("output", output=[
        {"exit": 1, "stdout": "", "stderr": said.format("--db")},
        {"exit": 1, "stdout": "", "stderr": said.format("HARNESS9_DB")},
    ]))
    verdict = run_case(port, case)
    assert (verdict.status, verdict.detail) == ("failed", '/files/2: expected nothing, got "work/stray"')
