"""The tool registry of the agent: ``read_file`` and ``bash`` (SPEC R-TOOL-1 … R-TOOL-8)."""

from __future__ import annotations

import os
from typing import Callable, Final, Mapping

from ..schema import ToolDefinition
from ._arguments import INVALID_ARGUMENTS, InvalidArguments, string_member
from ._bash import BASH_TOOL, DEFAULT_BASH_TIMEOUT, run_bash
from ._output import DEFAULT_OUTPUT_CAP, clean_text
from ._read_file import READ_FILE_TOOL, read_file

__all__ = ["TOOL_FAILED", "UNKNOWN_TOOL", "Registry"]  # gets re-exported

UNKNOWN_TOOL: Final = 'error: unknown tool "{name}"'  # R-TOOL-2
TOOL_FAILED: Final = "error: {message}"  # R-TOOL-7: any failure not named by a more specific text


class Registry:
    """``read_file`` and ``bash`` on a working directory (R-TOOL-1).

    Implements ``harness9_ref.engine.ToolRegistry``. ``bash`` is not a sandbox: a command can
    reach any path the user can; the working directory is only where it starts (R-TOOL-8).

    Args:
        workdir: the working directory; made absolute now, so a later ``chdir`` does not move it.
        bash_timeout: seconds before a command's process group is killed (R-TOOL-6).
        output_cap: the most bytes of a file or of a command's output shown (R-TOOL-4).

    Raises:
        ValueError: ``bash_timeout`` or ``output_cap`` is not positive.
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        bash_timeout: float = DEFAULT_BASH_TIMEOUT,
        output_cap: int = DEFAULT_OUTPUT_CAP,
    ) -> None:
        if not bash_timeout > 0:
            raise ValueError(f"bash_timeout must be positive, got {bash_timeout}")
        if output_cap < 1:
            raise ValueError(f"output_cap must be positive, got {output_cap}")
        self._workdir = os.path.abspath(os.fspath(workdir))
        self._bash_timeout = float(bash_timeout)
        self._output_cap = output_cap
        # R-TOOL-1: name -> (definition, the one required string member, the tool); in offer order.
        self._tools: Final[Mapping[str, tuple[ToolDefinition, str, Callable[[str], str]]]] = {
            READ_FILE_TOOL.name: (READ_FILE_TOOL, "path", self._read_file),
            BASH_TOOL.name: (BASH_TOOL, "command", self._bash),
        }

    def __repr__(self) -> str:
        return f"Registry({self._workdir!r}, bash_timeout={self._bash_timeout!r}, output_cap={self._output_cap!r})"

    @property
    def workdir(self) -> str:
        return self._workdir

    def available_tools(self) -> list[ToolDefinition]:
        """``[READ_FILE_TOOL, BASH_TOOL]``, in that order (R-TOOL-1)."""
        return [definition for definition, _, _ in self._tools.values()]

    def execute(self, name: str, arguments: str) -> str:
        """Run one tool call and return its observation; never raises an ``Exception`` (R-TOOL-1).

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
            _, member, tool = entry
            try:
                value = string_member(arguments, member)
            except InvalidArguments as exc:
                return clean_text(INVALID_ARGUMENTS.format(name=name, detail=exc))
            return clean_text(tool(value))
        except Exception as exc:  # R-TOOL-7: nothing reaches the engine loop
            return clean_text(TOOL_FAILED.format(message=str(exc) or type(exc).__name__))

    def _read_file(self, path: str) -> str:
        return read_file(self._workdir, path, self._output_cap)

    def _bash(self, command: str) -> str:
        return run_bash(command, self._workdir, self._bash_timeout, self._output_cap)
