"""The Python reference adapter: protocol v1 on stdin/stdout, dispatching to ``harness9_ref``.

Run as ``python -m conformance.reference_adapter``. A port writes the same loop in its own
language; conformance/PORTING.md describes every op's input and output.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from typing import Any, Callable, Final, Mapping, Sequence

import harness9_ref
from harness9_ref.memory import (
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
)
from harness9_ref.provider import ProviderError, get_model_limits
from conformance._reference_provider import PROVIDER_OPS
from conformance._reference_session import op_session
from harness9_ref.schema import Message, SchemaError, ToolDefinition, Usage, messages_from_list, messages_to_list

PROTOCOL_VERSION: Final = 1
INVALID_INPUT: Final = "invalid_input"


class InvalidInput(Exception):
    """The case input does not have the shape the op needs (a bug in the case, not the code)."""

    code: Final = INVALID_INPUT


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

    def generate(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> tuple[Message | None, Usage | None]:
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


def _simple_compactor(spec: Mapping[str, Any]) -> Compactor:
    factory = _SIMPLE_STRATEGIES.get(spec.get("strategy", ""))
    if factory is None:
        raise InvalidInput(f"unknown strategy {spec.get('strategy')!r}")
    return factory(spec.get("config", {}))


def op_compact(inp: Mapping[str, Any]) -> dict[str, Any]:
    msgs = messages_from_list(inp["messages"])
    if inp.get("strategy") != "summarization":
        return {"messages": messages_to_list(_simple_compactor(inp).compact(msgs))}
    config = inp.get("config", {})
    script = inp.get("summarizer")
    summarizer = None if script is None else ScriptedSummarizer(script.get("replies", []))
    fallback = inp.get("fallback")
    compactor = (
        new_summarization_compactor(summarizer, config["context_window"])
        if "context_window" in config
        else SummarizationCompactor(summarizer, config.get("max_tokens", 0), config.get("min_tail_messages", 0))
    )
    if fallback is not None:
        compactor = dataclasses.replace(compactor, fallback=_simple_compactor(fallback))
    if "timeout_seconds" in config:
        compactor = dataclasses.replace(compactor, timeout=float(config["timeout_seconds"]))
    out = messages_to_list(compactor.compact(msgs))
    return {"messages": out, "summarizer_requests": [] if summarizer is None else summarizer.requests}


OPS: Final[Mapping[str, Callable[[Mapping[str, Any]], Any]]] = {
    "estimate_tokens": lambda i: estimate_tokens(messages_from_list(i["messages"])),
    "estimate_tool_tokens": lambda i: estimate_tool_tokens(
        [ToolDefinition.from_dict(t, f"tools[{n}]") for n, t in enumerate(i["tools"])]
    ),
    "format_token_count": lambda i: format_token_count(i["n"]),
    "model_limits": lambda i: {
        "context_tokens": (limits := get_model_limits(i["model"])).context_tokens,
        "output_tokens": limits.output_tokens,
    },
    "repair_tool_pairs": lambda i: messages_to_list(repair_orphaned_tool_pairs(messages_from_list(i["messages"]))),
    "compact": op_compact,
    "session": op_session,
    **PROVIDER_OPS,
}


def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one ``run`` request; domain errors become ``{"error": …}``, never a crash."""
    seq = request.get("seq")
    op = OPS.get(request.get("op", ""))
    if op is None:
        return {"seq": seq, "skipped": f"op {request.get('op')!r} is not implemented"}
    try:
        return {"seq": seq, "output": op(request.get("input", {}))}
    except (SchemaError, InvalidInput, ProviderError) as exc:
        return {"seq": seq, "error": {"code": exc.code, "message": str(exc)}}
    except LookupError as exc:
        return {"seq": seq, "error": {"code": INVALID_INPUT, "message": f"input is missing or names nothing known: {exc}"}}
    except TypeError as exc:
        return {"seq": seq, "error": {"code": INVALID_INPUT, "message": f"input has a wrong type: {exc}"}}


def main() -> int:
    for stream in (sys.stdin, sys.stdout):
        stream.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "stop":
            return 0
        if cmd == "start":
            reply: dict[str, Any] = {
                "protocol": PROTOCOL_VERSION,
                "implementation": {"name": "harness9-ref", "version": harness9_ref.__version__, "language": "python"},
                "ops": sorted(OPS),
            }
        else:
            reply = handle(request)
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
