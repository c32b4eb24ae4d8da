"""The seeded-bug catalogue: apply each mutant to a copy of the project and run the suite on it.

A mutant (``conformance/schema/mutant.json``) imitates one porting mistake and names the cases
that must catch it. It is applied to a fresh copy of ``harness9_ref/``, ``conformance/`` and
``fixtures/``, and the reference adapter runs there with the copy first on its import path, so
the original package is never imported.

Each find text must occur exactly once: a mutant whose text has moved on is "broken", never
"killed", because a patch that no longer applies tests nothing. For the same reason the
unmutated copy must pass every case first (the baseline); otherwise a case that already fails
would kill every mutant. The listed cases run first, and the run stops as soon as the verdict
is known, which keeps a catalogue of many mutants fast.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ._cases import Case, read_json
from ._jsonschema import Validator, load_schema
from ._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT, Adapter, AdapterError, run_case

__all__ = ["COPIED_DIRS", "BaselineError", "MutantResult", "mutant_counts", "run_mutants"]

# What a mutant's copy of the project holds: the code the reference adapter runs, and fixtures/
# when the project has it. The case files, the catalogue and other data stay out: the runner
# reads them from the original, and copying them for every mutant cost most of the catalogue's time.
COPIED_DIRS: Final = ("harness9_ref", "conformance", "fixtures")
_NOT_COPIED: Final = ("__pycache__", "*.pyc", ".*_cache", "cases", "mutants", "known-failures", "adapters")

MutantStatus = Literal["killed", "survived", "weak", "broken"]
MUTANT_STATUSES: Final[tuple[MutantStatus, ...]] = ("killed", "survived", "weak", "broken")


@dataclass(frozen=True, slots=True)
class MutantResult:
    """One mutant's fate; ``detail`` names the cases involved or why it is broken."""

    id: str
    status: MutantStatus
    detail: str


@dataclass(frozen=True, slots=True)
class _Edit:
    file: str
    find: str
    replace: str


@dataclass(frozen=True, slots=True)
class _Mutant:
    id: str
    edits: tuple[_Edit, ...]
    kills: tuple[str, ...]


class _Broken(Exception):
    """The mutant cannot be applied or tested as written."""


class BaselineError(Exception):
    """The unmutated copy already fails cases; ``failures`` lists them."""

    def __init__(self, failures: list[str]) -> None:
        super().__init__(f"{len(failures)} cases fail without any mutant")
        self.failures = failures


@functools.cache
def _mutant_schema() -> Validator:
    return load_schema("mutant.json")


def _isolated_environment() -> dict[str, str]:
    """The runner's environment minus what could put the original project on the import path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _read_mutant(path: Path, case_ids: Collection[str]) -> _Mutant | MutantResult:
    """The mutant in ``path``, or a broken result saying why it cannot be used."""
    try:
        data = read_json(path)
    except ValueError as exc:
        return MutantResult(path.stem, "broken", f"invalid JSON: {exc}")
    errors = _mutant_schema().errors(data)
    if errors:
        name = data.get("id") if isinstance(data, dict) else None
        return MutantResult(
            name if isinstance(name, str) else path.stem, "broken", "; ".join(errors)
        )
    unknown = [kill for kill in data["kills"] if kill not in case_ids]
    if unknown:
        detail = f"kills names cases that do not exist: {', '.join(unknown)}"
        return MutantResult(data["id"], "broken", detail)
    edits = tuple(_Edit(e["file"], e["find"], e["replace"]) for e in data.get("edits") or [data])
    return _Mutant(data["id"], edits, tuple(data["kills"]))


def _copy_project(root: Path, target: Path) -> None:
    ignore = shutil.ignore_patterns(*_NOT_COPIED)
    for name in COPIED_DIRS:
        if (root / name).is_dir():
            shutil.copytree(root / name, target / name, ignore=ignore)


def _apply(edits: Sequence[_Edit], target: Path) -> None:
    for edit in edits:
        path = (target / edit.file).resolve()
        if target.resolve() not in path.parents:
            raise _Broken(f"{edit.file}: outside the project copy")
        if not path.is_file():
            raise _Broken(f"{edit.file}: no such file in the project copy")
        text = path.read_text(encoding="utf-8")
        count = text.count(edit.find)
        if count != 1:
            raise _Broken(f"{edit.file}: the find text occurs {count} times, expected exactly once")
        if edit.find == edit.replace:
            raise _Broken(f"{edit.file}: replace equals find, so nothing changes")
        path.write_text(text.replace(edit.find, edit.replace), encoding="utf-8")


@contextlib.contextmanager
def _patched_adapter(root: Path, edits: Sequence[_Edit], timeout: float) -> Iterator[Adapter]:
    """The reference adapter running in a patched copy of ``root``, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="conformance-mutant-") as temp:
        target = Path(temp)
        _copy_project(root, target)
        _apply(edits, target)
        adapter = Adapter(
            DEFAULT_ADAPTER_COMMAND, cwd=target, timeout=timeout, env=_isolated_environment()
        )
        try:
            adapter.start()
        except AdapterError as exc:
            raise _Broken(f"the patched reference adapter does not start: {exc}") from None
        try:
            yield adapter
        finally:
            adapter.close()


def _fails(adapter: Adapter, case: Case) -> bool:
    return run_case(adapter, case).status in ("failed", "errored")


def _judge(adapter: Adapter, cases: Sequence[Case], mutant: _Mutant) -> MutantResult:
    by_id = {case.id: case for case in cases}
    failing = [kill for kill in mutant.kills if _fails(adapter, by_id[kill])]
    if len(failing) == len(mutant.kills):
        return MutantResult(mutant.id, "killed", f"caught by {', '.join(failing)}")
    if not failing:
        others = (case for case in cases if case.id not in mutant.kills)
        failing = next(([case.id] for case in others if _fails(adapter, case)), [])
    if not failing:
        return MutantResult(mutant.id, "survived", "no case fails: add one that catches it")
    passing = ", ".join(kill for kill in mutant.kills if kill not in failing)
    detail = f"listed {passing} passed; caught only by {', '.join(failing)}"
    return MutantResult(mutant.id, "weak", detail)


def _check_baseline(root: Path, cases: Sequence[Case], timeout: float) -> None:
    try:
        with _patched_adapter(root, (), timeout) as adapter:
            failures = [f"{case.id} ({case.name})" for case in cases if _fails(adapter, case)]
    except _Broken as exc:
        raise BaselineError([str(exc)]) from None
    if failures:
        raise BaselineError(failures)


def run_mutants(
    root: Path,
    mutants_dir: Path,
    cases: Sequence[Case],
    *,
    only: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_result: Callable[[MutantResult], None] | None = None,
    workers: int | None = None,
) -> list[MutantResult]:
    """Apply each mutant to a copy of ``root`` and judge whether the suite catches it.

    Args:
        root: the project root holding ``harness9_ref/`` and ``conformance/``.
        mutants_dir: the directory of ``*.json`` mutant files.
        cases: the suite; every case must pass on the unmutated copy.
        only: run just the mutant with this id.
        timeout: seconds per adapter answer.
        on_result: called after each mutant, in catalogue order, e.g. to print progress.
        workers: mutants judged at once, each by its own adapter process (default: the
            number of CPUs); the results do not depend on it.

    Raises:
        BaselineError: cases fail before any mutant is applied.
        LookupError: ``only`` names no mutant.
    """
    case_ids = frozenset(case.id for case in cases)
    mutants = [_read_mutant(path, case_ids) for path in sorted(mutants_dir.glob("*.json"))]
    if only is not None:
        mutants = [mutant for mutant in mutants if mutant.id == only]
        if not mutants:
            raise LookupError(f"no mutant in {mutants_dir} has id {only!r}")
    _check_baseline(root, cases, timeout)

    def judge(mutant: _Mutant | MutantResult) -> MutantResult:
        if isinstance(mutant, MutantResult):
            return mutant
        try:
            with _patched_adapter(root, mutant.edits, timeout) as adapter:
                return _judge(adapter, cases, mutant)
        except _Broken as exc:
            return MutantResult(mutant.id, "broken", str(exc))

    results = []
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        for result in pool.map(judge, mutants):  # the adapters are processes: threads suffice
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def mutant_counts(results: Sequence[MutantResult]) -> dict[MutantStatus, int]:
    """How many mutants ended in each status, zeros included."""
    return {status: sum(1 for r in results if r.status == status) for status in MUTANT_STATUSES}
