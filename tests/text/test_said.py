"""Errors worded by a key (SPEC R-LANG-3): the core's ``Said`` and the product's ``TableSaid``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import harness9_ref
from harness9_ref import Harness9Error, Said
from harness9_ref._harness9_error import CORE_ERROR_TEXTS
from harness9_ref.memory.storage import SessionNotFound
from harness9_ref.text import STRINGS, TableSaid, in_language
from tests.test_layers import is_product


def test_the_cores_english_is_the_tables_word_for_word() -> None:
    """The core cannot import the table, so it keeps the English of its own keys; the table repeats them."""
    assert CORE_ERROR_TEXTS and {key: STRINGS["en"][key] for key in CORE_ERROR_TEXTS} == dict(CORE_ERROR_TEXTS)


def test_a_core_error_is_english_as_a_string_and_converted_on_the_screen() -> None:
    error = SessionNotFound(Said("err_no_session", id="abc"))
    assert str(error) == "no session with id abc"
    assert in_language(error, "en") == "no session with id abc"
    assert in_language(error, "zh") == "没有 id 为 abc 的会话"


def test_a_product_error_is_worded_by_the_table() -> None:
    error = Harness9Error(TableSaid("err_prompt_empty"))
    assert (str(error), in_language(error, "zh")) == ("PROMPT is empty", "PROMPT 为空")
    assert repr(error.said) == "TableSaid('err_prompt_empty', **{})"


def test_the_core_does_not_word_a_key_of_the_product() -> None:
    with pytest.raises(KeyError):
        str(Said("err_prompt_empty"))


def test_an_error_without_a_key_is_shown_as_received() -> None:
    assert in_language(ValueError("disk full"), "zh") == "disk full"
    with pytest.raises(ValueError, match="unknown language"):
        in_language(Harness9Error(TableSaid("err_prompt_empty")), "fr")


def test_every_key_the_core_raises_has_its_english_in_the_core() -> None:
    """``str(Said(key))`` of a key the core does not know raises; so every ``Said`` of the core names one it knows."""
    package = Path(harness9_ref.__file__).parent
    keys: dict[str, str] = {}
    for path in package.rglob("*.py"):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        if is_product(module):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Said" and node.args:
                first = node.args[0]
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), f"{module}: a key that is not a literal"
                keys[first.value] = module
    assert keys and sorted(set(keys) - set(CORE_ERROR_TEXTS)) == []
