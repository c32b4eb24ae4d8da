"""``mutants --auto``: AST mutants of the reference's runtime code, judged by the suite.

Operators, applied wherever they fit in ``harness9_ref/`` outside the modules and functions no
op reaches (``_EXCLUDED``, ``_UNREACHED``), and in the PostgreSQL store only when a server is
given (``_PG_ONLY``): comparison swaps (``<`` ↔ ``<=``, ``==`` ↔ ``!=``, ``is`` ↔ ``is not``, …),
arithmetic (``+`` ↔ ``-``, ``*`` ↔ ``//``, ``+=`` ↔ ``-=``, …), integer constants ± 1,
``and`` ↔ ``or``, negated ``if``/``while``/conditional tests, and ``return X`` → ``None`` or
the empty value of the declared return type (``not (X)`` for ``bool``). A mutant patches the
bytes of one node, the rest of the file staying byte-identical; its key is
``<file under harness9_ref>:<enclosing def>:<operator>:<n-th such there>``, stable across edits
elsewhere. It is judged on a copy of the project like a catalogue mutant (``_mutants.py``):
killed at the first failing case, survived when all pass, broken (not counted) when the patched
adapter cannot start, timed out (counted as killed) past 3 × the baseline's time. Survivors
that change no behaviour are listed, with why, in ``conformance/mutants/equivalent.txt``.
"""

from __future__ import annotations

import ast
import os
import random
import re
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import accumulate
from pathlib import Path
from typing import Final, Literal

from ..runner._cases import Case
from ..runner._runner import DEFAULT_TIMEOUT
from ._mutant_copy import Broken, Edit, template
from ._mutants import _check_baseline, _fails, _patched_adapter

__all__ = [
    "AutoMutant", "AutoResult", "AutoStatus", "find_mutants", "load_equivalents", "mutants_of_source", "run_auto",
    "sample",
]

PACKAGE: Final = "harness9_ref"
EQUIVALENT_FILE: Final = Path("conformance") / "mutants" / "equivalent.txt"
# Left out: the terminal UI, which no op runs (its text and the TUI ops come from text/ and
# engine/, which are mutated); the command line's own modules, which only the `cli` op runs, as a
# whole program (what they call in the other modules is mutated, and counted, like the rest); the
# offline provider only the command line builds (R-CLI-9, pending: tests/cli judge it), the test
# helpers and the entry point.
_EXCLUDED: Final = ("tui/*", "cli/*", "offline.py", "engine/_worker.py", "testing.py", "__main__.py")
# Functions of the other modules that no op calls, or whose work no op can observe, which a run
# of the cases with each one's entry marked confirms: only tui/ (and tests) call them, or they
# serve a pending requirement, which the Python tests named in conformance/pending.txt judge.
# ``engine/_worker.py`` above is the run worker of the terminal UI and ``run`` (R-TUI-27) as a
# whole. What the `cli` op's program reaches (AGENTS.md files, read-only opens, allow --remove,
# errors worded where printed, show, the window probe) is mutated like the rest.
_UNREACHED: Final = {
    # the watchdog's pid is for tests; its life ends groups only after its parent's SIGKILL,
    # which no op stages (R-TOOL-17, pending: tests/tools/test_watchdog.py)
    "tools/_process.py": ("watch_pipe", "watchdog_pid"),
    "text/_cells.py": ("wrap_cells", "_last_space"),  # the terminal UI's wrapping
    "text/_lines.py": ("error_line", "expanded_lines"),  # the terminal UI's error lines, expanded results
    # an internal error's wording (R-CLI-13c): only a fault of the program itself makes one,
    # which no case can stage (tests/cli/test_messages.py)
    "text/_report.py": ("without_type_name",),
    "engine/_engine.py": ("AgentEngine.session", "AgentEngine.max_turns"),  # getters: tui/ and tests only
    "engine/_retry.py": ("RetryingSummarizer.reply_limit",),  # the summarizer's reply limit (R-FOLD-7)
    # accessors for a library's caller that the package itself never reads: a request's header
    # by name, the model name as sent, a registry's folder (tests/provider, tests/tools judge them)
    "provider/_http.py": ("HttpRequest.header",),
    "provider/_base.py": ("HttpProvider.request_model",),
    "tools/_registry.py": ("Registry.workdir",),
}
# The PostgreSQL store: cases reach it only as <id>@postgresql, given a server (R-PG-2).
_PG_ONLY: Final = ("memory/storage/_pg_*.py",)

AutoStatus = Literal["killed", "timeout", "survived", "broken"]

_CMP: Final = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="),
               ast.GtE: (">=", ">"), ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="),
               ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"),
               ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}
_ARITH: Final = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "//"),
                 ast.FloorDiv: ("//", "*"), ast.Div: ("/", "*"), ast.Mod: ("%", "//")}
_NAMES: Final = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne",
                 "is": "is", "is not": "isnot", "in": "in", "not in": "notin", "+": "add",
                 "-": "sub", "*": "mul", "//": "floordiv", "/": "div", "%": "mod",
                 "and": "and", "or": "or"}
# The one operator token between two operands (comments blanked out first).
_TOKEN: Final = re.compile(r"\bis\s+not\b|\bnot\s+in\b|\b(?:is|in|and|or)\b|\*\*=?|//=?|<<=?|>>=?"
                           r"|[-+*/%@&|^]=|<=|>=|==|!=|[-+*/%@&|^<>]")
_EMPTY: Final = {"str": '""', "int": "0", "float": "0.0", "bytes": 'b""', "list": "[]",
                 "List": "[]", "Sequence": "[]", "dict": "{}", "Dict": "{}", "Mapping": "{}",
                 "tuple": "()", "Tuple": "()", "set": "set()", "frozenset": "frozenset()"}


@dataclass(frozen=True, slots=True)
class AutoMutant:
    """One generated mutant: ``file`` is relative to the project root, ``line`` 1-based."""

    key: str
    file: str
    line: int
    operator: str
    before: str  # the changed source line, stripped, before and after
    after: str
    source: str  # the whole mutated file

    @property
    def module(self) -> str:  # memory, provider, …: its subpackage (or top-level file)
        parts = Path(self.file).relative_to(PACKAGE).parts
        return parts[0] if len(parts) > 1 else Path(parts[0]).stem


@dataclass(frozen=True, slots=True)
class AutoResult:
    mutant: AutoMutant
    status: AutoStatus
    detail: str


_Edit3 = tuple[int, int, str]  # start byte, end byte, replacement
_Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or isinstance(getattr(node, "value", 0), (str, bytes))


class _Finder:
    """Collects the edits of every mutant of one module's source bytes."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0, *accumulate(len(line) + 1 for line in source.split(b"\n")[:-1])]
        self.found: list[tuple[str, int, str, list[_Edit3]]] = []  # scope, line, operator
        self.scope: list[str] = []
        self.returns: list[ast.expr | None] = []

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        return start, self.starts[end_line - 1] + end_col

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end].decode("utf-8")

    def add(self, node: ast.AST, operator: str, edits: list[_Edit3]) -> None:
        line: int = node.lineno  # type: ignore[attr-defined]
        self.found.append((".".join(self.scope) or "<module>", line, operator, edits))

    def token(self, left: ast.AST, right: ast.AST, expected: str, new: str) -> _Edit3 | None:
        """The edit replacing the operator token between ``left`` and ``right``."""
        start, end = self.span(left)[1], self.span(right)[0]
        gap = re.sub(r"#[^\n]*", lambda m: " " * len(m.group()), self.source[start:end].decode())
        tokens = list(_TOKEN.finditer(gap))
        if len(tokens) != 1 or " ".join(tokens[0].group().split()) != expected:
            return None
        before = len(gap[: tokens[0].start()].encode())
        return start + before, start + before + len(tokens[0].group().encode()), new

    def visit(self, node: ast.AST) -> None:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is not None and method(node) is False:
            return
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST) and field not in ("annotation", "returns"):
                    self.visit(child)

    def visit_FunctionDef(self, node: _Scope) -> bool:
        self.scope.append(node.name)
        self.returns.append(getattr(node, "returns", None))
        args = None if isinstance(node, ast.ClassDef) else node.args
        defaults = [] if args is None else [*args.defaults, *args.kw_defaults]
        for child in [child for child in [*node.body, *defaults] if child is not None]:
            self.visit(child)
        self.scope.pop()
        self.returns.pop()
        return False

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Assert(self, node: ast.Assert) -> bool:
        return False  # asserts are checks on the code, not behaviour

    def visit_Compare(self, node: ast.Compare) -> None:
        for left, op, right in zip([node.left, *node.comparators], node.ops, node.comparators):
            old, new = _CMP[type(op)]
            if (edit := self.token(left, right, old, new)) is not None:
                self.add(node, f"{_NAMES[old]}-{_NAMES[new]}", [edit])

    def visit_BinOp(self, node: ast.BinOp) -> None:
        pair = _ARITH.get(type(node.op))
        if pair is None or _is_text(node.left) or _is_text(node.right):
            return  # "a" + b: the swap is a TypeError, not a porting mistake
        if (edit := self.token(node.left, node.right, *pair)) is not None:
            self.add(node, f"{_NAMES[pair[0]]}-{_NAMES[pair[1]]}", [edit])

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        pair = {ast.Add: ("+=", "-="), ast.Sub: ("-=", "+=")}.get(type(node.op))
        if pair is not None and not _is_text(node.value) and (edit := self.token(node.target, node.value, *pair)):
            self.add(node, f"i{_NAMES[pair[0][0]]}-i{_NAMES[pair[1][0]]}", [edit])

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        edits = [self.token(a, b, old, new) for a, b in zip(node.values, node.values[1:])]
        if all(edit is not None for edit in edits):
            self.add(node, f"{old}-{new}", [e for e in edits if e is not None])

    def visit_Constant(self, node: ast.Constant) -> None:
        if type(node.value) is int:
            start, end = self.span(node)
            for delta, name in ((1, "int+1"), (-1, "int-1")):
                value = node.value + delta
                self.add(node, name, [(start, end, str(value) if value >= 0 else f"({value})")])

    def visit_If(self, node: ast.If | ast.While | ast.IfExp) -> bool | None:
        test = self.text(node.test)
        if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING") or test.startswith("__name__"):
            return False
        start, end = self.span(node.test)
        negated = f"not ({test})"
        if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
            inner, simple = node.test.operand, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)
            negated = self.text(inner) if isinstance(inner, simple) else f"({self.text(inner)})"
        self.add(node.test, f"not-{type(node).__name__.lower()}", [(start, end, negated)])
        return None

    visit_While = visit_IfExp = visit_If

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is None or ast.unparse(node.value) == "None":
            return
        value = self.text(node.value)
        returns = self.returns[-1] if self.returns else None
        kind = ast.unparse(returns) if returns else ""
        base = kind.split("[")[0].split(".")[-1]
        if "None" in kind or "Optional" in kind or base not in (*_EMPTY, "bool"):
            replacement, name = "None", "return-none"
        elif base == "bool":
            replacement, name = f"not ({value})", "return-not"
        else:
            replacement, name = _EMPTY[base], "return-empty"
        if value != replacement:
            start, end = self.span(node.value)
            self.add(node, name, [(start, end, replacement)])


def mutants_of_source(source: str, file: str, keys: Collection[str] | None = None) -> list[AutoMutant]:
    """Every mutant of one module's ``source``; ``file`` is its path from the project root.

    ``keys``: only the mutants with these keys (each mutated text is parsed to drop the ones
    that are not Python, which is most of the cost: a check of a few keys skips the rest).
    """
    data = source.encode("utf-8")
    finder = _Finder(data)
    finder.visit(ast.parse(data))
    lines, seen, mutants = source.split("\n"), dict[tuple[str, str], int](), []
    scoped = file.split("/", 1)[-1]
    for scope, line, operator, edits in finder.found:
        seen[scope, operator] = number = seen.get((scope, operator), 0) + 1
        key = f"{scoped}:{scope}:{operator}:{number}"
        if keys is not None and key not in keys:
            continue
        new = data
        for start, end, text in sorted(edits, reverse=True):
            new = new[:start] + text.encode() + new[end:]
        mutated = new.decode("utf-8")
        try:
            ast.parse(mutated)
        except SyntaxError:
            continue
        mutants.append(AutoMutant(key, file, line, operator, lines[line - 1].strip(),
                                  mutated.split("\n")[line - 1].strip(), mutated))
    return mutants


def _selected(relative: str, modules: Sequence[str] | None, postgres: bool = True) -> bool:
    name = relative.split("/")[0] if "/" in relative else relative.removesuffix(".py")
    wanted = not modules or any(fnmatchcase(name, g) or fnmatchcase(relative, g) for g in modules)
    left_out = (*_EXCLUDED, *(() if postgres else _PG_ONLY))
    return wanted and not any(fnmatchcase(relative, glob) for glob in left_out)


def find_mutants(
    root: Path, modules: Sequence[str] | None = None, keys: Collection[str] | None = None,
    postgres: bool = True,
) -> list[AutoMutant]:
    """The runtime modules' mutants in file order; ``modules``: globs (``memory``, ``a/b.py``);
    ``keys``: only the mutants with these keys; ``postgres``: False leaves out the PostgreSQL
    store's, which no case runs without a server."""
    mutants: list[AutoMutant] = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        if _selected(relative := path.relative_to(root / PACKAGE).as_posix(), modules, postgres):
            text = path.read_text(encoding="utf-8")
            unreached = _UNREACHED.get(relative, ())
            mutants.extend(m for m in mutants_of_source(text, f"{PACKAGE}/{relative}", keys)
                           if not _within(m.key.split(":")[1], unreached))
    return mutants


def _within(scope: str, scopes: Sequence[str]) -> bool:
    """Whether a mutant's enclosing ``scope`` (``Class.method.inner``) is one of ``scopes`` or inside one."""
    return any(scope == s or scope.startswith(f"{s}.") for s in scopes)


def load_equivalents(path: Path) -> dict[str, str]:
    """``key -> reason``; ValueError for a key without a reason or listed twice."""
    found: dict[str, str] = {}
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, reason = line.strip().replace("\t", " ").partition(" ")
        if not reason.strip() or key in found:
            problem = "a key without a reason" if key not in found else f"{key} listed twice"
            raise ValueError(f"{path}:{number}: {problem}")
        found[key] = reason.strip()
    return found


def sample(mutants: Sequence[AutoMutant], size: int | None, seed: int) -> list[AutoMutant]:
    """``size`` mutants drawn by ``seed`` (all when None), back in file order."""
    if size is None or size >= len(mutants):
        return list(mutants)
    chosen = {m.key for m in random.Random(seed).sample(sorted(mutants, key=lambda m: m.key), size)}
    return [mutant for mutant in mutants if mutant.key in chosen]


def _judge(
    root: Path, mutant: AutoMutant, cases: Sequence[Case], timeout: float, limit: float
) -> tuple[AutoResult, Case | None]:
    """The verdict, and the case that killed the mutant."""
    edit = Edit(mutant.file, (root / mutant.file).read_text(encoding="utf-8"), mutant.source)
    try:
        with _patched_adapter(root, (edit,), timeout) as adapter:
            began = time.monotonic()
            for case in cases:
                if time.monotonic() - began > limit:
                    return AutoResult(mutant, "timeout", f"still running after {limit:g} s"), None
                if _fails(adapter, case):
                    return AutoResult(mutant, "killed", f"caught by {case.id}"), case
    except Broken as exc:
        return AutoResult(mutant, "broken", str(exc)), None
    return AutoResult(mutant, "survived", "every case passes"), None


def run_auto(root: Path, mutants: Sequence[AutoMutant], cases: Sequence[Case], *,
             timeout: float = DEFAULT_TIMEOUT, limit: float | None = None,
             workers: int | None = None,
             on_result: Callable[[AutoResult], None] | None = None) -> list[AutoResult]:
    """Judge each mutant on its own copy of ``root`` (BaselineError if cases fail unmutated).

    ``limit``: seconds for one mutant's cases (default: 3 × the baseline run, at least 30).
    Cases that killed a mutant run first for the next: that changes which case is named only.
    """
    with template(root) as compiled:  # compiled once; each mutant's copy links to it
        began = time.monotonic()
        _check_baseline(compiled, cases, timeout)
        limit = limit if limit is not None else max(30.0, 3 * (time.monotonic() - began))
        ordered, lock = list(cases), threading.Lock()
        def judge(mutant: AutoMutant) -> AutoResult:
            with lock:
                todo = list(ordered)
            result, killer = _judge(compiled, mutant, todo, timeout, limit)
            if killer is not None:
                with lock:
                    ordered.remove(killer)
                    ordered.insert(0, killer)
            return result

        results = []
        with ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1)) as pool:
            for result in pool.map(judge, mutants):
                results.append(result)
                if on_result is not None:
                    on_result(result)
    return results
