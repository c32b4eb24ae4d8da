"""No message of the program names a Python exception type (SPEC R-CLI-6, R-CLI-13).

In process: ``main`` with a failure injected where a real one is hard to provoke, and
``run_prompt`` with a provider that raises something unexpected (the engine's internal error,
whose R-ENG-17 message starts with the type).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness9_ref.cli import _agent, main, run_prompt
from harness9_ref.engine import AgentEngine
from harness9_ref.testing import ScriptedProvider
from harness9_ref.text import without_type_name
from harness9_ref.tools import Registry


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("ValueError: bad thing", "bad thing"),
        ("json.decoder.JSONDecodeError: Expecting value", "Expecting value"),
        ("KeyboardInterrupt", ""),
        ("the model said Error: no", "the model said Error: no"),
        ("Error: plain", "Error: plain"),
    ],
)
def test_without_type_name(message: str, expected: str) -> None:
    assert without_type_name(message) == expected


def test_an_unexpected_exception_is_an_internal_error_without_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARNESS9_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the wiring broke")

    monkeypatch.setattr(_agent, "build_provider", broken)
    assert main(["--provider", "offline", "run", "x"]) == 1
    assert capsys.readouterr().err == "harness9-ref: error: internal error: the wiring broke\n"

    def silent(*args: object, **kwargs: object) -> None:
        raise RuntimeError()

    monkeypatch.setattr(_agent, "build_provider", silent)
    assert main(["--provider", "offline", "run", "x"]) == 1
    assert capsys.readouterr().err == "harness9-ref: error: internal error: unexpected failure\n"


def test_an_engine_internal_error_is_reported_without_its_type(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    engine = AgentEngine(ScriptedProvider([ZeroDivisionError("division by zero")]), Registry(tmp_path))
    assert run_prompt(engine, "sid-9", "hello", out, err) == 1
    assert err.getvalue() == "harness9-ref: error: internal error: division by zero\nsession: sid-9\n"
