"""The tool registry of the agent: ``read_file``, ``bash``, ``edit_file``, ``write_file`` (SPEC R-TOOL, R-INT, R-APPR).

Besides running tools, the registry owns the processes its commands start: ``interrupt()`` ends
the command in progress (R-INT-1) and ``close()`` ends what commands left running in the
background (R-INT-2), so that no process started by a tool outlives the program. It also asks
the approval callback before each command and each change of a file (R-APPR-1, R-APPR-4),
except for a command an allow rule of its working directory covers (R-APPR-7).
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Final

from ..memory.storage import ChangeRecorder
from ..schema import INVALID_ARGUMENTS, TOOL_FAILED, UNKNOWN_TOOL, ArgumentsError, ToolDefinition, parse_object, required_string
from ._approval import CHANGE_DECLINED, DECLINED, Approve, FileChange, Refusal
from ._bash import BASH_TOOL, DEFAULT_BASH_TIMEOUT, run_bash
from ._edit import EDIT_FILE_TOOL, WRITE_FILE_TOOL, Plan, apply, plan_edit, plan_write
from ._output import DEFAULT_OUTPUT_CAP, clean_text
from ._process import end_groups, group_alive, reap
from ._read_file import READ_FILE_TOOL, read_file
from ._rules import (
    RULE_NOT_KEPT,
    AllowFileError,
    AllowRule,
    AllowRules,
    command_words,
    covering_rule,
    rule_text,
    rules_directory,
)

__all__ = ["Registry"]

_log = logging.getLogger(__name__)  # R-APPR-9: an unusable allow file is a warning


class Registry:
    """``read_file``, ``bash``, ``edit_file`` and ``write_file`` on a working directory (R-TOOL-1).

    Implements ``harness9_ref.engine.ToolRegistry``, with its optional ``interrupt()`` and
    ``close()``. ``bash`` is not a sandbox: a command can reach any path the user can; the
    working directory is only where it starts (R-TOOL-8). Close the registry when done (or use
    it as a context manager) so background jobs of its commands end too (R-INT-2).

    Args:
        workdir: the working directory; made absolute now, so a later ``chdir`` does not move it.
        bash_timeout: seconds before a command's process group is ended (R-TOOL-6).
        output_cap: the most bytes of a file or of a command's output shown (R-TOOL-4).
        approve: asked before every ``bash`` command until it answers ``"always"`` to one
            (R-APPR-1), and before every change of a file until it answers ``"always"`` to one
            (R-APPR-4); without it every command runs and every change is made.
        rules: the allow rules (R-APPR-7): a command one of them covers in this working
            directory runs without asking, and ``AllowRule`` answers are kept there.

    Raises:
        ValueError: ``bash_timeout`` or ``output_cap`` is not positive.
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        bash_timeout: float = DEFAULT_BASH_TIMEOUT,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        approve: Approve | None = None,
        rules: AllowRules | None = None,
    ) -> None:
        if not bash_timeout > 0:
            raise ValueError(f"bash_timeout must be positive, got {bash_timeout}")
        if output_cap < 1:
            raise ValueError(f"output_cap must be positive, got {output_cap}")
        self._workdir = os.path.abspath(os.fspath(workdir))
        self._bash_timeout = float(bash_timeout)
        self._output_cap = output_cap
        self._approve = approve
        self._rules = rules
        self._rules_directory = rules_directory(self._workdir)
        self._rules_warned = False  # R-APPR-9: an unusable file is said once
        self._lock = threading.Lock()  # guards the three below: interrupt() and close() come from other threads
        self._always: set[bool] = set()  # kinds answered "always": False commands, True changes (R-APPR-4)
        self._running: set[threading.Event] = set()  # one stop event per bash call in progress
        self._left: list[subprocess.Popen[bytes]] = []  # shells whose groups outlived them (R-INT-2)
        # R-TOOL-1: name -> (definition, its required string members, the tool taking them in that
        # order); in offer order.
        self._tools: Final[Mapping[str, tuple[ToolDefinition, tuple[str, ...], Callable[..., str]]]] = {
            READ_FILE_TOOL.name: (READ_FILE_TOOL, ("path",), self._read_file),
            BASH_TOOL.name: (BASH_TOOL, ("command",), self._bash),
            EDIT_FILE_TOOL.name: (EDIT_FILE_TOOL, ("path", "old_text", "new_text"), self._edit_file),
            WRITE_FILE_TOOL.name: (WRITE_FILE_TOOL, ("path", "content"), self._write_file),
        }

    def __repr__(self) -> str:
        return f"Registry({self._workdir!r}, bash_timeout={self._bash_timeout!r}, output_cap={self._output_cap!r})"

    @property
    def workdir(self) -> str:
        return self._workdir

    def available_tools(self) -> list[ToolDefinition]:
        """``[READ_FILE_TOOL, BASH_TOOL, EDIT_FILE_TOOL, WRITE_FILE_TOOL]``, in that order (R-TOOL-1)."""
        return [definition for definition, _, _ in self._tools.values()]

    def execute(self, name: str, arguments: str) -> str:
        """Run one tool call and return its observation; never raises an ``Exception`` (R-TOOL-1).

        ``execute_recorded`` without a recorder.
        """
        return self.execute_recorded(name, arguments, None)

    def execute_recorded(self, name: str, arguments: str, record: ChangeRecorder | None) -> str:
        """Run one tool call and return its observation; never raises an ``Exception`` (R-TOOL-1).

        ``record``, when given, is told of the change an ``edit_file`` or ``write_file`` call
        made, once made (R-UNDO-2a): its path relative to the working directory, the bytes
        before (None for a new file) and after.

        Args:
            name: the tool's name.
            arguments: the raw JSON text of the call; ``""`` counts as ``{}``.

        Returns:
            The observation: the tool's output, or a text starting with ``error: ``
            (``UNKNOWN_TOOL``, ``INVALID_ARGUMENTS``, ``TOOL_FAILED`` or a tool's own).
        """
        try:
            entry = self._tools.get(name)
            if entry is None:
                return clean_text(UNKNOWN_TOOL.format(name=name))
            _, members, tool = entry
            try:
                obj = parse_object(arguments)
                values = [required_string(obj, member) for member in members]
            except ArgumentsError as exc:
                return clean_text(INVALID_ARGUMENTS.format(name=name, detail=exc))
            if name in (EDIT_FILE_TOOL.name, WRITE_FILE_TOOL.name):
                return clean_text(tool(*values, record=record))
            return clean_text(tool(*values))
        except Exception as exc:  # R-TOOL-7: nothing reaches the engine loop
            return clean_text(TOOL_FAILED.format(message=str(exc) or type(exc).__name__))

    def _read_file(self, path: str) -> str:
        return read_file(self._workdir, path, self._output_cap)

    def _edit_file(self, path: str, old_text: str, new_text: str, *, record: ChangeRecorder | None) -> str:
        return self._change(plan_edit(self._workdir, path, old_text, new_text), record)

    def _write_file(self, path: str, content: str, *, record: ChangeRecorder | None) -> str:
        return self._change(plan_write(self._workdir, path, content), record)

    def _change(self, plan: Plan | str, record: ChangeRecorder | None) -> str:
        """Ask about a checked change and make it when approved (R-APPR-4), telling ``record``
        once made (R-UNDO-2a); a refusal is returned as is."""
        if isinstance(plan, str):
            return plan
        refusal = self._refusal(FileChange(plan.tool, plan.path, plan.diff))
        if refusal is not None:
            return refusal
        if record is None:
            return apply(plan)
        return apply(plan, lambda made: record(made.where.rel, made.before, made.after))

    def interrupt(self) -> None:
        """End the ``bash`` command in progress, if any, from any thread (R-INT-1).

        Its process group gets SIGTERM, then SIGKILL after ``INTERRUPT_GRACE_SECONDS`` if any
        member is still alive, and its observation ends with ``INTERRUPTED_NOTE``. This only
        asks: the thread running the command notices within 50 ms and ends the group, so the
        caller never waits for the grace. A call counts as running from the moment ``execute``
        takes it, so a command still waiting for approval does not start. With nothing running
        it does nothing, and a later command is not affected.
        """
        with self._lock:
            for stop in self._running:
                stop.set()

    def close(self) -> None:
        """End every process group a command of this registry left behind (R-INT-2); idempotent.

        A command in progress is interrupted (its own thread ends it); the groups of finished
        commands that still have a live member, background jobs above all, get SIGTERM, then
        SIGKILL after the grace. Returns within about one grace. The registry stays usable.
        """
        self.interrupt()
        with self._lock:
            left, self._left = self._left, []
        alive = [proc for proc in left if group_alive(proc.pid)]  # an emptied group is never signalled

        def wait(seconds: float) -> None:
            time.sleep(seconds)
            for proc in alive:
                proc.poll()  # a collected shell no longer counts as a member

        if alive:
            end_groups([proc.pid for proc in alive], wait)
        for proc in left:
            reap(proc)

    def __enter__(self) -> Registry:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def reset_approval(self) -> None:
        """Forget every ``"always"``: the callback is asked again from the next command or change on (R-APPR-1, R-APPR-4)."""
        with self._lock:
            self._always.clear()

    def _refusal(self, request: str | FileChange) -> str | None:
        """None when the command may run (the change be made), else the observation that says
        it did not (R-APPR-1, R-APPR-4).

        An exception in the callback, or an answer it should not give, counts as "no": when in
        doubt, nothing runs and nothing is written.
        """
        change = isinstance(request, FileChange)
        with self._lock:
            if self._approve is None or change in self._always:
                return None
        words = None if isinstance(request, FileChange) else command_words(request)
        if words is not None and covering_rule(self._kept_rules(), words) is not None:
            return None  # R-APPR-7: covered, not asked
        declined = CHANGE_DECLINED if change else DECLINED
        try:
            answer = self._approve(request)
        except Exception:
            return declined
        if isinstance(answer, AllowRule):  # R-APPR-7: only a rule that covers this command
            if covering_rule([answer.words], words) is None:
                return declined
            self._keep_rule(answer.words)
            return None
        if answer == "always":
            with self._lock:
                self._always.add(change)
            return None
        if answer == "yes":
            return None
        if isinstance(answer, Refusal):
            return answer.observation
        return declined

    def _kept_rules(self) -> list[tuple[str, ...]]:
        """This directory's rules, read now (R-APPR-9); none, said once, when the file is unusable."""
        if self._rules is None:
            return []
        try:
            return self._rules.rules_for(self._rules_directory)
        except AllowFileError as exc:
            self._warn_once(str(exc))
            return []

    def _keep_rule(self, words: tuple[str, ...]) -> None:
        """Add the rule the user chose; when the file will not take it, the command still runs
        (the user said yes) and a warning says the rule was not kept (R-APPR-9)."""
        if self._rules is None:
            return
        try:
            self._rules.add(self._rules_directory, words)
        except AllowFileError as exc:
            _log.warning(RULE_NOT_KEPT.format(rule=rule_text(words), message=exc))

    def _warn_once(self, message: str) -> None:
        with self._lock:
            warned, self._rules_warned = self._rules_warned, True
        if not warned:
            _log.warning(message)

    def _keep(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._left.append(proc)

    def _forget_ended(self) -> None:
        """Collect the shells whose groups have emptied since, so the list stays short."""
        with self._lock:
            left = self._left
            self._left = [proc for proc in left if group_alive(proc.pid)]
            ended = [proc for proc in left if proc not in self._left]
        for proc in ended:
            reap(proc)

    def _bash(self, command: str) -> str:
        stop = threading.Event()
        with self._lock:
            self._running.add(stop)  # from here on, interrupt() reaches this call
        try:
            refusal = self._refusal(command)
            if refusal is not None:
                return refusal
            self._forget_ended()
            return run_bash(command, self._workdir, self._bash_timeout, self._output_cap, stop=stop, keep=self._keep)
        finally:
            with self._lock:
                self._running.discard(stop)
