"""The engine's errors (SPEC R-ENG-1, R-ENG-16, R-EVT-8, R-LONG-9)."""

from __future__ import annotations

import functools
from typing import ClassVar, Final

from .._errors import Harness9Error

__all__ = ["ENGINE_BUSY", "EngineBusy", "EngineError", "engine_error"]  # gets re-exported

ENGINE_BUSY: Final = "engine_busy"  # R-ENG-16: the code of EngineBusy


class EngineError(Harness9Error):
    """A run failed: ``run()`` raises it with the ``code`` and ``message`` of the run's error event.

    Attributes:
        code: the error event's code (R-EVT-8): a provider error code (R-ERR-1), a session error
            code (R-MGR-9), ``cancelled``, ``max_turns``, ``internal_error``, or one of
            ``compact_now``'s (R-LONG-9).
        message: the error event's one-line message.

    The failure that ended the run chose the code, from an open set (a scripted provider may
    fail with any code), so the classes cannot all be written out. ``engine_error(code,
    message)`` makes the subclass of a code the first time it is needed: ``code`` stays a class
    attribute, as on every other error, and ``except EngineError`` still catches them all.
    """

    code: ClassVar[str] = "engine_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"EngineError(code={self.code!r}, message={self.message!r})"


class EngineBusy(EngineError):
    """A run was started while another run of the same engine was in progress (R-ENG-16).

    Raised at once by ``run()`` and ``run_stream()``; the running run is not disturbed.
    """

    code: ClassVar[str] = ENGINE_BUSY

    def __init__(self, message: str = "the engine is already running a prompt; wait for it or cancel() it") -> None:
        super().__init__(message)


@functools.cache
def _error_class(code: str) -> type[EngineError]:
    """The EngineError subclass of ``code``, one per code for the life of the process."""
    if code == ENGINE_BUSY:
        return EngineBusy
    return type("EngineError", (EngineError,), {"code": code, "__doc__": f"An EngineError with the code {code!r}."})


def engine_error(code: str, message: str) -> EngineError:
    """The EngineError of the error event ``{code, message}`` (R-ENG-1)."""
    return _error_class(code)(message)
