"""The seeded-bug catalogue: apply each mutant to a copy of the project and run the suite on it.

A mutant (``conformance/schema/mutant.json``) imitates one porting mistake and names the cases
that must catch it. ``harness9_ref/``, ``conformance/`` and ``fixtures/`` are copied once into a
template, compiled to bytecode there; each mutant's copy is hard links to it (plain copies where
links fail), its edited files replaced, never written through a link. The reference adapter runs
in that copy, first on its import path, so the original package is never imported; starting it
is most of a mutant's cost, which the compiled template halves.

Each find text must occur exactly once: a mutant whose text has moved on is "broken", never
"killed", because a patch that no longer applies tests nothing. For the same reason a case
counts against a mutant only if it passes on the unmutated copy (the baseline); otherwise a
case that already fails would kill every mutant. The listed cases run first, and the run stops
as soon as the verdict is known.

Scope "full" checks every case on the baseline before any mutant, and tries every other case on
a mutant that its listed cases do not all catch; "targeted" checks on the baseline only cases
that caught a mutant, and tries only the cases citing the mutant's requirements plus a seeded
sample. A killed mutant gets the same verdict either way; only a weak or surviving one's
diagnosis is narrower.
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import importlib.util
import os
import random
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ._cases import Case, read_json
from ._jsonschema import Validator, load_schema
from ._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT, Adapter, AdapterError, run_case

__all__ = [
    "COPIED_DIRS",
    "SAMPLE_SIZE",
    "BaselineError",
    "MutantResult",
    "MutantScope",
    "edit_problems",
    "mutant_counts",
    "run_mutants",
]

# What a mutant's copy of the project holds: the code the reference adapter runs, and fixtures/
# when the project has it. The case files, the catalogue and other data stay out: the runner
# reads them from the original, and copying them for every mutant cost most of the catalogue's time.
COPIED_DIRS: Final = ("harness9_ref", "conformance", "fixtures")
_NOT_COPIED: Final = ("__pycache__", "*.pyc", ".*_cache", "cases", "mutants", "known-failures", "adapters")

MutantStatus = Literal["killed", "survived", "weak", "broken"]
MUTANT_STATUSES: Final[tuple[MutantStatus, ...]] = ("killed", "survived", "weak", "broken")
MutantScope = Literal["full", "targeted"]
# Cases drawn (by seed) from the whole suite for the "targeted" scope, besides the cases citing
# a mutant's requirements: a catching case outside both stays unnoticed only in a diagnosis.
SAMPLE_SIZE: Final = 40


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
        return MutantResult(name if isinstance(name, str) else path.stem, "broken", "; ".join(errors))
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


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not supported: copy instead
        shutil.copy2(source, target)


@contextlib.contextmanager
def _template(root: Path) -> Iterator[Path]:
    """An unmutated copy of ``root`` with its bytecode compiled, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="conformance-template-") as temp:
        target = Path(temp)
        _copy_project(root, target)
        # Bytecode for the interpreter of the reference adapter; a copy's source files keep
        # their times through the links, so the bytecode stays valid for every unedited file.
        compileall.compile_dir(target, quiet=2)
        yield target


def _patched(edit: _Edit, text: str) -> str:
    count = text.count(edit.find)
    if count != 1:
        raise _Broken(f"{edit.file}: the find text occurs {count} times, expected exactly once")
    if edit.find == edit.replace:
        raise _Broken(f"{edit.file}: replace equals find, so nothing changes")
    return text.replace(edit.find, edit.replace)


def _edited_file(target: Path, edit: _Edit) -> Path:
    path = (target / edit.file).resolve()
    if target.resolve() not in path.parents:
        raise _Broken(f"{edit.file}: outside the project copy")
    if not path.is_file():
        raise _Broken(f"{edit.file}: no such file in the project copy")
    return path


def _apply(edits: Sequence[_Edit], target: Path) -> None:
    for edit in edits:
        path = _edited_file(target, edit)
        text = _patched(edit, path.read_text(encoding="utf-8"))
        # A new file, not a write through a link into the template, and no stale bytecode.
        path.unlink()
        path.write_text(text, encoding="utf-8")
        Path(importlib.util.cache_from_source(str(path))).unlink(missing_ok=True)


def edit_problems(root: Path, mutants_dir: Path, case_ids: Collection[str]) -> dict[str, str]:
    """Why each mutant cannot be applied to ``root`` as it stands, by id ("" when it can).

    The catalogue's fast check: a refactor that moves a find text breaks its mutant, and this
    says so without copying anything or starting an adapter.
    """
    problems = {}
    for path in sorted(mutants_dir.glob("*.json")):
        mutant = _read_mutant(path, case_ids)
        if isinstance(mutant, MutantResult):
            problems[mutant.id] = mutant.detail
            continue
        try:
            texts: dict[Path, str] = {}  # two edits of one file apply one after the other
            for edit in mutant.edits:
                file = _edited_file(root, edit)
                text = texts[file] if file in texts else file.read_text(encoding="utf-8")
                texts[file] = _patched(edit, text)
        except _Broken as exc:
            problems[mutant.id] = str(exc)
        else:
            problems[mutant.id] = ""
    return problems


def _isolated_adapter(copy: Path, timeout: float, env: dict[str, str] | None) -> Adapter:
    """The reference adapter in ``copy``; ``env`` defaults to ``_isolated_environment()``."""
    env = _isolated_environment() if env is None else env
    adapter = Adapter(DEFAULT_ADAPTER_COMMAND, cwd=copy, timeout=timeout, env=env)
    try:
        adapter.start()
    except AdapterError as exc:
        raise _Broken(f"the patched reference adapter does not start: {exc}") from None
    return adapter


@contextlib.contextmanager
def _patched_adapter(
    template: Path, edits: Sequence[_Edit], timeout: float, env: dict[str, str] | None = None
) -> Iterator[Adapter]:
    """The reference adapter running in a patched copy of ``template``, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="conformance-mutant-") as temp:
        target = Path(temp)
        for name in COPIED_DIRS:
            if (template / name).is_dir():
                shutil.copytree(template / name, target / name, copy_function=_link)
        _apply(edits, target)
        adapter = _isolated_adapter(target, timeout, env)
        try:
            yield adapter
        finally:
            adapter.close()


def _fails(adapter: Adapter, case: Case) -> bool:
    return run_case(adapter, case).status in ("failed", "errored")


class _Baseline:
    """The unmutated template's verdicts, one adapter for all threads, each case run once."""

    def __init__(self, template: Path, timeout: float, env: dict[str, str] | None = None) -> None:
        self._template, self._timeout, self._env = template, timeout, env
        self._adapter: Adapter | None = None
        self._passed: dict[str, bool] = {}
        self._lock = threading.Lock()

    def require(self, cases: Sequence[Case]) -> None:
        """Raise BaselineError naming those of ``cases`` that fail without any mutant."""
        with self._lock:
            try:
                if self._adapter is None:
                    self._adapter = _isolated_adapter(self._template, self._timeout, self._env)
                for case in cases:
                    if case.id not in self._passed:
                        self._passed[case.id] = not _fails(self._adapter, case)
            except _Broken as exc:
                raise BaselineError([str(exc)]) from None
        failures = [f"{case.id} ({case.name})" for case in cases if not self._passed[case.id]]
        if failures:
            raise BaselineError(failures)

    def catches(self, adapter: Adapter, case: Case) -> bool:
        """Whether ``case`` fails under the mutant ``adapter`` runs, and only because of it."""
        if not _fails(adapter, case):
            return False
        self.require([case])
        return True

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()


def _others(cases: Sequence[Case], mutant: _Mutant, scope: MutantScope) -> list[Case]:
    """The cases beyond the listed ones that may catch ``mutant``, in suite order."""
    others = [case for case in cases if case.id not in mutant.kills]
    if scope == "full":
        return others
    cited = {r for case in cases if case.id in mutant.kills for r in case.spec}
    ids = sorted(case.id for case in others)
    drawn = set(random.Random(0).sample(ids, min(SAMPLE_SIZE, len(ids))))
    return [case for case in others if case.id in drawn or cited.intersection(case.spec)]


def _judge(
    adapter: Adapter, cases: Sequence[Case], mutant: _Mutant, baseline: _Baseline, scope: MutantScope
) -> MutantResult:
    by_id = {case.id: case for case in cases}
    failing = [kill for kill in mutant.kills if baseline.catches(adapter, by_id[kill])]
    if len(failing) == len(mutant.kills):
        return MutantResult(mutant.id, "killed", f"caught by {', '.join(failing)}")
    if not failing:
        others = _others(cases, mutant, scope)
        failing = next(([case.id] for case in others if baseline.catches(adapter, case)), [])
    if not failing:
        return MutantResult(mutant.id, "survived", "no case fails: add one that catches it")
    passing = ", ".join(kill for kill in mutant.kills if kill not in failing)
    detail = f"listed {passing} passed; caught only by {', '.join(failing)}"
    return MutantResult(mutant.id, "weak", detail)


def _check_baseline(template: Path, cases: Sequence[Case], timeout: float) -> None:
    with contextlib.closing(_Baseline(template, timeout)) as baseline:
        baseline.require(cases)


def run_mutants(
    root: Path,
    mutants_dir: Path,
    cases: Sequence[Case],
    *,
    only: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_result: Callable[[MutantResult], None] | None = None,
    workers: int | None = None,
    scope: MutantScope = "full",
    cancel: threading.Event | None = None,
) -> list[MutantResult]:
    """Apply each mutant to a copy of ``root`` and judge whether the suite catches it.

    Args:
        root: the project root holding ``harness9_ref/`` and ``conformance/``.
        mutants_dir: the directory of ``*.json`` mutant files.
        cases: the suite; the cases that count must pass on the unmutated copy.
        only: run just the mutant with this id.
        timeout: seconds per adapter answer.
        on_result: called after each mutant, in catalogue order, e.g. to print progress.
        workers: mutants judged at once, each by its own adapter process (default: the
            number of CPUs); the results do not depend on it.
        scope: "full" or "targeted" (see the module's docstring).
        cancel: once set, mutants not yet started are reported broken, "not judged".

    Raises:
        BaselineError: cases fail before any mutant is applied ("full": checked before any
            mutant is judged; "targeted": as soon as a case that caught a mutant is found to).
        LookupError: ``only`` names no mutant.
    """
    case_ids = frozenset(case.id for case in cases)
    mutants = [_read_mutant(path, case_ids) for path in sorted(mutants_dir.glob("*.json"))]
    if only is not None:
        mutants = [mutant for mutant in mutants if mutant.id == only]
        if not mutants:
            raise LookupError(f"no mutant in {mutants_dir} has id {only!r}")
    env = _isolated_environment()  # as it is now: tests running alongside may change os.environ
    with _template(root) as template, contextlib.closing(_Baseline(template, timeout, env)) as baseline:
        if scope == "full":
            baseline.require(cases)
        judge = functools.partial(_judge_one, template, cases, baseline, scope, timeout, env)
        return _judge_all(judge, mutants, on_result, workers, cancel or threading.Event())


def _judge_one(
    template: Path, cases: Sequence[Case], baseline: _Baseline, scope: MutantScope,
    timeout: float, env: dict[str, str], mutant: _Mutant,
) -> MutantResult:
    try:
        with _patched_adapter(template, mutant.edits, timeout, env) as adapter:
            return _judge(adapter, cases, mutant, baseline, scope)
    except _Broken as exc:
        return MutantResult(mutant.id, "broken", str(exc))


def _judge_all(
    judge: Callable[[_Mutant], MutantResult],
    mutants: Sequence[_Mutant | MutantResult],
    on_result: Callable[[MutantResult], None] | None,
    workers: int | None,
    cancel: threading.Event,
) -> list[MutantResult]:
    def judged(mutant: _Mutant | MutantResult) -> MutantResult:
        if isinstance(mutant, MutantResult):
            return mutant
        if cancel.is_set():
            return MutantResult(mutant.id, "broken", "not judged: the run was cancelled")
        try:
            return judge(mutant)
        except BaselineError:  # ends the run: pool.map raises it before any later result
            cancel.set()
            raise

    results = []
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        for result in pool.map(judged, mutants):  # the adapters are processes: threads suffice
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def mutant_counts(results: Sequence[MutantResult]) -> dict[MutantStatus, int]:
    """How many mutants ended in each status, zeros included."""
    return {status: sum(1 for r in results if r.status == status) for status in MUTANT_STATUSES}
