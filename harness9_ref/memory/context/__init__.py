"""Context engineering: what of a conversation the model sees, and how much room it takes.

SPEC sections 3 … 7: token estimation (R-TOK, R-FMT), tool-pair repair (R-REP), the Compactor
seam and its three compactors (R-CMP; R-SW sliding window, R-TB token budget, R-SUM
summarisation with long-session folding, R-FOLD), and shortening oversized messages in a view
(R-TRIM). Everything here maps ``list[Message]`` to ``list[Message]`` (or a number): no clock,
no database, no network; only the summariser's call reaches a model, through the ``Summarizer``
protocol. What is *kept* of a conversation is the other half of memory, ``memory.storage``;
nothing here imports it.
"""

from ._carry import (
    RECALL_NOTE,
    REQUESTS_HEADER,
    REQUESTS_MAX_TOKENS,
    carried_requests,
    recent_requests,
    requests_budget,
    summarizer_part,
    summary_body,
)
from ._clear import CLEAR_EXCLUDED_TOOLS, CLEAR_KEEP_RESULTS, CLEARED_RESULT, clear_below, cleared_placeholder, next_watermark
from ._compactor import (
    BUDGET_PERCENT,
    DEFAULT_MAX_MESSAGES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TAIL_MESSAGES,
    Compactor,
    SlidingWindowCompactor,
    TokenBudgetCompactor,
    budget_for_context_window,
    new_token_budget_compactor,
)
from ._repair import STUB_TEXT, repair_orphaned_tool_pairs
from ._shorten import SHORTEN_KEEP_MIN, SHORTENED_MARKER, shorten_text, shorten_view
from ._summarize import (
    REQUEST_SHARE,
    SUMMARY_FIRST_PROMPT,
    SUMMARY_FOCUS,
    SUMMARY_INCREMENTAL_PROMPT,
    SUMMARY_MARKER,
    SUMMARY_NOT_SHORTER,
    SUMMARY_RECALL,
    SUMMARY_SHARE,
    SUMMARY_SYSTEM_PROMPT,
    SUMMARY_TEMPLATE,
    SUMMARY_TIMEOUT_SECONDS,
    LimitsReply,
    SummarizationCompactor,
    Summarized,
    Summarizer,
    cut_to,
    is_summary,
    new_summarization_compactor,
    summary_message,
)
from ._tokens import CHARS_PER_TOKEN, estimate_tokens, estimate_tool_tokens, format_token_count

__all__ = (
    "BUDGET_PERCENT",
    "CHARS_PER_TOKEN",
    "CLEARED_RESULT",
    "CLEAR_EXCLUDED_TOOLS",
    "CLEAR_KEEP_RESULTS",
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIN_TAIL_MESSAGES",
    "RECALL_NOTE",
    "REQUESTS_HEADER",
    "REQUESTS_MAX_TOKENS",
    "REQUEST_SHARE",
    "SHORTENED_MARKER",
    "SHORTEN_KEEP_MIN",
    "STUB_TEXT",
    "SUMMARY_FIRST_PROMPT",
    "SUMMARY_FOCUS",
    "SUMMARY_INCREMENTAL_PROMPT",
    "SUMMARY_MARKER",
    "SUMMARY_NOT_SHORTER",
    "SUMMARY_RECALL",
    "SUMMARY_SHARE",
    "SUMMARY_SYSTEM_PROMPT",
    "SUMMARY_TEMPLATE",
    "SUMMARY_TIMEOUT_SECONDS",
    "Compactor",
    "LimitsReply",
    "SlidingWindowCompactor",
    "SummarizationCompactor",
    "Summarized",
    "Summarizer",
    "TokenBudgetCompactor",
    "budget_for_context_window",
    "carried_requests",
    "clear_below",
    "cleared_placeholder",
    "cut_to",
    "estimate_tokens",
    "estimate_tool_tokens",
    "format_token_count",
    "is_summary",
    "new_summarization_compactor",
    "new_token_budget_compactor",
    "next_watermark",
    "recent_requests",
    "repair_orphaned_tool_pairs",
    "requests_budget",
    "shorten_text",
    "shorten_view",
    "summarizer_part",
    "summary_body",
    "summary_message",
)
