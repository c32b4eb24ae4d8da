"""``python -m conformance mutants --auto``: the command, its text output and its JSON report.

The mutants and their judging are ``conformance/mutation/_automut.py``; this module picks the sample,
leaves out the known equivalents (``conformance/mutants/equivalent.txt``) and reports.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import get_args

from ..runner._backends import BACKENDS, per_backend
from ..runner._cases import Case
from ._automut import (
    EQUIVALENT_FILE,
    AutoResult,
    AutoStatus,
    find_mutants,
    load_equivalents,
    run_auto,
    sample,
)

__all__ = ["run_auto_command", "summarize", "write_report"]


def _rate(results: Sequence[AutoResult]) -> dict[str, object]:
    counts = {s: sum(r.status == s for r in results) for s in get_args(AutoStatus)}
    judged = counts["killed"] + counts["timeout"] + counts["survived"]
    rate = (counts["killed"] + counts["timeout"]) / judged if judged else None
    return {**counts, "judged": judged, "kill_rate": rate}


def summarize(results: Sequence[AutoResult]) -> Iterator[str]:
    """The text report: one line per module, the overall line, then one line per survivor."""
    modules = sorted({r.mutant.module for r in results})
    for name in [*modules, None]:
        chosen = [r for r in results if name is None or r.mutant.module == name]
        c = _rate(chosen)
        rate = f"{c['kill_rate']:.1%}" if isinstance(c["kill_rate"], float) else "n/a"
        yield (f"{name or 'overall'}: kill rate {rate} "
               f"({c['killed']} killed, {c['timeout']} timed out, {c['survived']} survived; "
               f"{c['broken']} broken, not counted)")
    survivors = [r.mutant for r in results if r.status == "survived"]
    yield f"{len(survivors)} survivors:" if survivors else "no survivors"
    for m in survivors:
        yield f"  {m.file}:{m.line} {m.operator}: {m.before}  ->  {m.after}  [{m.key}]"


def write_report(results: Sequence[AutoResult], path: Path, **run: object) -> None:
    """The JSON report: the run's parameters, rates per module and overall, every mutant."""
    modules = sorted({r.mutant.module for r in results})
    report = {
        **run,
        "modules": {m: _rate([r for r in results if r.mutant.module == m]) for m in modules},
        "overall": _rate(results),
        "mutants": [{**{k: v for k, v in asdict(r.mutant).items() if k != "source"},
                     "module": r.mutant.module, "status": r.status, "detail": r.detail}
                    for r in results],
    }
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def run_auto_command(args: argparse.Namespace, cases: Sequence[Case]) -> int:
    """``mutants --auto``; 0 whatever the rate. BaselineError, ValueError: no run is made."""
    root: Path = args.root
    equivalents = load_equivalents(root / EQUIVALENT_FILE)
    stale = sorted(set(equivalents) - {m.key for m in find_mutants(root, keys=equivalents)})
    selected = find_mutants(root, args.module, postgres=args.postgres is not None)
    if not selected:
        raise ValueError(f"no mutant in the modules {', '.join(args.module or ['(all)'])}")
    drawn = sample(selected, args.sample, args.seed)  # listing equivalents keeps the sample
    picked = [m for m in drawn if m.key not in equivalents]
    excluded = len(drawn) - len(picked)
    print(f"{len(drawn)} of {len(selected)} mutants (seed {args.seed}); "
          f"{excluded} of them known equivalents, not run", flush=True)
    if args.postgres is None:
        print("without --postgres, the PostgreSQL store's mutants are left out: "
              "no case runs it", flush=True)
    if stale:
        print(f"warning: {EQUIVALENT_FILE} names no such mutant: {', '.join(stale)}", flush=True)
    done = [0]

    def show(r: AutoResult) -> None:
        done[0] += 1
        print(f"[{done[0]}/{len(picked)}] {r.status}: {r.mutant.file}:{r.mutant.line} "
              f"{r.mutant.operator} ({r.detail})", flush=True)

    # Given a server, the session cases also run as <id>@postgresql, so that mutants of the
    # PostgreSQL store meet the cases that reach it (R-PG-2), as `conformance run` does.
    cases = list(per_backend(cases, BACKENDS, args.postgres))
    results = run_auto(
        root, picked, cases, timeout=args.timeout, workers=args.workers, on_result=show
    )
    for line in summarize(results):
        print(line)
    if args.report is not None:
        write_report(results, args.report, seed=args.seed, sample=args.sample,
                     population=len(selected), modules_selected=args.module or ["(all)"],
                     postgres=args.postgres is not None,
                     equivalents_excluded=excluded)
    return 0
