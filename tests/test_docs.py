"""The manual against the code: what it must name, the reading walk, and its links.

The README is short and the manual lives in ``docs/``, one part a page; what goes stale there
is caught here instead of by a reader:

1. every sub-command and option of the ``harness9-ref`` parser (SPEC R-CLI-1, R-CLI-12) and every
   environment variable the package reads is named in ``docs/agent.md`` or the README;
2. the README's reading walk is true: each file it names exists, and each name written
   ``like()`` exists and is called when ``harness9-ref run "read README.md"`` runs, offline and
   against an OpenAI-compatible server on 127.0.0.1 (the tracing collects what ran);
3. every relative link of the README and ``docs/`` reaches a file, and its heading when it
   names one.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Final

import pytest

from conformance import PROJECT_ROOT
from harness9_ref.cli import _parser, _settings
from harness9_ref.cli import main as cli_main
from tests.strict_api import StrictAPI

README: Final = PROJECT_ROOT / "README.md"
DOCS: Final = PROJECT_ROOT / "docs"
AGENT_PAGE: Final = DOCS / "agent.md"
WALK_HEADING: Final = "## Reading the code"
WALK_PROMPT: Final = "read README.md"
BACKTICKED: Final = re.compile(r"`([^`\n]+)`")
CALLED: Final = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)$")
CLASS_NAME: Final = re.compile(r"^[A-Z][A-Za-z0-9]+$")
SOURCE_PATH: Final = re.compile(r"^[\w.-]+(?:/[\w.-]+)*(?:\.py|/)$")
LINK: Final = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE: Final = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
ENV_NAME: Final = re.compile(r"\bHARNESS9_[A-Z0-9_]+\b")
# The threads of a run: the command's own, the run worker's and the compaction helper's; not
# the test server's, whose answers come from the offline provider too.
RUN_THREADS: Final = ("MainThread", "harness9-")


def manual_text() -> str:
    return AGENT_PAGE.read_text(encoding="utf-8") + README.read_text(encoding="utf-8")


# 1. Everything the command takes is documented.


def _parser_words(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(where, word) for each option string and sub-command of ``parser``, recursively."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix or "harness9-ref", name
                yield from _parser_words(sub, name)
        else:
            for option in action.option_strings:
                yield prefix or "harness9-ref", option


def _named(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_every_command_and_option_is_documented() -> None:
    text = manual_text()
    words = sorted(set(_parser_words(_parser._build())))
    assert ("harness9-ref", "run") in words and ("prune", "--older-than") in words  # the walk sees sub-parsers
    missing = []
    for where, word in words:
        if word.startswith("-"):
            found = _named(text, word)
        else:  # a sub-command is written as one: `sessions`, `harness9-ref show 3f2a`, `prune --older-than …`
            found = re.search(rf"`(?:harness9-ref )?{re.escape(word)}\b", text) is not None
        if not found:
            missing.append(f"{where}: {word}")
    assert not missing, f"not in docs/agent.md or README.md: {missing}"


def _environment_names() -> set[str]:
    """Every HARNESS9_* name in the package's source, and every variable the settings read."""
    names = {
        name
        for path in (PROJECT_ROOT / "harness9_ref").rglob("*.py")
        for name in ENV_NAME.findall(path.read_text(encoding="utf-8"))
    }
    names |= {value for key, value in vars(_settings).items() if key.startswith("ENV_") and isinstance(value, str)}
    return names


def test_every_environment_variable_is_documented() -> None:
    names = _environment_names()
    assert {"HARNESS9_HOME", "HARNESS9_SESSION_TTL_DAYS", "LLM_MODEL"} <= names
    text = manual_text()
    assert not sorted(n for n in names if not _named(text, n)), "environment variables missing from docs/agent.md"


# 2. The reading walk is true.


def walk_items() -> list[str]:
    """The numbered stops of the README's reading walk, each as one text."""
    text = README.read_text(encoding="utf-8")
    start = text.index(WALK_HEADING)
    end = text.index("\n## ", start + len(WALK_HEADING))
    walk = text[start:end]
    return [m.group(0) for m in re.finditer(r"^\d+\. .*?(?=^\d+\. |\Z)", walk, re.DOTALL | re.MULTILINE)]


def _module_of(path: str) -> ModuleType | None:
    if not path.endswith(".py") or not path.startswith("harness9_ref/") or not (PROJECT_ROOT / path).is_file():
        return None  # a missing file is reported as such
    return importlib.import_module(path[: -len(".py")].replace("/", "."))


def _resolve(name: str, modules: list[ModuleType]) -> object | None:
    for module in modules:
        value: object = module
        for part in name.split("."):
            value = getattr(value, part, None)
            if value is None:
                break
        if value is not None:
            return value
    return None


def walk_names() -> tuple[list[str], dict[str, object], list[str]]:
    """The walk's paths, its ``called()`` names resolved to functions, and the names that did not resolve.

    A name is looked for in the modules its own stop names, then in every module of the walk;
    a capitalised name in backticks is a class that must exist the same way.
    """
    items = walk_items()
    paths_by_item = [[t for t in BACKTICKED.findall(item) if SOURCE_PATH.match(t) and "/" in t] for item in items]
    everywhere = [m for paths in paths_by_item for p in paths if (m := _module_of(p)) is not None]
    paths = [p for item_paths in paths_by_item for p in item_paths]
    called: dict[str, object] = {}
    unresolved = []
    for item, item_paths in zip(items, paths_by_item, strict=True):
        own = [m for p in item_paths if (m := _module_of(p)) is not None]
        for token in BACKTICKED.findall(item):
            match = CALLED.match(token)
            if match is None and not CLASS_NAME.match(token):
                continue
            name = match.group(1) if match else token
            value = _resolve(name, own + everywhere)
            if value is None:
                unresolved.append(name)
            elif match:
                called[name] = value
    return paths, called, unresolved


def test_the_walk_names_what_exists() -> None:
    paths, called, unresolved = walk_names()
    assert len(walk_items()) >= 10 and len(paths) >= 20 and len(called) >= 20  # the parse found the walk
    assert not [p for p in paths if not (PROJECT_ROOT / p).exists()], "files the walk names that do not exist"
    assert not unresolved, f"names the walk uses that the code does not have: {unresolved}"
    assert not [n for n, v in called.items() if not callable(v)], "names written as calls that are no functions"


def _code_of(value: object) -> CodeType:
    function = getattr(value, "__func__", value)
    code = getattr(function, "__code__", None)
    assert isinstance(code, CodeType), f"{value!r} has no code to trace"
    return code


class Tracer:
    """The code objects called in the run's threads while active (``sys.setprofile`` and
    ``threading.setprofile``: the engine runs on a worker thread)."""

    def __init__(self) -> None:
        self.called: set[CodeType] = set()

    def _profile(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and threading.current_thread().name.startswith(RUN_THREADS):
            self.called.add(frame.f_code)

    def __enter__(self) -> Tracer:
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


@pytest.fixture
def api() -> Iterator[StrictAPI]:
    server = StrictAPI(100_000).start()
    yield server
    server.stop()


def _run_walk_prompt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path, env: dict[str, str]
) -> set[CodeType]:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "HARNESS9_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HARNESS9_HOME", str(home))
    monkeypatch.setenv("HARNESS9_LANG", "en")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with Tracer() as tracer:
        status = cli_main(["--workdir", str(PROJECT_ROOT), "run", WALK_PROMPT])
    _, err = capsys.readouterr()
    assert status == 0, err
    assert "session: " in err  # the run went to its end
    return tracer.called


def test_the_walk_is_the_path_one_prompt_takes(
    tmp_path: Path, api: StrictAPI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    offline = _run_walk_prompt(monkeypatch, capsys, tmp_path / "offline", {})
    online = _run_walk_prompt(
        monkeypatch,
        capsys,
        tmp_path / "online",
        {"OPENAI_API_KEY": "sk-test-not-a-secret", "OPENAI_BASE_URL": api.url, "LLM_MODEL": "gpt-4o-mini"},
    )
    assert len(api.models) == 2  # the model asked for read_file, then reported
    _, called, _ = walk_names()
    not_called = sorted(name for name, value in called.items() if _code_of(value) not in offline | online)
    assert not not_called, f"the walk names functions the prompt does not call: {not_called}"
    only_offline = {"OfflineProvider.generate_stream"}
    assert not [n for n in only_offline if _code_of(called[n]) in online]  # the tracing tells the runs apart


# 3. Links.


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown text's headings (fenced code left out)."""
    anchors: set[str] = set()
    for line in FENCE.sub("", text).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if match is None:
            continue
        slug = "".join(c for c in match.group(1).lower() if c in " -_" or unicodedata.category(c)[0] in "LN").replace(" ", "-")
        anchor, n = slug, 0
        while anchor in anchors:
            n += 1
            anchor = f"{slug}-{n}"
        anchors.add(anchor)
    return anchors


def manual_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_every_relative_link_reaches_its_file_and_heading() -> None:
    broken = []
    pages = manual_pages()
    assert {p.name for p in pages} >= {"agent.md", "long-sessions.md", "sessions.md", "postgresql.md"}
    for page in pages:
        for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z]+:", target):
                continue
            path_part, _, anchor = target.partition("#")
            path = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(PROJECT_ROOT)}: {target}"
            if not path.exists() or (
                anchor and path.suffix == ".md" and anchor not in heading_anchors(path.read_text(encoding="utf-8"))
            ):
                broken.append(where)
    assert not broken, f"links to nothing: {broken}"


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("## Run mode and `--json`", "run-mode-and---json"),
        ("### Faults on demand", "faults-on-demand"),
        (
            "## Security: what the agent guards against, and what it does not",
            "security-what-the-agent-guards-against-and-what-it-does-not",
        ),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert anchor in heading_anchors(heading)
