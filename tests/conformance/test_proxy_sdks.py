"""Record with the official SDKs through the proxy, replay the cassette, read the same thing.

The upstream is the replay server serving a fixture; the official ``openai`` or ``anthropic``
SDK sends the fixture's request through the recording proxy, then again to a replay server
serving what the proxy wrote (SPEC R-REC-1, R-REC-3). The SDK must read the same text, tool
calls and token counts all three times, and the cassette must hold the fixture's exact bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.traffic._cassette import load_cassette
from conformance.traffic._record import find_exchanges
from conformance.traffic._replay import ReplayServer
from tests.conformance.proxy_upstream import recording
from tests.provider import test_official_sdks as official

# tier 2 of tests/README.md: the suite's traffic tooling (replay, proxy, faults) as servers
pytestmark = [pytest.mark.sdk, pytest.mark.tooling]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
ROUND_TRIP = [
    "openai/text", "openai/stream-text", "openai/stream-tool-call-fragments",
    "openai/error-rate-limit", "anthropic/text", "anthropic/stream-tool-use",
    "anthropic/stream-thinking",
]
BY_NAME = {e.name: e for e in find_exchanges([FIXTURES])}


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_an_sdk_reads_the_same_from_the_api_the_proxy_and_the_replayed_cassette(
    name: str, tmp_path: Path
) -> None:
    fixture = BY_NAME[name]
    with ReplayServer([fixture]) as upstream:
        direct = official._sdk_read(fixture, upstream)
        with recording(upstream.base_url, tmp_path / "cassette") as proxy:
            through_proxy = official._sdk_read(fixture, proxy)
        assert not proxy.unexpected
    [recorded] = load_cassette(tmp_path / "cassette")
    assert recorded.body == fixture.body and recorded.status == fixture.status
    assert recorded.request_body == fixture.request_body
    assert recorded.provider == fixture.provider and recorded.stream == fixture.stream
    with ReplayServer([recorded], replay="once") as replay:
        replayed = official._sdk_read(fixture, replay)
    assert not replay.unexpected and not replay.unused()
    assert direct == through_proxy == replayed
    assert ("text" in direct) == (fixture.status == 200)
