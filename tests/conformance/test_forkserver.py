"""Adapters forked by the fork server behave as adapters started anew (conformance/_forkserver.py)."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import PROJECT_ROOT, run_case
from conformance._forkserver import ForkServer, Keep, available, fork_server
from conformance._mutant_copy import Edit, patched_copy
from conformance._mutant_copy import template as project_template
from conformance._runner import DEFAULT_ADAPTER_COMMAND, Adapter, AdapterError, popen
from tests import background

pytestmark = pytest.mark.skipif(not available(), reason="no fork or descriptor passing on this platform")

ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}


@pytest.fixture(scope="module")
def template() -> Iterator[Path]:
    with project_template(PROJECT_ROOT) as folder:
        yield folder


@pytest.fixture
def server(template: Path) -> Iterator[ForkServer]:
    with ForkServer(template, ENV, DEFAULT_ADAPTER_COMMAND[2:3]) as running:
        yield running


def test_a_forked_adapter_imports_the_project_from_its_own_copy(
    server: ForkServer, template: Path
) -> None:
    case = next(c for c in background.suite_cases() if c.op == "format_token_count")
    edit = Edit("harness9_ref/__init__.py", '"0.1.0"', '"9.9.9-copy"')
    with patched_copy(template, [edit]) as copy, \
            Adapter(DEFAULT_ADAPTER_COMMAND, cwd=copy, env=ENV, spawn=server.spawn) as adapter:
        assert adapter.implementation["version"] == "9.9.9-copy"
        assert run_case(adapter, case).status == "passed"
    with Adapter(DEFAULT_ADAPTER_COMMAND, cwd=template, env=ENV, spawn=server.spawn) as adapter:
        assert adapter.implementation["version"] == "0.1.0"  # nothing of the first copy stayed


def test_an_edit_of_the_same_size_is_run_and_the_templates_bytecode_stays(template: Path) -> None:
    """The edited file's folder links the template's ``__pycache__``: its compiled original has the
    same size as the edit, and only the edited file's older time keeps Python from running it."""
    bytecode = {path: path.read_bytes() for path in (template / "harness9_ref" / "__pycache__").iterdir()}
    edit = Edit("harness9_ref/__init__.py", '"0.1.0"', '"0.9.9"')
    env = {**ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    with patched_copy(template, [edit]) as copy, \
            Adapter(DEFAULT_ADAPTER_COMMAND, cwd=copy, env=env, spawn=popen) as adapter:
        assert (copy / "harness9_ref" / "__pycache__").is_symlink()
        assert adapter.implementation["version"] == "0.9.9"
    assert {path: path.read_bytes() for path in (template / "harness9_ref" / "__pycache__").iterdir()} == bytecode


def test_a_copy_that_cannot_be_imported_dies_with_its_traceback(
    server: ForkServer, template: Path
) -> None:
    edit = Edit("harness9_ref/__init__.py", '__version__ = "0.1.0"', "raise ImportError('seeded')")
    expected = r"adapter exited with status 1; stderr ends: .*ImportError: seeded"
    with patched_copy(template, [edit]) as copy, pytest.raises(AdapterError, match=expected):
        Adapter(DEFAULT_ADAPTER_COMMAND, cwd=copy, env=ENV, spawn=server.spawn).start()


def test_a_hung_adapter_is_killed_after_the_timeout_and_the_next_one_starts(
    server: ForkServer, template: Path
) -> None:
    answer = '        return {"seq": seq, "output": op(request.get("input", {}))}'
    edit = Edit("conformance/reference_adapter.py", answer, '        __import__("time").sleep(60)\n' + answer)
    case = next(c for c in background.suite_cases() if c.op == "format_token_count")
    started = time.monotonic()
    with patched_copy(template, [edit]) as copy, \
            Adapter(DEFAULT_ADAPTER_COMMAND, cwd=copy, env=ENV, spawn=server.spawn, timeout=1) as adapter:
        assert run_case(adapter, case).status == "errored"
    assert time.monotonic() - started < 10
    with Adapter(DEFAULT_ADAPTER_COMMAND, cwd=template, env=ENV, spawn=server.spawn) as adapter:
        assert run_case(adapter, case).status == "passed"


def test_closing_the_server_ends_it(template: Path) -> None:
    server = ForkServer(template, ENV, DEFAULT_ADAPTER_COMMAND[2:3])
    server.close()
    assert server._process.returncode == 0


def test_run_captures_both_streams_and_the_exit_status(server: ForkServer, template: Path) -> None:
    edit = Edit("conformance/reference_adapter.py", "def main() -> int:\n", "def main() -> int:\n"
                "    print('to stdout')\n    print('to stderr', file=sys.stderr)\n    return 7\n")
    with patched_copy(template, [edit]) as copy:
        done = server.run(DEFAULT_ADAPTER_COMMAND, copy, ENV, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (7, b"to stdout\n", b"to stderr\n")


def test_only_python_dash_m_commands_are_forked(server: ForkServer, template: Path) -> None:
    with pytest.raises(ValueError, match="python -m commands only"):
        server.spawn(["node", "adapter.js"], template, ENV)


def test_without_unix_seqpacket_pairs_adapters_are_started_anew(
    template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise OSError("Protocol not supported")

    monkeypatch.setattr(socket, "socketpair", refuse)
    with fork_server(template, ENV, DEFAULT_ADAPTER_COMMAND[2:3]) as server:
        assert server is None


def test_a_preload_that_fails_only_costs_the_head_start(template: Path) -> None:
    case = next(c for c in background.suite_cases() if c.op == "format_token_count")
    with ForkServer(template, ENV, ["no_such_module_anywhere", *DEFAULT_ADAPTER_COMMAND[2:3]]) as server, \
            Adapter(DEFAULT_ADAPTER_COMMAND, cwd=template, env=ENV, spawn=server.spawn) as adapter:
        assert run_case(adapter, case).status == "passed"


PROBE = """\
import atexit, json, sys, threading, time
what = sys.argv[1]
if what == "state":
    print(json.dumps({"kept": "harness9_ref.cli" in sys.modules, "path": sys.path}))
elif what == "echo":
    sys.stdout.write(sys.stdin.read())
elif what == "exit":
    raise SystemExit("a message, as the interpreter prints it")
elif what == "shutdown":
    atexit.register(lambda: print("exit function"))
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread"))).start()
    print("main")
"""


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    """A folder holding ``probe.py``, a module whose first argument says what it does."""
    (tmp_path / "probe.py").write_text(PROBE, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("keep", ["all", "none"])
def test_the_project_is_kept_only_when_asked(probe: Path, keep: Keep) -> None:
    with ForkServer(PROJECT_ROOT, ENV, ["harness9_ref.cli"], keep=keep) as server:
        done = server.run(["python", "-m", "probe", "state"], probe, ENV, timeout=30)
    assert json.loads(done.stdout)["kept"] is (keep == "all")


def test_the_servers_python_path_is_not_the_childs(probe: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with ForkServer(PROJECT_ROOT, {**ENV, "PYTHONPATH": str(elsewhere)}, []) as server:
        plain = json.loads(server.run(["python", "-m", "probe", "state"], probe, ENV, timeout=30).stdout)
        given = json.loads(
            server.run(["python", "-m", "probe", "state"], probe, {**ENV, "PYTHONPATH": str(elsewhere)}, timeout=30).stdout
        )
    assert str(elsewhere) not in plain["path"] and plain["path"][0] == str(probe)
    assert given["path"][:2] == [str(probe), str(elsewhere)]


def test_input_goes_through_a_pipe_and_a_descriptor_is_handed_over(probe: Path, tmp_path: Path) -> None:
    data = tmp_path / "stdin.txt"
    data.write_bytes(b"from a file\n" * 10_000)
    with ForkServer(PROJECT_ROOT, ENV, []) as server, data.open("rb") as file:
        piped = server.run(["python", "-m", "probe", "echo"], probe, ENV, timeout=30, input=b"x" * 200_000)
        handed = server.run(["python", "-m", "probe", "echo"], probe, ENV, timeout=30, stdin=file.fileno())
    assert piped.stdout == b"x" * 200_000
    assert handed.stdout == data.read_bytes()


def test_a_child_ends_as_an_interpreter_does(probe: Path) -> None:
    with ForkServer(PROJECT_ROOT, ENV, []) as server:
        message = server.run(["python", "-m", "probe", "exit"], probe, ENV, timeout=30)
        ended = server.run(["python", "-m", "probe", "shutdown"], probe, ENV, timeout=30)
    assert (message.returncode, message.stderr) == (1, b"a message, as the interpreter prints it\n")
    assert (ended.returncode, ended.stdout) == (0, b"main\nthread\nexit function\n")


KEPT_PROBE = """\
import json, sys
import conformance.reference_adapter
import harness9_ref.tui._status as status
print(json.dumps({
    "edited": getattr(status, "PROBE_EDIT", None),
    "files": {name: module.__file__ for name, module in sys.modules.items() if name.startswith("harness9_ref")},
    "tui_path": sys.modules["harness9_ref.tui"].__path__,
    "schema_path": sys.modules["harness9_ref.schema"].__path__,
}))
"""


def test_a_server_keeping_what_is_unchanged_reloads_an_edited_module_and_its_importers(template: Path) -> None:
    edit = Edit("harness9_ref/tui/_status.py", "Segment = tuple[str, int | None]",
                'Segment = tuple[str, int | None]\nPROBE_EDIT = "copy"')
    seen = {}
    with ForkServer(template, ENV, DEFAULT_ADAPTER_COMMAND[2:3], keep="unchanged") as server:
        for name, edits in (("edited", [edit]), ("unedited", [])):
            with patched_copy(template, edits) as copy:
                (copy / "kept_probe.py").write_text(KEPT_PROBE, encoding="utf-8")
                done = server.run(["python", "-m", "kept_probe"], copy, ENV, timeout=30)
                seen[name] = (copy, json.loads(done.stdout))
    copy, edited = seen["edited"]
    files = edited["files"]
    assert edited["edited"] == "copy"
    for importer in ("harness9_ref.tui._status", "harness9_ref.tui", "harness9_ref.tui._app"):
        assert files[importer].startswith(str(copy)), importer  # edited, or holding its names
    for unrelated in ("harness9_ref.schema._message", "harness9_ref.provider._http", "harness9_ref.memory.context._tokens"):
        assert files[unrelated].startswith(str(template)), unrelated
    assert edited["tui_path"] == [str(copy / "harness9_ref" / "tui")]
    assert edited["schema_path"] == [str(copy / "harness9_ref" / "schema")]  # kept, looking in the copy
    unedited = seen["unedited"][1]
    assert unedited["edited"] is None
    assert all(file.startswith(str(template)) for file in unedited["files"].values())


def test_an_edit_of_a_file_that_is_not_python_source_forgets_the_whole_project(template: Path) -> None:
    """A kept module would read the server's copy of that file (the schemas, the cases)."""
    edit = Edit("conformance/schema/case.json", '"$schema"', '"$schema" ')
    with ForkServer(template, ENV, DEFAULT_ADAPTER_COMMAND[2:3], keep="unchanged") as server, \
            patched_copy(template, [edit]) as copy:
        (copy / "kept_probe.py").write_text(KEPT_PROBE, encoding="utf-8")
        seen = json.loads(server.run(["python", "-m", "kept_probe"], copy, ENV, timeout=30).stdout)
    assert all(file.startswith(str(copy)) for file in seen["files"].values())
