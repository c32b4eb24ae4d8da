"""Scripted stand-ins for a provider and a tool registry (SPEC R-PRV-19, R-PRV-23, R-ENG, R-TOOL-1).

Real components of the package, driven by a script, for tests of code that uses them.

For tests, for the conformance op ``engine_run`` and for users who want to drive
``AgentEngine`` without a network. A port's adapter needs the same semantics:

``MockProvider(replies)`` is the design's mock (R-PRV-23): the messages in order, no usage.

``ScriptedProvider(replies)`` answers call ``k`` with step ``k`` of its script:

- ``Reply(message, usage=None, chunks=None)``: text chunks, then ``done`` with ``message`` and
  ``usage``. ``chunks=None`` streams the whole content as one chunk (none when it is empty);
  otherwise each given string is one text chunk, as given (a real provider's deltas are
  non-empty and join to the content, R-PRV-19; the script does not check).
  A bare ``Message`` means ``Reply(message)``.
- ``Failure(code, message, chunks=(), status=None, retry_after=None, should_retry=None)``: the
  text chunks, then the error chunk ``"<code>: <message>"``; with any of the three hints of
  R-ERR-2 set, the chunk also carries the typed error with them (R-ENG-19).
- an exception instance: raised when the stream is first advanced.
- past the end of the script: the error chunk ``"script_exhausted: …"``.

Every call is recorded in ``requests`` before its step is taken. ``generate`` takes the same
steps (a ``Failure`` raises the ``ProviderError`` subclass with that code), so the provider can
also serve as a compactor's summarizer.

``ScriptedRegistry(tools, results)`` offers ``tools`` and answers ``execute`` from ``results``,
recording each call in ``calls``; it never raises except with a scripted exception.

``steps_from_json`` and ``ScriptedRegistry.from_json`` read the JSON forms an adapter receives.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, NamedTuple, TypeVar

from .provider import ProviderError, ScriptExhausted, error_chunk
from .schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, UNKNOWN_TOOL, Message, StreamChunk, ToolDefinition, Usage

__all__ = [
    "MOCK_PROVIDER",
    "SCRIPTED_PROVIDER",
    "Failure",
    "MockProvider",
    "Reply",
    "ScriptCursor",
    "ScriptRequest",
    "ScriptedProvider",
    "ScriptedRegistry",
    "Step",
    "steps_from_json",
]

MOCK_PROVIDER: Final = "mock"  # the ``provider`` attribute of MockProvider's errors
SCRIPTED_PROVIDER: Final = "scripted"  # the ``provider`` attribute of the errors it raises
NO_SCRIPTED_RESULT: Final = "error: no scripted result for call {number} to {name!r}"


T = TypeVar("T")


class ScriptRequest(NamedTuple):
    """What a scripted provider was asked: the messages and tools of one call, as given."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]


class ScriptCursor(Generic[T]):
    """The steps of a script, taken one per call under a lock, with every request recorded.

    Shared by MockProvider and ScriptedProvider.
    """

    def __init__(self, steps: Sequence[T], provider: str) -> None:
        self._steps = tuple(steps)
        self._next = 0
        self._lock = threading.Lock()
        self._provider = provider
        self.requests: list[ScriptRequest] = []

    def __repr__(self) -> str:
        return f"{len(self._steps)} steps, {self._next} used"

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._next

    def take(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> T:
        """Record the request and return the next step.

        Raises:
            ScriptExhausted: every step has been used (code ``script_exhausted``).
        """
        with self._lock:
            self.requests.append(ScriptRequest(tuple(messages), tuple(tools)))
            if self._next >= len(self._steps):
                raise ScriptExhausted(
                    f"{self._provider}: the script is exhausted: all {len(self._steps)} steps were used "
                    f"and call {len(self.requests)} asked for another",
                    provider=self._provider,
                )
            step = self._steps[self._next]
            self._next += 1
        return step


class MockProvider:
    """Return scripted replies in order, with no usage (R-PRV-23).

    Every request is recorded in ``requests`` (messages and tools, as tuples) so a test can
    check what was asked. Safe to call from several threads.

    Args:
        replies: the assistant messages to return, one per call.
    """

    def __init__(self, replies: Sequence[Message]) -> None:
        self._script: ScriptCursor[Message] = ScriptCursor(replies, MOCK_PROVIDER)
        self.requests = self._script.requests

    def __repr__(self) -> str:
        return f"MockProvider({self._script!r})"

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return self._script.remaining

    @property
    def reserved_output_tokens(self) -> int:
        """Nothing of the window is kept for the reply: no request is sent (R-PRV-26)."""
        return 0

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """The next scripted reply and no usage.

        Raises:
            ScriptExhausted: every reply has been used (code ``script_exhausted``).
        """
        return self._script.take(messages, available_tools), None

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        """One text chunk with the whole content (when non-empty), then ``done`` without usage.

        An exhausted script ends in an ``error`` chunk (R-PRV-19).
        """
        try:
            reply, _ = self.generate(messages, available_tools)
        except ScriptExhausted as exc:
            yield error_chunk(exc)
            return
        if reply.content:
            yield StreamChunk(CHUNK_TEXT, delta=reply.content)
        yield StreamChunk(CHUNK_DONE, message=reply)


@dataclass(frozen=True, slots=True)
class Reply:
    """A scripted answer: ``chunks`` as text chunks, then ``done`` with ``message`` and ``usage``."""

    message: Message
    usage: Usage | None = None
    chunks: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Failure:
    """A scripted provider failure: ``chunks`` as text chunks, then the error chunk ``"<code>: <message>"``."""

    code: str
    message: str
    chunks: tuple[str, ...] = ()
    status: int | None = None
    retry_after: float | None = None
    should_retry: bool | None = None

    def chunk(self) -> StreamChunk:
        """The error chunk; typed, with the hints, when the step has any (R-PRV-19, R-ENG-19)."""
        text = f"{self.code}: {self.message}"
        if self.status is None and self.retry_after is None and self.should_retry is None:
            return StreamChunk(CHUNK_ERROR, error=text)
        return StreamChunk(CHUNK_ERROR, error=text, failure=self.error())

    def error(self) -> ProviderError:
        """The ProviderError subclass whose ``code`` is the step's, with its hints (R-ERR-1, R-ERR-2)."""
        return _provider_error(self.code, self.message, self.status, self.retry_after, self.should_retry)


Step = Reply | Failure | Message | BaseException
"""One step of a ``ScriptedProvider`` script."""


def _provider_error(
    code: str, message: str, status: int | None, retry_after: float | None, should_retry: bool | None
) -> ProviderError:
    """The ProviderError subclass whose ``code`` is ``code``; a new subclass for an unknown code."""
    pending: list[type[ProviderError]] = [ProviderError]
    found: type[ProviderError] | None = None
    while pending and found is None:
        cls = pending.pop()
        found = cls if cls.code == code else None
        pending.extend(cls.__subclasses__())
    if found is None:
        found = type("ScriptedProviderError", (ProviderError,), {"code": code})
    return found(
        message, provider=SCRIPTED_PROVIDER, status=status, retry_after=retry_after, should_retry=should_retry
    )


class ScriptedProvider:
    """A provider that plays a script, one step per call (see the module docstring).

    Args:
        replies: the steps, in order.
        reserved_output_tokens: what the provider says it keeps of the window for each reply
            (R-PRV-26), so a test can stand in for a provider that sends ``max_tokens``.

    Attributes:
        requests: every call so far, in order. Safe to call from several threads.
    """

    def __init__(self, replies: Sequence[Step], *, reserved_output_tokens: int = 0) -> None:
        self._script: ScriptCursor[Step] = ScriptCursor(replies, SCRIPTED_PROVIDER)
        self.requests = self._script.requests
        self._reserved_output_tokens = reserved_output_tokens

    def __repr__(self) -> str:
        return f"ScriptedProvider({self._script!r})"

    @property
    def remaining(self) -> int:
        """How many steps are left."""
        return self._script.remaining

    @property
    def reserved_output_tokens(self) -> int:
        """The reserve given to the constructor (R-PRV-26)."""
        return self._reserved_output_tokens

    def _take(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> Reply | Failure | BaseException:
        step = self._script.take(messages, tools)
        return Reply(step) if isinstance(step, Message) else step

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        """The next step as a stream (R-PRV-19); nothing happens until the stream is advanced.

        Raises:
            BaseException: the step's exception, when the step is one.
        """
        try:
            step = self._take(messages, available_tools)
        except ScriptExhausted as exc:
            yield error_chunk(exc)
            return
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Failure):
            yield from (StreamChunk(CHUNK_TEXT, delta=text) for text in step.chunks)
            yield step.chunk()
            return
        chunks = step.chunks if step.chunks is not None else (step.message.content,) if step.message.content else ()
        yield from (StreamChunk(CHUNK_TEXT, delta=text) for text in chunks)
        yield StreamChunk(CHUNK_DONE, message=step.message, usage=step.usage)

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """The next step's message and usage (R-PRV-1).

        Raises:
            ProviderError: for a ``Failure`` step, the subclass with its code (R-ERR-1);
                ``ScriptExhausted`` past the end of the script.
            BaseException: the step's exception, when the step is one.
        """
        step = self._take(messages, available_tools)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Failure):
            raise step.error()
        return step.message, step.usage


def _chunks(value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise ValueError(f"{path}: expected an array of strings")
    return tuple(value)


def _hint(error: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    """An optional retry hint of a scripted error (R-ERR-2): absent or null is None."""
    value = error.get(name)
    if value is None:
        return None
    if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
        raise ValueError(f"{where}.error.{name}: expected {'true or false' if kind is bool else 'a number'}")
    return value


def steps_from_json(items: Sequence[Mapping[str, Any]], path: str = "replies") -> list[Step]:
    """Read a script in JSON form, one object per step.

    ``{"message": <message>, "usage"?: <usage>, "chunks"?: [<text>]}`` is a ``Reply``;
    ``{"error": {"code": <code>, "message": <text>, "status"?: <int>, "retry_after"?: <number>,
    "should_retry"?: <bool>}, "chunks"?: [<text>]}`` a ``Failure``;
    ``{"raise": <text>}`` an exception (``RuntimeError(text)``) raised by the provider.

    Raises:
        ValueError: a step has none of these forms (``SchemaError`` for a bad message or usage).
    """
    steps: list[Step] = []
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        if "message" in item:
            usage = item.get("usage")
            steps.append(
                Reply(
                    Message.from_dict(item["message"], f"{where}.message"),
                    None if usage is None else Usage.from_dict(usage, f"{where}.usage"),
                    _chunks(item["chunks"], f"{where}.chunks") if "chunks" in item else None,
                )
            )
        elif "error" in item:
            error = item["error"]
            if not isinstance(error, Mapping) or not all(isinstance(error.get(k), str) for k in ("code", "message")):
                raise ValueError(f'{where}.error: expected {{"code": <string>, "message": <string>}}')
            steps.append(
                Failure(
                    error["code"],
                    error["message"],
                    _chunks(item.get("chunks", []), f"{where}.chunks"),
                    _hint(error, "status", int, where),
                    _hint(error, "retry_after", (int, float), where),
                    _hint(error, "should_retry", bool, where),
                )
            )
        elif "raise" in item:
            steps.append(RuntimeError(str(item["raise"])))
        else:
            raise ValueError(f'{where}: expected a "message", "error" or "raise" member')
    return steps


ScriptedResult = str | BaseException
"""One scripted observation, or an exception for ``execute`` to raise."""


class ScriptedRegistry:
    """A tool registry with fixed definitions and scripted observations.

    Args:
        tools: what ``available_tools()`` returns, every turn.
        results: either a mapping from tool name to an observation used for every call of that
            tool, or to a list of observations used one per call in order; or a list of
            observations used one per call in call order, whatever the tool. An exception in
            place of an observation is raised by ``execute``. A name the mapping lacks gets
            ``error: unknown tool "<name>"``; a used-up list gets ``NO_SCRIPTED_RESULT``.

    Attributes:
        calls: every ``(name, arguments)`` passed to ``execute``, in order.
    """

    def __init__(
        self,
        tools: Sequence[ToolDefinition] = (),
        results: Mapping[str, ScriptedResult | Sequence[ScriptedResult]] | Sequence[ScriptedResult] = (),
    ) -> None:
        self._tools = tuple(tools)
        self._results = results
        self._used: dict[str | None, int] = {}
        self._lock = threading.Lock()
        self.calls: list[tuple[str, str]] = []

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScriptedRegistry:
        """``{"tools": [<tool definition>], "results": {<name>: <text> | [<text>]} | [<text>]}``."""
        tools = [ToolDefinition.from_dict(tool, f"tools[{i}]") for i, tool in enumerate(data.get("tools", []))]
        return cls(tools, data.get("results", ()))

    def available_tools(self) -> list[ToolDefinition]:
        return list(self._tools)

    def execute(self, name: str, arguments: str) -> str:
        with self._lock:
            self.calls.append((name, arguments))
            result = self._pick(name)
        if isinstance(result, BaseException):
            raise result
        return result

    def _pick(self, name: str) -> ScriptedResult:
        if isinstance(self._results, Mapping):
            if name not in self._results:
                return UNKNOWN_TOOL.format(name=name)
            entry, key = self._results[name], name
        else:
            entry, key = self._results, None
        if isinstance(entry, (str, BaseException)):
            return entry
        n = self._used.get(key, 0)
        self._used[key] = n + 1
        return entry[n] if n < len(entry) else NO_SCRIPTED_RESULT.format(number=n + 1, name=name)
