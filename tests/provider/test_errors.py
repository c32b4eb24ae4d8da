"""Provider errors: hierarchy, classification, messages and hints
(harness9_ref/provider/_provider_error.py, _classify.py; SPEC R-ERR-1 … R-ERR-4, R-ERR-6)."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import pytest

from harness9_ref import Harness9Error
from harness9_ref.provider import (
    ERROR_EXCERPT_CHARS,
    AuthenticationError,
    ContextLengthExceeded,
    InvalidRequestError,
    MalformedResponse,
    ModelNotFound,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeout,
    RateLimitError,
    RequestBuildError,
    ScriptExhausted,
    ServerError,
    StreamCutOff,
    anthropic,
    openai,
    redact,
)
from harness9_ref.provider._classify import error_from_object, parse_retry_after, parse_should_retry


@pytest.mark.parametrize(
    ("cls", "parent", "code"),
    [
        (ProviderError, Harness9Error, "provider_error"),
        (AuthenticationError, ProviderError, "authentication"),
        (RateLimitError, ProviderError, "rate_limit"),
        (OverloadedError, ProviderError, "overloaded"),
        (ContextLengthExceeded, ProviderError, "context_length_exceeded"),
        (InvalidRequestError, ProviderError, "invalid_request"),
        (ServerError, ProviderError, "server_error"),
        (ProviderTimeout, ProviderError, "timeout"),
        (ProviderConnectionError, ProviderError, "connection_error"),
        (MalformedResponse, ProviderError, "malformed_response"),
        (ProviderStreamError, MalformedResponse, "malformed_stream"),
        (StreamCutOff, ProviderStreamError, "stream_cut_off"),
        (RequestBuildError, ProviderError, "request_build_error"),
        (ScriptExhausted, ProviderError, "script_exhausted"),
    ],
)
def test_every_error_class_has_its_fixed_code_and_parent(cls: type[ProviderError], parent: type, code: str) -> None:
    assert cls.__bases__ == (parent,)
    assert cls.code == code
    error = cls("x: y", provider="openai")
    assert error.code == code
    assert (str(error), error.message) == ("x: y", "x: y")
    assert error.chunk_text() == f"{code}: x: y"


def test_every_error_has_the_hint_attributes() -> None:
    error = ProviderError("m", provider="anthropic")
    hints = (error.status, error.error_type, error.request_id, error.retry_after, error.should_retry)
    assert error.provider == "anthropic"
    assert hints == (None, None, None, None, None)
    assert str(error) == "m" and error.message == "m"


def anthropic_body(error_type: str, message: str = "m") -> bytes:
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


def openai_body(code: str | None, message: str = "m", error_type: str | None = "invalid_request_error") -> bytes:
    error = {"message": message, "type": error_type, "param": None, "code": code}
    return json.dumps({"error": error}, indent=4).encode()  # some OpenAI error bodies are 4-space indented


# R-ERR-3: (provider, status, body) -> class. First match wins: body rules, then status.
CLASSIFICATION = [
    ("anthropic", 401, anthropic_body("authentication_error"), AuthenticationError),
    ("anthropic", 403, anthropic_body("permission_error"), AuthenticationError),
    ("anthropic", 400, anthropic_body("permission_error"), AuthenticationError),
    ("anthropic", 429, anthropic_body("rate_limit_error"), RateLimitError),
    ("anthropic", 500, anthropic_body("rate_limit_error"), RateLimitError),
    ("anthropic", 529, anthropic_body("overloaded_error", "Overloaded"), OverloadedError),
    ("anthropic", 503, anthropic_body("overloaded_error"), OverloadedError),
    (
        "anthropic",
        400,
        anthropic_body("invalid_request_error", "prompt is too long: 208000 tokens > 200000 maximum"),
        ContextLengthExceeded,
    ),
    ("anthropic", 400, anthropic_body("invalid_request_error", "Prompt Is Too Long"), ContextLengthExceeded),
    ("anthropic", 400, anthropic_body("invalid_request_error", "messages: roles must alternate"), InvalidRequestError),
    ("anthropic", 404, anthropic_body("not_found_error", "model: claude-9"), ModelNotFound),  # R-ERR-11
    ("anthropic", 413, anthropic_body("request_too_large"), InvalidRequestError),
    ("anthropic", 500, anthropic_body("api_error", "Internal server error"), ServerError),
    ("anthropic", 402, anthropic_body("billing_error"), InvalidRequestError),
    ("anthropic", 401, anthropic_body("some_new_error"), AuthenticationError),
    (
        "openai",
        400,
        openai_body("context_length_exceeded", "This model's maximum context length is 128000 tokens."),
        ContextLengthExceeded,
    ),
    ("openai", 401, openai_body("invalid_api_key", "Incorrect API key provided"), AuthenticationError),
    ("openai", 403, openai_body("unsupported_country_region_territory"), AuthenticationError),
    ("openai", 429, openai_body("rate_limit_exceeded", error_type="requests"), RateLimitError),
    ("openai", 429, openai_body("insufficient_quota", error_type="insufficient_quota"), RateLimitError),
    ("openai", 404, openai_body("model_not_found"), ModelNotFound),  # R-ERR-11
    ("openai", 400, openai_body(None), InvalidRequestError),
    ("openai", 500, openai_body(None, error_type="server_error"), ServerError),
    ("openai", 503, openai_body(None, error_type="server_error"), ServerError),
    ("openai", 529, openai_body(None), OverloadedError),
    # Anthropic's rules do not apply to OpenAI bodies, nor OpenAI's to Anthropic's.
    ("openai", 500, openai_body(None, error_type="rate_limit_error"), ServerError),
    ("anthropic", 400, b'{"error": {"type": "x", "code": "context_length_exceeded"}}', InvalidRequestError),
    # Not the provider's JSON error shape: by status alone.
    ("openai", 502, b"<html><body>502 Bad Gateway</body></html>", ServerError),
    ("anthropic", 429, b"Too Many Requests", RateLimitError),
    ("openai", 401, b"", AuthenticationError),
    ("openai", 418, b'{"error": "just a string"}', InvalidRequestError),
    ("openai", 302, b"", ProviderError),
]


@pytest.mark.parametrize(("provider", "status", "body", "cls"), CLASSIFICATION)
def test_error_responses_are_classified_first_match_wins(
    provider: str, status: int, body: bytes, cls: type[ProviderError]
) -> None:
    wire = openai if provider == "openai" else anthropic
    error = wire.parse_error(status, [], body)
    assert type(error) is cls
    assert (error.provider, error.status) == (provider, status)


@pytest.mark.parametrize(
    ("provider", "status", "body", "message", "error_type"),
    [
        (
            "anthropic",
            529,
            anthropic_body("overloaded_error", "Overloaded"),
            "anthropic: HTTP 529 overloaded_error: Overloaded",
            "overloaded_error",
        ),
        (
            "openai",
            400,
            openai_body("context_length_exceeded", "Too long."),
            "openai: HTTP 400 invalid_request_error: Too long.",
            "invalid_request_error",
        ),
        (  # no type: the code stands in for it
            "openai",
            429,
            openai_body("rate_limit_exceeded", "Slow down.", error_type=None),
            "openai: HTTP 429 rate_limit_exceeded: Slow down.",
            "rate_limit_exceeded",
        ),
        ("openai", 500, json.dumps({"error": {"message": "Oops"}}).encode(), "openai: HTTP 500: Oops", None),
        ("openai", 502, b"  <html>Bad Gateway</html>\n", "openai: HTTP 502: <html>Bad Gateway</html>", None),
        ("anthropic", 503, b"", "anthropic: HTTP 503: (empty body)", None),
    ],
)
def test_messages_name_provider_status_type_and_the_providers_words(
    provider: str, status: int, body: bytes, message: str, error_type: str | None
) -> None:
    error = (openai if provider == "openai" else anthropic).parse_error(status, [], body)
    assert str(error) == message
    assert error.error_type == error_type


def test_a_stream_error_event_says_stream_instead_of_the_status() -> None:
    event = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    error = error_from_object("anthropic", event)
    assert str(error) == "anthropic: stream overloaded_error: Overloaded"
    assert type(error) is OverloadedError and error.status is None
    assert type(error_from_object("openai", {"error": {"message": "x", "type": "server_error"}})) is ServerError
    too_long = {"error": {"message": "x", "code": "context_length_exceeded"}}
    assert type(error_from_object("openai", too_long)) is ContextLengthExceeded


def test_a_non_json_body_is_quoted_up_to_500_characters() -> None:
    assert ERROR_EXCERPT_CHARS == 500
    body = ("é" * 300 + "x" * 300).encode()
    error = openai.parse_error(503, [], body)
    assert error.message == "openai: HTTP 503: " + "é" * 300 + "x" * 200
    assert error.body_excerpt == "é" * 300 + "x" * 200


def test_a_json_error_keeps_the_whole_provider_message() -> None:
    long = "y" * 900
    assert openai.parse_error(400, [], openai_body(None, long)).message.endswith(long)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        (" 30 ", 30.0),
        ("0", 0.0),
        ("1.5", 1.5),
        ("-3", None),
        ("soon", None),
        ("", None),
        (None, None),
        ("Wed, 21 Oct 2015 07:28:20 GMT", 20.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # in the past: no wait
        ("Wed, 21 Oct 2015 07:28:30 -0000", 30.0),
        ("1_000", None),
        ("inf", None),
    ],
)
def test_retry_after_is_read_as_seconds_or_an_http_date(value: str | None, seconds: float | None) -> None:
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp()
    assert parse_retry_after(value, now) == seconds


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="the local zone can be changed only where time.tzset exists")
def test_a_date_marked_minus_zero_is_gmt_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """R-ERR-2: a "-0000" date carries no zone, and an HTTP date is GMT: never the local time."""
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp()
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 -0000", now) == 30.0
    finally:
        monkeypatch.undo()
        time.tzset()


def test_retry_after_reaches_the_error() -> None:
    error = anthropic.parse_error(429, [("Retry-After", "12")], anthropic_body("rate_limit_error"))
    assert isinstance(error, RateLimitError) and error.retry_after == 12


@pytest.mark.parametrize(
    ("value", "flag"),
    [("true", True), ("false", False), ("TRUE", True), (" false ", False), ("maybe", None), (None, None)],
)
def test_x_should_retry_is_a_bool_or_none(value: str | None, flag: bool | None) -> None:
    assert parse_should_retry(value) is flag
    headers = [] if value is None else [("X-Should-Retry", value)]
    assert anthropic.parse_error(500, headers, anthropic_body("api_error")).should_retry is flag


@pytest.mark.parametrize(
    ("headers", "body", "request_id"),
    [
        ([("request-id", "req_hdr")], {"error": {"message": "m"}, "request_id": "req_body"}, "req_body"),
        ([("request-id", "req_hdr")], {"error": {"message": "m"}}, "req_hdr"),
        ([("X-Request-ID", "req_x")], {"error": {"message": "m"}}, "req_x"),
        ([("Request-Id", "req_a"), ("x-request-id", "req_b")], {"error": {"message": "m"}}, "req_a"),
        ([], {"error": {"message": "m"}}, None),
    ],
)
def test_the_request_id_comes_from_the_body_then_the_headers(
    headers: list[tuple[str, str]], body: dict[str, Any], request_id: str | None
) -> None:
    assert anthropic.parse_error(500, headers, json.dumps(body).encode()).request_id == request_id


def test_redact_removes_the_secret_from_message_and_excerpt() -> None:
    error = InvalidRequestError("openai: HTTP 400: bad key sk-12345", provider="openai", body_excerpt="sk-12345")
    error.redact("sk-12345")
    assert str(error) == "openai: HTTP 400: bad key [redacted]"
    assert error.body_excerpt == "[redacted]"
    assert error.args == ("openai: HTTP 400: bad key [redacted]",)
    error.redact("")
    assert str(error) == "openai: HTTP 400: bad key [redacted]"


@pytest.mark.parametrize("secret", ["", "x", "pected", "sk-1234"])
def test_a_key_shorter_than_eight_characters_never_mangles_words(secret: str) -> None:
    message = "openai: HTTP 500 server_error: unexpected sk-12345 x"
    error = ServerError(message, provider="openai", body_excerpt=message)
    error.redact(secret)
    assert (str(error), error.body_excerpt) == (message, message)
    assert redact(message, secret) == message


def test_the_whole_key_is_redacted_wherever_it_occurs_and_never_a_part_of_it() -> None:
    key = "sk-abcdefgh"
    assert redact(f"key={key}&x=%20{key}{key}.", key) == "key=[redacted]&x=%20[redacted][redacted]."
    assert redact("sk-abcdefg is close but not the key", key) == "sk-abcdefg is close but not the key"
    assert redact("abcdefgh", "abcdefgh") == "[redacted]"  # eight characters is long enough
