"""The engine's errors (SPEC R-ENG-1, R-ENG-16, R-EVT-8)."""

from __future__ import annotations

from typing import Final

__all__ = ["ENGINE_BUSY", "EngineBusy", "EngineError"]  # gets re-exported

ENGINE_BUSY: Final = "engine_busy"  # R-ENG-16: the code of EngineBusy


class EngineError(Exception):
    """A run failed: ``run()`` raises it with the ``code`` and ``message`` of the run's error event.

    Attributes:
        code: the error event's code (R-EVT-8): a provider error code (R-ERR-1), a session error
            code (R-MGR-9), ``cancelled``, ``max_turns`` or ``internal_error``.
        message: the error event's one-line message.
    """

    # The one error whose code is set per instance: it relays the code of the run's error event,
    # which the failure that ended the run chose. Every other error class fixes its code as a
    # class attribute.
    code: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class EngineBusy(EngineError):
    """A run was started while another run of the same engine was in progress (R-ENG-16).

    Raised at once by ``run()`` and ``run_stream()``; the running run is not disturbed.
    """

    def __init__(self, message: str = "the engine is already running a prompt; wait for it or cancel() it") -> None:
        super().__init__(ENGINE_BUSY, message)
