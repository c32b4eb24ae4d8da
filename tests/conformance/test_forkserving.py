"""What a ``keep="unchanged"`` fork server decides a child must import anew (conformance/_forkserving.py).

The decisions are made in the server and its children; here they are checked in this process,
on small folders of modules and on the project as this process imported it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePath
from types import ModuleType

import pytest

import harness9_ref.tui  # noqa: F401  (the importers of its modules are read below)
from conformance import PROJECT_ROOT
from conformance._forkserving import _data_edited, _identity, _imports, _Loaded


def test_the_project_as_imported_says_where_each_module_lies_and_who_imports_it() -> None:
    loaded = _Loaded.now()
    assert loaded.files["harness9_ref.tui"] == PurePath("harness9_ref/tui/__init__.py")
    assert loaded.files["harness9_ref.tui._status"] == PurePath("harness9_ref/tui/_status.py")
    assert {"harness9_ref.tui", "harness9_ref.tui._app"} <= loaded.importers["harness9_ref.tui._status"]
    stale = loaded.stale({"harness9_ref": PROJECT_ROOT, "conformance": PROJECT_ROOT, "tests": PROJECT_ROOT})
    assert not {name for name in stale if name.startswith("harness9_ref")}


def _module(folder: Path, name: str, source: str) -> ModuleType:
    path = folder / f"{name.replace('.', '_')}.py"
    path.write_text(source, encoding="utf-8")
    module = ModuleType(name)
    module.__file__ = str(path)
    return module


def test_imports_are_read_from_anywhere_in_the_source_with_relative_ones_resolved(tmp_path: Path) -> None:
    source = "from . import x\nfrom ..y import z\nimport a.b\n\ndef later():\n    from .late import q\n"
    found = _imports("pkg.sub.mod", _module(tmp_path, "pkg.sub.mod", source))
    assert found == {"pkg.sub", "pkg.sub.x", "pkg.y", "pkg.y.z", "a.b", "pkg.sub.late", "pkg.sub.late.q"}
    package = _module(tmp_path, "pkg", "from .inner import thing\n")
    package.__path__ = [str(tmp_path)]
    assert _imports("pkg", package) == {"pkg.inner", "pkg.inner.thing"}


def _tree(root: Path) -> _Loaded:
    files = {
        "pkg": PurePath("pkg/__init__.py"), "pkg.a": PurePath("pkg/a.py"), "pkg.b": PurePath("pkg/b.py"),
        "lone": PurePath("lone/__init__.py"),
    }
    for file in files.values():
        (root / file).parent.mkdir(parents=True, exist_ok=True)
        (root / file).write_text("", encoding="utf-8")
    identities = {name: _identity(root / file) for name, file in files.items()}
    return _Loaded(files, identities, {"pkg.a": {"pkg.b"}})


def _replace(path: Path) -> None:
    """A new file where the old one was, as a mutant's copy has it."""
    path.unlink()
    path.write_text("# edited\n", encoding="utf-8")


def test_an_edited_module_is_stale_with_its_importers_and_an_edited_package_with_its_modules(
    tmp_path: Path,
) -> None:
    loaded = _tree(tmp_path)
    roots = {"pkg": tmp_path, "lone": tmp_path}
    assert loaded.stale(roots) == set()
    _replace(tmp_path / "pkg" / "a.py")
    assert loaded.stale(roots) == {"pkg.a", "pkg.b"}
    _replace(tmp_path / "pkg" / "__init__.py")
    assert loaded.stale(roots) == {"pkg", "pkg.a", "pkg.b"}
    assert loaded.stale({"pkg": tmp_path}) == {"pkg", "pkg.a", "pkg.b", "lone"}  # not found: imported anew


def test_a_copy_that_links_what_it_leaves_alone_has_edited_data_only_in_its_own_files(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "schema").mkdir(parents=True)
    (template / "schema" / "case.json").write_text("{}", encoding="utf-8")
    (template / "module.py").write_text("", encoding="utf-8")
    linked = tmp_path / "linked"
    linked.symlink_to(template)
    assert not _data_edited(linked)
    mirrored = tmp_path / "mirrored"
    mirrored.mkdir()
    (mirrored / "schema").symlink_to(template / "schema")
    (mirrored / "module.py").write_text("# edited\n", encoding="utf-8")  # Python source: not data
    assert not _data_edited(mirrored)
    os.symlink(template / "schema" / "case.json", mirrored / "case.json")
    assert not _data_edited(mirrored)
    (mirrored / "other.json").write_text("{}", encoding="utf-8")
    assert _data_edited(mirrored)
    assert _data_edited(template)  # not a copy of links at all: counts as edited throughout


def test_a_module_whose_file_is_not_where_its_name_says_is_always_imported_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    misplaced = _module(tmp_path, "tests.elsewhere", "")  # tests/elsewhere.py would be its file
    monkeypatch.setitem(sys.modules, "tests.elsewhere", misplaced)
    roots = {"harness9_ref": PROJECT_ROOT, "conformance": PROJECT_ROOT, "tests": PROJECT_ROOT}
    assert "tests.elsewhere" in _Loaded.now().stale(roots)
