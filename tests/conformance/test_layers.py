"""The conformance package in layers: the runner at the bottom, porting, traffic and mutation on
top of it, and no import circle anywhere.

Why: a reader of ``conformance.runner`` (the protocol, the cases, the verdicts, the results)
should not need the rest to follow it, and modules importing each other in a circle can only be
read, and changed, together. The graph is read from the source files with ``ast``: every
import counts, those inside a function or under ``TYPE_CHECKING`` too.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

from conformance import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "conformance"
UPPER = ("conformance.porting", "conformance.traffic", "conformance.mutation")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that a module imports, relative imports resolved."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            # ``from pkg import module`` imports the module; ``from module import name`` the module
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names)
    return {module for module in found if module in known and module != name}


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at ``root`` and the package modules it imports."""
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    known = set(paths)
    return {
        name: imported(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", known)
        for name, path in paths.items()
    }


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports from the runner to the layers above it."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module.startswith("conformance.runner")
        for target in targets
        if target.startswith(UPPER)
    )


def test_no_module_of_conformance_is_in_an_import_circle_of_more_than_two() -> None:
    assert [c for c in circles(import_graph(PACKAGE)) if len(c) > 2] == []


def test_the_runner_imports_nothing_from_porting_traffic_or_mutation() -> None:
    assert upward(import_graph(PACKAGE)) == []


def write(root: Path, files: Mapping[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root / "conformance"


@pytest.mark.parametrize(
    ("files", "circle"),
    [
        # three modules, through a relative import, a function-level one and a TYPE_CHECKING one
        ({"conformance/runner/_a.py": "from ._b import x\n",
          "conformance/runner/_b.py": "def f():\n    from ._c import y\n",
          "conformance/runner/_c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from conformance.runner._a import z\n"},
         ["conformance.runner._a", "conformance.runner._b", "conformance.runner._c"]),
        # ``from package import module`` across packages
        ({"conformance/porting/_p.py": "from ..mutation import _m\n",
          "conformance/mutation/_m.py": "from ..traffic._t import x\n",
          "conformance/traffic/_t.py": "from conformance.porting import _p\n"},
         ["conformance.mutation._m", "conformance.porting._p", "conformance.traffic._t"]),
    ],
)
def test_a_circle_of_three_is_found(tmp_path: Path, files: dict[str, str], circle: list[str]) -> None:
    assert circles(import_graph(write(tmp_path, files))) == [circle]


def test_a_circle_of_two_is_found_and_an_upward_import_is_named(tmp_path: Path) -> None:
    root = write(tmp_path, {
        "conformance/__init__.py": "",
        "conformance/runner/_a.py": "from ..traffic import _t\n",
        "conformance/traffic/_t.py": "from ..runner._a import x\n",
        "conformance/runner/_ok.py": "from conformance.runner import _a\n",
    })
    graph = import_graph(root)
    assert circles(graph) == [["conformance.runner._a", "conformance.traffic._t"]]
    assert upward(graph) == ["conformance.runner._a -> conformance.traffic._t"]


def test_every_public_name_of_the_package_resolves_from_its_home() -> None:
    """``conformance`` loads its names from the layers when first used; a name whose home moved
    and was not followed would fail only there."""
    import conformance

    for name in conformance.__all__:
        assert getattr(conformance, name) is not None, name
    assert conformance.Adapter.__name__ == "PortAdapter"  # the adapter that reads declarations
