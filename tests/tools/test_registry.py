"""The tool registry (harness9_ref/tools/_registry.py; SPEC R-TOOL-1, R-TOOL-2, R-TOOL-7).

The four tool definitions are compared with the JSON lines printed in SPEC section 9.1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness9_ref.engine import ToolRegistry
from harness9_ref.memory.context import estimate_tool_tokens
from harness9_ref.tools import BASH_TOOL, EDIT_FILE_TOOL, READ_FILE_TOOL, WRITE_FILE_TOOL, Registry
from tests.spec_text import spec_section


def spec_tool_lines() -> list[str]:
    section = spec_section("Tools (R-TOOL)")
    block = re.search(r"Tool definitions \(R-TOOL-1\).*?```text\n(.*?)\n```", section, re.S)
    assert block is not None, "the tool definitions of SPEC section 9.1 were not found"
    return block.group(1).split("\n")


def test_the_definitions_are_exactly_those_printed_in_spec_in_that_order(tmp_path: Path) -> None:
    tools = Registry(tmp_path).available_tools()
    assert tools == [READ_FILE_TOOL, BASH_TOOL, EDIT_FILE_TOOL, WRITE_FILE_TOOL]
    lines = [json.dumps(t.to_dict(), separators=(",", ":"), ensure_ascii=False) for t in tools]
    assert lines == spec_tool_lines()


def test_available_tools_hands_out_a_new_list(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    registry.available_tools().clear()
    assert len(registry.available_tools()) == 4


def test_the_registry_is_a_tool_registry_and_its_tools_cost_tokens(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    assert isinstance(registry, ToolRegistry)
    assert estimate_tool_tokens(registry.available_tools()) > 0


@pytest.mark.parametrize("name", ["grep", "", "READ_FILE", "bash "])
def test_an_unknown_tool_is_named(tmp_path: Path, name: str) -> None:
    assert Registry(tmp_path).execute(name, "{}") == f'error: unknown tool "{name}"'


def test_the_working_directory_is_fixed_when_the_registry_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_text("here", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    registry = Registry(".")
    monkeypatch.chdir("/")
    assert registry.workdir == str(tmp_path)
    assert registry.execute("read_file", '{"path": "f"}') == "here"


def test_an_observation_never_holds_a_lone_surrogate(tmp_path: Path) -> None:
    observation = Registry(tmp_path).execute("read_file", '{"path": "\\ud800.txt"}')
    assert observation.startswith("error: ")
    observation.encode("utf-8")
    unknown = Registry(tmp_path).execute("\ud800", "")
    assert unknown == 'error: unknown tool "\ufffd"'


def test_an_unexpected_failure_inside_a_tool_becomes_an_error_observation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> str:
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr("harness9_ref.tools._registry.read_file", broken)
    assert Registry(tmp_path).execute("read_file", '{"path": "x"}') == "error: the disk caught fire"


@pytest.mark.parametrize(("option", "value"), [("bash_timeout", 0), ("bash_timeout", -1.0), ("output_cap", 0)])
def test_settings_must_be_positive(tmp_path: Path, option: str, value: float) -> None:
    with pytest.raises(ValueError, match=option):
        Registry(tmp_path, **{option: value})  # type: ignore[arg-type]
