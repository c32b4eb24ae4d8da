"""The ``harness9-ref`` command (SPEC section "Command line": R-CLI-1 … R-CLI-9; seed 11).

``main(argv)`` runs the program and returns its exit status; ``python -m harness9_ref`` and the
installed ``harness9-ref`` script call it. The settings rules are pure functions:
``resolve_settings`` and ``choose_provider``.
"""

from ._main import main
from ._parser import EXIT_USAGE, USAGE, parse_args
from ._run import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, SESSION_LINE, run_prompt
from ._settings import (
    DEFAULT_MODEL,
    ENV_ANTHROPIC_API_KEY,
    ENV_ANTHROPIC_BASE_URL,
    ENV_MODEL,
    ENV_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL,
    OFFLINE_NOTICE,
    PROG,
    PROVIDERS,
    ProviderName,
    Settings,
    choose_provider,
    provider_for_model,
    resolve_settings,
)
from ._wiring import (
    TOOL_RESULTS_DIR,
    CliError,
    build_engine,
    build_provider,
    context_window,
    open_manager,
    open_session,
)

__all__ = (
    "DEFAULT_MODEL",
    "ENV_ANTHROPIC_API_KEY",
    "ENV_ANTHROPIC_BASE_URL",
    "ENV_MODEL",
    "ENV_OPENAI_API_KEY",
    "ENV_OPENAI_BASE_URL",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "OFFLINE_NOTICE",
    "PROG",
    "PROVIDERS",
    "SESSION_LINE",
    "TOOL_RESULTS_DIR",
    "USAGE",
    "CliError",
    "ProviderName",
    "Settings",
    "build_engine",
    "build_provider",
    "choose_provider",
    "context_window",
    "main",
    "open_manager",
    "open_session",
    "parse_args",
    "provider_for_model",
    "resolve_settings",
    "run_prompt",
)
