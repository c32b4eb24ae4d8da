"""Drive an adapter over protocol v1: the process, the handshake, one request and its answer.

Theory of operation: an adapter is a subprocess speaking JSON lines. A reader thread puts each
stdout line on a queue, so a read can time out; another keeps the tail of stderr, which is
quoted when the adapter dies. Misbehaviour never stops a run: an adapter that crashes, hangs,
prints something that is not JSON or echoes the wrong ``seq`` is killed, that case is marked
errored with a reason and a hint, and the adapter is started again for the next case. A
response of the wrong shape is errored too, but the stream is still in step, so the adapter
keeps running; so is an error answer with the code ``internal_error``, an adapter's own report
of a crash it caught (SPEC R-RUN-1). With a trace (``run --trace``) every protocol line of a
case is kept, so a failing case can be shown as it was sent and answered. Running and judging
cases through it, fitted to what the adapter declares, is ``conformance._suite``'s.
"""

from __future__ import annotations

import functools
import json
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final, TypeVar

from harness9_ref.schema import strict_json

from ._backends import read_backends
from ._cli_folder import CLI_OP
from ._compare import compact_json
from ._jsonschema import Validator, load_schema
from ._ops import PROTOCOL_VERSION
from ._verdicts import Response

__all__ = [
    "DEFAULT_ADAPTER_COMMAND",
    "DEFAULT_TIMEOUT",
    "INTERNAL_ERROR",
    "Adapter",
    "AdapterError",
    "read_answer",
    "read_start",
]

# The Python reference adapter; run it with cwd = the project root.
DEFAULT_ADAPTER_COMMAND: Final = (sys.executable, "-m", "conformance.reference_adapter")
DEFAULT_TIMEOUT: Final = 10.0  # seconds per message, handshake included
_STDERR_TAIL: Final = 5  # stderr lines quoted when an adapter dies
# The error code of an adapter that caught a crash of its own and kept going (R-RUN-1).
INTERNAL_ERROR: Final = "internal_error"
_TRACE_CUT: Final = 4000  # characters of one protocol line a trace shows


class AdapterError(Exception):
    """The adapter could not be started or failed its start handshake."""


class _Fault(Exception):
    """One misbehaviour during a run; ``restart`` says whether the stream is out of step."""

    def __init__(self, reason: str, hint: str, *, restart: bool = True) -> None:
        super().__init__(f"{reason} (hint: {hint})")
        self.restart = restart


class _Process:
    def __init__(self, command: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None) -> None:
        pipe, environment = subprocess.PIPE, None if env is None else dict(env)
        try:
            self.popen = subprocess.Popen(list(command), cwd=cwd, env=environment, stdin=pipe, stdout=pipe, stderr=pipe)
        except OSError as exc:
            raise AdapterError(f"cannot start adapter {list(command)}: {exc}") from exc
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL)
        assert self.popen.stdout is not None and self.popen.stderr is not None
        threading.Thread(target=self._pump, args=(self.popen.stdout,), daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._drain, args=(self.popen.stderr,), daemon=True)
        self._stderr_reader.start()

    # The reader threads own their streams and close them at end of file, so the main thread
    # never closes a stream that a thread is reading.
    def _pump(self, stream: IO[bytes]) -> None:
        with stream:
            for line in stream:
                self.lines.put(line)
        self.lines.put(None)

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            for line in stream:
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    def send(self, message: Mapping[str, Any]) -> str:
        """Write one request line; returns it (without its line end) for a trace."""
        assert self.popen.stdin is not None
        # ASCII lines: safe for any reader, and lone surrogates in inputs survive as escapes.
        line = json.dumps(message, ensure_ascii=True)
        self.popen.stdin.write(line.encode("ascii") + b"\n")
        self.popen.stdin.flush()
        return line

    def died(self, timeout: float) -> str:
        """Describe the exit of a process whose stdout closed, quoting the end of its stderr."""
        try:
            status = f"exited with status {self.popen.wait(timeout)}"
        except subprocess.TimeoutExpired:
            self.kill()
            status = "closed its stdout without exiting, and was killed"
        self._stderr_reader.join(timeout)  # so the tail holds its last words
        tail = " | ".join(line for line in self.stderr_tail if line)
        return f"adapter {status}" + (f"; stderr ends: {tail}" if tail else "")

    def kill(self) -> None:
        self.popen.kill()
        self.popen.wait()
        if self.popen.stdin is not None:
            try:
                self.popen.stdin.close()
            except OSError:  # flushing into a dead pipe
                pass


def read_start(answer: Any) -> tuple[frozenset[str], tuple[str, ...]]:
    """The ops and backends of a start answer (what else it declares is porting's).

    Raises:
        _Fault: the answer does not speak this protocol or lists no ops.
        ValueError: backends the runner does not know.
    """
    if not isinstance(answer, dict) or answer.get("protocol") != PROTOCOL_VERSION:
        raise _Fault(
            f"start answer does not speak protocol {PROTOCOL_VERSION}: "
            f"{compact_json(answer)}",
            'answer {"protocol": 1, "implementation": {…}, "ops": […]}',
        )
    ops = answer.get("ops")
    if not isinstance(ops, list) or not all(isinstance(op, str) for op in ops):
        raise _Fault(
            f"start answer's ops is not a list of op names: {compact_json(ops)}",
            "list the ops the adapter implements",
        )
    return frozenset(ops), read_backends(answer)


def read_answer(answer: Any, seq: int, validate: Callable[[Any], None] = lambda answer: None) -> Response:
    """The Response of one run answer to the request numbered ``seq``; ``validate`` checks its
    schema once its ``seq`` is seen to match.

    Raises:
        _Fault: the answer is out of step (restart) or of the wrong shape (no restart).
    """
    hint = "answer each request with one JSON object line that echoes its seq"
    if not isinstance(answer, dict) or "seq" not in answer:
        raise _Fault(f"answer is not an object with a seq: {compact_json(answer)}", hint)
    if answer["seq"] != seq or isinstance(answer["seq"], bool):
        raise _Fault(f"answered seq {compact_json(answer['seq'])} to the request with seq {seq}", hint)
    validate(answer)
    kinds = [key for key in ("output", "error", "skipped") if key in answer]
    shape = "answer with exactly one of output, error or skipped; see protocol-v1/run.json"
    if len(kinds) != 1:
        found = " and ".join(kinds) or "none"
        raise _Fault(f"answer has {found} of output, error, skipped", shape, restart=False)
    if kinds[0] == "output":
        return Response("output", output=answer["output"])
    if kinds[0] == "skipped":
        if not isinstance(answer["skipped"], str):
            raise _Fault("skipped is not a string", shape, restart=False)
        return Response("skipped", message=answer["skipped"])
    error = answer["error"]
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        raise _Fault(f"error has no string code: {compact_json(error)}", shape, restart=False)
    message = error.get("message")
    message = message if isinstance(message, str) else ""
    if error["code"] == INTERNAL_ERROR:  # a crash the adapter caught is no answer (R-RUN-1)
        return Response(
            "errored",
            message=f"the adapter reported an internal error: {message} "
            "(hint: a crash of the port, not a domain error; see its stderr)",
        )
    return Response("error", error_code=error["code"], message=message)


def _allowance(op: str, input: Mapping[str, Any]) -> float:
    """Seconds an answer may take beyond the timeout: a ``cli`` case's commands each have their
    own bound (``timeout`` of its input, which the adapter enforces), so the answer waits for
    them all however many there are."""
    if op != CLI_OP:
        return 0.0
    commands, each = input.get("commands"), input.get("timeout")
    if isinstance(commands, list) and isinstance(each, (int, float)):
        return len(commands) * float(each)
    return 0.0


def _traced(direction: str, line: str) -> str:
    """One protocol line of a trace: ``> `` sent, ``< `` received, cut to ``_TRACE_CUT``."""
    if len(line) > _TRACE_CUT:
        line = f"{line[:_TRACE_CUT]}… ({len(line) - _TRACE_CUT} more characters)"
    return f"{direction} {line}"


_Self = TypeVar("_Self", bound="Adapter")  # a subclass entered is itself (typing.Self from 3.11)


class Adapter:
    """A running adapter, restarted whenever it misbehaves.

    Use it as a context manager, or call ``start()`` first: entering starts it and performs
    the handshake, leaving sends ``stop``.

    Args:
        command: the program and its arguments.
        cwd: its working directory.
        timeout: seconds to wait for each answer; a slower adapter is killed and restarted.
        validate: check every message both ways against ``conformance/schema/protocol-v1``.
        env: its environment; defaults to the runner's.

    ``trace``, when a list, receives every protocol line sent and received (``_traced``); the
    caller empties it between cases.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        validate: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.command, self.cwd, self.timeout, self.env = tuple(command), cwd, timeout, env
        self.implementation: dict[str, Any] = {}
        self._ops: frozenset[str] = frozenset()
        self._backends: tuple[str, ...] = ("sqlite",)  # conformance/runner/_backends.py
        self._schemas: dict[str, Validator] | None = None
        if validate:
            self._schemas = {
                f"{cmd}.{side}": load_schema(f"protocol-v1/{cmd}.json", f"/$defs/{side}")
                for cmd in ("start", "run")
                for side in ("request", "response")
            }
        self._process: _Process | None = None
        self._started = False
        self._seq = 0
        self.trace: list[str] | None = None

    # What the start answer declared; reading one starts an adapter that was never started, as
    # run() does, so a case is never judged by the defaults of an adapter not yet asked.
    @property
    def ops(self) -> frozenset[str]:
        self._ensure_started()
        return self._ops

    @property
    def backends(self) -> tuple[str, ...]:
        self._ensure_started()
        return self._backends

    def _ensure_started(self) -> None:
        if not self._started:
            self.start()

    def __enter__(self: _Self) -> _Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _check(self, schema: str, message: Any) -> None:
        if self._schemas is None:
            return
        validator = self._schemas[schema]
        errors = validator.errors(message)
        if errors:
            cmd, side = schema.split(".")
            raise _Fault(
                f"{cmd} {side} violates {validator.name}: {'; '.join(errors)}",
                "see conformance/schema/protocol-v1 for the message shapes",
                restart=False,
            )

    def _exchange(self, process: _Process, request: dict[str, Any], allowance: float = 0.0) -> Any:
        """Send one request and read one JSON answer, raising _Fault on misbehaviour; the
        answer may take ``allowance`` seconds beyond the timeout."""
        self._check(f"{request['cmd']}.request", request)
        try:
            sent = process.send(request)
        except OSError:
            hint = "run the adapter by hand to see why it stopped"
            raise _Fault(process.died(self.timeout), hint) from None
        if self.trace is not None:
            self.trace.append(_traced(">", sent))
        try:
            line = process.lines.get(timeout=self.timeout + allowance)
        except queue.Empty:
            raise _Fault(
                f"no answer within {self.timeout + allowance:g} s",
                "raise --timeout, and make sure the adapter flushes stdout after each line",
            ) from None
        if self.trace is not None:
            shown = "(stdout closed)" if line is None else line.decode("utf-8", "replace").rstrip("\r\n")
            self.trace.append(_traced("<", shown))
        if line is None:
            hint = "run the adapter by hand with this case's input to see why"
            raise _Fault(process.died(self.timeout), hint)
        try:
            return strict_json.loads(line.decode("utf-8"), finite=False)
        except ValueError:
            shown = compact_json(line.decode("utf-8", "replace").rstrip("\r\n"), 80)
            raise _Fault(
                f"adapter printed a line that is not JSON on stdout: {shown}",
                "stdout carries protocol messages only; write logs to stderr",
            ) from None

    def start(self) -> None:
        """Start (or restart) the adapter and perform the handshake.

        Fills ``implementation`` and ``ops`` from the adapter's answer.

        Raises:
            AdapterError: it cannot be started or its start answer is unusable.
        """
        self._stop_process()
        process = _Process(self.command, self.cwd, self.env)
        try:
            answer = self._exchange(process, {"cmd": "start", "protocol": PROTOCOL_VERSION})
            self._check("start.response", answer)
            ops, backends = read_start(answer)
            self._declare(answer)
        except (_Fault, ValueError) as fault:
            process.kill()
            raise AdapterError(f"adapter {list(self.command)} failed to start: {fault}") from None
        implementation = answer.get("implementation")
        self.implementation = implementation if isinstance(implementation, dict) else {}
        self._ops, self._backends = ops, backends
        self._process = process
        self._started = True

    def _declare(self, answer: Mapping[str, Any]) -> None:
        """Read what a start answer declares beyond its ops and backends: nothing here; a port's
        wording, ids, clock and profiles are read by ``conformance.porting``'s ``PortAdapter``.

        Raises:
            ValueError: a declaration that cannot be used; the adapter then fails to start.
        """

    def run(self, op: str, input: Mapping[str, Any]) -> Response:
        """Run one op on one input.

        Misbehaviour comes back as an "errored" response, never as an exception: the adapter
        is restarted when its stream is out of step, and a failed restart errors this case only.

        Raises:
            AdapterError: the adapter was never started and cannot be.
        """
        if op not in self.ops:
            return Response("unsupported", message=f"the adapter does not declare op {op!r}")
        if self._process is None:
            try:
                self.start()
            except AdapterError as exc:
                return Response("errored", message=f"could not restart the adapter: {exc}")
        assert self._process is not None
        self._seq += 1
        request = {"cmd": "run", "seq": self._seq, "op": op, "input": dict(input)}
        try:
            answer = self._exchange(self._process, request, _allowance(op, input))
            return read_answer(answer, self._seq, functools.partial(self._check, "run.response"))
        except _Fault as fault:
            if fault.restart:
                self._stop_process()
            return Response("errored", message=str(fault))

    def _stop_process(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process = None

    def close(self) -> None:
        """Send ``stop`` and wait for the adapter to exit, killing it if it does not."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.send({"cmd": "stop"})
            process.popen.wait(timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired):
            pass
        process.kill()
