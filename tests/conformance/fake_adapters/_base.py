"""The protocol v1 loop the fake adapters share; each fake only says how it answers a run.

The fakes implement one op, ``format_token_count``, for counts below 1000 only, where the
answer is the decimal number itself: enough for the runner's tests, independent of the real
suite's content.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Answer = Callable[[dict[str, Any]], Any]


def correct(request: dict[str, Any]) -> dict[str, Any]:
    return {"seq": request["seq"], "output": str(request["input"]["n"])}


def serve(
    answer: Answer,
    *,
    ops: Sequence[str] = ("format_token_count",),
    protocol: int = 1,
    declare: Mapping[str, Any] | None = None,
) -> None:
    """Answer start, run and stop lines until stop or end of input.

    ``answer`` returns the JSON value to print for a run, or a ``str`` to print verbatim;
    ``declare`` holds further members of the start answer.
    """
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            return
        if request["cmd"] == "start":
            implementation = {"name": "fake", "version": "0", "language": "python"}
            reply: Any = {"protocol": protocol, "implementation": implementation, "ops": list(ops)}
            reply.update(declare or {})
        else:
            reply = answer(request)
        print(reply if isinstance(reply, str) else json.dumps(reply), flush=True)
