"""The ``messages.tool_calls`` column (harness9_ref/memory/storage/_rows.py; SPEC R-DB-5, R-DB-6).

Each reading table runs twice: on ``decode_tool_calls`` itself, and on a row written into a real
file with a plain ``sqlite3`` connection and read through ``SQLiteSession`` (where a bad column
must raise ``CorruptRow`` naming the row).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness9_ref.memory.storage import CorruptRow, Manager, SQLiteSession
from harness9_ref.memory.storage._rows import decode_tool_calls, encode_tool_calls
from harness9_ref.schema import ROLE_ASSISTANT, Message, ToolCall

DEEP = 100_000  # nesting depth of a valid JSON text far beyond Python's recursion limit


@pytest.fixture
def session(db_path: Path) -> Iterator[SQLiteSession]:
    with Manager(db_path) as manager:
        session = manager.new_session()
        assert isinstance(session, SQLiteSession)
        yield session


def store_column(db_path: Path, session: SQLiteSession, text: str | None) -> int:
    """Insert an assistant row with this tool_calls text behind the package's back; returns its id."""
    conn = sqlite3.connect(db_path, timeout=5, isolation_level=None)
    try:
        cur = conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, created_at)"
            " VALUES (?, 'assistant', '', ?, NULL, 0)",
            (session.session_id, text),
        )
    finally:
        conn.close()
    assert cur.lastrowid is not None
    return cur.lastrowid


# --- Writing (R-DB-6) ---

ENCODE: list[tuple[str, list[ToolCall], str | None]] = [
    ("no calls is NULL", [], None),
    (
        "valid JSON is embedded byte for byte",
        [ToolCall("call_1", "read_file", '{"path": "a.go"}')],
        '[{"id":"call_1","name":"read_file","arguments":{"path": "a.go"}}]',
    ),
    (
        "invalid JSON is a string marked raw",
        [ToolCall("call_2", "read_file", '{"path":')],
        '[{"id":"call_2","name":"read_file","arguments":"{\\"path\\":","arguments_raw":true}]',
    ),
    (
        "empty arguments are a string marked raw",
        [ToolCall("call_3", "bash", "")],
        '[{"id":"call_3","name":"bash","arguments":"","arguments_raw":true}]',
    ),
    (
        "several calls in order with no white space between them",
        [ToolCall("a", "x", "[1, 2]"), ToolCall("b", "y", "nope"), ToolCall("c", "z", "7")],
        '[{"id":"a","name":"x","arguments":[1, 2]},'
        '{"id":"b","name":"y","arguments":"nope","arguments_raw":true},'
        '{"id":"c","name":"z","arguments":7}]',
    ),
    (
        "ids and names escaped as canonical JSON",
        [ToolCall('a"b\\c<>&\u2028\x08\x0c\n\x01/', "工具😀", "{}")],
        '[{"id":"a\\"b\\\\c\\u003c\\u003e\\u0026\\u2028\\u0008\\u000c\\n\\u0001/","name":"工具😀","arguments":{}}]',
    ),
    (
        "raw arguments escaped as canonical JSON",
        [ToolCall("c", "n", "<b>&\t\x7f😀")],
        '[{"id":"c","name":"n","arguments":"\\u003cb\\u003e\\u0026\\t\x7f😀","arguments_raw":true}]',
    ),
    (
        "embedded arguments are not re-escaped",
        [ToolCall("c", "n", '{"html":"<b>&amp;</b>","s":"\\u00e9 é"}')],
        '[{"id":"c","name":"n","arguments":{"html":"<b>&amp;</b>","s":"\\u00e9 é"}}]',
    ),
    (
        "a JSON string, number and literal are embedded",
        [ToolCall("a", "n", '"text"'), ToolCall("b", "n", "-0.5e+3"), ToolCall("c", "n", "null")],
        '[{"id":"a","name":"n","arguments":"text"},{"id":"b","name":"n","arguments":-0.5e+3},'
        '{"id":"c","name":"n","arguments":null}]',
    ),
    (
        "duplicate keys and an escaped lone surrogate are still valid JSON texts",
        [ToolCall("c", "n", '{"a":1,"a":"\\ud800"}')],
        '[{"id":"c","name":"n","arguments":{"a":1,"a":"\\ud800"}}]',
    ),
]

RAW_ARGUMENTS = [
    ' {"a":1}',
    '{"a":1}\n',
    '\t{"a":1}\r',
    " ",
    "\ufeff{}",
    "\u00a0{}",
    "NaN",
    "Infinity",
    "-Infinity",
    '{"a": NaN}',
    "[1,]",
    "01",
    "{'a': 1}",
    '{"a":"\x01"}',
    '{"a":1}{"b":2}',
    "1\u0663",
]


@pytest.mark.parametrize(("calls", "column"), [c[1:] for c in ENCODE], ids=[c[0] for c in ENCODE])
def test_the_column_text_is_exactly_the_specified_form(calls: list[ToolCall], column: str | None) -> None:
    assert encode_tool_calls(calls) == column


@pytest.mark.parametrize("arguments", RAW_ARGUMENTS)
def test_arguments_that_are_not_one_bare_json_text_are_stored_as_a_raw_string(arguments: str) -> None:
    as_string = json.dumps(arguments, ensure_ascii=False)
    column = encode_tool_calls([ToolCall("c", "n", arguments)])
    assert column == '[{"id":"c","name":"n","arguments":' + as_string + ',"arguments_raw":true}]'
    assert decode_tool_calls(column) == (ToolCall("c", "n", arguments),)


# --- Reading (R-DB-5, R-DB-6) ---

DECODE: list[tuple[str, str | None, tuple[ToolCall, ...]]] = [
    ("NULL", None, ()),
    ("empty text", "", ()),
    ("JSON null", "null", ()),
    ("empty array", "[]", ()),
    ("empty array with white space", " [ ]\n", ()),
    ("the Go original's form", '[{"id":"c","name":"n","arguments":{"a": 1}}]', (ToolCall("c", "n", '{"a": 1}'),)),
    (
        "white space around members is not part of the arguments",
        '[ {"id" : "c" ,\n "name":"n", "arguments" :  {"a" :\t[1 , 2]}  } ]',
        (ToolCall("c", "n", '{"a" :\t[1 , 2]}'),),
    ),
    ("members in another order", '[{"arguments":[true],"name":"n","id":"c"}]', (ToolCall("c", "n", "[true]"),)),
    ("missing arguments, id and name", "[{}]", (ToolCall("", "", ""),)),
    ("missing arguments with the raw flag", '[{"id":"c","arguments_raw":true}]', (ToolCall("c", "", ""),)),
    (
        "unknown members ignored",
        '[{"type":"function","id":"c","name":"n","arguments":1,"extra":{"x":[1,{"y":null}]}}]',
        (ToolCall("c", "n", "1"),),
    ),
    (
        "a raw string decoded",
        '[{"id":"c","name":"n","arguments":"{\\"a\\"\\n","arguments_raw":true}]',
        (ToolCall("c", "n", '{"a"\n'),),
    ),
    (
        "a string without the raw flag kept as JSON",
        '[{"id":"c","name":"n","arguments":"x\\u0041"}]',
        (ToolCall("c", "n", '"x\\u0041"'),),
    ),
    ("raw flag false", '[{"id":"c","name":"n","arguments":"x","arguments_raw":false}]', (ToolCall("c", "n", '"x"'),)),
    ("raw flag a number", '[{"id":"c","name":"n","arguments":"x","arguments_raw":1}]', (ToolCall("c", "n", '"x"'),)),
    (
        "escapes in id and name decoded",
        '[{"id":"\\u0063\\ud83d\\ude00","name":"\\/n"}]',
        (ToolCall("c😀", "/n", ""),),
    ),
    ("JSON null arguments", '[{"id":"c","name":"n","arguments":null}]', (ToolCall("c", "n", "null"),)),
    (
        "a repeated key keeps the last",
        '[{"id":"a","id":"b","arguments":1,"arguments":[2]}]',
        (ToolCall("b", "", "[2]"),),
    ),
    (
        "several calls",
        '[{"id":"a","name":"x","arguments":{}},{"id":"b","name":"y","arguments":"","arguments_raw":true}]',
        (ToolCall("a", "x", "{}"), ToolCall("b", "y", "")),
    ),
]

CORRUPT: list[tuple[str, str]] = [
    ("not JSON", "not json"),
    ("white space only", "  "),
    ("truncated array", '[{"id":"c"}'),
    ("trailing comma", '[{"id":"c"},]'),
    ("text after the array", '[{"id":"c"}] x'),
    ("text after an empty array", "[] x"),
    ("missing comma between calls", '[{"id":"a"} {"id":"b"}]'),
    ("an object, not an array", '{"id":"c","name":"n","arguments":{}}'),
    ("a string, not an array", '"[]"'),
    ("a number, not an array", "1"),
    ("element a number", "[1]"),
    ("element a string", '["c"]'),
    ("element an array", "[[]]"),
    ("element null", "[null]"),
    ("id a number", '[{"id":1,"name":"n","arguments":{}}]'),
    ("id null", '[{"id":null,"name":"n"}]'),
    ("name an array", '[{"id":"c","name":["n"]}]'),
    ("raw flag with an object", '[{"id":"c","name":"n","arguments":{},"arguments_raw":true}]'),
    ("raw flag with a number", '[{"id":"c","name":"n","arguments":1,"arguments_raw":true}]'),
    ("invalid JSON arguments", '[{"id":"c","name":"n","arguments":{"a":}}]'),
    ("NaN arguments", '[{"id":"c","name":"n","arguments":NaN}]'),
    ("a key that is not a string", '[{1:"c"}]'),
    ("a raw control character in a string", '[{"id":"a\nb"}]'),
    ("an escaped lone surrogate in an id", '[{"id":"\\ud800","name":"n"}]'),
    ("a bad second call", '[{"id":"a","name":"x"},{"id":"b","name":2}]'),
]


@pytest.mark.parametrize(("text", "calls"), [c[1:] for c in DECODE], ids=[c[0] for c in DECODE])
def test_decoding_reads_every_allowed_form(text: str | None, calls: tuple[ToolCall, ...]) -> None:
    assert decode_tool_calls(text) == calls


@pytest.mark.parametrize(("text", "calls"), [c[1:] for c in DECODE], ids=[c[0] for c in DECODE])
def test_a_session_reads_every_allowed_form_from_the_file(
    db_path: Path, session: SQLiteSession, text: str | None, calls: tuple[ToolCall, ...]
) -> None:
    store_column(db_path, session, text)
    assert session.get_messages() == [Message(ROLE_ASSISTANT, "", calls)]


@pytest.mark.parametrize("text", [c[1] for c in CORRUPT], ids=[c[0] for c in CORRUPT])
def test_decoding_a_corrupt_column_raises(text: str) -> None:
    with pytest.raises(ValueError):
        decode_tool_calls(text)


@pytest.mark.parametrize("text", [c[1] for c in CORRUPT], ids=[c[0] for c in CORRUPT])
def test_a_session_raises_corrupt_row_naming_the_row_for_a_corrupt_column(
    db_path: Path, session: SQLiteSession, text: str
) -> None:
    session.add_messages([Message("user", "fine")])
    row_id = store_column(db_path, session, text)
    with pytest.raises(CorruptRow, match=rf"\brow {row_id}\b"):
        session.get_messages()
    with pytest.raises(CorruptRow, match=rf"\brow {row_id}\b"):
        session.pop_message()


def test_a_tool_calls_column_that_is_not_utf8_raises_corrupt_row_naming_the_row(
    db_path: Path, session: SQLiteSession
) -> None:
    row_id = store_column(db_path, session, "[]")
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("UPDATE messages SET tool_calls = CAST(X'5BFF5D' AS TEXT) WHERE id = ?", (row_id,))
    finally:
        conn.close()
    with pytest.raises(CorruptRow, match=rf"\brow {row_id}\b"):
        session.get_messages()


# --- Round trips (R-SES-4, R-MSG-3) ---

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
json_layouts = st.sampled_from([(None, (",", ":")), (None, (", ", ": ")), (2, (",", ": ")), ("\t", (" ,", " :\n"))])


@settings(max_examples=200, deadline=None)
@given(value=json_values, layout=json_layouts, ascii_only=st.booleans())
def test_valid_json_arguments_are_embedded_and_read_back_byte_for_byte(
    value: object, layout: tuple[int | str | None, tuple[str, str]], ascii_only: bool
) -> None:
    indent, separators = layout
    arguments = json.dumps(value, indent=indent, separators=separators, ensure_ascii=ascii_only)
    column = encode_tool_calls([ToolCall("c", "n", arguments)])
    assert column == '[{"id":"c","name":"n","arguments":' + arguments + "}]"
    assert decode_tool_calls(column) == (ToolCall("c", "n", arguments),)


@settings(max_examples=300, deadline=None)
@given(calls=st.lists(st.builds(ToolCall, st.text(), st.text(), st.text()), min_size=1, max_size=4))
def test_any_calls_read_back_equal(calls: list[ToolCall]) -> None:
    assert decode_tool_calls(encode_tool_calls(calls)) == tuple(calls)


def test_an_embedded_value_nested_too_deeply_to_parse_raises_corrupt_row(db_path: Path, session: SQLiteSession) -> None:
    arguments = "[" * DEEP + "]" * DEEP
    store_column(db_path, session, '[{"id":"c","name":"n","arguments":' + arguments + "}]")
    with pytest.raises(CorruptRow, match="nested too deeply"):
        session.get_messages()
