"""Always answers wrong: one more than the right count."""

from typing import Any

from _base import serve


def answer(request: dict[str, Any]) -> dict[str, Any]:
    return {"seq": request["seq"], "output": str(request["input"]["n"] + 1)}


serve(answer)
