"""Tiny case directories and fake adapter commands for the runner's own tests.

The toy suite uses only ``format_token_count`` below 1000, whose answer is the number itself,
so these tests do not depend on the real suite's content.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FAKES = Path(__file__).parent / "fake_adapters"

# (id, slug, n): three toy cases in area "fmt".
TOY_CASES = (("AAAAA1", "n-5", 5), ("AAAAA2", "n-7", 7), ("AAAAA3", "n-9", 9))

SPEC_TEXT = """# Toy spec

- <a id="R-FMT-1"></a>**R-FMT-1** Counts below 1000 MUST be written as decimal integers.
- <a id="R-FMT-2"></a>**R-FMT-2** Negative counts MUST be written with a minus sign.
"""


def fake(name: str, *args: str) -> list[str]:
    """The command line that runs ``fake_adapters/<name>.py``."""
    return [sys.executable, str(FAKES / f"{name}.py"), *args]


def case_data(case_id: str = "AAAAA1", n: int = 5, **fields: Any) -> dict[str, Any]:
    """A valid format_token_count case, with ``fields`` replacing or adding keys."""
    data: dict[str, Any] = {
        "id": case_id,
        "description": f"{n} is written as itself.",
        "spec": ["R-FMT-1"],
        "op": "format_token_count",
        "input": {"n": n},
        "expect": {"output": str(n)},
    }
    data.update(fields)
    return data


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def toy_suite(root: Path) -> Path:
    """Write the three TOY_CASES under ``root/fmt`` and return ``root``."""
    for case_id, slug, n in TOY_CASES:
        write_json(root / "fmt" / f"{slug}.json", case_data(case_id, n))
    return root
