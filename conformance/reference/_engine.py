"""The ``engine_run``, ``tool_execute`` and ``approval_rule`` ops of the reference adapter.

``engine_run`` is one run of AgentEngine against scripts. ``tool_execute`` drives a real
``harness9_ref.tools.Registry`` (real ``bash`` processes) in the runner's scratch folder.

The provider and the tool registry are scripted (``harness9_ref.testing``), the session is a
MemorySession filled with the case's stored messages, and the compactor is built as in the
``compact`` op. The output is every event of the run, the session's messages afterwards and
the requests the provider received (the compacted views), so a case checks all three; with
``durable`` or ``save_fails`` also each save the run made (R-ENG-23, R-ENG-25).
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from conformance.reference._memory import InvalidInput, compactor_from_json
from conformance.reference._session import checkpoint_from_json, context_state_from_json
from harness9_ref.engine import (
    AgentEngine,
    ContextStrategy,
    EngineBusy,
    EngineError,
    ErrorData,
    Event,
    EventType,
    LiteralContext,
    LongSession,
    OwnTools,
    RetryingSummarizer,
    RetryPolicy,
    SaveAsItGoes,
    SaveAtEnd,
)
from harness9_ref.memory.context import Compactor, SummarizationCompactor, new_summarization_compactor
from harness9_ref.memory.storage import MemorySession, SessionDatabaseError
from harness9_ref.planning import todos_from_list
from harness9_ref.schema import Message, StreamChunk, ToolDefinition, messages_from_list, messages_to_list
from harness9_ref.testing import ScriptedProvider, ScriptedRegistry, steps_from_json
from harness9_ref.tools import (
    AllowRule,
    AllowRules,
    Answer,
    Approve,
    FileChange,
    Registry,
    command_words,
    covering_rule,
    require_yes,
    rule_offers,
    rule_text,
    rules_directory,
)

__all__ = ["op_approval_rule", "op_engine_run", "op_tool_execute"]


def _compactor(
    spec: Mapping[str, Any] | None, provider: ScriptedProvider, retry: RetryPolicy | None
) -> tuple[Compactor | None, RetryingSummarizer | None]:
    """The case's compactor; ``summarization`` summarises with the run's own provider (R-LONG-1).

    With retries, its calls go through a ``RetryingSummarizer``, returned too, as an engine's
    builder wraps them (R-ENG-27).
    """
    if spec is None:
        return None, None
    if spec.get("strategy") != "summarization":
        return compactor_from_json(spec), None
    config = spec.get("config", {})
    retrying = RetryingSummarizer(provider, retry) if retry is not None and retry.max_retries else None
    summarizer = provider if retrying is None else retrying
    if "context_window" in config:
        compactor = new_summarization_compactor(summarizer, config["context_window"])
    else:
        compactor = SummarizationCompactor(summarizer, config.get("max_tokens", 0), config.get("min_tail_messages", 0))
    compactor = dataclasses.replace(
        compactor,
        request_limit=int(config.get("request_limit", 0)),
        summary_limit=int(config.get("summary_limit", 0)),
    )
    return compactor, retrying


class CancellingProvider(ScriptedProvider):
    """The scripted provider, calling the engine's ``cancel()`` during streamed call ``cancel_call``.

    The cancel comes after that call took its step and before its first chunk reaches the
    engine, as a cancel from another thread while the provider is blocked would (R-ENG-15):
    the one moment between events that ``cancel_after_events`` cannot reach.
    """

    cancel_call: int | None = None
    cancel: Callable[[], object] = staticmethod(lambda: None)

    def generate_stream(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        for n, chunk in enumerate(super().generate_stream(messages, available_tools)):
            if n == 0 and len(self.requests) == self.cancel_call:
                self.cancel()
            yield chunk


class ScriptedCounter:
    """A token counter answering from the case's ``counter`` list, one answer per count (R-LONG-10).

    An answer is an integer, or ``{"error": text}`` to fail that count; a count after the last
    answer fails too. Every request counted is recorded.
    """

    def __init__(self, answers: Sequence[Any]) -> None:
        self._answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        self.requests.append({"messages": messages_to_list(messages), "tools": [t.to_dict() for t in tools]})
        if len(self.requests) > len(self._answers):
            raise RuntimeError("the counter's script is exhausted")
        answer = self._answers[len(self.requests) - 1]
        if isinstance(answer, dict):
            raise RuntimeError(str(answer.get("error", "the count failed")))
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise InvalidInput(f"counter[{len(self.requests) - 1}]: expected an integer or an error object")
        return answer


def _compact_at(value: Any) -> Fraction | None:
    """``compact_at``: ``"off"``, or a decimal string such as ``"0.5"`` read exactly (R-LONG-10)."""
    if value == "off":
        return None
    if not isinstance(value, str):
        raise InvalidInput('compact_at: expected "off" or a decimal number as a string')
    try:
        return Fraction(value)
    except ValueError:
        raise InvalidInput(f"compact_at: not a decimal number: {value!r}") from None


def _retry(spec: Any) -> RetryPolicy | None:
    """``retry``: ``{"max_retries": n, "jitter": false | [draws]}`` with a wait that returns at once (R-ENG-18).

    ``jitter: false`` draws 0 (the plain backoff); a list gives the draws in order, then 0.
    The delays are those of the retry events, so nothing sleeps.
    """
    if spec is None:
        return None
    if not isinstance(spec, Mapping) or isinstance(spec.get("max_retries"), bool) or not isinstance(spec.get("max_retries"), int):
        raise InvalidInput('retry: expected {"max_retries": <integer>, "jitter"?: false or [<number>]}')
    jitter = spec.get("jitter", False)
    if jitter is False:
        jitter = []
    if not isinstance(jitter, list) or not all(isinstance(d, (int, float)) and not isinstance(d, bool) for d in jitter):
        raise InvalidInput("retry.jitter: expected false or an array of numbers")
    draws = [float(d) for d in jitter]
    try:
        return RetryPolicy(spec["max_retries"], lambda: draws.pop(0) if draws else 0.0, lambda cancelled, seconds: None)
    except ValueError as exc:  # R-ENG-18a's ValueError names no code of the protocol: a broken case
        raise InvalidInput(f"retry.max_retries: {exc}") from None


class RecordingSession(MemorySession):
    """A MemorySession that records each ``add_messages`` call of the run (R-ENG-23, R-ENG-25).

    A call whose number (1 for the first) is in ``fails`` raises and stores nothing. Each record
    says how many messages the call carried, whether it stored them, and how many events the
    consumer had received and how many requests the provider had answered when it was made.
    """

    def __init__(self) -> None:
        super().__init__()
        self.fails: set[int] = set()
        self.saves: list[dict[str, Any]] = []
        self.progress: Callable[[], tuple[int, int]] = lambda: (0, 0)

    def add_messages(self, msgs: Sequence[Message]) -> None:
        batch = list(msgs)
        events, requests = self.progress()
        ok = len(self.saves) + 1 not in self.fails
        self.saves.append({"after_events": events, "after_requests": requests, "messages": len(batch), "ok": ok})
        if not ok:
            raise SessionDatabaseError("attempt to write a readonly database")
        super().add_messages(batch)


def _save_fails(value: Any) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in value):
        raise InvalidInput("save_fails: expected an array of positive integers (the add_messages calls that fail)")
    return value


def _session(inp: Mapping[str, Any]) -> RecordingSession | None:
    if inp.get("session") is None:
        return None
    session = RecordingSession()
    session.add_messages(messages_from_list(inp["session"], "session"))
    if inp.get("todos") is not None:
        session.save_todos(todos_from_list(inp["todos"], "todos"))
    if inp.get("checkpoint") is not None:
        session.save_checkpoint(checkpoint_from_json(inp["checkpoint"]))
    if inp.get("context_state") is not None:
        session.save_context_state(context_state_from_json(inp["context_state"]))
    session.saves.clear()  # only the run's own saves are recorded, and may fail
    session.fails = set(_save_fails(inp.get("save_fails", [])))
    return session


def _error(exc: EngineError) -> dict[str, Any]:
    return Event(EventType.ERROR, ErrorData(exc.code, exc.message)).to_dict()


def _state(engine: AgentEngine) -> dict[str, Any]:
    return {"running": engine.running, "context_window": engine.context_window}


def _second_run(engine: AgentEngine) -> str:
    """``engine_busy`` when a second run is refused at once, as R-ENG-16 says; else ``started``."""
    try:
        engine.run_stream("a second prompt").close()
    except EngineBusy as exc:
        return exc.code
    return "started"


def op_engine_run(inp: Mapping[str, Any]) -> dict[str, Any]:
    """Run the case's prompts (``prompt``, or the actions of ``script``) on one session.

    ``cancel_after_events`` cancels the run in progress after that many events in all,
    ``cancel_during_call`` while that streamed provider call is in progress, and
    ``probe_after_events`` records the engine's state then (R-ENG-16); ``{"compact": focus}``
    calls ``compact_now`` and records its data as a compaction event or its error as an error
    event; ``{"restart": true}`` builds a new engine on the same session; ``{"run": prompt}``
    runs the blocking ``run`` and records its result (R-ENG-1); ``{"probe": true}`` records the
    state between runs.
    """
    provider = CancellingProvider(steps_from_json(inp["provider"], "provider"))
    registry = ScriptedRegistry.from_json(inp.get("registry", {}))
    session = _session(inp)
    retry = _retry(inp.get("retry"))
    compactor, retrying = _compactor(inp.get("compactor"), provider, retry)
    system_prompt = inp["system_prompt"]
    counter = ScriptedCounter(inp["counter"]) if "counter" in inp else None
    compact_at = _compact_at(inp.get("compact_at", "0.8"))

    long_session = bool(inp.get("long_session", False))
    window = inp.get("context_window", 0)

    def new_engine() -> AgentEngine:
        """The engine of the case's parts: its context, its saving and its own tools (R-ENG, R-LONG-1, R-LONG-18)."""
        context: ContextStrategy = LiteralContext(window)
        if long_session:
            context = LongSession(
                window,
                compact_at,
                int(inp.get("reply_reserve", 0)),
                counter,
                str(inp.get("window_source", "")),
                str(inp.get("model", "")),
                carry=bool(inp.get("carry", False)),
            )
        return AgentEngine(
            provider,
            registry,
            prompt_builder=lambda: system_prompt,
            session=session,
            compactor=compactor,
            context=context,
            saving=SaveAsItGoes() if inp.get("durable", False) else SaveAtEnd(),
            own_tools=OwnTools() if long_session and inp.get("own_tools", False) else None,
            retry=retry,
            summary_retries=retrying,
            max_turns=inp.get("max_turns", 50),
        )

    engine = new_engine()
    provider.cancel_call = inp.get("cancel_during_call")
    provider.cancel = lambda: engine.cancel()
    events: list[dict[str, Any]] = []
    probes = 0  # records of the engine's state, which the two counts below leave out
    if session is not None:
        session.progress = lambda: (len(events) - probes, len(provider.requests))
    cancel_after = inp.get("cancel_after_events")
    probe_after = inp.get("probe_after_events")
    for action in inp.get("script", [{"prompt": inp.get("prompt")}]):
        if "restart" in action:
            engine = new_engine()
        elif "compact" in action:
            try:
                events.append(Event(EventType.COMPACTION, engine.compact_now(action["compact"])).to_dict())
            except EngineError as exc:
                events.append(_error(exc))
        elif "run" in action:
            try:
                events.append({"type": "result", "data": engine.run(action["run"]).to_dict()})
            except EngineError as exc:
                events.append(_error(exc))
        elif "report" in action:
            try:
                events.append({"type": "report", "data": engine.context_report().to_dict()})
            except EngineError as exc:
                events.append(_error(exc))
        elif "probe" in action:
            events.append({"type": "probe", "data": _state(engine)})
            probes += 1
        else:
            for event in engine.run_stream(action["prompt"]):
                events.append(event.to_dict())
                if len(events) - probes == probe_after:
                    events.append({"type": "probe", "data": {**_state(engine), "second_run": _second_run(engine)}})
                    probes += 1
                if len(events) - probes == cancel_after:
                    engine.cancel()
    out: dict[str, Any] = {
        "events": events,
        "session": None if session is None else messages_to_list(session.get_messages()),
        "requests": [
            {"messages": messages_to_list(r.messages), "tools": [t.to_dict() for t in r.tools]} for r in provider.requests
        ],
    }
    if "long_session" in inp:
        checkpoint = None if session is None else session.get_checkpoint()
        out["checkpoint"] = None if checkpoint is None else checkpoint.to_dict()
        state = None if session is None else session.get_context_state()
        out["context_state"] = None if state is None else state.to_dict()
    if counter is not None:
        out["counts"] = counter.requests
    if session is not None and ("durable" in inp or "save_fails" in inp):
        out["saves"] = session.saves
    return out


def _approval(spec: str | list[str] | None, asked: list[Any]) -> Approve | None:
    """A callback giving the answers in order (the last one forever, or ``"no"`` after a list),
    appending to ``asked`` what each request was: the command, or the change as an object.

    ``"require_yes"`` is the callback of ``run`` mode without ``--yes`` instead (R-APPR-3).
    """
    if spec is None:
        return None
    # run mode without --yes (R-APPR-3) reports refusals nowhere here
    refuse = require_yes(lambda command: None) if spec == "require_yes" else _answers(spec)

    def approve(request: str | FileChange) -> Answer:
        if isinstance(request, FileChange):
            asked.append({"tool": request.tool, "path": request.path, "diff": request.diff})
        else:
            asked.append(request)
        return refuse(request)

    return approve


def _answers(spec: str | list[Any]) -> Approve:
    """The answers of ``spec`` in order: the one string forever, or a list then ``"no"``; in a
    list, ``{"rule": [words]}`` is the answer ``AllowRule(words)`` (R-APPR-7)."""
    known: dict[str, Answer] = {"yes": "yes", "no": "no", "always": "always"}
    answers: list[Answer] = []
    for answer in [spec] if isinstance(spec, str) else spec:
        if isinstance(answer, dict) and isinstance(answer.get("rule"), list):
            answers.append(AllowRule([str(word) for word in answer["rule"]]))
            continue
        if answer not in known:
            raise InvalidInput(f"approval: unknown answer {answer!r}")
        answers.append(known[answer])
    forever: Answer = answers[-1] if isinstance(spec, str) else "no"
    return lambda command: answers.pop(0) if answers else forever


def op_tool_execute(inp: Mapping[str, Any]) -> Any:
    """The tool definitions (no ``name``), or the observation of one call in ``workdir``.

    ``steps`` runs several calls on one registry instead, answering ``{"steps": [...]}`` with
    each call's observation and None for ``{"reset_approval": true}`` and ``{"close": true}``.
    ``approval`` answers every approval request (a string) or the requests in order (a list,
    then "no"), or is ``"require_yes"``; ``interrupt_after_seconds`` calls ``interrupt()`` from a timer thread that long
    after the first call starts (R-INT-1, R-APPR-1). A step ``{"approvals": true}`` is answered by
    the approval requests made since the previous such step: a command, or a change as
    ``{"tool", "path", "diff"}`` (R-APPR-4, R-TOOL-12). The registry is closed at the end (R-INT-2).
    ``rules`` gives it allow rules kept for ``workdir`` (R-APPR-7), in an allow file of a
    temporary folder outside the case's; a step ``{"rules": true}`` is answered by the rules
    kept for ``workdir`` then, as lists of words.
    """
    with tempfile.TemporaryDirectory(prefix="h9-allow-") as home:
        rules = AllowRules(Path(home, "allow.json")) if "rules" in inp else None
        if rules is not None:
            for rule in inp["rules"]:
                rules.add(rules_directory(inp["workdir"]), [str(word) for word in rule])
        return _tool_execute(inp, rules)


def _tool_execute(inp: Mapping[str, Any], rules: AllowRules | None) -> Any:
    asked: list[Any] = []
    registry = Registry(
        inp["workdir"],
        bash_timeout=float(inp.get("bash_timeout", 60)),
        output_cap=int(inp.get("output_cap", 65536)),
        approve=_approval(inp.get("approval"), asked),
        rules=rules,
    )
    if "name" not in inp and "steps" not in inp:
        return [tool.to_dict() for tool in registry.available_tools()]
    timer = None
    if "interrupt_after_seconds" in inp:
        timer = threading.Timer(float(inp["interrupt_after_seconds"]), registry.interrupt)
        timer.start()
    try:
        if "steps" not in inp:
            return registry.execute(inp["name"], inp["arguments"])
        out: list[str | list[Any] | None] = []
        for step in inp["steps"]:
            if step.get("reset_approval"):
                registry.reset_approval()
                out.append(None)
            elif step.get("close"):
                registry.close()
                out.append(None)
            elif step.get("approvals"):
                out.append(asked[:])
                asked.clear()
            elif step.get("rules"):
                kept = rules.rules_for(rules_directory(inp["workdir"])) if rules is not None else []
                out.append([list(rule) for rule in kept])
            else:
                out.append(registry.execute(step["name"], step["arguments"]))
        return {"steps": out}
    finally:
        if timer is not None:
            timer.cancel()
        registry.close()


def op_approval_rule(inp: Mapping[str, Any]) -> dict[str, Any]:
    """A command's words (R-APPR-6), the rules offered for it (R-APPR-8, as rule texts) and the
    first rule of ``rules[workdir]`` that covers it (R-APPR-7), each rule a list of words.

    ``rules`` maps directories, compared as given, to their rules; ``workdir`` absent or not
    among them covers nothing.
    """
    words = command_words(inp["command"])
    kept = inp.get("rules", {}).get(inp.get("workdir", ""), [])
    rule = covering_rule([tuple(str(word) for word in r) for r in kept], words)
    return {
        "words": None if words is None else list(words),
        "offers": [rule_text(offer) for offer in rule_offers(words)],
        "rule": None if rule is None else list(rule),
    }
