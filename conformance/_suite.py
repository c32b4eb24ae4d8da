"""A suite run: cases run through an adapter and judged as a port is judged.

Why here, above the layers: the runner (``conformance.runner``) drives the adapter process and
lays out a case's scratch folder; porting (``conformance.porting``) reads what the adapter
declares about itself and fits each case to it; traffic (``conformance.traffic``) makes the
provider ops' bytes and replay servers. Running a case needs all three, and none of them needs
the others, so they meet only in this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .porting._porting import PortAdapter, Target, plan
from .runner._backends import on_a_backend, per_backend
from .runner._cases import PROJECT_ROOT, Case
from .runner._cli_folder import CLI_OP, CliFolder, cli_prepared
from .runner._requirements import is_requirement_id
from .runner._results import CaseResult, SuiteResult, case_result
from .runner._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT
from .runner._verdicts import Verdict, evaluate
from .runner._workspace import prepared as prepared_folder
from .traffic._provider_setup import PROVIDER_SETUPS, cli_servers

__all__ = ["prepared", "run_case", "run_suite"]


def prepared(case: Case) -> AbstractContextManager[tuple[dict[str, Any], Callable[[], dict[str, Any]]]]:
    """The input to send for a case and a function that observes what the run left: traffic's
    bytes or replay server for the provider ops, the runner's scratch folder otherwise (for
    ``cli`` its own folder, whose answer ``run_case`` views as well)."""
    if case.op == CLI_OP:
        return _cli_input(case)
    setup = PROVIDER_SETUPS.get(case.op)
    return setup(case.input) if setup is not None else prepared_folder(case)


@contextmanager
def _cli_folder(case: Case) -> Iterator[tuple[CliFolder, Callable[[], dict[str, Any]]]]:
    """A ``cli`` case's folder, with the replay server of its ``fixtures`` when it names some."""
    spec = case.input
    servers = cli_servers(spec.get("fixtures", ()), spec.get("ignore", ()), spec.get("faults", ()))
    with servers as (base_urls, replay), cli_prepared(spec, base_urls) as folder:
        yield folder, replay


@contextmanager
def _cli_input(case: Case) -> Iterator[tuple[dict[str, Any], Callable[[], dict[str, Any]]]]:
    """What a ``cli`` case sends, as ``show`` prints it; its folder is observed by ``_run_cli``."""
    with _cli_folder(case) as (folder, _):
        yield folder.send, dict


def _run_cli(adapter: Target, case: Case) -> Verdict:
    """A ``cli`` case: the port's program run in a fresh folder, its answer normalised and
    viewed as the case expects (conformance/runner/_cli_folder.py), the folder and the replay
    server observed beside it."""
    with _cli_folder(case) as (folder, replay):
        started = time.time()
        response = adapter.run(case.op, folder.send)
        span = (started, time.time())
        observed: dict[str, Any] = {}
        if response.kind == "output":
            output = folder.answer(response.output, case.input, case.expect.get("output"), span)
            response = replace(response, output=output)
            observed = {**folder.observe(case.expect), **replay()}
    return evaluate(case, response, observed)


def run_case(adapter: Target, case: Case) -> Verdict:
    """Run one case, in a scratch folder when its op needs one, and judge the answer, fitted to
    what the adapter declared: its wording, own ids, own clock (conformance/porting/_porting.py).

    ``adapter`` is a ``PortAdapter`` (started on first use) or the in-process reference of the
    tests, which is judged by this same code. The run's wall-clock span, in whole seconds, is
    what an adapter's own clock is checked by.
    """
    runnable = on_a_backend(case, adapter.backends)  # conformance/runner/_backends.py
    if isinstance(runnable, str):
        return Verdict("unsupported", runnable)
    if runnable.op == CLI_OP and CLI_OP in adapter.ops:
        if "sessions" in runnable.input and (adapter.declared.own_ids or adapter.declared.own_clock):
            return Verdict("unsupported", "its database is prepared by session steps with the case's "
                           "ids and clock, which the adapter declares it does not take")
        return _run_cli(adapter, runnable)
    judged = plan(runnable, adapter.declared)
    if judged.unsupported and runnable.op in adapter.ops:
        return Verdict("unsupported", judged.unsupported)
    with prepared(judged.case) as (input, observe):
        started = time.time()
        response = adapter.run(runnable.op, input)
        span = (started, time.time())
        judged.before_observing(response)
        observed = observe() if response.kind == "output" else {}
    return judged.evaluate(response, observed, span)


def _traced_run(adapter: PortAdapter, case: Case, trace: bool) -> tuple[Verdict, tuple[str, ...]]:
    """One run of a case, with its protocol lines when ``trace`` is on."""
    adapter.trace = [] if trace else None
    verdict = run_case(adapter, case)
    lines = tuple(adapter.trace or ())
    adapter.trace = None
    return verdict, lines


def _judged(runs: Sequence[tuple[Verdict, tuple[str, ...]]]) -> tuple[Verdict, tuple[str, ...]]:
    """The verdict that stands for repeated runs: the first run's, or when the runs disagree the
    first one that did not pass (its detail is what a porter needs to see)."""
    chosen = next((run for run in runs if run[0].status != "passed"), runs[0])
    return chosen


def run_suite(
    cases: Iterable[Case],
    adapter_command: Sequence[str] = DEFAULT_ADAPTER_COMMAND,
    *,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    validate: bool = False,
    known_failures: Collection[str] | None = None,
    env: Mapping[str, str] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    postgres: str | None = None,
    trace: bool = False,
    repeat: int = 1,
) -> SuiteResult:
    """Run cases through one adapter.

    Args:
        cases: the cases, run in order.
        adapter_command: the adapter program; the default runs the Python reference.
        cwd: the adapter's working directory; defaults to the project root for the default
            command and to the current directory otherwise.
        timeout: seconds per answer.
        validate: check every protocol message against its schema.
        known_failures: case ids expected to fail; such a case that passes counts as failed.
            Requirement ids (``R-SUM-7``) stand for every case citing them; such a case that
            passes counts as passed, and the entry fails the run once none of its cases fails.
        env: the adapter's environment.
        on_result: called after each case, e.g. to print progress.
        postgres: a PostgreSQL server (default $HARNESS9_TEST_POSTGRES_URL): session cases also run there.
        trace: keep the protocol lines of each case that fails or errors in its result (R-RUN-3).
        repeat: run each case this many times; a case whose status changes between its runs
            fails, whatever the known-failures file says (R-RUN-4).

    Raises:
        AdapterError: the adapter cannot be started at all.
    """
    if cwd is None and tuple(adapter_command) == DEFAULT_ADAPTER_COMMAND:
        cwd = PROJECT_ROOT
    known = frozenset(known_failures or ())
    results = []
    with PortAdapter(adapter_command, cwd=cwd, timeout=timeout, validate=validate, env=env) as adapter:
        for case in per_backend(cases, adapter.backends, postgres):
            runs = [_traced_run(adapter, case, trace) for _ in range(repeat)]
            verdict, lines = _judged(runs)
            by_requirement = any(requirement in known for requirement in case.spec)
            result = case_result(
                case, verdict, known_failure=case.id in known, by_requirement=by_requirement,
                statuses=tuple(run.status for run, _ in runs), trace=lines,
            )
            results.append(result)
            if on_result is not None:
                on_result(result)
    listed = frozenset(entry for entry in known if is_requirement_id(entry))
    return SuiteResult(
        adapter.implementation,
        tuple(results),
        known_failures is not None,
        listed,
        adapter.declared.profiles,
    )
