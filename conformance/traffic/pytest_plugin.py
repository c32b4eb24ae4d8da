"""pytest plugin ``h9``: a test's provider traffic replayed from a cassette, or recorded into one.

Registered as a ``pytest11`` entry point, so installing the package is enough. A test marked
``@pytest.mark.h9_cassette`` (or asking for the ``h9_cassette`` fixture) gets a replay server
on 127.0.0.1 serving its cassette, ``<h9_cassette_dir>/<test file>/<test name>/``, with
``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` pointing at it, and fails when a request matched
no recorded exchange (SPEC R-REC-7). ``--h9-record`` chooses what happens to requests that
match nothing: ``none`` (the default) refuses them; ``once`` records the whole test through the
recording proxy when its cassette does not exist yet; ``new_episodes`` replays what matches and
records the rest. Recording needs ``OPENAI_API_KEY`` or ``ANTHROPIC_API_KEY``.

Faults on demand (SPEC R-REC-8): ``@pytest.mark.h9_cassette(faults=["request=1, status=429"])``
gives the server its ``--fault`` rules, ``h9_cassette.add_fault(rule)`` adds one during the test,
and ``timing="recorded"`` paces the replay by the recorded gaps (R-REC-13).

Only the standard library and pytest are imported here; the conformance modules are imported
when a test uses a cassette, so other tests run exactly as without the plugin.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from ._replay import ReplayServer

__all__ = ["h9_cassette"]

RECORD_MODES: Final = ("none", "once", "new_episodes")
_UPSTREAMS: Final = {"openai": "https://api.openai.com", "anthropic": "https://api.anthropic.com"}
_KEYS: Final = "OPENAI_API_KEY or ANTHROPIC_API_KEY"
_REPLAY_KEY: Final = "h9-replay"  # what a client is given when no key is set: any key is accepted


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("h9", "recorded provider traffic (h9_cassette)")
    group.addoption(
        "--h9-record",
        choices=RECORD_MODES,
        default="none",
        help="none: replay only (default); once: record a test whose cassette does not exist; "
        "new_episodes: record the requests its cassette does not answer",
    )
    parser.addini(
        "h9_cassette_dir", "cassette folder, relative to the rootdir", default="tests/cassettes"
    )
    for provider, url in _UPSTREAMS.items():
        parser.addini(f"h9_{provider}_upstream", f"the {provider} API to record", default=url)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "h9_cassette(name=None, *, replay='once', ignore=(), faults=(), timing='fast'): serve this "
        "test's recorded provider traffic on 127.0.0.1 (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), "
        "with faults on demand",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", None)
        marked = item.get_closest_marker("h9_cassette") is not None
        if marked and isinstance(names, list) and "h9_cassette" not in names:
            names.insert(0, "h9_cassette")


def _folder(request: pytest.FixtureRequest, name: str | None) -> Path:
    root = request.config.rootpath / str(request.config.getini("h9_cassette_dir"))
    test = name or re.sub(r"[^\w.-]+", "-", request.node.name).strip("-")
    module: Path = request.node.path
    return root / module.stem / test


@pytest.fixture
def h9_cassette(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ReplayServer]:
    """The replay server of this test's cassette (``requests_seen``, ``unused()``, base URLs,
    ``add_fault``)."""
    from ._cassette import Cassette, load_cassette
    from ._proxy import Forwarder, Upstream
    from ._record import KEY_VARIABLES, FixtureError
    from ._replay import ReplayServer

    marker = request.node.get_closest_marker("h9_cassette")
    args, options = (marker.args, marker.kwargs) if marker is not None else ((), {})
    folder = _folder(request, args[0] if args else options.get("name"))
    mode = request.config.getoption("h9_record")
    try:
        exchanges = load_cassette(folder)
    except FixtureError as exc:
        pytest.fail(f"h9_cassette: {exc}", pytrace=False)
    keys = [variable for variable in KEY_VARIABLES.values() if os.environ.get(variable)]
    recording = mode == "new_episodes" or (mode == "once" and not exchanges)
    if recording and not keys and mode == "once":
        pytest.skip(f"--h9-record=once: recording {folder} needs {_KEYS}")
    cassette = Cassette(folder).open() if recording and keys else None
    forward = None
    if cassette is not None:
        ini = request.config.getini
        try:
            upstreams = {p: Upstream.parse(str(ini(f"h9_{p}_upstream"))) for p in _UPSTREAMS}
        except ValueError as exc:
            cassette.close()
            pytest.fail(f"h9_cassette: an h9_*_upstream ini option: {exc}", pytrace=False)
        forward = Forwarder(upstreams, cassette)
    try:
        server = ReplayServer(
            exchanges,
            replay=options.get("replay", "once"),
            ignore=options.get("ignore", ()),
            forward=forward,
            timing=options.get("timing", "fast"),
            faults=options.get("faults", ()),
        ).start()
    except ValueError as exc:  # a fault rule or timing the grammar refuses
        refused: str | None = f"h9_cassette: {exc}"
    else:
        refused = None
    if refused is not None:
        if cassette is not None:
            cassette.close()
        pytest.fail(refused, pytrace=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url_for("openai"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url_for("anthropic"))
    if forward is None:
        for variable in KEY_VARIABLES.values():
            monkeypatch.setenv(variable, os.environ.get(variable) or _REPLAY_KEY)
    try:
        yield server
    finally:
        server.stop()
        if cassette is not None:
            cassette.close()
    if server.unexpected:
        hint = "record them with --h9-record=new_episodes"
        if mode == "new_episodes" and not keys:
            hint = f"recording them needs {_KEYS}"
        elif not exchanges and cassette is None:
            hint = "there is no recording yet: record it with --h9-record=once"
        lines = "\n".join(f"  {line}" for line in server.unexpected)
        pytest.fail(
            f"h9_cassette {folder}: {len(server.unexpected)} requests matched no recorded "
            f"exchange ({hint}):\n{lines}",
            pytrace=False,
        )
