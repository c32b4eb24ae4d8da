"""One language from start to end, through the real command (SPEC R-LANG-1 … R-LANG-4).

Each test runs the program twice, once per language, and compares what it printed with the
table's texts (``STRINGS``), so a line worded outside the table, or one left in the other
language, shows as a difference. The language comes from the locale alone (no ``--lang``,
no HARNESS9_LANG) unless a test says otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest

from harness9_ref.memory.storage import InvalidArgument, Manager
from harness9_ref.text import STRINGS

from .helpers import cli, environment, seed

LOCALES: Final = {"zh": "zh_CN.UTF-8", "en": "en_US.UTF-8"}
CHINESE: Final = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
SOURCE: Final = "11111111-2222-4333-8444-555555555555"


@pytest.fixture(params=["zh", "en"])
def lang(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def env(tmp_path: Path, lang: str) -> dict[str, str]:
    return {**environment(tmp_path), "LANG": LOCALES[lang]}


def _in(lang: str, name: str, /, **fields: object) -> str:
    return STRINGS[lang][name].format(**fields)


def test_run_mode_speaks_the_locales_language(env: dict[str, str], lang: str, tmp_path: Path) -> None:
    """R-LANG-2a: the offline notice, the refused command and the session line of ``run``."""
    result = cli(["run", "run echo hi"], env, tmp_path)
    assert result.returncode == 3, result.stderr  # R-CLI-50: the command was not run
    lines = result.stderr.splitlines()
    assert lines[0] == _in(lang, "cli_offline", key="OPENAI_API_KEY")
    assert _in(lang, "cli_not_run", command="echo hi") in lines
    assert lines[-1].startswith("session: ")  # the same in both languages: a script reads it
    if lang == "en":
        assert CHINESE.search(result.stderr) is None, result.stderr


def test_the_listings_speak_the_locales_language(env: dict[str, str], lang: str, tmp_path: Path) -> None:
    """R-LANG-2b: ``sessions``' word, ``search``'s no-hit line, ``prune``'s and ``copy``'s reports."""
    db = tmp_path / "home" / "sessions.db"
    seed(db, [(SOURCE, 1_000_000_000, ["hello"])])
    listing = cli(["sessions", "--any-folder"], env, tmp_path)
    assert listing.stdout.split()[4] == _in(lang, "messages_word")
    missing = cli(["search", "nowhere"], env, tmp_path)
    assert (missing.returncode, missing.stderr.splitlines()[-1]) == (1, _in(lang, "cli_no_match", query="nowhere"))
    dry = cli(["prune", "--older-than", "1", "--dry-run"], env, tmp_path)
    one, two = _in(lang, "sessions_count_one", n=1), _in(lang, "messages_count", n=2)
    assert dry.stdout.strip() == _in(lang, "cli_would_prune", sessions=one, messages=two)
    copied = cli(["copy", str(db), str(tmp_path / "copy.db")], env, tmp_path)
    assert copied.stdout.strip() == _in(lang, "cli_copied", sessions=one, messages=two)
    again = cli(["copy", str(db), str(tmp_path / "copy.db")], env, tmp_path)  # R-PG-10: names the option that replaces
    taken = _in(lang, "err_copy_taken", name=tmp_path / "copy.db", n=1, ids=SOURCE)
    assert (again.returncode, again.stderr) == (1, _in(lang, "cli_error", message=taken) + "\n")
    assert "(--overwrite " in taken or "（--overwrite " in taken


def test_a_users_mistake_is_worded_in_the_language(env: dict[str, str], lang: str, tmp_path: Path) -> None:
    """R-LANG-3a: errors carried by their key (an unknown session, a fork past the end, an empty
    query, a rule that is not there, a bad variable) are converted where the line is written."""
    db = tmp_path / "home" / "sessions.db"
    seed(db, [(SOURCE, 1_000_000_000, ["hello"])])
    unknown = "abcdef01-2222-4333-8444-555555555555"
    cases = [
        (["show", unknown], {}, _in(lang, "err_no_session", id=unknown)),
        (["fork", SOURCE, "--at", "5"], {}, _in(lang, "err_fork_beyond", id=SOURCE, count=2, at=5)),
        (["search", " "], {}, _in(lang, "err_query_empty")),
        (["allow", "--remove", "git", "push"], {}, _in(lang, "err_no_such_rule", rule="git push", workdir=tmp_path.resolve())),
        (["run", "x"], {"HARNESS9_SESSION_TTL_DAYS": "soon"}, _in(lang, "err_ttl_env", value=repr("soon"))),
        (
            ["run", "x"],
            {"HARNESS9_SUMMARY_MODEL": "two words"},
            _in(lang, "err_model_name", source="HARNESS9_SUMMARY_MODEL", value=repr("two words")),
        ),
    ]
    for args, extra, message in cases:
        result = cli(args, {**env, **extra}, tmp_path)
        assert result.returncode in (1, 2), (args, result.stderr)
        assert result.stderr.splitlines()[-1] == _in(lang, "cli_error", message=message), args
    with Manager(db) as manager:
        assert [info.id for info in manager.list_sessions()] == [SOURCE]  # nothing was forked


def test_the_library_message_is_english(tmp_path: Path) -> None:
    """R-LANG-3a: ``str(error)`` is the table's English text, whatever the locale."""
    with Manager(tmp_path / "s.db") as manager, pytest.raises(InvalidArgument) as raised:
        manager.search(" ")
    assert str(raised.value) == STRINGS["en"]["err_query_empty"]


def test_a_providers_words_are_shown_as_received(env: dict[str, str], lang: str, tmp_path: Path) -> None:
    """R-LANG-3d: the prefix is translated, the quoted text is not (an operating system's words)."""
    result = cli(["--workdir", str(tmp_path / "nowhere"), "run", "x"], env, tmp_path)
    assert result.stderr.splitlines()[-1] == _in(lang, "cli_error", message=_in(lang, "err_workdir", path=tmp_path / "nowhere"))


def test_the_parser_stays_english() -> None:
    """R-LANG-4: ``--help`` and the errors found while parsing are the same in both languages."""
    outputs = {}
    for lang in ("zh", "en"):
        env = {**environment(Path("/nonexistent")), "LANG": LOCALES[lang]}
        help_text = cli(["--help"], env, Path.cwd())
        bad = cli(["--max-turns", "many", "run", "x"], env, Path.cwd())
        assert bad.returncode == 2
        outputs[lang] = (help_text.stdout, bad.stderr)
    assert outputs["zh"] == outputs["en"]
    assert CHINESE.search(outputs["zh"][0] + outputs["zh"][1]) is None
