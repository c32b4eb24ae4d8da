"""LLM providers and the model registry (SPEC sections "Model limits", "Providers", "Usage" and
"Provider errors": R-LIM, R-PRV, R-USE, R-ERR).

The wire formats live, free of I/O, in the namespaces ``harness9_ref.provider.openai`` and
``harness9_ref.provider.anthropic``; ``OpenAIProvider`` and ``AnthropicProvider`` add the HTTP
exchange. The scripted providers for tests are in ``harness9_ref.testing``. The offline provider, which answers from the
conversation without a network (R-CLI-9), is ``harness9_ref.offline.OfflineProvider``: it needs
memory and tools, which this layer does not import.
"""

from . import (
    _base,
    _bounds,
    _classify,
    _endpoint,
    _http,
    _limits,
    _provider_error,
    _providers,
    _sse,
    _streaming,
    _window,
    anthropic,
    openai,
)
from ._base import *
from ._bounds import *
from ._classify import *
from ._endpoint import *
from ._http import *
from ._limits import *
from ._provider_error import *
from ._providers import *
from ._sse import *
from ._streaming import *
from ._window import *

__all__ = [
    *_base.__all__,
    *_bounds.__all__,
    *_classify.__all__,
    *_endpoint.__all__,
    *_provider_error.__all__,
    *_http.__all__,
    *_limits.__all__,
    *_providers.__all__,
    *_sse.__all__,
    *_streaming.__all__,
    *_window.__all__,
    "anthropic",
    "openai",
]
