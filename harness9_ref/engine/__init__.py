"""The agent engine: the run loop, its events and its tool seam (SPEC sections "Engine run loop"
and "Events": R-ENG, R-EVT).

``AgentEngine.run_stream(prompt)`` yields ``Event`` values as a run happens; ``run(prompt)`` returns
the final assistant message or raises ``EngineError``. Tools are reached through a
``ToolRegistry``; ``harness9_ref.tools.Registry`` is the real one.
"""

from ._engine import AgentEngine
from ._errors import (
    CANCELLED,
    ENGINE_BUSY,
    INTERNAL_ERROR,
    LOGGER_NAME,
    MAX_TURNS,
    MAX_TURNS_MESSAGE,
    PROVIDER_ERROR,
    EngineBusy,
    EngineError,
    one_line,
)
from ._events import (
    CompactionData,
    ContextPart,
    ContextReport,
    DoneData,
    ErrorData,
    Event,
    EventData,
    EventType,
    TextDeltaData,
    TokenUpdateData,
    ToolCallData,
    ToolResultData,
)
from ._long_session import DEFAULT_COMPACT_AT
from ._run import RunIterator
from ._seams import DEFAULT_MAX_TURNS, DEFAULT_SYSTEM_PROMPT, PromptBuilder, SummarizingCompactor, ToolRegistry
from ._worker import RUN_FINISHED, RunFinished, RunWorker, WorkerItem

__all__ = (
    "CANCELLED",
    "DEFAULT_COMPACT_AT",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_SYSTEM_PROMPT",
    "ENGINE_BUSY",
    "INTERNAL_ERROR",
    "LOGGER_NAME",
    "MAX_TURNS",
    "MAX_TURNS_MESSAGE",
    "PROVIDER_ERROR",
    "RUN_FINISHED",
    "AgentEngine",
    "CompactionData",
    "ContextPart",
    "ContextReport",
    "DoneData",
    "EngineBusy",
    "EngineError",
    "ErrorData",
    "Event",
    "EventData",
    "EventType",
    "PromptBuilder",
    "RunFinished",
    "RunIterator",
    "RunWorker",
    "SummarizingCompactor",
    "TextDeltaData",
    "TokenUpdateData",
    "ToolCallData",
    "ToolRegistry",
    "ToolResultData",
    "WorkerItem",
    "one_line",
)
