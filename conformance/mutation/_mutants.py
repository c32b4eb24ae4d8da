"""The seeded-bug catalogue: apply each mutant to a copy of the project and run the suite on it.

A mutant (``conformance/schema/mutant.json``) imitates one porting mistake and names the cases
that must catch it. It is applied to a copy of the project's code (``_mutant_copy.py``: a
compiled template, mirrored by links for each mutant), and the reference adapter runs there
with the copy first on its import path, so the original package is never imported.

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

import contextlib
import functools
import os
import random
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from .._suite import run_case
from ..porting._porting import PortAdapter
from ..runner._cases import Case, read_json
from ..runner._jsonschema import Validator, load_schema
from ..runner._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT, AdapterError
from ._mutant_copy import Broken, Edit, edited_file, patched, patched_copy
from ._mutant_copy import template as project_template

__all__ = [
    "SAMPLE_SIZE",
    "BaselineError",
    "MutantResult",
    "MutantScope",
    "edit_problems",
    "isolated_environment",
    "mutant_counts",
    "run_mutants",
]

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
class _Mutant:
    id: str
    edits: tuple[Edit, ...]
    kills: tuple[str, ...]


class BaselineError(Exception):
    """The unmutated copy already fails cases; ``failures`` lists them."""

    def __init__(self, failures: list[str]) -> None:
        super().__init__(f"{len(failures)} cases fail without any mutant")
        self.failures = failures


@functools.cache
def _mutant_schema() -> Validator:
    return load_schema("mutant.json")


def isolated_environment() -> dict[str, str]:
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
    edits = tuple(Edit(e["file"], e["find"], e["replace"]) for e in data.get("edits") or [data])
    return _Mutant(data["id"], edits, tuple(data["kills"]))


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
                file = edited_file(root, edit)
                text = texts[file] if file in texts else file.read_text(encoding="utf-8")
                texts[file] = patched(edit, text)
        except Broken as exc:
            problems[mutant.id] = str(exc)
        else:
            problems[mutant.id] = ""
    return problems


def _isolated_adapter(copy: Path, timeout: float, env: dict[str, str] | None) -> PortAdapter:
    """The reference adapter in ``copy``; ``env`` defaults to ``isolated_environment()``."""
    env = isolated_environment() if env is None else env
    adapter = PortAdapter(DEFAULT_ADAPTER_COMMAND, cwd=copy, timeout=timeout, env=env)
    try:
        adapter.start()
    except AdapterError as exc:
        raise Broken(f"the patched reference adapter does not start: {exc}") from None
    return adapter


@contextlib.contextmanager
def _patched_adapter(
    template: Path, edits: Sequence[Edit], timeout: float, env: dict[str, str] | None = None
) -> Iterator[PortAdapter]:
    """The reference adapter running in a patched copy of ``template``, removed afterwards."""
    with patched_copy(template, edits) as copy:
        adapter = _isolated_adapter(copy, timeout, env)
        try:
            yield adapter
        finally:
            adapter.close()


def _fails(adapter: PortAdapter, case: Case) -> bool:
    return run_case(adapter, case).status in ("failed", "errored")


class _Baseline:
    """The unmutated template's verdicts, one adapter for all threads, each case run once.

    Its adapter is started as the mutants' are, so a way of starting adapters that broke them
    all fails the baseline instead of killing every mutant.
    """

    def __init__(self, template: Path, timeout: float, env: dict[str, str] | None = None) -> None:
        self._template, self._timeout, self._env = template, timeout, env
        self._adapter: PortAdapter | None = None
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
            except Broken as exc:
                raise BaselineError([str(exc)]) from None
        failures = [f"{case.id} ({case.name})" for case in cases if not self._passed[case.id]]
        if failures:
            raise BaselineError(failures)

    def catches(self, adapter: PortAdapter, case: Case) -> bool:
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
    adapter: PortAdapter, cases: Sequence[Case], mutant: _Mutant, baseline: _Baseline, scope: MutantScope
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
    with contextlib.closing(_Baseline(template, timeout, None)) as baseline:
        baseline.require(cases)


def run_mutants(
    root: Path,
    mutants_dir: Path,
    cases: Sequence[Case],
    *,
    only: Collection[str] | None = None,
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
        only: run just the mutants with these ids.
        timeout: seconds per adapter answer.
        on_result: called after each mutant, in catalogue order, e.g. to print progress.
        workers: mutants judged at once, each by its own adapter process (default: the
            number of CPUs); the results do not depend on it.
        scope: "full" or "targeted" (see the module's docstring).
        cancel: once set, mutants not yet started are reported broken, "not judged".

    Raises:
        BaselineError: cases fail before any mutant is applied ("full": checked before any
            mutant is judged; "targeted": as soon as a case that caught a mutant is found to).
        LookupError: ``only`` names an id no mutant has.
    """
    case_ids = frozenset(case.id for case in cases)
    mutants = [_read_mutant(path, case_ids) for path in sorted(mutants_dir.glob("*.json"))]
    if only is not None:
        unknown = sorted(set(only) - {mutant.id for mutant in mutants})
        if unknown:
            raise LookupError(f"no mutant in {mutants_dir} has id {', '.join(unknown)}")
        mutants = [mutant for mutant in mutants if mutant.id in only]
    env = isolated_environment()  # as it is now: tests running alongside may change os.environ
    with project_template(root) as copy, contextlib.closing(_Baseline(copy, timeout, env)) as baseline:
        if scope == "full":
            baseline.require(cases)
        judge = functools.partial(_judge_one, copy, cases, baseline, scope, timeout, env)
        return _judge_all(judge, mutants, on_result, workers, cancel or threading.Event())


def _judge_one(
    template: Path, cases: Sequence[Case], baseline: _Baseline, scope: MutantScope,
    timeout: float, env: dict[str, str], mutant: _Mutant,
) -> MutantResult:
    try:
        with _patched_adapter(template, mutant.edits, timeout, env) as adapter:
            return _judge(adapter, cases, mutant, baseline, scope)
    except Broken as exc:
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
