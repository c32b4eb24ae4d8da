"""The incremental SSE decoder (harness9_ref/provider/_sse.py; SPEC R-PRV-15, R-PRV-16)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness9_ref.provider import SSEDecoder, SSEEvent
from tests.provider.helpers import assert_same_parse, split_at, sse_events


def test_data_lines_dispatch_at_the_blank_line() -> None:
    assert assert_same_parse(b"data: one\n\ndata: two\n\n") == [SSEEvent("", "one"), SSEEvent("", "two")]


def test_several_data_lines_join_with_newlines() -> None:
    assert assert_same_parse(b"data: a\ndata:b\ndata:  c\n\n") == [SSEEvent("", "a\nb\n c")]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert assert_same_parse(b"data:   padded\n\n") == [SSEEvent("", "  padded")]


def test_the_last_event_field_names_the_event() -> None:
    assert assert_same_parse(b"event: a\nevent: b\ndata: x\n\n") == [SSEEvent("b", "x")]


def test_the_event_type_does_not_leak_into_the_next_event() -> None:
    assert assert_same_parse(b"event: ping\ndata: 1\n\ndata: 2\n\n") == [SSEEvent("ping", "1"), SSEEvent("", "2")]


def test_an_event_field_without_data_dispatches_nothing_and_is_forgotten() -> None:
    assert assert_same_parse(b"event: lonely\n\ndata: x\n\n") == [SSEEvent("", "x")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    body = b": keep-alive\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n:another comment\n\n"
    assert assert_same_parse(body) == [SSEEvent("", "x")]


def test_a_line_without_a_colon_is_a_field_with_an_empty_value() -> None:
    assert assert_same_parse(b"data\ndata\n\n") == [SSEEvent("", "\n")]
    assert assert_same_parse(b"data\n\n") == [SSEEvent("", "")]


def test_the_first_colon_splits_field_and_value() -> None:
    assert assert_same_parse(b'data: {"a": "b:c"}\n\n') == [SSEEvent("", '{"a": "b:c"}')]


def test_blank_lines_without_data_dispatch_nothing() -> None:
    assert assert_same_parse(b"\n\n\ndata: x\n\n\n\n") == [SSEEvent("", "x")]


def test_a_pending_event_is_dispatched_at_the_end_of_the_body() -> None:
    assert sse_events([b"data: [DONE]"]) == [SSEEvent("", "[DONE]")]
    assert sse_events([b"data: [DONE]\n"]) == [SSEEvent("", "[DONE]")]
    assert sse_events([b"event: e\ndata: x\r"]) == [SSEEvent("e", "x")]


def test_crlf_cr_and_lf_line_ends_mix_freely() -> None:
    assert sse_events([b"data: a\r\n\r\ndata: b\r\rdata: c\n\r\n"]) == [
        SSEEvent("", "a"),
        SSEEvent("", "b"),
        SSEEvent("", "c"),
    ]


def test_a_cr_at_the_end_of_a_chunk_and_an_lf_at_the_start_of_the_next_are_one_line_end() -> None:
    # Were they two line ends, "data: a" would be dispatched on its own before "data: b".
    assert sse_events([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]) == [SSEEvent("", "a\nb")]


def test_a_cr_held_over_an_empty_chunk_still_pairs_with_the_lf() -> None:
    assert sse_events([b"data: a\r", b"", b"\ndata: b\n\n"]) == [SSEEvent("", "a\nb")]


def test_a_leading_byte_order_mark_is_ignored_even_when_split() -> None:
    body = b"\xef\xbb\xbfdata: x\n\n"
    assert assert_same_parse(body) == [SSEEvent("", "x")]
    assert sse_events([b"\xef", b"\xbb", b"\xbfdata: x\n\n"]) == [SSEEvent("", "x")]


def test_a_byte_order_mark_later_in_the_body_is_kept() -> None:
    assert sse_events([b"data: \xef\xbb\xbfx\n\n"]) == [SSEEvent("", "\ufeffx")]


def test_multibyte_characters_split_across_chunks_are_joined() -> None:
    body = "data: 中文 😀 é\n\n".encode()
    assert assert_same_parse(body) == [SSEEvent("", "中文 😀 é")]


def test_invalid_utf8_becomes_the_replacement_character() -> None:
    assert assert_same_parse(b"data: a\xffb\n\n") == [SSEEvent("", "a\ufffdb")]


def test_a_character_cut_off_by_the_end_of_the_body_becomes_the_replacement_character() -> None:
    assert sse_events([b"data: x\xe4\xb8"]) == [SSEEvent("", "x\ufffd")]


def test_close_is_idempotent_and_feed_after_close_is_refused() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x") == []
    assert decoder.close() == [SSEEvent("", "x")]
    assert decoder.close() == []
    try:
        decoder.feed(b"data: y\n\n")
    except ValueError as exc:
        assert "after close" in str(exc)
    else:
        raise AssertionError("feed after close was accepted")


def test_events_are_returned_by_the_feed_that_completes_them() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n") == []
    assert decoder.feed(b"\ndata: b") == [SSEEvent("", "a")]
    assert decoder.feed(b"\n\n") == [SSEEvent("", "b")]
    assert decoder.close() == []


_line = st.sampled_from(
    [b"data: x", b"data:", b"data: {\"a\": 1}", b"event: e", b": c", b"", b"id: 1", b"data: \xe4\xb8\xad", b"data"]
)


@given(
    lines=st.lists(_line, max_size=12),
    ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=12, max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_every_chunking_of_any_body_gives_the_same_events(
    lines: list[bytes], ends: list[bytes], cuts: list[int]
) -> None:
    body = b"".join(line + end for line, end in zip(lines, ends))
    expected = sse_events([body])
    assert sse_events(split_at(body, [c for c in cuts if c <= len(body)])) == expected
    assert sse_events([body[i : i + 1] for i in range(len(body))]) == expected


def test_assert_same_parse_catches_a_parse_that_depends_on_chunking() -> None:
    def per_chunk(chunks: Sequence[bytes]) -> list[SSEEvent]:  # forgets state between chunks
        return [event for chunk in chunks for event in sse_events([chunk])]

    def lf_only(chunks: Sequence[bytes]) -> list[str]:  # knows only LF line ends
        return b"".join(chunks).decode().split("\n")

    for parse in (per_chunk, lf_only):
        with pytest.raises(AssertionError):
            assert_same_parse(b"data: a\n\ndata: b\n\n", parse)
