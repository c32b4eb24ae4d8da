"""The memory ops of the reference adapter: tokens, model limits, repair and compaction.

A summarization case scripts the summarizer (``ScriptedSummarizer``) and gets back every
request the compactor made, so the exact prompts are part of what is checked.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final

from harness9_ref.memory.context import (
    Compactor,
    SlidingWindowCompactor,
    SummarizationCompactor,
    TokenBudgetCompactor,
    estimate_tokens,
    estimate_tool_tokens,
    format_token_count,
    new_summarization_compactor,
    new_token_budget_compactor,
    repair_orphaned_tool_pairs,
    shorten_view,
)
from harness9_ref.provider import get_model_limits
from harness9_ref.schema import (
    Message,
    ToolDefinition,
    Usage,
    canonical_json,
    messages_from_list,
    messages_to_list,
    strict_json,
)

__all__ = ["INVALID_INPUT", "MEMORY_OPS", "InvalidInput", "compactor_from_json"]

INVALID_INPUT: Final = "invalid_input"


class InvalidInput(Exception):
    """The case input does not have the shape the op needs (a bug in the case, not the code)."""

    code: ClassVar[str] = INVALID_INPUT


class ScriptedSummarizer:
    """Answers summary requests from the case's script and records each request."""

    def __init__(self, replies: Sequence[Mapping[str, Any]]) -> None:
        # Parsed up front, so that a malformed script is a schema error, not a summary failure.
        self.replies = [
            (
                r.get("error"),
                float(r.get("delay_seconds", 0)),
                None if r.get("message") is None else Message.from_dict(r["message"], f"summarizer.replies[{i}].message"),
                None if r.get("usage") is None else Usage.from_dict(r["usage"], f"summarizer.replies[{i}].usage"),
            )
            for i, r in enumerate(replies)
        ]
        self.requests: list[dict[str, Any]] = []

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]:
        self.requests.append({"messages": messages_to_list(messages), "tools": [t.to_dict() for t in available_tools]})
        if not self.replies:
            raise RuntimeError("the case's summarizer script has no reply left")
        error, delay, message, usage = self.replies.pop(0)
        time.sleep(delay)
        if error is not None:
            raise RuntimeError(error)
        return message, usage


def _budget(config: Mapping[str, Any]) -> TokenBudgetCompactor:
    if "context_window" in config:
        return new_token_budget_compactor(config["context_window"])
    return TokenBudgetCompactor(config.get("max_tokens", 0), config.get("min_tail_messages", 0))


def _sliding(config: Mapping[str, Any]) -> SlidingWindowCompactor:
    return SlidingWindowCompactor(config.get("max_messages", 0))


_SIMPLE_STRATEGIES: Final[Mapping[str, Callable[[Mapping[str, Any]], Compactor]]] = {
    "token_budget": _budget,
    "sliding_window": _sliding,
}


def compactor_from_json(spec: Mapping[str, Any]) -> Compactor:
    factory = _SIMPLE_STRATEGIES.get(spec.get("strategy", ""))
    if factory is None:
        raise InvalidInput(f"unknown strategy {spec.get('strategy')!r}")
    return factory(spec.get("config", {}))


def op_compact(inp: Mapping[str, Any]) -> dict[str, Any]:
    msgs = messages_from_list(inp["messages"])
    if inp.get("strategy") != "summarization":
        return {"messages": messages_to_list(compactor_from_json(inp).compact(msgs))}
    config = inp.get("config", {})
    script = inp.get("summarizer")
    summarizer = None if script is None else ScriptedSummarizer(script.get("replies", []))
    fallback = inp.get("fallback")
    compactor = (
        new_summarization_compactor(summarizer, config["context_window"])
        if "context_window" in config
        else SummarizationCompactor(summarizer, config.get("max_tokens", 0), config.get("min_tail_messages", 0))
    )
    if "request_limit" in config:
        compactor = dataclasses.replace(compactor, request_limit=int(config["request_limit"]))
    if fallback is not None:
        compactor = dataclasses.replace(compactor, fallback=compactor_from_json(fallback))
    if "timeout_seconds" in config:
        compactor = dataclasses.replace(compactor, timeout=float(config["timeout_seconds"]))
    out = messages_to_list(compactor.compact(msgs))
    return {"messages": out, "summarizer_requests": [] if summarizer is None else summarizer.requests}


def op_canonical_json(inp: Mapping[str, Any]) -> str:
    """R-TOK-4 over a JSON *text*, so that member order, repeated keys and ``-0`` reach it.

    Python's parser keeps the last of repeated keys and reads ``-0`` as the integer 0 and
    ``-0.0`` as a float, which is what R-TOK-4 asks of the literals.
    """
    text = inp["json"]
    if not isinstance(text, str):
        raise InvalidInput("json must be a string holding a JSON text")
    try:
        return canonical_json(strict_json.loads(text, finite=False))
    except ValueError as exc:  # not JSON, NaN/Infinity, or a number with no canonical form
        raise InvalidInput(f"json has no canonical form: {exc}") from None


MEMORY_OPS: Final[Mapping[str, Callable[[Mapping[str, Any]], Any]]] = {
    "estimate_tokens": lambda i: estimate_tokens(messages_from_list(i["messages"])),
    "estimate_tool_tokens": lambda i: estimate_tool_tokens(
        [ToolDefinition.from_dict(t, f"tools[{n}]") for n, t in enumerate(i["tools"])]
    ),
    "canonical_json": op_canonical_json,
    "format_token_count": lambda i: format_token_count(i["n"]),
    "model_limits": lambda i: {
        "context_tokens": (limits := get_model_limits(i["model"])).context_tokens,
        "output_tokens": limits.output_tokens,
    },
    "repair_tool_pairs": lambda i: messages_to_list(repair_orphaned_tool_pairs(messages_from_list(i["messages"]))),
    "compact": op_compact,
    "shorten_view": lambda i: messages_to_list(shorten_view(messages_from_list(i["messages"]), i["max_tokens"])),
}
