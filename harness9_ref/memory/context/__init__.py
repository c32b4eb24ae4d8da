"""Context engineering: what of a conversation the model sees, and how much room it takes.

SPEC sections 2.2–2.4, 3, 4.1 and 4.2: token estimation (R-TOK, R-FMT), tool-pair repair (R-REP), the Compactor
seam and its three compactors (R-CMP; R-SW sliding window, R-TB token budget, R-SUM
summarisation with long-session folding, R-FOLD), and shortening oversized messages in a view
(R-TRIM). Everything here maps ``list[Message]`` to ``list[Message]`` (or a number): no clock,
no database, no network; only the summariser's call reaches a model, through the ``Summarizer``
protocol. What is *kept* of a conversation is the other half of memory, ``memory.storage``;
nothing here imports it.
"""

from . import _carry, _clear, _compactor, _repair, _shorten, _summarize, _tokens
from ._carry import *
from ._clear import *
from ._compactor import *
from ._repair import *
from ._shorten import *
from ._summarize import *
from ._tokens import *

__all__ = [
    *_carry.__all__,
    *_clear.__all__,
    *_compactor.__all__,
    *_repair.__all__,
    *_shorten.__all__,
    *_summarize.__all__,
    *_tokens.__all__,
]
