"""The model a real run sends, against an OpenAI-compatible server on 127.0.0.1
(SPEC R-PRV-27, R-CLI-19, R-CLI-20).

The server (tests/strict_api.py) records the ``model`` of every request, chat and summarizer
apart, and answers a model it is told it does not have with OpenAI's own 404; its base URL is
not the official one, so a router's name reaches it as configured.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager
from tests.cli.helpers import cli, environment, session_of
from tests.strict_api import StrictAPI


@pytest.fixture
def api() -> Iterator[StrictAPI]:
    server = StrictAPI(100_000).start()
    yield server
    server.stop()


@pytest.fixture
def env(tmp_path: Path, api: StrictAPI) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {**environment(tmp_path), "OPENAI_API_KEY": "sk-test-not-a-secret", "OPENAI_BASE_URL": api.url}


def test_a_router_receives_the_model_with_its_prefix(tmp_path: Path, env: dict[str, str], api: StrictAPI) -> None:
    """R-PRV-27: a base URL that is not the official endpoint gets the name as configured."""
    result = cli(["--model", "openai/gpt-4o-mini", "run", "hello"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert api.models == ["openai/gpt-4o-mini"]


def test_summaries_are_asked_of_the_summary_model_and_turns_of_the_main_one(
    tmp_path: Path, env: dict[str, str], api: StrictAPI
) -> None:
    """R-CLI-20a: --summary-model names the summarizer's model on the same provider and server."""
    base = ["--model", "gpt-4o-mini", "--summary-model", "gpt-4.1-nano", "--context-window", "1500"]
    first = cli([*base, "run", "hello " * 200], env, tmp_path)
    assert first.returncode == 0, first.stderr
    for n in range(3):
        again = cli([*base, "--resume", session_of(first), "run", f"prompt {n} " + "more " * 150], env, tmp_path)
        assert again.returncode == 0, again.stderr
    assert api.summarizer_models, "the window was meant to make a summary"
    assert set(api.summarizer_models) == {"gpt-4.1-nano"}
    assert set(api.models) == {"gpt-4o-mini"}


def test_without_a_summary_model_the_main_model_summarises(tmp_path: Path, env: dict[str, str], api: StrictAPI) -> None:
    """R-CLI-20a: the default is the model of the turns."""
    env = {**env, "HARNESS9_SUMMARY_MODEL": ""}  # empty: unset
    base = ["--model", "gpt-4o-mini", "--context-window", "1500"]
    first = cli([*base, "run", "hello " * 200], env, tmp_path)
    for n in range(3):
        cli([*base, "--resume", session_of(first), "run", f"prompt {n} " + "more " * 150], env, tmp_path)
    assert api.summarizer_models and set(api.summarizer_models) == {"gpt-4o-mini"}


def test_an_unknown_model_is_one_line_naming_it_and_the_prompt_is_kept(
    tmp_path: Path, env: dict[str, str], api: StrictAPI
) -> None:
    """R-CLI-19, R-ERR-11: OpenAI's 404 model_not_found becomes the one line naming the model and
    how to choose another; the prompt was stored before the call (R-ENG-23)."""
    api.unknown_models = frozenset({"gpt-nope"})
    result = cli(["--lang", "en", "--model", "gpt-nope", "run", "keep this prompt"], env, tmp_path)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if "gpt-nope" in line]
    assert len(lines) == 1, result.stderr
    assert "openai has no model gpt-nope: choose one with --model or LLM_MODEL" in lines[0]
    assert "Traceback" not in result.stderr and "ModelNotFound" not in result.stderr
    with Manager(tmp_path / "home" / "sessions.db", read_only=True) as manager:
        (listed,) = manager.recent_sessions(10)
        assert [m.content for m in manager.open_session(listed.id).get_messages()] == ["keep this prompt"]
