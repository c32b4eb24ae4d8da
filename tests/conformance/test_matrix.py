"""The compliance matrix (SPEC R-MTX): built by the real command line from reports of real runs
(the reference, the Node starter, a fake port that gets every format case wrong), and read
back from the DOM a real headless browser (Debian's chromium) built from the page."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conformance import PROJECT_ROOT, SPEC_PATH, read_id_list, spec_requirement_ids
from conformance.runner._matrix import STATES, cell_state, spec_sections
from conformance.runner._profiles import PROFILES

from .toy import fake

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: whole programs of the suite's tooling

SPEC_IDS = frozenset(spec_requirement_ids(SPEC_PATH))
NODE_ADAPTER = PROJECT_ROOT / "conformance" / "adapters" / "node" / "adapter.js"
CHROMIUM = ("chromium", "chromium-browser", "/usr/bin/chromium")
FILTERS = ("--filter", "format/*", "--filter", "tokens/*")
_VOID = frozenset({"br", "meta", "link", "img", "input", "hr", "col", "source", "wbr"})


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


@dataclass
class Node:
    """An element of the page as the browser built it."""

    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def find(self, tag: str) -> list[Node]:
        return [node for node in self.walk() if node.tag == tag]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {key: value or "" for key, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1:
            if self.stack.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def _browser() -> str:
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium on PATH: install Debian's chromium to open the matrix in a browser")


def _dom(page: Path, scratch: Path) -> Node:
    """The page's DOM as a headless chromium built it from the file, with no network."""
    done = subprocess.run(
        [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={scratch}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "<table" in done.stdout, done.stderr[-2000:]
    builder = _Builder()
    builder.feed(done.stdout)
    return builder.root


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Real reports: the reference, the Node starter, a fake port whose answers are all wrong."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node on PATH: install Node (Debian: nodejs) for the Node starter's column")
    folder = tmp_path_factory.mktemp("reports")
    adapters = {
        "reference": [sys.executable, "-m", "conformance.reference_adapter"],
        "node": [node, str(NODE_ADAPTER)],
        "wrong": fake("claims", "--wrong", "core"),
    }
    paths = []
    for name, adapter in adapters.items():
        path = folder / f"{name}.json"
        done = _cli("run", "--adapter", " ".join(adapter), "--report", "json", str(path), *FILTERS)
        assert path.exists(), done.stdout + done.stderr
        assert done.returncode == (1 if name == "wrong" else 0), done.stdout
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def matrix(reports: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("matrix") / "site"
    done = _cli("matrix", *map(str, reports), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(out / "index.html"), str(out / "matrix.md")]
    return out


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _label(report: dict[str, Any]) -> str:
    return f"{report['implementation']['name']} {report['implementation']['version']}"


def _rows(dom: Node) -> dict[str, list[Node]]:
    """Each table row with a row header, by the header's first word: its cells."""
    rows: dict[str, list[Node]] = {}
    for tr in dom.find("tr"):
        header = [n for n in tr.children if isinstance(n, Node) and n.tag == "th"]
        if header and header[0].attrs.get("scope") == "row":
            rows.setdefault(header[0].text.split()[0], [n for n in tr.find("td")])
    return rows


def test_the_browser_shows_columns_counts_and_linked_failures(
    matrix: Path, reports: list[Path], tmp_path: Path
) -> None:
    data = [_load(path) for path in reports]
    dom = _dom(matrix / "index.html", tmp_path)
    heads = [th.text for th in dom.find("thead")[0].find("th")]
    assert heads == ["requirement", *map(_label, data)]
    rows = _rows(dom)
    # the cases' counts, outcome by outcome (the "known" row is "known failure")
    for outcome in ("passed", "failed", "unsupported", "errored"):
        assert [td.text for td in rows[outcome]][-3:] == [str(r["totals"][outcome]) for r in data]
    core = [td.text for td in rows["core"]]
    ref_core, wrong_core = data[0]["profiles"]["core"], data[2]["profiles"]["core"]
    assert core[0] == f"✓ {ref_core['cases']}/{ref_core['cases']} claimed"
    assert core[2] == f"0% 0/{wrong_core['cases']} claimed"
    assert [td.attrs["class"] for td in rows["core"]] == ["passed", "partial", "failed"]
    # requirements grouped by section in SPEC's order, every cell a state with its counts
    groups = [tr.text for tr in dom.find("tr") if tr.attrs.get("class") == "group"]
    assert groups[:4] == ["Profiles", "Cases", "Requirements", "1. Messages (R-MSG)"]
    section = {area: next(g for g in groups if g.endswith(f"({area})")) for area in ("R-FMT", "R-SES")}
    assert groups.index(section["R-FMT"]) < groups.index(section["R-SES"])
    cells = rows["R-FMT-1"]
    assert len(cells) == 3
    for column in (0, 1):  # the reference and the Node starter both pass the format cases
        entry = data[column]["requirements"]["R-FMT-1"]
        assert cells[column].text == f"passed {entry['passed']}/{entry['passed']}"
    tok = data[1]["requirements"]["R-TOK-1"]
    assert rows["R-TOK-1"][1].text == f"unsupported 0/{tok['unsupported']}"
    # a requirement of SPEC.md no case cites (the suite's own, in conformance/SUITE.md, have no row)
    pending = next(r for r in read_id_list(PROJECT_ROOT / "conformance" / "pending.txt") if r in SPEC_IDS)
    assert [td.text.split()[0] for td in rows[pending]] == ["no", "no", "no"]
    # how many requirements are in each state, column by column
    tbody = next(n for n in dom.find("tbody") if n.attrs.get("id") == "requirements")
    states = {tr.find("th")[0].text: [int(td.text) for td in tr.find("td")] for tr in tbody.find("tr")[1:]}
    assert list(states) == list(STATES)
    requirement_rows = [tr for tr in dom.find("tr") if tr.attrs.get("id", "").startswith("R-")]
    assert [sum(column) for column in zip(*states.values(), strict=True)] == [len(requirement_rows)] * 3
    for column, report in enumerate(data):
        failed = [r for r, entry in report["requirements"].items() if entry["failing"]]
        assert states["failed"][column] == len(failed)
        assert states["passed"][column] == sum(cell_state(e) == "passed" for e in report["requirements"].values())
    assert states["failed"][2] > 0 and states["no case"][0] > 0  # pending requirements have no case
    # a failure links to its case id and its first difference
    failing = data[2]["requirements"]["R-FMT-1"]["failing"]
    assert cells[2].attrs["class"] == "failed"
    assert cells[2].text.startswith(f"failed 0/{len(failing)}")
    links = cells[2].find("a")
    assert [a.text for a in links] == failing and failing
    by_id = {node.attrs["id"]: node for node in dom.walk() if "id" in node.attrs}
    case = next(c for c in data[2]["cases"] if c["id"] == failing[0])
    target = by_id[links[0].attrs["href"].removeprefix("#")]
    assert target.tag == "li" and case["id"] in target.text
    assert f"({case['area']}/{case['slug']})" in target.text
    assert case["detail"].startswith("(root): expected ") and case["detail"] in target.text
    # one static file: no script, nothing fetched
    assert not dom.find("script")
    fetched = [n.attrs[a] for n in dom.walk() for a in ("src", "href") if a in n.attrs]
    assert fetched and all(link.startswith("#") for link in fetched)


def test_requirement_states_and_their_counts(matrix: Path, reports: list[Path]) -> None:
    data = [_load(path) for path in reports]
    text = (matrix / "index.html").read_text(encoding="utf-8")
    assert cell_state(None) == "no case"
    for report in data:
        states = [cell_state(entry) for entry in report["requirements"].values()]
        assert set(states) <= set(STATES)
    wrong = data[2]["requirements"]
    assert cell_state(wrong["R-FMT-1"]) == "failed"
    assert cell_state({**wrong["R-FMT-1"], "failed": 0, "failing": [], "known_failure": 6}) == (
        "known failure"
    )
    node = data[1]["requirements"]
    assert cell_state(node["R-TOK-1"]) == "unsupported"
    assert text.count("<tr id=") >= len(data[0]["requirements"])


def test_the_markdown_table(matrix: Path, reports: list[Path]) -> None:
    data = [_load(path) for path in reports]
    lines = (matrix / "matrix.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# harness9 conformance matrix"
    assert f"| profile | {' | '.join(map(_label, data))} |" in lines
    assert sum(line.startswith(f"| {p.name} (") for p in PROFILES for line in lines) == len(PROFILES)
    row = next(line for line in lines if line.startswith("| R-FMT-1 "))
    failing = data[2]["requirements"]["R-FMT-1"]["failing"]
    assert row.endswith(f"| failed 0/{len(failing)} ({', '.join(failing[:5])}, … {len(failing) - 5} more) |")
    case = next(c for c in data[2]["cases"] if c["id"] == failing[0])
    assert f"- `{case['id']}` ({case['area']}/{case['slug']}) [{', '.join(case['spec'])}] failed: {case['detail']}" in lines


def test_every_text_from_a_report_is_escaped(reports: list[Path], tmp_path: Path) -> None:
    report = _load(reports[2])
    report["implementation"]["name"] = "<script>document.title='x'</script>"
    failed = next(c for c in report["cases"] if c["status"] == "failed")
    failed["detail"] = "</code><img src=x>&amp;"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(report), encoding="utf-8")
    twin = tmp_path / "twin.json"
    twin.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "out"
    assert _cli("matrix", str(hostile), str(twin), "-o", str(out)).returncode == 0
    dom = _dom(out / "index.html", tmp_path / "profile")
    assert not dom.find("script") and not dom.find("img")
    assert dom.find("title")[0].text == "harness9 conformance matrix"
    heads = [th.text for th in dom.find("thead")[0].find("th")]
    assert heads[1:] == [f"<script>document.title='x'</script> 0 ({name})" for name in ("hostile.json", "twin.json")]
    assert any(li.text.endswith("</code><img src=x>&amp;") for li in dom.find("li"))


def test_without_a_spec_the_rows_are_the_cited_requirements(reports: list[Path], tmp_path: Path) -> None:
    out, missing = tmp_path / "out", tmp_path / "no-SPEC.md"
    assert _cli("matrix", str(reports[0]), "-o", str(out), "--spec", str(missing)).returncode == 0
    lines = (out / "matrix.md").read_text(encoding="utf-8").splitlines()
    assert f"### Requirements ({missing} defines none: not grouped by section)" in lines
    cited = _load(reports[0])["requirements"]
    rows = [line.split()[1] for line in lines if line.startswith("| R-") and "/" in line]
    assert rows[: len(cited)] == list(cited)


def test_a_group_parent_gets_no_row_its_sub_ids_do(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text(
        "## 1. Toy (R-ZZZ)\n\n"
        '- <a id="R-X-1"></a>**R-X-1** MUST count.\n'
        '- <a id="R-ZZZ-9"></a>**R-ZZZ-9** Counting, in two parts: R-ZZZ-9a and R-ZZZ-9b.\n'
        '- <a id="R-ZZZ-9a"></a>**R-ZZZ-9a** MUST count bytes.\n'
        '- <a id="R-ZZZ-9b"></a>**R-ZZZ-9b** MUST round up.\n',
        encoding="utf-8",
    )
    assert spec_sections(spec) == [("1. Toy (R-ZZZ)", ["R-X-1", "R-ZZZ-9a", "R-ZZZ-9b"])]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read"),
        ("{not json", "not a JSON report"),
        ("[1, 2]", "not a JSON object"),
        ('{"implementation": {}, "totals": {}, "cases": []}', "no requirements object"),
        ('<?xml version="1.0"?><testsuites/>', "not a JSON report"),
    ],
    ids=["missing", "not-json", "not-an-object", "no-requirements", "junit"],
)
def test_a_bad_report_is_one_line_and_nothing_is_written(
    reports: list[Path], tmp_path: Path, content: str | None, problem: str
) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    done = _cli("matrix", str(reports[0]), str(bad), "-o", str(out))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {bad}: ") and problem in done.stderr
    assert not out.exists()
