"""One error convention: ``code`` is a class attribute, and every session error is a SessionError (SPEC R-ERR-1, R-MGR-9)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import harness9_ref.memory.storage as storage
from harness9_ref import Harness9Error
from harness9_ref.engine import ENGINE_BUSY, EngineBusy, EngineError
from harness9_ref.engine._run_errors import engine_error
from harness9_ref.memory.storage import InvalidArgument, InvalidSessionId, SessionError

PUBLIC_PACKAGES = ("harness9_ref.schema", "harness9_ref.provider", "harness9_ref.memory.context", "harness9_ref.memory.storage",
                   "harness9_ref.tools", "harness9_ref.engine", "harness9_ref.text", "harness9_ref.cli", "harness9_ref.tui")


def _error_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in PUBLIC_PACKAGES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__.startswith("harness9_ref"):
                found[value.__qualname__] = value
    return sorted(found.values(), key=lambda cls: cls.__qualname__)


@pytest.mark.parametrize("cls", [c for c in _error_classes() if "code" in vars(c)], ids=lambda c: c.__qualname__)
def test_a_code_is_a_class_attribute_of_a_string(cls: type[BaseException]) -> None:
    assert isinstance(vars(cls)["code"], str) and vars(cls)["code"]


def test_every_error_is_a_harness9_error_with_a_class_code() -> None:
    outside = [c.__qualname__ for c in _error_classes() if not issubclass(c, Harness9Error)]
    assert outside == []
    assert all(isinstance(vars(c).get("code", c.code), str) for c in _error_classes() if issubclass(c, Harness9Error))


def test_the_engine_error_of_a_code_has_it_as_a_class_attribute() -> None:
    error = engine_error("cancelled", "cancelled")
    assert isinstance(error, EngineError) and type(error).code == error.code == "cancelled"
    assert type(engine_error("cancelled", "again")) is type(error)  # one class per code
    assert type(engine_error(ENGINE_BUSY, "busy")) is EngineBusy
    assert (str(error), error.message) == ("cancelled", "cancelled")
    assert repr(error) == "EngineError(code='cancelled', message='cancelled')"


def test_every_session_error_is_a_session_error() -> None:
    errors = [getattr(storage, name) for name in storage.__all__]
    errors = [e for e in errors if inspect.isclass(e) and issubclass(e, Exception)]
    assert {e.__name__ for e in errors if not issubclass(e, SessionError)} <= {"ColumnDecodeError"}
    assert issubclass(InvalidArgument, ValueError) and issubclass(InvalidSessionId, ValueError)  # as before
    assert (InvalidArgument.code, InvalidSessionId.code) == ("invalid_argument", "invalid_session_id")
