"""Fixtures shared by the runner's own tests: the toy suite and the toy SPEC.md (``toy.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .toy import SPEC_TEXT, toy_suite


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    """The three toy cases under ``<tmp>/cases``."""
    return toy_suite(tmp_path / "cases")


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "SPEC.md"
    path.write_text(SPEC_TEXT, encoding="utf-8")
    return path
