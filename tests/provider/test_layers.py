"""Layers: the provider package stands on the schema alone, a headless run needs no UI, and no
package reaches into another's private modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import harness9_ref

PACKAGE = Path(harness9_ref.__file__).parent


def test_importing_the_provider_layer_imports_neither_memory_nor_tools() -> None:
    code = (
        "import sys, harness9_ref.provider\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('harness9_ref.')}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['_harness9_error', 'provider', 'schema']"  # the root of every error


def _private_reach_ins(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module:
            parts = node.module.split(".")
            if any(part.startswith("_") for part in parts[1:]):  # ..package._module
                found.append(f"{path.relative_to(PACKAGE)}: from {'.' * node.level}{node.module}")
    return found


def test_no_module_imports_a_private_module_of_another_package() -> None:
    assert [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _private_reach_ins(path)] == []


def test_a_headless_run_imports_no_part_of_the_terminal_ui(tmp_path: Path) -> None:
    """``harness9-ref run`` prints with ``harness9_ref.text`` and never loads ``harness9_ref.tui``."""
    code = (
        "import sys\n"
        "from harness9_ref.cli import main\n"
        f"status = main(['--provider', 'offline', '--db', {str(tmp_path / 'sessions.db')!r}, 'run', 'hello'])\n"
        "print(status, sorted(m for m in sys.modules if m.startswith('harness9_ref.tui')), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert done.stderr.splitlines()[-1] == "0 []"
