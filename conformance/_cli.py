"""``python -m conformance run | show | lint | mutants | serve | record | proxy | new-case | matrix``.

``serve``, ``record`` and ``proxy`` live in ``conformance.traffic._cli_traffic``, ``matrix``
in ``conformance.runner._matrix``.

Exit codes: 0 when nothing unexpected happened, 1 when cases (or mutants) failed, a
known-failures entry is stale (a listed case passes, a listed requirement no longer fails) or
a claimed profile is not passed (SPEC R-PROF-3), 2
when the run could not be made at all (broken case files, an adapter that does not start, a bad
known-failures file). Failure lines and the summary go to stdout; reasons for exit code 2 go
to stderr, and broken case files are prefixed "BUG IN TEST CASE" so they are never mistaken
for a failing implementation.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from ._cli_args import Abort, add_postgres_option, count, seconds
from ._suite import prepared, run_suite
from .mutation._automut_command import run_auto_command
from .mutation._mutants import BaselineError, MutantResult, mutant_counts, run_mutants
from .mutation._pytest_mutants import PYTEST_DIR, judge, load_catalogue, missing_tests, problems, summary
from .runner._backends import POSTGRES_ENV, check_server
from .runner._cases import (
    CASES_DIR,
    FIXTURES_DIR,
    PROJECT_ROOT,
    SPEC_PATH,
    Case,
    CaseError,
    load_cases,
    read_id_list,
    shipped_places,
)
from .runner._known_failures import updated_known_failures
from .runner._lint import lint_cases
from .runner._matrix import add_matrix_command
from .runner._new_case import add_new_case_command
from .runner._profiles import left_out_cases, profile_line
from .runner._report import (
    format_result,
    suite_ok,
    suite_profiles,
    summary_line,
    write_json_report,
    write_junit_report,
)
from .runner._requirements import (
    is_requirement_id,
    requirement_lines,
    requirement_titles,
    write_markdown_report,
)
from .runner._results import CaseResult, SuiteResult
from .runner._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT, AdapterError
from .traffic._cli_traffic import add_traffic_commands

__all__ = ["main"]

_REPORT_WRITERS = {"json": write_json_report, "junit": write_junit_report}


def _load(cases_dir: Path) -> list[Case]:
    try:
        cases = load_cases(cases_dir)
    except CaseError as exc:
        lines = [f"BUG IN TEST CASE: {problem}" for problem in exc.problems]
        raise Abort("\n".join([*lines, "run `python -m conformance lint` for details"])) from None
    if not cases:
        raise Abort(f"no cases found under {cases_dir}")
    return cases


def _known_failures(path: Path, cases: Sequence[Case]) -> list[str]:
    try:
        listed = read_id_list(path)
    except (OSError, ValueError) as exc:
        raise Abort(f"known-failures file: {exc}") from None
    ids = {case.id for case in cases}
    cited = {requirement for case in cases for requirement in case.spec}
    unknown = [entry for entry in listed if entry not in ids and entry not in cited]
    problems = []
    if not_cases := [entry for entry in unknown if not is_requirement_id(entry)]:
        problems.append(f"not case ids: {', '.join(not_cases)}")
    if not_cited := [entry for entry in unknown if is_requirement_id(entry)]:
        problems.append(f"requirement ids that no case cites: {', '.join(not_cited)}")
    if problems:
        raise Abort(f"{path}: {'; '.join(problems)}")
    return listed


def _check_postgres(url: str | None) -> None:
    """A server given by --postgres or the environment must be reachable before any case runs."""
    url = url or os.environ.get(POSTGRES_ENV)
    if url:
        try:
            check_server(url)
        except ValueError as exc:
            raise Abort(str(exc)) from None


def _selected(cases: Sequence[Case], patterns: Sequence[str] | None) -> list[Case]:
    if not patterns:
        return list(cases)
    chosen = [
        case
        for case in cases
        if any(fnmatchcase(case.id, glob) or fnmatchcase(case.name, glob) for glob in patterns)
    ]
    if not chosen:
        raise Abort(f"no case matches --filter {' '.join(patterns)}")
    return chosen


def _check_fixtures(cases: Sequence[Case]) -> None:
    """Cases that name fixtures need ``fixtures/``: one line saying where it was looked for."""
    if FIXTURES_DIR.is_dir() or not any("fixture" in case.input or "fixtures" in case.input for case in cases):
        return
    places = " and ".join(str(place) for place in shipped_places("fixtures"))
    raise Abort(f"the cases need the fixtures folder, found in neither {places}; "
                "run from a checkout of the project or install it from a wheel built by its setup.py")


def _write_known_failures(path: Path, suite: SuiteResult) -> None:
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else None
        update = updated_known_failures(suite, old)
        path.write_text(update.text, encoding="utf-8")
    except OSError as exc:
        raise Abort(f"--write-known-failures: {exc}") from None
    print(f"wrote {path}: {update.entries} entries, {len(update.added)} added, {len(update.removed)} removed")


def _run(args: argparse.Namespace) -> int:
    _check_postgres(args.postgres)
    every_case = _load(args.cases)
    known = None if args.known_failures is None else _known_failures(args.known_failures, every_case)
    cases = _selected(every_case, args.filter)
    _check_fixtures(cases)
    for kind, _ in args.report:
        if kind not in _REPORT_WRITERS:
            raise Abort(f"--report format must be json or junit, got {kind!r}")
    command = DEFAULT_ADAPTER_COMMAND if args.adapter is None else shlex.split(args.adapter)

    def show(result: CaseResult) -> None:
        line = format_result(result, verbose=args.verbose)
        if line is not None:
            print(line, flush=True)
        for traced in result.trace:
            print(f"    {traced}", flush=True)

    try:
        suite = run_suite(
            cases,
            command,
            timeout=args.timeout,
            validate=args.validate,
            known_failures=known,
            on_result=show,
            postgres=args.postgres,
            trace=args.trace,
            repeat=args.repeat,
        )
    except AdapterError as exc:
        raise Abort(str(exc)) from None
    suite = replace(suite, left_out=left_out_cases(every_case, cases))  # R-PROF-2c
    for line in requirement_lines(suite, verbose=args.verbose):
        print(line)
    if args.repeat > 1:
        changed = [result.case.id for result in suite.results if result.changed]
        print(f"{len(changed)} of {len(suite.results)} cases changed outcome over {args.repeat} runs"
              + (f": {', '.join(changed)}" if changed else ""))
    summary = summary_line(suite)
    print(summary)
    if args.write_known_failures is not None:
        _write_known_failures(args.write_known_failures, suite)
    profiles = profile_line(suite_profiles(suite))  # SPEC R-PROF-2
    print(profiles)
    for kind, path in args.report:
        _REPORT_WRITERS[kind](suite, Path(path))
    if args.markdown is not None:
        write_markdown_report(
            suite, args.markdown, requirement_titles(args.spec), f"{summary}\n\n{profiles}"
        )
    return 0 if suite_ok(suite) else 1


def _lint(args: argparse.Namespace) -> int:
    problems = lint_cases(args.cases, args.spec)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    cases = _load(args.cases)
    cited = {requirement for case in cases for requirement in case.spec}
    areas = {case.area for case in cases}
    print(f"{len(cases)} case files in {len(areas)} areas, citing {len(cited)} requirements: no problem found")
    return 0


def _find_case(cases: Sequence[Case], wanted: str) -> Case:
    for case in cases:
        if wanted in (case.id, case.name):
            return case
    raise Abort(f"no case has the id or name {wanted!r} (an id such as QXE4KR, or <area>/<slug>)")


def _show(args: argparse.Namespace) -> int:
    """A case as the adapter receives it and as the runner judges it (R-RUN-3)."""
    case = _find_case(_load(args.cases), args.case)
    _check_fixtures([case])
    print(f"{case.id} ({case.name}) [{', '.join(case.spec)}]")
    print(f"file: {case.path}")
    print(f"description: {case.description}")
    if case.note:
        print(f"note: {case.note}")
    with prepared(case) as (sent, _):
        request = {"cmd": "run", "seq": 1, "op": case.op, "input": sent}
        print("sends (one line; folders, files and server URLs are made afresh for each run):")
        print(json.dumps(request, ensure_ascii=True))
    print("expects:")
    print(json.dumps(case.expect, indent=2, ensure_ascii=False))
    return 0


def _mutants(args: argparse.Namespace) -> int:
    root: Path = args.root
    if args.auto:
        if args.only is not None or args.mutants is not None or args.catalogue is not None:
            raise Abort("--auto generates its mutants: --only, --mutants and --catalogue do not apply")
        _check_postgres(args.postgres)
        try:
            return run_auto_command(args, _load(root / "conformance" / "cases"))
        except (BaselineError, ValueError) as exc:
            raise Abort(str(exc)) from None
    if args.sample is not None or args.module or args.report is not None or args.postgres is not None:
        raise Abort("--sample, --module, --report and --postgres need --auto")
    mutants_dir: Path = args.mutants or root / "conformance" / "mutants"
    if not mutants_dir.is_dir():
        raise Abort(f"no such directory: {mutants_dir}")
    catalogue = args.catalogue or ("all" if args.only else "cases")
    by_tests = load_catalogue(mutants_dir / PYTEST_DIR) if catalogue != "cases" else {}
    only = None if args.only is None else frozenset(args.only)
    case_only = None if only is None else only - by_tests.keys()
    pytest_only = None if only is None else only & by_tests.keys()
    if catalogue == "pytest" and case_only:
        raise Abort(f"no pytest-judged seeded bug in {mutants_dir / PYTEST_DIR} has id {', '.join(sorted(case_only))}")
    wanted = catalogue != "cases" and (pytest_only is None or bool(pytest_only))
    missing = missing_tests(root) if wanted else None  # an installed package has neither tests nor bugs
    if missing:
        raise Abort(missing)
    judge_by_tests = wanted and bool(by_tests)
    caught = True
    if catalogue != "pytest" and (case_only is None or case_only):
        also = f" nor in {mutants_dir / PYTEST_DIR}" if by_tests else ""
        caught = _case_mutants(args, mutants_dir, case_only, also)
    if judge_by_tests:
        verdicts = judge(root, by_tests, pytest_only)
        found = problems(verdicts)
        for problem in found:
            print(problem)
        print(summary(verdicts, found))
        caught = caught and not found
    return 0 if caught else 1


def _case_mutants(args: argparse.Namespace, mutants_dir: Path, only: frozenset[str] | None, also: str) -> bool:
    """The case-judged catalogue: each mutant and the counts printed; whether every one was killed.

    ``also`` ends the error for an unknown id: the other catalogue searched, if any.
    """
    cases = _load(args.root / "conformance" / "cases")

    def show(result: MutantResult) -> None:
        print(f"{result.id}: {result.status}: {result.detail}", flush=True)

    try:
        results = run_mutants(
            args.root,
            mutants_dir,
            cases,
            only=only,
            timeout=args.timeout,
            on_result=show,
            workers=args.workers,
        )
    except BaselineError as exc:
        failing = "\n".join(f"  {failure}" for failure in exc.failures)
        raise Abort(f"{exc}; fix them before judging mutants:\n{failing}") from None
    except LookupError as exc:
        raise Abort(f"{exc}{also}") from None
    counts = mutant_counts(results)
    print(", ".join(f"{count} {status}" for status, count in counts.items()))
    return counts["killed"] == len(results)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance",
        description="Run the harness9 conformance suite against an implementation's adapter.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run the cases through an adapter")
    run.add_argument(
        "--adapter",
        metavar="CMD",
        help="the adapter command line, split like a shell does "
        "(default: the Python reference, run from the project root)",
    )
    run.add_argument("--cases", type=Path, default=CASES_DIR, metavar="DIR")
    run.add_argument(
        "--filter",
        action="append",
        metavar="GLOB",
        help="run only cases whose id or <area>/<slug> matches; repeatable",
    )
    run.add_argument(
        "--known-failures",
        type=Path,
        metavar="FILE",
        help="case ids expected to fail, one per line, or requirement ids (every case citing "
        "it); listing a passing case, or a requirement no case fails, fails the run",
    )
    run.add_argument(
        "--report",
        nargs=2,
        action="append",
        default=[],
        metavar=("json|junit", "FILE"),
        help="also write a report; repeatable",
    )
    run.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="also write a compliance table: one row per requirement the selected cases cite",
    )
    run.add_argument(
        "--spec",
        type=Path,
        default=SPEC_PATH,
        metavar="SPEC.md",
        help="where --markdown reads requirement titles (default: this project's)",
    )
    run.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    run.add_argument(
        "--validate",
        action="store_true",
        help="check every protocol message against conformance/schema/protocol-v1",
    )
    add_postgres_option(run)
    run.add_argument("-v", "--verbose", action="store_true", help="print one line per case")
    run.add_argument(
        "--trace",
        action="store_true",
        help="after each case that fails or errors, print every protocol line it sent (>) and received (<)",
    )
    run.add_argument(
        "--repeat",
        type=count,
        default=1,
        metavar="N",
        help="run each case N times; a case whose outcome changes between its runs fails",
    )
    run.add_argument(
        "--write-known-failures",
        type=Path,
        metavar="FILE",
        help="after the run, write FILE listing the cases that failed, or update it: its comments and "
        "order are kept, entries that passed are removed, new failures are added at its end",
    )
    run.set_defaults(handler=_run)

    show = commands.add_parser("show", help="print a case: what the runner sends and what it expects")
    show.add_argument("case", metavar="CASE", help="a case id (QXE4KR) or <area>/<slug>")
    show.add_argument("--cases", type=Path, default=CASES_DIR, metavar="DIR")
    show.set_defaults(handler=_show)

    lint = commands.add_parser("lint", help="check the case files and their SPEC.md citations")
    lint.add_argument("--cases", type=Path, default=CASES_DIR, metavar="DIR")
    lint.add_argument("--spec", type=Path, default=SPEC_PATH, metavar="SPEC.md")
    lint.set_defaults(handler=_lint)

    mutants = commands.add_parser("mutants", help="check that the suite catches seeded bugs")
    mutants.add_argument(
        "--only",
        nargs="+",
        metavar="ID",
        help="judge just these seeded bugs, from whichever catalogue holds each",
    )
    mutants.add_argument(
        "--catalogue",
        choices=("cases", "pytest", "all"),
        help="the seeded bugs the cases must catch (<DIR>/*.json), those the project's tests must "
        f"catch (<DIR>/{PYTEST_DIR}/*.json, each in a child pytest; needs tests/), or both "
        "(default: cases; with --only, all)",
    )
    mutants.add_argument(
        "--mutants", type=Path, metavar="DIR", help="the catalogue (default: <root>/conformance/mutants)"
    )
    mutants.add_argument(
        "--root",
        type=Path,
        default=PROJECT_ROOT,
        metavar="DIR",
        help="the project holding harness9_ref/ and conformance/ (default: this one)",
    )
    mutants.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    mutants.add_argument(
        "--workers",
        type=count,
        metavar="W",
        help="mutants judged at once (default: the CPUs; with --auto at most 4)",
    )
    mutants.add_argument(
        "--auto",
        action="store_true",
        help="generate AST mutants of harness9_ref's runtime modules instead of the catalogue",
    )
    mutants.add_argument("--sample", type=count, metavar="N", help="--auto: judge N of them")
    mutants.add_argument("--seed", type=int, default=0, metavar="S", help="--auto: sample seed")
    mutants.add_argument(
        "--module",
        action="append",
        metavar="GLOB",
        help="--auto: only memory, provider/openai/*, …; repeatable",
    )
    mutants.add_argument("--report", type=Path, metavar="FILE", help="--auto: JSON report")
    add_postgres_option(mutants)
    mutants.set_defaults(handler=_mutants)

    add_traffic_commands(commands)
    add_new_case_command(commands)
    add_matrix_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except Abort as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return code
