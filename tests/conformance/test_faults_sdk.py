"""The official SDKs against ``serve``'s faults, as an application's tests meet them.

Each fault of SPEC R-REC-9 … R-REC-12 reaches the ``openai`` (and, for its 529, the
``anthropic``) SDK as the error the SDK raises for the real thing; with the SDK's own retries
on, a rate limit or a 5xx on the first request is followed by the recorded answer (R-REC-9: a
status fault uses up no exchange, even under ``--replay once``). The SDKs' waits are their own
(``Retry-After: 1``, their backoff); nothing here measures time.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.traffic._replay import ReplayServer
from tests.conformance.test_faults import ANTHROPIC_TEXT, STREAM, TEXT

# tier 2 of tests/README.md: the suite's traffic tooling (replay, proxy, faults) as servers
pytestmark = [pytest.mark.sdk, pytest.mark.tooling]


@pytest.fixture(scope="session")
def openai() -> Any:
    """The SDK, imported by the first test that uses it: importing it takes seconds, which
    collection would pay in every worker."""
    return pytest.importorskip("openai")


@pytest.fixture(scope="session")
def anthropic() -> Any:
    return pytest.importorskip("anthropic")


ANSWER = TEXT.expect["message"]["content"]
STREAM_TEXT = "".join(STREAM.expect["text_chunks"])


def client(openai: Any, server: ReplayServer, fault: str | None = None, **options: Any) -> Any:
    headers = {"x-harness9-fault": fault} if fault else {}
    options = {"max_retries": 0, "timeout": 10, **options}
    return openai.OpenAI(api_key="any", base_url=server.base_url_for("openai"), default_headers=headers, **options)


def streamed(sdk: Any, pieces: list[str]) -> None:
    """Read the stream's text into ``pieces`` as it arrives."""
    for chunk in sdk.chat.completions.create(**STREAM.request_body):
        pieces.extend(choice.delta.content for choice in chunk.choices if choice.delta.content)


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, "RateLimitError"), (500, "InternalServerError"), (502, "InternalServerError"),
     (503, "InternalServerError"), (529, "InternalServerError")],
)
def test_without_retries_the_sdk_raises_its_error_for_each_status(openai: Any, status: int, error: str) -> None:
    with ReplayServer([TEXT], faults=[f"status={status}"]) as server, pytest.raises(getattr(openai, error)) as caught:
        client(openai, server).chat.completions.create(**TEXT.request_body)
    assert caught.value.status_code == status
    assert caught.value.response.headers.get("retry-after") == ("1" if status == 429 else None)
    body = caught.value.body
    assert isinstance(body, dict) and body["message"], body  # the SDK read the provider's error body
    assert len(server.requests_seen) == 1


@pytest.mark.parametrize("status", [429, 500])
def test_with_its_retries_the_sdk_gets_the_error_then_the_recorded_answer(openai: Any, status: int) -> None:
    with ReplayServer([TEXT], replay="once", faults=[f"request=1, status={status}"]) as server:
        reply = client(openai, server, max_retries=2).chat.completions.create(**TEXT.request_body)
    assert reply.choices[0].message.content == ANSWER
    assert [seen.fault.status if seen.fault else None for seen in server.requests_seen] == [status, None]
    assert server.unexpected == [] and server.unused() == []


def test_the_anthropic_sdk_reads_529_as_overloaded_and_retries_it(anthropic: Any) -> None:
    with ReplayServer([ANTHROPIC_TEXT], replay="once", faults=["request=1, status=529"]) as server:
        base = server.base_url_for("anthropic")
        with pytest.raises(anthropic.OverloadedError) as caught:
            anthropic.Anthropic(api_key="any", base_url=base, max_retries=0, timeout=10).messages.create(
                **ANTHROPIC_TEXT.request_body
            )
        assert caught.value.status_code == 529
        assert caught.value.body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
        retried = anthropic.Anthropic(api_key="any", base_url=base, max_retries=2, timeout=10)
        message = retried.messages.create(**ANTHROPIC_TEXT.request_body)
    assert message.content[0].text == ANTHROPIC_TEXT.expect["message"]["content"]
    assert [seen.exchange for seen in server.requests_seen] == [None, ANTHROPIC_TEXT.name]


def test_a_cut_stream_fails_after_the_text_that_arrived(openai: Any) -> None:
    pieces: list[str] = []
    with ReplayServer([STREAM], "lines") as server, pytest.raises(openai.APIConnectionError):
        streamed(client(openai, server, "cut=8"), pieces)
    text = "".join(pieces)
    assert text and STREAM_TEXT.startswith(text) and text != STREAM_TEXT


def test_a_malformed_body_or_stream_is_a_parse_failure(openai: Any) -> None:
    with ReplayServer([TEXT, STREAM], faults=["malformed"]) as server:
        with pytest.raises(ValueError):
            client(openai, server).chat.completions.create(**TEXT.request_body)
        pieces: list[str] = []
        with pytest.raises(ValueError):
            streamed(client(openai, server), pieces)
    assert pieces == []


def test_a_stall_longer_than_the_timeout_times_out_and_a_short_one_is_only_a_wait(openai: Any) -> None:
    with ReplayServer([STREAM], "lines") as server:
        with pytest.raises(openai.APITimeoutError):
            streamed(client(openai, server, "stall=5", timeout=0.5), [])
        pieces: list[str] = []
        streamed(client(openai, server, "stall=0.2, after=3"), pieces)
    assert "".join(pieces) == STREAM_TEXT
