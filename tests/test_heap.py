"""The pytest process's heap as ``tests/conftest.py`` leaves it after collection."""

from __future__ import annotations

import gc


def test_collection_leaves_the_collector_on_and_what_it_built_frozen() -> None:
    assert gc.isenabled()  # off only while collecting
    assert gc.get_freeze_count() > 0  # the collected tests, out of every later full collection
