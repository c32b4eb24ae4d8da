"""The suite's cases, and the reference implementation as a target the runner judges in process.

``InProcessReference`` has the interface ``run_case`` drives (``ops``, ``backends``, ``declared``,
``run``) but calls ``conformance.reference_adapter.handle`` instead of writing to a process: each
request is encoded as the runner puts it on the wire and each answer decoded as the runner reads
it, so a case's verdict comes from the same judging code as in ``python -m conformance run``,
while coverage measures the reference and ``--pdb`` stops inside it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from conformance import Case, Response, load_cases
from conformance.porting._porting import read_port_start
from conformance.reference_adapter import handle, start_answer
from conformance.runner._runner import read_answer
from harness9_ref.schema import strict_json

__all__ = ["InProcessReference", "suite_cases"]


@functools.cache
def suite_cases() -> tuple[Case, ...]:
    """Every case of the suite, read once per process: collection and several modules need them."""
    return tuple(load_cases())


def _wire(message: Mapping[str, Any], *, ensure_ascii: bool) -> Any:
    """``message`` as the other side reads it off a JSON line."""
    return strict_json.loads(json.dumps(message, ensure_ascii=ensure_ascii), finite=False)


class InProcessReference:
    """The reference adapter's handler, called in this process over JSON-round-tripped messages."""

    def __init__(self) -> None:
        self.ops, self.declared, self.backends = read_port_start(_wire(start_answer(), ensure_ascii=False))
        self._seq = 0

    def run(self, op: str, input: Mapping[str, Any]) -> Response:
        self._seq += 1
        request = _wire({"cmd": "run", "seq": self._seq, "op": op, "input": dict(input)}, ensure_ascii=True)
        return read_answer(_wire(handle(request), ensure_ascii=False), self._seq)
