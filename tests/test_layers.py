"""The package in two layers: the core (the design: messages, context engineering, sessions,
wire formats, the run loop) imports nothing of the product built on it (the command line, the
terminal UI, the texts, the tools of a working directory), and no import circle joins more than
two modules (README, "Layout").

Why: a reader or a port of the design should be able to read the core without the product, and
modules importing each other in a circle can only be read, and changed, together. The graph is
read from the source files with ``ast`` (``tests/conformance/test_layers.py``'s reader): every
import counts, those inside a function or under ``TYPE_CHECKING`` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

import harness9_ref
from tests.conformance.test_layers import circles, import_graph, write

PACKAGE = Path(harness9_ref.__file__).parent
# The product: everything built around the core. Every other module of the package is the core.
PRODUCT = (
    "harness9_ref.__main__",
    "harness9_ref.cli",
    "harness9_ref.offline",
    "harness9_ref.text",
    "harness9_ref.tools",
    "harness9_ref.tui",
)


def is_product(module: str) -> bool:
    return any(module == top or module.startswith(top + ".") for top in PRODUCT)


def core_to_product(graph: Mapping[str, set[str]]) -> list[str]:
    """Each import of a product module by a core module, as ``core -> product``."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if not is_product(module)
        for target in targets
        if is_product(target)
    )


def test_the_core_imports_nothing_of_the_product() -> None:
    assert core_to_product(import_graph(PACKAGE)) == []


def test_no_module_of_the_package_is_in_an_import_circle_of_more_than_two() -> None:
    assert [c for c in circles(import_graph(PACKAGE)) if len(c) > 2] == []


def test_both_layers_hold_modules() -> None:
    """The line is not drawn beside the package: each side has the packages README names."""
    graph = import_graph(PACKAGE)
    product = {m for m in graph if is_product(m)}
    core = set(graph) - product
    assert {"harness9_ref.cli._main", "harness9_ref.text._strings", "harness9_ref.tools._registry"} <= product
    assert {"harness9_ref.engine._engine", "harness9_ref.memory.context._summarize", "harness9_ref.provider._base"} <= core


def test_an_import_of_the_product_by_the_core_is_found(tmp_path: Path) -> None:
    root = write(tmp_path, {
        "harness9_ref/__init__.py": "",
        "harness9_ref/memory/context/_carry.py": "def f():\n    from ...text import STRINGS\n",
        "harness9_ref/text/__init__.py": "from ..memory.context import _carry\n",
        "harness9_ref/cli/_main.py": "from ..memory.context import _carry\n",
    }).parent / "harness9_ref"
    assert core_to_product(import_graph(root)) == ["harness9_ref.memory.context._carry -> harness9_ref.text"]


@pytest.mark.parametrize("size", [3, 4])
def test_a_circle_of_more_than_two_is_found(tmp_path: Path, size: int) -> None:
    files = {f"harness9_ref/_m{i}.py": f"from ._m{(i + 1) % size} import x\n" for i in range(size)}
    root = write(tmp_path, files).parent / "harness9_ref"
    assert circles(import_graph(root)) == [[f"harness9_ref._m{i}" for i in range(size)]]
