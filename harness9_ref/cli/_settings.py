"""What the command line and the environment ask for, resolved without side effects
(SPEC R-CLI-2 … R-CLI-5).

``resolve_settings`` takes the parsed options, an environment mapping and the current directory
and returns ``Settings``; it reads no file and opens nothing, so its rules (an option overrides
the environment, which overrides the default; an empty variable counts as unset; R-CLI-4's
provider choice) are tested as a table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Mapping, Optional

from ..engine import DEFAULT_MAX_TURNS

__all__ = [  # gets re-exported
    "DEFAULT_MODEL",
    "ENV_ANTHROPIC_API_KEY",
    "ENV_ANTHROPIC_BASE_URL",
    "ENV_MODEL",
    "ENV_OPENAI_API_KEY",
    "ENV_OPENAI_BASE_URL",
    "OFFLINE_NOTICE",
    "PROG",
    "PROVIDERS",
    "ProviderName",
    "Settings",
    "choose_provider",
    "provider_for_model",
    "resolve_settings",
]

PROG: Final = "harness9-ref"  # R-CLI-1: the command's name, and the prefix of its messages
DEFAULT_MODEL: Final = "openai/gpt-4o-mini"  # R-CLI-3, seed 11
ENV_MODEL: Final = "LLM_MODEL"
ENV_OPENAI_API_KEY: Final = "OPENAI_API_KEY"
ENV_ANTHROPIC_API_KEY: Final = "ANTHROPIC_API_KEY"
ENV_OPENAI_BASE_URL: Final = "OPENAI_BASE_URL"
ENV_ANTHROPIC_BASE_URL: Final = "ANTHROPIC_BASE_URL"

ProviderName = Literal["openai", "anthropic", "offline"]
PROVIDERS: Final = ("openai", "anthropic", "offline")  # R-CLI-2: the choices of --provider

# R-CLI-4: printed to standard error when the chosen provider's API key is not set.
OFFLINE_NOTICE: Final = "harness9-ref: no API key set (OPENAI_API_KEY or ANTHROPIC_API_KEY); using the offline provider"

# R-CLI-3, R-CLI-4: the key and base-URL variables of each network provider.
_PROVIDER_ENV: Final[Mapping[str, tuple[str, str]]] = {
    "openai": (ENV_OPENAI_API_KEY, ENV_OPENAI_BASE_URL),
    "anthropic": (ENV_ANTHROPIC_API_KEY, ENV_ANTHROPIC_BASE_URL),
}
_ANTHROPIC_MODEL_PREFIX: Final = "claude"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the program needs to start, resolved (R-CLI-2 … R-CLI-5).

    ``provider`` is the provider actually used; ``fell_back`` is True when the requested one
    had no API key and the offline provider replaces it (R-CLI-4). ``db_path`` None means the
    default database (R-MGR-1); ``context_window`` None means the model's (R-CLI-5).
    """

    command: Literal["tui", "run"]
    prompt: Optional[str]
    model: str
    provider: ProviderName
    fell_back: bool
    api_key: str
    base_url: Optional[str]
    db_path: Optional[Path]
    context_window: Optional[int]
    resume: Optional[str]
    workdir: str
    max_turns: int


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "")  # R-CLI-3: an empty variable counts as unset


def provider_for_model(model: str) -> Literal["openai", "anthropic"]:
    """R-CLI-4 without ``--provider``: ``anthropic`` for a bare ``claude…`` name, else ``openai``.

    A routed name such as ``anthropic/claude-sonnet-4`` goes through an OpenAI-compatible router.
    """
    if "/" not in model and model.lower().startswith(_ANTHROPIC_MODEL_PREFIX):
        return "anthropic"
    return "openai"


def choose_provider(
    model: str, requested: Optional[str], env: Mapping[str, str]
) -> tuple[ProviderName, bool, str, Optional[str]]:
    """The provider to use (R-CLI-4).

    Args:
        model: the resolved model name.
        requested: the value of ``--provider``, or None.
        env: the environment.

    Returns:
        ``(provider, fell_back, api_key, base_url)``: ``fell_back`` is True when the chosen
        network provider's key is not set, so the offline provider is used and OFFLINE_NOTICE
        must be printed; ``base_url`` is None for the provider's default.
    """
    name = requested if requested is not None else provider_for_model(model)
    if name == "offline":
        return "offline", False, "", None
    if name not in _PROVIDER_ENV:
        raise ValueError(f"unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    key_var, url_var = _PROVIDER_ENV[name]
    api_key = _env(env, key_var)
    if not api_key:
        return "offline", True, "", None
    chosen: ProviderName = "anthropic" if name == "anthropic" else "openai"
    return chosen, False, api_key, _env(env, url_var) or None


def resolve_settings(options: Mapping[str, object], env: Mapping[str, str], cwd: str) -> Settings:
    """Combine the parsed options, the environment and the defaults (R-CLI-2, R-CLI-3).

    Args:
        options: the options given, by name (``model``, ``provider``, ``db``,
            ``context_window``, ``resume``, ``workdir``, ``max_turns``, ``command``,
            ``prompt``); a missing name was not given.
        env: the environment.
        cwd: the current directory, the default working directory.
    """

    def opt(name: str) -> object:
        return options.get(name)

    model = str(opt("model") or _env(env, ENV_MODEL) or DEFAULT_MODEL)
    requested = opt("provider")
    provider, fell_back, api_key, base_url = choose_provider(model, None if requested is None else str(requested), env)
    db = opt("db")
    window = opt("context_window")
    turns = opt("max_turns")
    workdir = opt("workdir")
    resume = opt("resume")
    prompt = opt("prompt")
    return Settings(
        command="run" if opt("command") == "run" else "tui",
        prompt=None if prompt is None else str(prompt),
        model=model,
        provider=provider,
        fell_back=fell_back,
        api_key=api_key,
        base_url=base_url,
        db_path=None if db is None else Path(os.path.expanduser(str(db))),
        context_window=None if window is None else int(str(window)),
        resume=None if resume is None else str(resume),
        workdir=os.path.abspath(os.path.join(cwd, os.path.expanduser(str(workdir)) if workdir is not None else ".")),
        max_turns=DEFAULT_MAX_TURNS if turns is None else int(str(turns)),
    )
