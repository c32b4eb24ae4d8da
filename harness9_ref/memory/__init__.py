"""Memory: token estimation, tool-pair repair and the three compactors (SPEC sections 3 … 7).

Everything here maps ``list[Message]`` to ``list[Message]`` (or a number): no clock, no
database, no network. Sessions arrive in a later part of the package.
"""

from ._budget import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TAIL_MESSAGES,
    TokenBudgetCompactor,
    new_token_budget_compactor,
)
from ._compactor import BUDGET_PERCENT, Compactor, budget_for_context_window
from ._repair import STUB_TEXT, repair_orphaned_tool_pairs
from ._sliding import DEFAULT_MAX_MESSAGES, SlidingWindowCompactor
from ._summarize import (
    SUMMARY_FIRST_PROMPT,
    SUMMARY_INCREMENTAL_PROMPT,
    SUMMARY_MARKER,
    SUMMARY_SYSTEM_PROMPT,
    SUMMARY_TEMPLATE,
    SUMMARY_TIMEOUT_SECONDS,
    SummarizationCompactor,
    Summarizer,
    new_summarization_compactor,
)
from ._tokens import CHARS_PER_TOKEN, estimate_tokens, estimate_tool_tokens, format_token_count

__all__ = (
    "BUDGET_PERCENT",
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIN_TAIL_MESSAGES",
    "STUB_TEXT",
    "SUMMARY_FIRST_PROMPT",
    "SUMMARY_INCREMENTAL_PROMPT",
    "SUMMARY_MARKER",
    "SUMMARY_SYSTEM_PROMPT",
    "SUMMARY_TEMPLATE",
    "SUMMARY_TIMEOUT_SECONDS",
    "Compactor",
    "SlidingWindowCompactor",
    "SummarizationCompactor",
    "Summarizer",
    "TokenBudgetCompactor",
    "budget_for_context_window",
    "estimate_tokens",
    "estimate_tool_tokens",
    "format_token_count",
    "new_summarization_compactor",
    "new_token_budget_compactor",
    "repair_orphaned_tool_pairs",
)
