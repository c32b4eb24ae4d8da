"""Judging ``session`` cases for a port whose Manager makes its own session ids or reads its own clock.

Why: most session cases choose each session's id (``new`` steps with ``id``) and the clock
(``now``, ``set_time``), so that ids and times in the expected results are exact. A port whose
Manager generates both and offers no way in cannot follow them, yet its storage logic can be
judged all the same. An adapter that declares ``"session_ids": "own"`` creates each session
with a fresh id, answers that id in the ``new`` step, and reads the case's id as that fresh one
in the steps of the same run; the runner learns the mapping from the answer and carries it into
the expected results, rows and file names. One that declares ``"clock": "own"`` ignores
``now`` and ``set_time``; the runner then checks times by order and range instead of equality.
A case that cannot be judged that way is reported unsupported, with the reason.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["check_times", "map_ids", "relax_ties", "substitute", "unjudgeable"]

DEFAULT_NOW: Final = 1_700_000_000  # PORTING.md: the clock's start when a case gives no "now"
WELL_FORMED: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
LISTING_STEPS: Final = frozenset({"list", "recent", "search"})
_TIME_KEYS: Final = ("created_at", "updated_at")
_REFERENCE_FIELDS: Final = frozenset({"do", "id", "as", "manager", "messages", "items", "checkpoint"})


def created_id(step: Any) -> str | None:
    """The id a step chooses for the session it creates: ``new``'s ``id``, ``fork``'s ``as`` (R-MGR-10)."""
    if isinstance(step, dict) and step.get("do") == "new" and "id" in step:
        return str(step["id"])
    if isinstance(step, dict) and step.get("do") == "fork" and "as" in step:
        return str(step["as"])
    return None


def chosen_ids(steps: list[Any]) -> list[str]:
    """The ids the case chooses, in the order of the steps that create them."""
    return [i for i in map(created_id, steps) if i is not None]


def clock_values(input: Mapping[str, Any]) -> list[int]:
    """Every value the case's clock shows, in the order the steps set them."""
    values = [input.get("now", DEFAULT_NOW)]
    values += [s["now"] for s in input["steps"] if isinstance(s, dict) and s.get("do") == "set_time"]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _ids_unjudgeable(input: Mapping[str, Any], expect: Mapping[str, Any]) -> str:
    ids = chosen_ids(input["steps"])
    if len(set(ids)) != len(ids):
        return "the case creates one id twice, which an adapter with its own ids cannot do"
    for key in ("files", "symlinks"):
        for path in [*input.get(key, {}), *_strings(input.get(key, {}))]:
            if any(i in path for i in ids):
                return f"the case lays out {path} under a session id before the run"
    seen: set[str] = set()
    for step in input["steps"]:
        if step.get("do") in LISTING_STEPS and ("limit" in step or "offset" in step):
            return f"a {step['do']} page's content depends on how ties are broken by id"
        if step.get("do") != "new" and step.get("id") in ids and step["id"] not in seen:
            return f"a {step.get('do')} step uses {step['id']} before the session is created"
        chosen = created_id(step)
        if chosen is not None:
            seen.add(chosen)
        for key, value in step.items():
            if key not in _REFERENCE_FIELDS and isinstance(value, str) and value and \
                    any(i.startswith(value) or i in value for i in ids):
                return f"a {step.get('do')} step's {key} spells out a chosen id ({value!r})"
    return ""


def _clock_unjudgeable(input: Mapping[str, Any], expect: Mapping[str, Any]) -> str:
    shown = [input.get("now", DEFAULT_NOW)] + [s.get("now") for s in input["steps"] if s.get("do") == "set_time"]
    if any(isinstance(v, float) for v in shown):
        return "the case's clock shows a fraction of a second, which an adapter's own clock does not take"
    values = clock_values(input)
    if any(b < a for a, b in itertools.pairwise(values)):
        return "the case sets the clock backwards, which an adapter's own clock cannot follow"
    dos = {s.get("do") for s in input["steps"]}
    if "prune" in dos:
        return "prune counts depend on the ages the case's clock gives the sessions"
    if len(set(values)) > 1 and dos & LISTING_STEPS:
        return "the listing's order depends on the distinct times the case's clock gives"
    if any(s.get("do") in LISTING_STEPS and ("limit" in s or "offset" in s) for s in input["steps"]):
        return "a listing page's content depends on where the adapter's clock ticks"
    if "fixture" in input and set(values) & set(_ints(expect)):
        return "the fixture's stored times equal the case's clock, so they cannot be told apart"
    return ""


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ints(v)]
    if isinstance(value, list):
        return [i for v in value for i in _ints(v)]
    return []


def unjudgeable(input: Mapping[str, Any], expect: Mapping[str, Any], own_ids: bool,
                own_clock: bool) -> str:
    """Why this session case cannot be judged for such an adapter, or "" when it can."""
    if "steps" not in expect or not isinstance(input.get("steps"), list):
        return ""
    return (own_ids and _ids_unjudgeable(input, expect)) or \
        (own_clock and _clock_unjudgeable(input, expect)) or ""


def map_ids(steps: list[Any], got: Any) -> dict[str, str] | str:
    """Case id -> the adapter's id, read from its ``new`` answers; a string says what is wrong.

    A ``new`` step that failed leaves its id unmapped: the comparison then reports the step.
    """
    if not (isinstance(got, dict) and isinstance(got.get("steps"), list)):
        return {}
    mapping: dict[str, str] = {}
    for index, step in enumerate(steps):
        chosen = created_id(step)
        if chosen is None:
            continue
        answers = got["steps"]
        answer = answers[index] if index < len(answers) else None
        ok = answer.get("ok") if isinstance(answer, dict) else None
        fresh = ok.get("id") if isinstance(ok, dict) else None
        if not isinstance(fresh, str):
            continue
        if not WELL_FORMED.fullmatch(fresh):
            return f"/steps/{index}/ok/id: the adapter's own id {fresh!r} is not well-formed (R-SES-2)"
        if fresh in mapping.values():
            return f"/steps/{index}/ok/id: the adapter gave the id {fresh!r} to two sessions"
        mapping[chosen] = fresh
    return mapping


def substitute(value: Any, mapping: Mapping[str, str]) -> Any:
    """``value`` with every occurrence of a case id inside its strings replaced."""
    if isinstance(value, str):
        for case_id, fresh in mapping.items():
            value = value.replace(case_id, fresh)
        return value
    if isinstance(value, dict):
        return {substitute(k, mapping): substitute(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    return value


def sort_rows_naming_ids(want: dict[str, Any], got: dict[str, Any], mapping: Mapping[str, str]) -> None:
    """Sort, in place, the rows of each query whose expected rows name two or more sessions.

    Why: such rows are often ordered by session id, and an adapter's own ids order them
    differently; the rows themselves are still judged, their order is not.
    """
    fresh = set(mapping.values())
    for sql, rows in want.items():
        named = {text for text in _strings(rows) if text in fresh}
        if len(named) >= 2 and isinstance(rows, list) and isinstance(got.get(sql), list):
            want[sql] = sorted(rows, key=repr)
            got[sql] = sorted(got[sql], key=repr)


def relax_ties(steps: list[Any], want: list[Any], got: list[Any]) -> None:
    """Put, in place, the got items of each run of equal expected times into the expected order.

    Why: listings break ties on times by id, and an adapter's own ids (or own clock, whose
    ticks need not fall where the case's do) order a tie differently. Within a run of items
    the case expects with equal times, the order is not judged; the items still are.
    """
    for index, step in enumerate(steps):
        if not (isinstance(step, dict) and step.get("do") in LISTING_STEPS):
            continue
        if index >= min(len(want), len(got)):
            break
        expected = want[index].get("ok") if isinstance(want[index], dict) else None
        answer = got[index].get("ok") if isinstance(got[index], dict) else None
        if not (isinstance(expected, list) and isinstance(answer, list)
                and len(expected) == len(answer)
                and all(isinstance(item, dict) for item in expected + answer)):
            continue
        start = 0
        while start < len(expected):
            key = tuple(expected[start].get(k) for k in _TIME_KEYS)
            end = start
            while end < len(expected) and tuple(expected[end].get(k) for k in _TIME_KEYS) == key:
                end += 1
            order = {item.get("id"): n for n, item in enumerate(expected[start:end])}
            run = answer[start:end]
            if sorted(map(str, order)) == sorted(str(item.get("id")) for item in run):
                answer[start:end] = sorted(run, key=lambda item: order[item.get("id")])
            start = end


def _time_slots(want: Any, got: Any, clock: set[int], pointer: str, out: list[Any]) -> None:
    """Collect (pointer, expected time, got value, got container, key) where the case expects a time."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            if key in got:
                _visit(value, got, key, clock, f"{pointer}/{key}", out)
    elif isinstance(want, list) and isinstance(got, list):
        for index, value in enumerate(want[: len(got)]):
            _visit(value, got, index, clock, f"{pointer}/{index}", out)


def _visit(value: Any, container: Any, key: Any, clock: set[int], pointer: str, out: list[Any]) -> None:
    have = container[key]
    if isinstance(value, int) and not isinstance(value, bool) and value in clock:
        out.append((pointer, value, have, container, key))
    else:
        _time_slots(value, have, clock, pointer, out)


def check_times(want: Any, got: Any, clock: list[int], span: tuple[int, int]) -> str:
    """Check an own clock's times against the case's; on success give ``got`` the case's values.

    Every time must lie within ``span`` (the run's wall clock, in whole seconds) and times the
    case expects in increasing order must not decrease. Times it expects equal are then equal
    whenever the run stayed within one second, which is nearly always; a run that crossed a
    second boundary may put two steps on either side of it, so equality is not demanded
    separately: demanding it would fail a correct port at random.
    Returns "" or the first problem as ``pointer: problem``.
    """
    slots: list[Any] = []
    _time_slots(want, got, set(clock), "", slots)
    slots = [s for s in slots if isinstance(s[2], int) and not isinstance(s[2], bool)]
    low, high = span
    for pointer, _, have, _, _ in slots:
        if not low <= have <= high:
            return f"{pointer}: time {have} is outside the run's wall clock [{low}, {high}]"
    by_value: dict[int, list[Any]] = {}
    for slot in slots:
        by_value.setdefault(slot[1], []).append(slot)
    latest: Any = None
    for value in sorted(by_value):
        group = by_value[value]
        if latest is not None:
            early = min(group, key=lambda s: s[2])
            if early[2] < latest[2]:
                return f"{early[0]}: time {early[2]} is earlier than {latest[2]} at {latest[0]}, which the case expects earlier"
        latest = max(group, key=lambda s: s[2])
    for _, value, _, container, key in slots:
        container[key] = value
    return ""
