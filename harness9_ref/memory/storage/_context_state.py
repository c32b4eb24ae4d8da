"""Context state: what long-session mode measured, cleared and learned, kept with the session (SPEC R-CKP-9 … R-CKP-13).

A run in long-session mode learns things a later run on the same session must not have to
learn again: the calibration of R-LONG-3 (the provider's last ``input_tokens`` against the
engine's estimate of that same request), the clearing watermark (tool results stored below
position ``cleared_below`` are shown cleared), the summarizer breaker of R-LONG-15 (the summaries
that failed in a row and the turns of pause left) and a context window learned from the model
server, with how it was learned and for which model. Without them a ``--resume`` would start
from the prior ratio and show results that were cleared before in full again, which changes the
request prefix the provider has cached; a ``-c run`` script, one process per prompt, would ask a
failing summarizer at every prompt and overflow a small window again. Storage keeps the values
as they are given; what they mean is the engine's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ...schema import SchemaError, check_keys, check_str
from ...schema.strict_json import describe

__all__ = ["WINDOW_MODEL_MAX", "WINDOW_SOURCES", "ContextState"]

REQUIRED_FIELDS: Final = ("input_tokens", "estimate", "cleared_below")
# R-CKP-9: the members after the first three, each optional with its default.
OPTIONAL_FIELDS: Final[dict[str, object]] = {
    "summary_failures": 0,
    "summary_paused": 0,
    "window": 0,
    "window_source": "",
    "window_model": "",
}
CONTEXT_STATE_FIELDS: Final = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)
COUNT_FIELDS: Final = (*REQUIRED_FIELDS, "summary_failures", "summary_paused", "window")  # the integers, in field order
FIELD_KINDS: Final = tuple(int if name in COUNT_FIELDS else str for name in CONTEXT_STATE_FIELDS)  # what each holds
WINDOW_SOURCES: Final = ("server", "error", "truncation")  # R-CKP-9: how a window was learned
WINDOW_MODEL_MAX: Final = 200  # R-CKP-10: code points of window_model at most
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")  # R-CKP-10: C0, DEL and C1


def _check_count(value: object, path: str) -> int:
    """An integer that is not a boolean and is not negative (R-CKP-10)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(path, f"expected an integer, got {describe(value)}")
    if value < 0:
        raise SchemaError(path, f"must be 0 or more, got {value}")
    return value


def _check_window(window: int, given_source: object, given_model: object, path: str) -> tuple[str, str]:
    """R-CKP-10: a source from WINDOW_SOURCES with a window, ``""`` without one; a short one-line model name."""
    source = check_str(given_source, f"{path}.window_source")
    model = check_str(given_model, f"{path}.window_model")
    if window == 0:
        if source:
            raise SchemaError(f"{path}.window_source", f"must be empty when no window is learned, got {source!r}")
        if model:
            raise SchemaError(f"{path}.window_model", f"must be empty when no window is learned, got {model!r}")
    elif source not in WINDOW_SOURCES:
        raise SchemaError(f"{path}.window_source", f"must be one of {', '.join(WINDOW_SOURCES)}, got {source!r}")
    if len(model) > WINDOW_MODEL_MAX:
        raise SchemaError(f"{path}.window_model", f"must be {WINDOW_MODEL_MAX} characters at most, got {len(model)}")
    control = _CONTROL.search(model)
    if control is not None:
        raise SchemaError(f"{path}.window_model", f"holds the control character U+{ord(control.group()):04X}")
    return source, model


@dataclass(frozen=True, slots=True)
class ContextState:
    """A session's context state (R-CKP-9).

    Attributes:
        input_tokens: the provider's ``input_tokens`` of the last call that counted (R-LONG-3's U).
        estimate: the engine's estimate of that same request (R-LONG-3's S).
        cleared_below: every eligible tool result stored at a position below it is shown cleared.
        summary_failures: the summaries that failed in a row (R-LONG-15's count).
        summary_paused: the turns of R-LONG-15's pause left.
        window: a context window learned from the model server, in tokens; 0 when none was.
        window_source: how it was learned, one of WINDOW_SOURCES; "" when ``window`` is 0.
        window_model: the model name, as configured, it was learned for; "" when ``window`` is 0.
    """

    input_tokens: int
    estimate: int
    cleared_below: int
    summary_failures: int = 0
    summary_paused: int = 0
    window: int = 0
    window_source: str = ""
    window_model: str = ""

    def __post_init__(self) -> None:
        for name in COUNT_FIELDS:
            _check_count(getattr(self, name), f"context_state.{name}")
        _check_window(self.window, self.window_source, self.window_model, "context_state")

    def to_dict(self) -> dict[str, Any]:
        """The protocol's object: the first three members always, the others only when not at their default (R-CKP-9)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in REQUIRED_FIELDS}
        out.update((name, getattr(self, name)) for name, default in OPTIONAL_FIELDS.items() if getattr(self, name) != default)
        return out

    @classmethod
    def from_dict(cls, data: object, path: str = "context_state") -> ContextState:
        """The first three members required, the others optional with their defaults (R-CKP-9, R-CKP-10)."""
        d = check_keys(data, path, REQUIRED_FIELDS, tuple(OPTIONAL_FIELDS))
        tokens, estimate, cleared, failures, paused, window = (
            _check_count(d.get(name, 0), f"{path}.{name}") for name in COUNT_FIELDS
        )
        source, model = _check_window(window, d.get("window_source", ""), d.get("window_model", ""), path)
        return cls(tokens, estimate, cleared, failures, paused, window, source, model)
