"""Context state: what long-session mode measured and cleared, kept with the session (SPEC R-CKP-9 … R-CKP-13).

A run in long-session mode learns two things a later run on the same session must not have to
learn again: the calibration of R-LONG-3 (the provider's last ``input_tokens`` against the
engine's estimate of that same request) and the clearing watermark (tool results stored below
position ``cleared_below`` are shown cleared). Without them a ``--resume`` would start from the
prior ratio and show results that were cleared before in full again, which changes the request
prefix the provider has cached. Storage keeps the three numbers as they are given; what they
mean is the engine's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ...schema import SchemaError, check_keys
from ...schema.strict_json import describe

__all__ = ["CONTEXT_STATE_FIELDS", "ContextState"]

CONTEXT_STATE_FIELDS: Final = ("input_tokens", "estimate", "cleared_below")


def _check_count(value: object, path: str) -> int:
    """An integer that is not a boolean and is not negative (R-CKP-10)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(path, f"expected an integer, got {describe(value)}")
    if value < 0:
        raise SchemaError(path, f"must be 0 or more, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class ContextState:
    """A session's context state (R-CKP-9).

    Attributes:
        input_tokens: the provider's ``input_tokens`` of the last call that counted (R-LONG-3's U).
        estimate: the engine's estimate of that same request (R-LONG-3's S).
        cleared_below: every eligible tool result stored at a position below it is shown cleared.
    """

    input_tokens: int
    estimate: int
    cleared_below: int

    def __post_init__(self) -> None:
        for name in CONTEXT_STATE_FIELDS:
            _check_count(getattr(self, name), f"context_state.{name}")

    def to_dict(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "estimate": self.estimate, "cleared_below": self.cleared_below}

    @classmethod
    def from_dict(cls, data: object, path: str = "context_state") -> ContextState:
        d = check_keys(data, path, CONTEXT_STATE_FIELDS, ())
        return cls(*(_check_count(d[name], f"{path}.{name}") for name in CONTEXT_STATE_FIELDS))
