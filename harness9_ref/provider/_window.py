"""What a model server says its context window is (SPEC R-WIN-1 … R-WIN-4).

The registry of R-LIM knows the vendors' models; a local server (llama.cpp's ``llama-server``,
vLLM, LM Studio, Ollama) serves whatever model it was started with, in a window it was started
with, and an unknown model gets R-LIM-3's 256,000 tokens. Sending such a server a request over
its real window fails, on some servers silently. So the window is learned from the server:

- asked once, at the endpoints where each server reports it (``probe_requests``, then
  ``window_from_answer`` on each answer: pure functions, the I/O is ``ask_window``);
- read from an overflow error's own words (``overflow_window``), which the engine applies.

Both give a number only when it is a plausible window (``plausible_window``): a server's
nonsense (0, a negative number, 10**12) changes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..schema.strict_json import JSONError, loads
from ._http import HttpRequest, strip_base_url
from ._provider_error import ProviderError
from ._transport import send

__all__ = [
    "OLLAMA_DEFAULT_CONTEXT",
    "PROBE_TIMEOUT",
    "WINDOW_MAX",
    "WINDOW_MIN",
    "Probe",
    "ask_window",
    "overflow_window",
    "plausible_window",
    "probe_requests",
    "window_from_answer",
]

WINDOW_MIN: Final = 64  # R-WIN-1: the smallest window taken from a server
WINDOW_MAX: Final = 100_000_000  # R-WIN-1: the largest
PROBE_TIMEOUT: Final = 5.0  # R-WIN-3: seconds for connecting and reading, per probe request
# R-WIN-2: Ollama's OpenAI-compatible endpoint runs a model in this window unless the model's own
# parameters set num_ctx, whatever the model was trained for.
OLLAMA_DEFAULT_CONTEXT: Final = 4096

# R-WIN-4: the overflow wordings that name the window, in the order they are tried (the message
# lower-cased first).
_OVERFLOW_WINDOW: Final = (
    re.compile(r"maximum context length is (\d+) tokens"),  # OpenAI, vLLM, OpenRouter, llama-cpp-python
    re.compile(r"available context size \((\d+) tokens\)"),  # llama.cpp server
    re.compile(r"n_ctx: (\d+)"),  # LM Studio
    re.compile(r"tokens > (\d+) maximum"),  # Anthropic: the prompt alone
    re.compile(r"exceed context limit: \d+ \+ \d+ > (\d+)"),  # Anthropic: prompt plus max_tokens
)


def plausible_window(value: object) -> int | None:
    """``value`` when it is an integer (not a boolean) in [WINDOW_MIN, WINDOW_MAX], else None (R-WIN-1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if WINDOW_MIN <= value <= WINDOW_MAX else None


def overflow_window(message: str) -> int | None:
    """The window an overflow error's message names, or None (R-WIN-4).

    The first wording that matches decides, and its number counts only when plausible.
    """
    lowered = message.lower()
    for pattern in _OVERFLOW_WINDOW:
        found = pattern.search(lowered)
        if found is not None:
            return plausible_window(int(found.group(1)))
    return None


@dataclass(frozen=True, slots=True)
class Probe:
    """One request of R-WIN-2: where to ask, and how to read the answer."""

    server: str  # which server answers there: "vllm", "llama.cpp", "lmstudio", "ollama"
    method: str
    url: str
    body: bytes | None


def probe_requests(base_url: str, model: str) -> list[Probe]:
    """The requests of R-WIN-2 for an OpenAI-compatible ``base_url``, in the order they are sent.

    The server's root is the base URL without a final ``/v1``.
    """
    base = strip_base_url(base_url)
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    show = json.dumps({"model": model}).encode("utf-8")
    return [
        Probe("vllm", "GET", f"{base}/models", None),
        Probe("llama.cpp", "GET", f"{root}/props", None),
        Probe("lmstudio", "GET", f"{root}/api/v0/models", None),
        Probe("ollama", "POST", f"{root}/api/show", show),
    ]


def _member(obj: object, *path: str) -> object:
    for name in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(name)
    return obj


def _vllm(answer: object, model: str) -> object:
    """vLLM lists its models with ``max_model_len``; the one whose ``id`` is the model counts."""
    data = _member(answer, "data")
    if not isinstance(data, list):
        return None
    for entry in data:
        if _member(entry, "id") == model:
            return _member(entry, "max_model_len")
    return None


def _llama_cpp(answer: object, model: str) -> object:
    """llama.cpp's ``/props``: ``default_generation_settings.n_ctx`` (older builds: ``n_ctx``)."""
    found = _member(answer, "default_generation_settings", "n_ctx")
    return found if found is not None else _member(answer, "n_ctx")


def _lmstudio(answer: object, model: str) -> object:
    """LM Studio lists its models: the window the model is loaded with, else the most it can take."""
    data = _member(answer, "data")
    if not isinstance(data, list):
        return None
    for entry in data:
        if _member(entry, "id") == model:
            loaded = _member(entry, "loaded_context_length")
            return loaded if loaded is not None else _member(entry, "max_context_length")
    return None


def _ollama(answer: object, model: str) -> object:
    """Ollama: ``num_ctx`` of the model's parameters, else its trained length capped at the default."""
    parameters = _member(answer, "parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == "num_ctx" and words[1].isdigit():
                return int(words[1])
    info = _member(answer, "model_info")
    if isinstance(info, Mapping):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and plausible_window(value) is not None:
                return min(value, OLLAMA_DEFAULT_CONTEXT)
    return None


_READERS: Final[Mapping[str, Callable[[object, str], object]]] = {
    "vllm": _vllm,
    "llama.cpp": _llama_cpp,
    "lmstudio": _lmstudio,
    "ollama": _ollama,
}


def window_from_answer(server: str, status: int, body: bytes, model: str) -> int | None:
    """The window one probe's answer reports, or None (R-WIN-2).

    Only a 200 whose body is a JSON object counts; anything else (404, HTML, nonsense, a number
    out of R-WIN-1's range) is no answer.
    """
    if status != 200:
        return None
    try:
        answer: Any = loads(body.decode("utf-8"))
    except (UnicodeDecodeError, JSONError):
        return None
    return plausible_window(_READERS[server](answer, model))


def ask_window(
    base_url: str,
    model: str,
    api_key: str = "",
    *,
    timeout: float = PROBE_TIMEOUT,
    requests: Sequence[Probe] | None = None,
) -> tuple[int, str] | None:
    """Ask the server at ``base_url`` for its window: the first plausible answer and its server (R-WIN-3).

    Each request has ``timeout`` seconds; one that fails in any way (refused, timed out, an
    error status) is passed over silently, so a server that knows none of the endpoints costs
    four quick refusals and changes nothing.
    """
    headers = [("Accept", "application/json"), ("Content-Type", "application/json")]
    if api_key:
        headers.append(("Authorization", f"Bearer {api_key}"))
    for probe in requests if requests is not None else probe_requests(base_url, model):
        request = HttpRequest(probe.method, probe.url, tuple(headers), probe.body or b"")
        try:
            status, _, body = send(request, timeout=timeout, provider="openai")
        except ProviderError:
            continue
        window = window_from_answer(probe.server, status, body, model)
        if window is not None:
            return window, probe.server
    return None
