"""The official endpoints, the model name a request carries and the server a base URL names
(SPEC R-PRV-3, R-PRV-27, R-TUI-26).

A routing prefix such as OpenRouter's ``openai/`` is what a router needs and what the vendor's
own API refuses: ``openai/gpt-4o-mini`` is a router's name, ``gpt-4o-mini`` OpenAI's. So the
name is sent as configured everywhere except on the provider's official endpoint, where its own
prefix, and only that, is removed. Both decisions are pure functions of the provider's name, the
model and the base URL, so they are tested as a table and the request builders share them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ._http import strip_base_url

__all__ = ["OFFICIAL_BASE_URLS", "is_official_endpoint", "request_model", "server_name"]

# R-PRV-3: each provider's default base URL, its official endpoint (R-PRV-27).
OFFICIAL_BASE_URLS: Final[Mapping[str, str]] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
_SCHEME_END: Final = "://"
PREFIX_SEPARATOR: Final = "/"
_AUTHORITY_ENDS: Final = "/?#"  # R-TUI-26: the authority ends at the first of these after "://"
_USER_INFO_END: Final = "@"


def _split(url: str) -> tuple[str, str]:
    """``url`` as (scheme and host, the rest from the first ``/`` after ``://`` on)."""
    start = url.find(_SCHEME_END)
    start = 0 if start < 0 else start + len(_SCHEME_END)
    slash = url.find("/", start)
    return (url, "") if slash < 0 else (url[:slash], url[slash:])


def is_official_endpoint(provider: str, base_url: str) -> bool:
    """Whether ``base_url`` is ``provider``'s official endpoint (R-PRV-27).

    After R-PRV-3's one trailing ``/`` is removed, the scheme and host compare ignoring ASCII
    case (they are case-insensitive in every URL) and the rest exactly: any other spelling
    (a port written out, a path of its own, ``http://``) reads as a router or proxy, whose
    names are sent as given. A provider without an official endpoint has none.
    """
    official = OFFICIAL_BASE_URLS.get(provider)
    if official is None:
        return False
    host, rest = _split(strip_base_url(base_url))
    official_host, official_rest = _split(official)
    return host.isascii() and host.lower() == official_host.lower() and rest == official_rest


def request_model(provider: str, model: str, base_url: str) -> str:
    """The ``model`` member of ``provider``'s requests to ``base_url`` (R-PRV-27).

    On the official endpoint a leading ``<provider>/`` (ASCII case ignored) is removed once;
    every other name, and every name sent anywhere else, is kept exactly.
    """
    prefix = provider + PREFIX_SEPARATOR
    head = model[: len(prefix)]
    if is_official_endpoint(provider, base_url) and head.isascii() and head.lower() == prefix:
        return model[len(prefix) :]
    return model


def server_name(base_url: str) -> str:
    """The server ``base_url`` names, for people: its authority without user information (R-TUI-26).

    The text after the first ``://`` up to the first ``/``, ``?`` or ``#``, with everything up
    to its last ``@`` removed, so a password written into the URL is never shown; ``""`` for a
    text without ``://``. Plain string work, like R-PRV-27's: one rule a port can copy.
    """
    start = base_url.find(_SCHEME_END)
    if start < 0:
        return ""
    authority = base_url[start + len(_SCHEME_END) :]
    end = min((i for i in (authority.find(c) for c in _AUTHORITY_ENDS) if i >= 0), default=len(authority))
    return authority[:end].rpartition(_USER_INFO_END)[2]
