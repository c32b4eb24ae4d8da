"""Building the program from its settings, as seed 11's ``main.go`` does (SPEC R-CLI-5, R-CLI-8, R-CLI-9)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..engine import AgentEngine
from ..memory import Manager, default_db_path, new_summarization_compactor
from ..provider import AnthropicProvider, OfflineProvider, OpenAIProvider, get_model_limits
from ..tools import Registry
from ._settings import Settings

if TYPE_CHECKING:
    from ..memory import SQLiteSession
    from ..provider import LLMProvider

__all__ = [
    "TOOL_RESULTS_DIR",
    "CliError",
    "build_engine",
    "build_provider",
    "check_workdir",
    "context_window",
    "open_manager",
    "open_session",
]

TOOL_RESULTS_DIR: Final = "tool-results"  # R-CLI-5: <home>/tool-results, home = the database's folder
OFFLINE_CHUNK_DELAY: Final = 0.004  # seconds between the offline provider's words in the terminal UI


class CliError(Exception):
    """A problem with what the user asked for, reported as one line (R-CLI-6)."""

    code = "invalid_argument"


def check_workdir(settings: Settings) -> None:
    """Raises CliError when the working directory does not exist or is not a directory."""
    if not os.path.isdir(settings.workdir):
        raise CliError(f"--workdir {settings.workdir}: not a directory")


def build_provider(settings: Settings, *, streaming_delay: bool = False) -> LLMProvider:
    """The provider of R-CLI-4; ``streaming_delay`` paces the offline provider's words for the UI."""
    if settings.provider == "openai":
        if settings.base_url:
            return OpenAIProvider(settings.model, settings.api_key, settings.base_url)
        return OpenAIProvider(settings.model, settings.api_key)
    if settings.provider == "anthropic":
        if settings.base_url:
            return AnthropicProvider(settings.model, settings.api_key, settings.base_url)
        return AnthropicProvider(settings.model, settings.api_key)
    return OfflineProvider(chunk_delay=OFFLINE_CHUNK_DELAY if streaming_delay else 0.0)


def context_window(settings: Settings) -> int:
    """``--context-window`` when given, else the model's (R-CLI-5, R-LIM)."""
    if settings.context_window is not None:
        return settings.context_window
    return get_model_limits(settings.model).context_tokens


def open_manager(settings: Settings) -> Manager:
    """The Manager on the database of R-MGR-1, tool results in ``<home>/tool-results`` (R-CLI-5)."""
    db_path = settings.db_path if settings.db_path is not None else default_db_path()
    return Manager(db_path, Path(db_path).parent / TOOL_RESULTS_DIR)


def open_session(manager: Manager, settings: Settings) -> SQLiteSession:
    """The session of ``--resume`` (SessionNotFound when unknown), else a new one (R-CLI-7, R-CLI-8)."""
    if settings.resume is not None:
        return manager.open_session(settings.resume)
    return manager.new_session()


def build_engine(settings: Settings, provider: LLMProvider, session: SQLiteSession) -> AgentEngine:
    """The engine of seed 11 in long-session mode (R-CLI-5, R-LONG-1).

    The same provider summarises, with the TokenBudget fallback; each summarizer request is kept
    within half the window, and runs start from the session's checkpoint.
    """
    window = context_window(settings)
    return AgentEngine(
        provider,
        Registry(settings.workdir),
        settings.workdir,
        session=session,
        compactor=new_summarization_compactor(provider, window, request_limit=window // 2),
        context_window=window,
        max_turns=settings.max_turns,
        long_session=True,
    )
