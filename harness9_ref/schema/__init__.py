"""The message schema shared by every part of harness9-ref (SPEC section "Messages").

``strict_json`` is the one JSON reader of the package (``loads``, ``describe``, value positions).
"""

from . import _canonical_json, _message, _tool_arguments, _unicode, strict_json
from ._canonical_json import *
from ._message import *
from ._tool_arguments import *
from ._unicode import *

__all__ = [
    *_canonical_json.__all__,
    *_message.__all__,
    *_tool_arguments.__all__,
    *_unicode.__all__,
    "strict_json",
]
