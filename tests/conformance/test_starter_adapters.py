"""The starter adapters of conformance/adapters/ run the real suite through the real CLI.

Each implements format_token_count only: its cases must all pass, every other case must be
reported unsupported (never failed or errored), and every message must fit the protocol schemas.
The Node adapter needs ``node``; the Go one is built with ``go build`` and is skipped only when
no Go toolchain is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance import load_cases

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: whole programs of the suite's tooling

PACKAGE = Path(conformance.__file__).resolve().parent
ADAPTERS = PACKAGE / "adapters"
NODE_ADAPTER = ADAPTERS / "node" / "adapter.js"
GO_ADAPTER = ADAPTERS / "go"
FORMAT_OP = "format_token_count"


def _cli(adapter: list[str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Run ``python -m conformance run`` on ``adapter``; exit code, JSON report, stdout."""
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
    command = [
        sys.executable, "-m", "conformance", "run",
        "--adapter", " ".join(adapter), "--report", "json", str(report), *args,
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=PACKAGE.parent, capture_output=True, text=True, timeout=600, check=False
    )
    assert report.exists(), f"no report:\n{done.stdout}\n{done.stderr}"
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stdout


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {case["id"]: case["status"] for case in report["cases"]}


def _format_ids() -> set[str]:
    return {case.id for case in load_cases() if case.op == FORMAT_OP}


def _node() -> list[str]:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node on PATH: install Node (Debian: nodejs) to test the Node starter")
    return [node, str(NODE_ADAPTER)]


def _writable(path: Path) -> bool:
    while not path.exists():
        path = path.parent
    return os.access(path, os.W_OK)


def _go_env(scratch: Path) -> dict[str, str]:
    """Offline and self-contained: no proxy, no workspace, no toolchain download; caches in
    ``scratch`` when the usual ones cannot be written (no HOME, a read-only one)."""
    env = dict(os.environ, GOPROXY="off", GOWORK="off", GOTOOLCHAIN="local", GOFLAGS="")
    for variable in ("GOCACHE", "GOPATH"):
        current = subprocess.run(
            ["go", "env", variable], capture_output=True, text=True, env=env, check=False
        ).stdout.strip()
        if not current or current == "off" or not _writable(Path(current)):
            env[variable] = str(scratch / variable.lower())
    return env


@pytest.fixture(scope="module")
def go_adapter(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    if shutil.which("go") is None:
        pytest.skip("no go toolchain on PATH: install Go (Debian: golang-go) to test the Go starter")
    scratch = tmp_path_factory.mktemp("go")
    binary = scratch / "bin" / "harness9-adapter"
    built = subprocess.run(
        ["go", "build", "-o", str(binary), "."],
        cwd=GO_ADAPTER, env=_go_env(scratch), capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert built.returncode == 0, f"go build failed:\n{built.stdout}{built.stderr}"
    return [str(binary)]


@pytest.fixture(params=["node", "go"])
def adapter(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "node":
        return _node()
    command: list[str] = request.getfixturevalue("go_adapter")
    return command


def test_every_format_case_passes(adapter: list[str], tmp_path: Path) -> None:
    code, report, stdout = _cli(adapter, tmp_path, "--filter", "format/*")
    assert code == 0, stdout
    format_ids = _format_ids()
    assert set(_statuses(report).values()) == {"passed"}, stdout
    assert set(_statuses(report)) == format_ids
    assert report["totals"]["passed"] == len(format_ids) > 0
    assert report["ok"]
    assert report["implementation"]["name"].startswith("harness9-starter-")


def test_every_message_fits_the_protocol_schemas(adapter: list[str], tmp_path: Path) -> None:
    code, report, stdout = _cli(adapter, tmp_path, "--validate", "--filter", "format/n-1*")
    assert code == 0, stdout
    assert report["cases"] and {case["status"] for case in report["cases"]} == {"passed"}, stdout


def test_a_full_run_reports_every_other_op_unsupported(tmp_path: Path) -> None:
    code, report, stdout = _cli(_node(), tmp_path)
    assert code == 0, stdout
    statuses, format_ids = _statuses(report), _format_ids()
    assert len(statuses) == len(load_cases())
    assert {statuses[case_id] for case_id in format_ids} == {"passed"}
    others = {status for case_id, status in statuses.items() if case_id not in format_ids}
    assert others == {"unsupported"}, stdout
    assert report["totals"]["failed"] == report["totals"]["errored"] == 0



@pytest.fixture(params=["node", "go"])
def crashing_adapter(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """A starter whose port has a bug: format_token_count(1000) throws (Node) or panics (Go)."""
    if request.param == "node":
        node, script = _node()
        copy = tmp_path / "adapter.js"
        text = Path(script).read_text(encoding="utf-8")
        bug = 'function formatTokenCount(n) {\n  if (n === 1000) throw new TypeError("a bug on purpose");\n'
        copy.write_text(text.replace("function formatTokenCount(n) {\n", bug, 1), encoding="utf-8")
        return [node, str(copy)]
    if shutil.which("go") is None:
        pytest.skip("no go toolchain on PATH: install Go (Debian: golang-go) to test the Go starter")
    folder = tmp_path / "go"
    shutil.copytree(GO_ADAPTER, folder)
    main = folder / "main.go"
    bug = 'if n == 1000 {\n\t\tpanic("a bug on purpose")\n\t}\n\treturn FormatTokenCount(n), nil'
    main.write_text(main.read_text(encoding="utf-8").replace("return FormatTokenCount(n), nil", bug, 1), encoding="utf-8")
    built = subprocess.run(["go", "build", "-o", "adapter", "."], cwd=folder, env=_go_env(tmp_path),
                           capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stderr
    return [str(folder / "adapter")]


def test_a_crash_in_the_port_is_errored_and_the_adapter_goes_on(crashing_adapter: list[str], tmp_path: Path) -> None:
    """R-RUN-1: both starters answer a crash with internal_error, which the runner counts errored."""
    code, report, stdout = _cli(crashing_adapter, tmp_path, "--filter", "format/n-1000", "--filter", "format/n-1250")
    assert code == 1, stdout
    by_slug = {case["slug"]: case for case in report["cases"]}
    assert by_slug["n-1000"]["status"] == "errored"
    assert "internal error" in by_slug["n-1000"]["detail"] and "a bug on purpose" in by_slug["n-1000"]["detail"]
    assert by_slug["n-1250"]["status"] == "passed"
    assert report["totals"]["failed"] == 0

def _converse(adapter: list[str], lines: list[str]) -> tuple[int, list[dict[str, Any]]]:
    done = subprocess.run(
        adapter, input="".join(line + "\n" for line in lines), capture_output=True,
        text=True, encoding="utf-8", timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def test_bad_lines_are_answered_and_the_adapter_goes_on(adapter: list[str]) -> None:
    def run(seq: object, input: object, op: str = FORMAT_OP) -> str:
        return json.dumps({"cmd": "run", "seq": seq, "op": op, "input": input})

    code, answers = _converse(
        adapter,
        [
            json.dumps({"cmd": "start", "protocol": 1}),
            "this is not JSON",
            "[1, 2]",
            run(1, {"n": "5"}),
            run(2, {"n": 1.5}),
            run(3, {}),
            run(4, {"n": 10**30}),
            run(5, {}, op="compact"),
            run(6, None),
            json.dumps({"cmd": "dance", "seq": 7}),
            "",
            run(8, {"n": 1250000}),
            json.dumps({"cmd": "stop"}),
            run(9, {"n": 1}),
        ],
    )
    assert code == 0
    start, not_json, not_object, *rest = answers
    assert start["protocol"] == 1 and start["ops"] == [FORMAT_OP]
    assert set(start["implementation"]) >= {"name", "version", "language"}
    for answer in (not_json, not_object):
        assert answer["error"]["code"] == "invalid_input" and "seq" not in answer
    assert [answer["seq"] for answer in rest] == [1, 2, 3, 4, 5, 6, 7, 8]  # nothing after stop
    by_seq = {answer["seq"]: answer for answer in rest}
    for seq in (1, 2, 3, 6, 7):
        assert by_seq[seq]["error"]["code"] == "invalid_input", by_seq[seq]
        assert isinstance(by_seq[seq]["error"]["message"], str)
    assert set(by_seq[4]) == {"seq", "skipped"}  # beyond what the language's integers hold
    assert set(by_seq[5]) == {"seq", "skipped"}
    assert by_seq[8] == {"seq": 8, "output": "1.3M"}


def test_the_starters_ship_with_the_package() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"adapters/**/*"' in pyproject
    for path in ("node/adapter.js", "node/README.md", "go/go.mod", "go/main.go", "go/README.md"):
        assert (ADAPTERS / path).is_file(), path
