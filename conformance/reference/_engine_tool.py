"""The ``engine_tool`` op of the reference adapter: one call of the engine's own tools (R-RCL).

The history is the case's ``messages`` (positions 0, 1, … in order), the plan starts as the
case's ``todos``, and the output is the observation with the plan after the call and its plan
block (R-RCL-8), so a case checks both what the model reads and what was saved. ``{"definitions": true}`` lists the
definitions the engine offers instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness9_ref.engine import ENGINE_TOOLS, ListHistory, run_engine_tool
from harness9_ref.planning import TodoItem, plan_block, todos_from_list
from harness9_ref.schema import messages_from_list

__all__ = ["op_engine_tool"]


def op_engine_tool(inp: Mapping[str, Any]) -> Any:
    """``{"observation", "todos", "plan"}`` for ``{"messages", "todos"?, "name", "arguments"}``.

    ``{"definitions": true}`` gives the definitions of the engine's own tools instead.
    """
    if inp.get("definitions") is True:
        return [tool.to_dict() for tool in ENGINE_TOOLS]
    history = ListHistory(messages_from_list(inp["messages"], "messages"))
    todos = todos_from_list(inp.get("todos", []), "todos")

    def save(items: list[TodoItem]) -> None:
        todos[:] = items

    observation = run_engine_tool(inp["name"], inp["arguments"], history, save)
    return {"observation": observation, "todos": [item.to_dict() for item in todos], "plan": plan_block(todos)}
