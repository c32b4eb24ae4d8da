"""The agent engine: the run loop, its events and its tool seam (SPEC sections "Engine run loop"
and "Events": R-ENG, R-EVT).

``AgentEngine.run_stream(prompt)`` yields ``Event`` values as a run happens; ``run(prompt)`` returns
the final assistant message or raises ``EngineError``. Tools are reached through a
``ToolRegistry``; ``harness9_ref.tools.Registry`` is the real one. The engine is composed of
parts: a context part (``LiteralContext`` or ``LongSession``), a saving part (``SaveAtEnd`` or
``SaveAsItGoes``), a ``RetryPolicy`` and, optionally, ``OwnTools``.
"""

from . import (
    _context,
    _engine,
    _events,
    _instructions,
    _long_session,
    _own_tools,
    _retry,
    _run_errors,
    _run_state,
    _saving,
    _seams,
    _worker,
)
from ._context import *
from ._engine import *
from ._events import *
from ._instructions import *
from ._long_session import *
from ._own_tools import *
from ._retry import *
from ._run_errors import *
from ._run_state import *
from ._saving import *
from ._seams import *
from ._worker import *

__all__ = [
    *_context.__all__,
    *_engine.__all__,
    *_events.__all__,
    *_instructions.__all__,
    *_long_session.__all__,
    *_own_tools.__all__,
    *_retry.__all__,
    *_run_errors.__all__,
    *_run_state.__all__,
    *_saving.__all__,
    *_seams.__all__,
    *_worker.__all__,
]
