"""What an AgentEngine is given: its tools' protocol, what long-session mode needs from a
summarising compactor, its prompt builder, and their defaults (SPEC R-ENG-1, R-ENG-3, R-ENG-5,
R-ENG-9, R-TOOL-1, R-INT-1 … R-INT-3, R-LONG-4, R-LONG-5, R-LONG-7, R-LONG-9)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol, runtime_checkable

from ..memory.context import SummaryOutcome
from ..schema import Message, ToolDefinition

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_SYSTEM_PROMPT", "PromptBuilder", "SummarizingCompactor", "ToolRegistry"]

DEFAULT_SYSTEM_PROMPT: Final = (
    "You are harness9, a coding agent working in the user's project directory. "
    "Use the read_file tool to read files and the bash tool to run shell commands; both work in "
    "the working directory. Look at the code before you change it, keep changes small, and check "
    "your work by running it. When the task is done, reply with a short summary of what you did."
)
"""The system prompt of a run whose engine has no prompt builder (R-ENG-3). Never stored."""

DEFAULT_MAX_TURNS: Final = 50  # R-ENG-1: provider calls allowed in one run

PromptBuilder = Callable[[], str]
"""Returns the system prompt; called once at the start of every run (R-ENG-3)."""


@runtime_checkable
class ToolRegistry(Protocol):
    """The tools a run offers the model and runs for it.

    ``harness9_ref.tools.Registry`` (``read_file`` and ``bash``) is the real one;
    ``harness9_ref.testing.ScriptedRegistry`` answers from a script.

    Two methods are optional, so they are not part of this protocol (a registry without them
    still is one) and the engine looks them up with ``getattr``:

    - ``interrupt() -> None``, callable from any thread: end the tool call in progress now, its
      observation saying so (R-INT-1). ``AgentEngine.cancel()`` calls it after setting the run's
      cancel flag (R-INT-3), so a slow command does not hold up a cancel.
    - ``close() -> None``: end whatever the tools left running (R-INT-2). The engine never
      calls it; whoever made the registry does, once it is no longer needed.
    - ``execute_recorded(name, arguments, record) -> str``: ``execute``, telling ``record`` (a
      ``ChangeRecorder``) of each file the call changed. The engine calls it instead of
      ``execute`` when its session keeps file changes (``FileChangeLog``, R-UNDO-2a).
    """

    def available_tools(self) -> list[ToolDefinition]:
        """The tool definitions sent with every provider call; asked once per turn (R-ENG-5 step 1)."""
        ...

    def execute(self, name: str, arguments: str) -> str:
        """Run one tool call and return its observation text (R-ENG-9).

        ``arguments`` is the raw JSON text the model produced. A failure is reported as an
        observation starting with ``error: `` rather than raised (R-TOOL-1, R-TOOL-7); should an
        implementation raise anyway, the engine turns the exception into such an observation.
        """
        ...


@runtime_checkable
class SummarizingCompactor(Protocol):
    """A compactor that summarises, as long-session mode uses one (R-LONG-4 … R-LONG-9).

    ``harness9_ref.memory.context.SummarizationCompactor`` is one. Any other compactor (``compact``
    alone) still works in long-session mode, whose summaries and checkpoints then never happen.
    """

    @property
    def tail_messages(self) -> int:
        """How many newest messages a summary keeps verbatim (R-LONG-5)."""
        ...

    @property
    def failures(self) -> list[str]:
        """Why each summary so far failed, oldest first; ``compact_now`` reports the newest (R-LONG-9)."""
        ...

    def over_budget(self, msgs: Sequence[Message]) -> bool:
        """Whether ``msgs`` need a summary, when the engine has no budget of its own (R-LONG-4)."""
        ...

    def compact(self, msgs: Sequence[Message]) -> list[Message]:
        """The view of ``msgs`` outside long-session mode (R-ENG-5)."""
        ...

    def summarize(self, msgs: Sequence[Message], split: int, focus: str = "", *, recall: bool = False) -> SummaryOutcome:
        """Summarise ``msgs[:split]`` (after the system prompt) with ``focus`` (R-LONG-5, R-FOLD-5).

        ``recall`` adds the note that the messages can be read back (R-LONG-13).
        """
        ...

    def fall_back(self, msgs: Sequence[Message]) -> list[Message]:
        """The fallback's view of ``msgs``, without asking the summarizer (R-SUM-10, R-LONG-15)."""
        ...
