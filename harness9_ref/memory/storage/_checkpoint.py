"""Checkpoints: the persisted summary of a session's older messages (SPEC R-CKP-1, R-CKP-2, R-CKP-5).

A checkpoint says "the first ``covered`` stored messages are summarised by ``summary``". The
stored history is never rewritten (the design's non-destructive rule): the checkpoint only lets
the engine start a run from the summary instead of the covered messages. ``anchor`` fingerprints
the last covered message, so a checkpoint that no longer describes the stored messages (they were
cleared, popped or replaced by another program) is recognised and ignored, never trusted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...schema import Message, SchemaError, canonical_json, check_keys, check_str

__all__ = ["Checkpoint", "checkpoint_problem", "message_anchor"]


def message_anchor(message: Message) -> str:
    """SHA-256 (lower-case hex) of the canonical JSON of ``message`` in its R-MSG-2 form (R-CKP-1)."""
    return hashlib.sha256(canonical_json(message.to_dict()).encode("utf-8")).hexdigest()


def _check_covered(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(path, f"expected an integer, got {type(value).__name__}")
    return value


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The summary of a session's first ``covered`` stored messages (R-CKP-1).

    Storage checks only the types (R-CKP-2); whether it matches the messages is
    ``checkpoint_problem``'s question (R-CKP-5).
    """

    covered: int
    anchor: str
    summary: str

    def __post_init__(self) -> None:
        _check_covered(self.covered, "checkpoint.covered")
        check_str(self.anchor, "checkpoint.anchor")
        check_str(self.summary, "checkpoint.summary")

    def to_dict(self) -> dict[str, Any]:
        return {"covered": self.covered, "anchor": self.anchor, "summary": self.summary}

    @classmethod
    def from_dict(cls, data: object, path: str = "checkpoint") -> Checkpoint:
        d = check_keys(data, path, ("covered", "anchor", "summary"), ())
        return cls(
            _check_covered(d["covered"], f"{path}.covered"),
            check_str(d["anchor"], f"{path}.anchor"),
            check_str(d["summary"], f"{path}.summary"),
        )


def checkpoint_problem(checkpoint: Checkpoint, from_anchor: Sequence[Message]) -> str | None:
    """Why ``checkpoint`` is not valid, or None when it is (R-CKP-5).

    Args:
        checkpoint: the stored checkpoint.
        from_anchor: the stored messages from position ``covered - 1`` on
            (``get_messages_from(covered - 1)``; empty when ``covered < 1``): the anchor
            message, then the uncovered ones.
    """
    if checkpoint.covered < 1:
        return f"it covers {checkpoint.covered} messages"
    if not from_anchor:
        return f"it covers {checkpoint.covered} messages but the session holds fewer"
    if message_anchor(from_anchor[0]) != checkpoint.anchor:
        return f"message {checkpoint.covered - 1} is not the one it was made for"
    if len(from_anchor) > 1 and from_anchor[1].tool_call_id:
        return f"message {checkpoint.covered} is a tool result whose call it covers"
    return None
