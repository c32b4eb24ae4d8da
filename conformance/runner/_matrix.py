"""``python -m conformance matrix REPORT.json…``: implementations side by side (SPEC R-MTX).

Why: a run's report shows one implementation; a porter, and anyone choosing between ports,
wants the picture across them, requirement by requirement, as the matrices of other reference
suites show it. The page is one static HTML file (style inline, no script, no network), so it
opens from a CI artefact or a file system as it is; ``matrix.md`` holds the same table for a
README or a release note. Everything shown comes from ``run --report json`` files: the
requirements' counts and failing ids, the profiles' verdicts, each failing case's first
difference (its ``detail``).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any, Final

from .._cli_args import Abort
from ._cases import SPEC_PATH
from ._profiles import PASSED_MARK, PROFILES
from ._requirements import REQUIREMENT_ID, _cell, _ids, _sort_key, requirement_titles

__all__ = ["STATES", "Column", "add_matrix_command", "cell_state", "read_report", "write_matrix"]

DEFAULT_OUT: Final = Path("conformance-matrix")
# A requirement's state in one column, in the order the counts are shown.
STATES: Final = ("passed", "failed", "known failure", "unsupported", "partial", "skipped", "no case")
_OUTCOMES: Final = ("passed", "failed", "skipped", "unsupported", "errored", "known_failure")
_FAILED: Final = frozenset({"failed", "errored"})
_HEADING: Final = re.compile(r"^(#{2,3}) (.+)$")
_DEFINITION: Final = re.compile(r"^- <a id=\"[^\"]*\"></a>\*\*(R-[A-Z]+-\d+[a-z]?)\*\*")
# Failing ids written out in one Markdown cell; the failures list below has them all.
_MD_IDS: Final = 5

_STYLE: Final = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
table { border-collapse: collapse; }
th, td { border: 1px solid #c8c8c8; padding: 0.2em 0.5em; vertical-align: top; }
thead th { position: sticky; top: 0; background: #f0f0f0; }
th[scope=row] { text-align: left; font-weight: normal; }
th[scope=row] .title { color: #555; font-size: 90%; }
tr.group th { background: #e4e9f2; text-align: left; }
td.passed { background: #dff3df; }
td.failed { background: #f8d7d7; }
td.known-failure { background: #fbeccb; }
td.unsupported, td.no-case { background: #efefef; color: #666; }
td.partial, td.skipped { background: #fdf6d8; }
td.count { text-align: right; }
li { margin: 0.3em 0; }
li:target { background: #fff3a0; }
code { font-size: 95%; }
"""


@dataclass(frozen=True)
class Column:
    """One report: how its column is headed, and the anchor prefix of its failures."""

    label: str
    key: str
    report: Mapping[str, Any]

    @property
    def requirements(self) -> Mapping[str, Mapping[str, Any]]:
        return self.report["requirements"]  # type: ignore[no-any-return]

    @property
    def failures(self) -> list[Mapping[str, Any]]:
        """The report's failed and errored cases, in run order."""
        return [case for case in self.report["cases"] if case["status"] in _FAILED]

    def anchor(self, case_id: str) -> str:
        return f"{self.key}-{case_id}"


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shape_problem(report: Any) -> str:
    """What keeps ``report`` from being a ``run --report json`` report; "" when nothing."""
    if not isinstance(report, dict):
        return "not a JSON object"
    for key, kind in (("implementation", dict), ("totals", dict), ("cases", list),
                      ("requirements", dict)):  # fmt: skip
        if not isinstance(report.get(key), kind):
            return f"no {key} {'object' if kind is dict else 'list'}"
    if not all(_is_count(report["totals"].get(outcome)) for outcome in _OUTCOMES):
        return "totals is not a count of every outcome"
    for case in report["cases"]:
        if not (isinstance(case, dict) and all(isinstance(case.get(k), str) for k in
                                               ("id", "area", "slug", "status", "detail"))
                and isinstance(case.get("spec"), list)):  # fmt: skip
            return "a case is not {id, area, slug, spec, status, detail}"
    for entry in report["requirements"].values():
        if not (isinstance(entry, dict) and all(_is_count(entry.get(o)) for o in _OUTCOMES)
                and isinstance(entry.get("failing"), list)):  # fmt: skip
            return "a requirement is not a count of every outcome with its failing ids"
    profiles = report.get("profiles", {})
    if not isinstance(profiles, dict) or not all(
        isinstance(entry, dict) and _is_count(entry.get("cases")) for entry in profiles.values()
    ):
        return "profiles is not an object of profile results"
    return ""


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report of ``run --report json``.

    Raises:
        Abort: it cannot be read, is not JSON, or is not such a report (R-MTX-2).
    """
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise Abort(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # UnicodeDecodeError and json.JSONDecodeError
        raise Abort(f"{path}: not a JSON report: {exc}") from None
    problem = _shape_problem(report)
    if problem:
        raise Abort(f"{path}: not a report of `python -m conformance run --report json`: {problem}")
    return report  # type: ignore[no-any-return]


def _columns(paths: Sequence[Path], reports: Sequence[Mapping[str, Any]]) -> list[Column]:
    def who(report: Mapping[str, Any]) -> str:
        implementation = report["implementation"]
        name = " ".join(str(implementation.get(key, "")) for key in ("name", "version")).strip()
        return name or "adapter"

    labels = [who(report) for report in reports]
    alike = Counter(labels)
    return [
        Column(f"{label} ({path.name})" if alike[label] > 1 else label, f"c{n}", report)
        for n, (label, path, report) in enumerate(zip(labels, paths, reports, strict=True), 1)
    ]


def spec_sections(spec_path: Path) -> list[tuple[str, list[str]]]:
    """SPEC.md's sections that define requirements, in order, each with its ids; [] without it."""
    try:
        lines = spec_path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    sections: list[tuple[str, list[str]]] = []
    heading, fenced = "", False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            heading = match.group(2)
        elif not fenced and (match := _DEFINITION.match(line)):
            if not sections or sections[-1][0] != heading:
                sections.append((heading, []))
            sections[-1][1].append(match.group(1))
    return sections


def _groups(spec_path: Path, columns: Sequence[Column]) -> list[tuple[str, list[str]]]:
    sections = spec_sections(spec_path)
    defined = {requirement for _, ids in sections for requirement in ids}
    cited = {requirement for column in columns for requirement in column.requirements}
    others = sorted((r for r in cited - defined if REQUIREMENT_ID.fullmatch(r)), key=_sort_key)
    others += sorted(r for r in cited - defined if not REQUIREMENT_ID.fullmatch(r))
    if not others:
        return sections
    heading = f"Requirements not defined in {spec_path}" if sections else (
        f"Requirements ({spec_path} defines none: not grouped by section)"
    )
    return [*sections, (heading, others)]


def cell_state(entry: Mapping[str, Any] | None) -> str:
    """A requirement's state in one report (one of STATES) from its counts (R-MTX-1)."""
    if entry is None or not sum(entry[outcome] for outcome in _OUTCOMES):
        return "no case"
    total = sum(entry[outcome] for outcome in _OUTCOMES)
    if entry["failing"] or entry.get("stale_known_failure"):
        return "failed"
    if entry["passed"] == total:
        return "passed"
    if entry["known_failure"]:
        return "known failure"
    if entry["unsupported"] == total:
        return "unsupported"
    return "partial" if entry["passed"] else "skipped"


def _counts(entry: Mapping[str, Any] | None) -> str:
    if entry is None:
        return ""
    return f"{entry['passed']}/{sum(entry[outcome] for outcome in _OUTCOMES)}"


def _profile_text(entry: Mapping[str, Any] | None) -> tuple[str, str]:
    """The CSS state and the text of one profile's cell."""
    if entry is None:
        return "no-case", "not in report"
    if not entry["cases"]:
        return "no-case", "no case"
    claimed = " claimed" if entry.get("claimed") else ""
    counts = f"{entry.get('passed_cases', 0)}/{entry['cases']}"
    if entry.get("passed"):
        return "passed", f"{PASSED_MARK} {counts}{claimed}"
    state = "failed" if claimed else "partial" if entry.get("passed_cases") else "unsupported"
    return state, f"{entry.get('percent')}% {counts}{claimed}"


def _state_counts(columns: Sequence[Column], groups: Sequence[tuple[str, list[str]]]) -> list[Counter[str]]:
    return [
        Counter(cell_state(column.requirements.get(r)) for _, ids in groups for r in ids)
        for column in columns
    ]


def _html_cell(column: Column, requirement: str) -> str:
    entry = column.requirements.get(requirement)
    state = cell_state(entry)
    text = escape(f"{state} {_counts(entry)}".strip())
    links = ""
    if entry is not None and entry["failing"]:
        links = "<br>" + " ".join(
            f'<a href="#{escape(column.anchor(case_id))}">{escape(case_id)}</a>'
            for case_id in map(str, entry["failing"])
        )
    return f'<td class="{state.replace(" ", "-")}">{text}{links}</td>'


def _html(columns: Sequence[Column], groups: Sequence[tuple[str, list[str]]],
          titles: Mapping[str, str]) -> str:  # fmt: skip
    width = len(columns) + 1
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>harness9 conformance matrix</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>harness9 conformance matrix</h1>",
        f"<p>{len(columns)} implementation{'s' * (len(columns) != 1)}; one row per requirement "
        "of SPEC.md, grouped by section. A cell gives the requirement's state and its cases "
        "passed/total; failing case ids link to their first difference below.</p>",
        '<table id="matrix"><thead><tr><th scope="col">requirement</th>',
        *(f'<th scope="col" class="implementation">{escape(c.label)}</th>' for c in columns),
        "</tr></thead>",
        f'<tbody id="profiles"><tr class="group"><th colspan="{width}">Profiles</th></tr>',
    ]
    for profile in PROFILES:
        out.append(
            f'<tr><th scope="row">{escape(profile.name)} <span class="title">'
            f"{escape(profile.title)} (§{escape(profile.sections)})</span></th>"
        )
        for column in columns:
            state, text = _profile_text(column.report.get("profiles", {}).get(profile.name))
            out.append(f'<td class="{state}">{escape(text)}</td>')
        out.append("</tr>")
    out.append(f'</tbody><tbody id="cases"><tr class="group"><th colspan="{width}">Cases</th></tr>')
    for outcome in _OUTCOMES:
        out.append(f'<tr><th scope="row">{escape(outcome.replace("_", " "))}</th>')
        out += (f'<td class="count">{c.report["totals"][outcome]}</td>' for c in columns)
        out.append("</tr>")
    out.append(
        f'</tbody><tbody id="requirements"><tr class="group"><th colspan="{width}">'
        "Requirements</th></tr>"
    )
    tallies = _state_counts(columns, groups)
    for state in STATES:
        out.append(f'<tr><th scope="row">{escape(state)}</th>')
        out += (f'<td class="count">{tally[state]}</td>' for tally in tallies)
        out.append("</tr>")
    out.append("</tbody>")
    for heading, ids in groups:
        out.append(f'<tbody><tr class="group"><th colspan="{width}">{escape(heading)}</th></tr>')
        for requirement in ids:
            title = titles.get(requirement, "")
            out.append(
                f'<tr id="{escape(requirement)}"><th scope="row">{escape(requirement)} '
                f'<span class="title">{escape(title)}</span></th>'
            )
            out += (_html_cell(column, requirement) for column in columns)
            out.append("</tr>")
        out.append("</tbody>")
    out.append('</table><h2 id="failures">Failures</h2>')
    for column in columns:
        failures = column.failures
        out.append(f'<section id="failures-{column.key}"><h3>{escape(column.label)}: '
                   f"{len(failures)} failed or errored</h3><ol>")  # fmt: skip
        for case in failures:
            out.append(
                f'<li id="{escape(column.anchor(case["id"]))}"><code>{escape(case["id"])}</code> '
                f"({escape(case['area'])}/{escape(case['slug'])}) "
                f"[{escape(', '.join(map(str, case['spec'])))}] {escape(case['status'])}: "
                f"<code>{escape(case['detail'])}</code></li>"
            )
        out.append("</ol></section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _markdown(columns: Sequence[Column], groups: Sequence[tuple[str, list[str]]],
              titles: Mapping[str, str]) -> str:  # fmt: skip
    head = "| " + " | ".join(_cell(c.label) for c in columns) + " |"
    rule = "| --- |" + " --- |" * len(columns)
    lines = ["# harness9 conformance matrix", "", "## Profiles", "", "| profile " + head, rule]
    for profile in PROFILES:
        cells = [_profile_text(c.report.get("profiles", {}).get(profile.name))[1] for c in columns]
        lines.append(f"| {profile.name} ({_cell(profile.title)}) | " + " | ".join(cells) + " |")
    lines += ["", "## Cases", "", "| outcome " + head, rule]
    for outcome in _OUTCOMES:
        counts = " | ".join(str(c.report["totals"][outcome]) for c in columns)
        lines.append(f"| {outcome.replace('_', ' ')} | {counts} |")
    lines += ["", "## Requirements", "", "| state " + head, rule]
    tallies = _state_counts(columns, groups)
    for state in STATES:
        lines.append(f"| {state} | " + " | ".join(str(tally[state]) for tally in tallies) + " |")
    for heading, ids in groups:
        lines += ["", f"### {heading}", "", "| requirement " + head, rule]
        for requirement in ids:
            cells = []
            for column in columns:
                entry = column.requirements.get(requirement)
                text = f"{cell_state(entry)} {_counts(entry)}".strip()
                if entry is not None and entry["failing"]:
                    text += f" ({_ids([str(i) for i in entry['failing']], _MD_IDS)})"
                cells.append(_cell(text))
            title = titles.get(requirement, "")
            name = f"{requirement} {title}".strip()
            lines.append(f"| {_cell(name)} | " + " | ".join(cells) + " |")
    lines += ["", "## Failures"]
    for column in columns:
        lines += ["", f"### {column.label}", ""]
        lines += [
            f"- `{case['id']}` ({case['area']}/{case['slug']}) [{', '.join(map(str, case['spec']))}] "
            f"{case['status']}: {_cell(case['detail'])}"
            for case in column.failures
        ] or ["none"]
    return "\n".join(lines) + "\n"


def write_matrix(reports: Sequence[Path], out: Path, spec_path: Path = SPEC_PATH) -> list[Path]:
    """Write ``out/index.html`` and ``out/matrix.md`` from JSON reports; the files written.

    Raises:
        Abort: no report, a report that is not one, or an ``out`` that is not a folder;
            nothing is written then (R-MTX-2).
    """
    if not reports:
        raise Abort("name at least one JSON report of `python -m conformance run --report json`")
    loaded = [read_report(path) for path in reports]
    if out.exists() and not out.is_dir():
        raise Abort(f"{out}: exists and is not a folder")
    columns = _columns(reports, loaded)
    groups = _groups(spec_path, columns)
    titles = requirement_titles(spec_path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = [out / "index.html", out / "matrix.md"]
        written[0].write_text(_html(columns, groups, titles), encoding="utf-8")
        written[1].write_text(_markdown(columns, groups, titles), encoding="utf-8")
    except OSError as exc:
        raise Abort(f"{out}: cannot write: {exc.strerror or exc}") from None
    return written


def _command(args: argparse.Namespace) -> int:
    for path in write_matrix(args.reports, args.out, args.spec):
        print(path)
    return 0


def add_matrix_command(commands: Any) -> None:
    """Add ``matrix`` to the sub-commands of ``python -m conformance``."""
    parser = commands.add_parser(
        "matrix", help="write an HTML and Markdown compliance matrix from JSON reports"
    )
    parser.add_argument(
        "reports", nargs="+", type=Path, metavar="REPORT.json",
        help="reports written by `run --report json`, one column each, in this order",
    )  # fmt: skip
    parser.add_argument(
        "-o", "--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
        help=f"where index.html and matrix.md are written (default: {DEFAULT_OUT})",
    )  # fmt: skip
    parser.add_argument(
        "--spec", type=Path, default=SPEC_PATH, metavar="SPEC.md",
        help="where the sections and titles of the requirements are read (default: this project's)",
    )  # fmt: skip
    parser.set_defaults(handler=_command)
