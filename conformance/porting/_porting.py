"""What an adapter declares about itself beyond its ops, and how a case is judged for it.

Why: SPEC pins texts (prompts, marker, stub) and the session cases pin ids and times, yet a
port can be right in its logic while its wording is its own or its Manager makes its own ids
and reads its own clock. The start answer's optional members ``wording``, ``session_ids`` and
``clock`` say so; ``plan`` turns a case into the case this adapter is judged by (rewritten
texts, or "unsupported" with the reason), and ``Plan.evaluate`` maps ids and checks times by
order and range before the ordinary exact comparison. An adapter that declares nothing is
judged exactly as before. ``PortAdapter`` is the runner's adapter with these declarations read
from its start answer; conformance/_suite.py runs each case by its plan.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..runner._cases import read_json
from ..runner._profiles import read_profiles
from ..runner._runner import Adapter, read_start
from ..runner._verdicts import Verdict, evaluate
from . import _identity
from ._wording import SPEC_WORDING, WORDING_PIN, Wording, read_wording, reword_case

if TYPE_CHECKING:
    from ..runner._cases import Case
    from ..runner._verdicts import Response

__all__ = ["Declarations", "Plan", "PortAdapter", "Target", "case_pins", "plan", "read_declarations", "read_port_start"]

OWN: Final = "own"
CHOSEN: Final = "chosen"  # the default: the adapter follows the case's ids and clock


@dataclass(frozen=True, slots=True)
class Declarations:
    """An adapter's optional start-answer members; the defaults mean SPEC's exact checks."""

    wording: Wording = SPEC_WORDING
    own_ids: bool = False
    own_clock: bool = False
    profiles: tuple[str, ...] = ()  # claimed, judged by the run as a whole (runner/_profiles.py)


class Target(Protocol):
    """What a case runs against once the handshake is done: the adapter process the runner
    drives (``PortAdapter``), or an implementation called in process, judged the same way."""

    @property
    def ops(self) -> frozenset[str]: ...
    @property
    def backends(self) -> tuple[str, ...]: ...
    @property
    def declared(self) -> Declarations: ...
    def run(self, op: str, input: Mapping[str, Any]) -> Response: ...


def read_declarations(answer: Mapping[str, Any]) -> Declarations:
    """Read ``wording``, ``session_ids``, ``clock`` and ``profiles`` from a start answer.

    Raises:
        ValueError: a member is present with a value the runner does not know.
    """
    flags = {}
    for key in ("session_ids", "clock"):
        value = answer.get(key, CHOSEN)
        if value not in (OWN, CHOSEN):
            raise ValueError(f"{key} must be {OWN!r} or {CHOSEN!r}, got {value!r}")
        flags[key] = value == OWN
    return Declarations(
        read_wording(answer.get("wording")),
        flags["session_ids"],
        flags["clock"],
        read_profiles(answer),
    )


def read_port_start(answer: Any) -> tuple[frozenset[str], Declarations, tuple[str, ...]]:
    """The ops, declarations and backends of a start answer.

    Raises:
        ValueError: a declaration the runner cannot use.
        _runner._Fault: the answer does not speak the protocol or lists no ops.
    """
    ops, backends = read_start(answer)
    return ops, read_declarations(answer), backends


class PortAdapter(Adapter):
    """The runner's adapter process with what its start answer declares about the port: its
    wording, own ids and clock, claimed profiles; a declaration it cannot use stops the start."""

    _declared: Declarations = Declarations()

    @property
    def declared(self) -> Declarations:
        """The declarations; reading them starts an adapter never started, as ``ops`` does."""
        self._ensure_started()
        return self._declared

    def _declare(self, answer: Mapping[str, Any]) -> None:
        self._declared = read_declarations(answer)


@functools.cache
def _pins_at(path: str) -> tuple[str, ...]:
    try:
        pins = read_json(Path(path)).get("pins", [])
    except (OSError, ValueError, AttributeError):
        return ()
    return tuple(pins) if isinstance(pins, list) else ()


def case_pins(case: Case) -> tuple[str, ...]:
    """The case file's ``pins`` member: what it pins that no declaration may rewrite."""
    return _pins_at(str(case.path))


@dataclass(frozen=True)
class Plan:
    """How one case is run and judged for one adapter.

    ``case`` is what is sent and compared (rewritten into the adapter's wording where it
    declared one); ``unsupported`` is the reason the case cannot be judged, or "".
    """

    case: Case
    declared: Declarations = field(default_factory=Declarations)
    unsupported: str = ""

    def before_observing(self, response: Response) -> None:
        """Give the queries the runner is about to run the adapter's own ids.

        Why: ``expect.database`` queries name sessions by the case's ids, and the runner's
        observation (conformance/runner/_workspace.py) runs the queries of ``case.expect``, which it
        holds by reference; so this case's copy of ``expect`` is updated in place.
        """
        if self.case.op != "session" or not self.declared.own_ids or response.kind != "output":
            return
        mapping = _identity.map_ids(self.case.input["steps"], response.output)
        if isinstance(mapping, dict) and isinstance(self.case.expect.get("database"), dict):
            self.case.expect["database"] = _identity.substitute(self.case.expect["database"], mapping)

    def evaluate(self, response: Response, observed: Mapping[str, Any] | None,
                 span: tuple[float, float]) -> Verdict:
        """Judge the answer: ids mapped and times relaxed as declared, then compared exactly."""
        case, declared = self.case, self.declared
        if case.op != "session" or "steps" not in case.expect or response.kind != "output" \
                or not (declared.own_ids or declared.own_clock):
            return evaluate(case, response, observed)
        got = copy.deepcopy(response.output)
        seen = copy.deepcopy(dict(observed or {}))
        expect = case.expect
        if declared.own_ids:
            mapping = _identity.map_ids(case.input["steps"], got)
            if isinstance(mapping, str):
                return Verdict("failed", mapping)
            expect = _identity.substitute(expect, mapping)
            if isinstance(expect.get("database"), dict) and isinstance(seen.get("database"), dict):
                _identity.sort_rows_naming_ids(expect["database"], seen["database"], mapping)
        if isinstance(got, dict) and isinstance(got.get("steps"), list):
            _identity.relax_ties(case.input["steps"], expect["steps"], got["steps"])
        if declared.own_clock:
            want = {"steps": expect["steps"], **({"database": expect["database"]}
                                                 if "database" in expect else {})}
            have = {"steps": got.get("steps") if isinstance(got, dict) else None,
                    **({"database": seen.get("database")} if "database" in seen else {})}
            problem = _identity.check_times(want, have, _identity.clock_values(case.input),
                                            (int(span[0]), int(span[1])))
            if problem:
                return Verdict("failed", problem)
            if isinstance(got, dict):
                got["steps"] = have["steps"]
            if "database" in seen:
                seen["database"] = have["database"]
        judged = replace(case, expect=expect)
        return evaluate(judged, replace(response, output=got), seen)


def plan(case: Case, declared: Declarations) -> Plan:
    """The case as this adapter is judged by it; see the module docstring."""
    if replace(declared, profiles=()) == Declarations():  # claims change no case
        return Plan(case, declared)
    if declared.wording != SPEC_WORDING and WORDING_PIN not in case_pins(case):
        reworded = reword_case(case.op, case.input, case.expect, declared.wording)
        if isinstance(reworded, str):
            return Plan(case, declared, f"with the adapter's own wording: {reworded}")
        case = replace(case, input=reworded[0], expect=reworded[1])
    if case.op == "session":
        case = replace(case, expect=dict(case.expect))  # its own copy: see before_observing
        reason = _identity.unjudgeable(case.input, case.expect, declared.own_ids, declared.own_clock)
        if reason:
            own = " and ".join(n for n, on in (("ids", declared.own_ids),
                                               ("clock", declared.own_clock)) if on)
            return Plan(case, declared, f"with the adapter's own {own}: {reason}")
    return Plan(case, declared)
