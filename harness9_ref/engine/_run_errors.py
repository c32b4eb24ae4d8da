"""How a run fails: the codes and one-line messages of its error events, and ``EngineError``,
which carries one (SPEC R-ENG-1, R-ENG-13 … R-ENG-17, R-EVT-8, R-LONG-9).

Inside a run, a failure is an exception that travels once, unwrapped, to the one place that
turns it into the error event (``AgentEngine._execute``): the provider's own typed error
(``ProviderError``, R-ERR-1), or an ``EngineError`` for the engine's own codes (``cancelled``,
``max_turns``, ``internal_error``, ``context_too_small``). ``run()`` raises the event's
``EngineError`` again for its caller.

One-line messages (R-EVT-8): a message is made one line by splitting it at the line boundaries
of Python's ``str.splitlines`` and joining the lines with one space.
"""

from __future__ import annotations

import functools
from typing import ClassVar, Final

from .._harness9_error import Harness9Error, Said

__all__ = [
    "CANCELLED",
    "ENGINE_BUSY",
    "INTERNAL_ERROR",
    "LOGGER_NAME",
    "MAX_TURNS",
    "MAX_TURNS_MESSAGE",
    "PROVIDER_ERROR",
    "EngineBusy",
    "EngineError",
    "one_line",
]

LOGGER_NAME: Final = "harness9_ref.engine"  # R-ENG-13: where a failed save is logged

CANCELLED: Final = "cancelled"  # R-ENG-15: both the code and the message of a cancelled run
MAX_TURNS: Final = "max_turns"  # R-ENG-14: the code of a run that reached its turn limit
MAX_TURNS_MESSAGE: Final = "turn limit reached ({max_turns} turns)"  # R-ENG-14
INTERNAL_ERROR: Final = "internal_error"  # R-ENG-17: any unexpected exception inside the loop
# R-ENG-17 reads the code of an error chunk before its first ": "; a chunk without one (which
# R-PRV-19 does not allow) gets the code of the root provider error (R-ERR-1).
PROVIDER_ERROR: Final = "provider_error"
CODE_SEPARATOR: Final = ": "  # R-PRV-19: an error chunk's text is "<code>: <message>"


def one_line(text: str) -> str:
    """``text`` as one line: its lines (``str.splitlines``) joined with one space (R-EVT-8)."""
    return " ".join(text.splitlines())


def error_text(exc: BaseException) -> str:
    """The one-line message of ``exc``, or its type name when it has none (R-EVT-8)."""
    return one_line(str(exc)) or type(exc).__name__


def internal_message(exc: BaseException) -> str:
    """The message of an internal error: ``<type>: <message>``, or the type alone (R-ENG-17)."""
    text = one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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

    def __init__(self, message: str | Said) -> None:
        super().__init__(message)  # a Said stays the first argument, for the program's language (R-LANG-3)
        self.message = str(message)

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


def engine_error(code: str, message: str | Said) -> EngineError:
    """The EngineError of the error event ``{code, message}`` (R-ENG-1)."""
    return _error_class(code)(message)

