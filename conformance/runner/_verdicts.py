"""What an adapter answered to one case, and the verdict on it.

An expected error passes on its code alone, because messages are for people and differ between
ports; an expected output passes when it equals the answer by the suite's JSON rules
(``_compare.py``), with what the runner itself observed in the case's folder beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._compare import compact_json, describe_difference, first_difference, format_pointer
from ._ops import OBSERVED_KEYS

if TYPE_CHECKING:
    from ._cases import Case

__all__ = ["Response", "Status", "Verdict", "evaluate"]

Status = Literal["passed", "failed", "skipped", "unsupported", "errored"]

@dataclass(frozen=True, slots=True)
class Response:
    """An adapter's answer to one run, or the runner's account of why there is none.

    ``kind`` is "output" (``output`` holds it), "error" (``error_code`` and ``message``),
    "skipped" (``message`` says why), "unsupported" (the op was not declared) or "errored"
    (the adapter misbehaved; ``message`` gives the reason and a hint).
    """

    kind: Literal["output", "error", "skipped", "unsupported", "errored"]
    output: Any = None
    error_code: str = ""
    message: str = ""



@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one case; ``detail`` says why for anything but a pass."""

    status: Status
    detail: str = ""



def evaluate(case: Case, response: Response, observed: Mapping[str, Any] | None = None) -> Verdict:
    """Judge one adapter response against a case's ``expect``.

    Args:
        case: the case that was run.
        response: what the adapter answered (or the runner's note that it could not).
        observed: what the runner itself saw in the case's folder afterwards (``database``,
            ``files``, ``modes``); compared as if the adapter's output carried it.

    Returns:
        A verdict; skipped, unsupported and errored responses keep their reason as the detail.
    """
    if response.kind in ("skipped", "unsupported", "errored"):
        return Verdict(response.kind, response.message)
    got_error = f"error {compact_json(response.error_code)}"
    if response.message:
        got_error += f": {response.message}"
    if "error" in case.expect:
        code = case.expect["error"]["code"]
        if response.kind == "output":
            return Verdict(
                "failed",
                f"expected error {compact_json(code)}, got output {compact_json(response.output)}",
            )
        if response.error_code == code:
            return Verdict("passed")
        return Verdict("failed", f"expected error {compact_json(code)}, got {got_error}")
    got = response.output
    checked = {key: case.expect[key] for key in OBSERVED_KEYS if key in case.expect}
    if "output" in case.expect:
        want = case.expect["output"]
        if checked:
            want, got = {"output": want, **checked}, {"output": got, **(observed or {})}
    else:
        want = {"steps": case.expect["steps"], **checked}
        if observed and isinstance(got, Mapping):
            got = {**got, **observed}
    if response.kind == "error":
        return Verdict(
            "failed", f"{format_pointer('')}: expected {compact_json(want)}, got {got_error}"
        )
    found = first_difference(want, got)
    if found is None:
        return Verdict("passed")
    return Verdict("failed", describe_difference(*found))
