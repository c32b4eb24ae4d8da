"""Allow rules: commands that run without asking, by their words, per directory (SPEC R-APPR-6 … R-APPR-9, R-APPR-13).

A rule is a list of words kept for one directory; it covers a command run there whose words
are exactly the rule's, or, for a rule ending in the wildcard ``*``, whose first words are the
ones before it. Exact is the default because a word added after a rule's words can change
what the program does: ``git diff --output=/elsewhere`` writes a file, ``find . -delete``
deletes; only a user who typed or chose the ``*`` has allowed whatever follows. Matching
words, not text, is the point: ``git status *`` must cover ``git status -s`` and never
``git statusx``. And a command the shell could make do more than start one program with the
words as written (``git status && rm -rf x``, ``ls > out``, ``echo $(id)``, ``ls *.py``) has no
words at all, so no rule ever covers it: splitting is deliberately a small, strict subset of the
POSIX shell's quoting, which refuses whatever it does not understand rather than guess.

The rules live in ``allow.json`` of the home folder (R-APPR-9), written whole through a
temporary file and a rename, so that a reader never sees half a file; a file that is not ours,
or not whole, is never written over: its rules are not used and the user is told.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Final

from .._harness9_error import Harness9Error, os_reason
from ..schema.strict_json import JSONError, loads
from ..text import TableSaid

__all__ = [
    "ALLOW_FILE",
    "RULE_NOT_KEPT",
    "WILDCARD",
    "AllowFileError",
    "AllowRule",
    "AllowRules",
    "Rule",
    "command_words",
    "covering_rule",
    "rule_offers",
    "rule_text",
    "rule_words",
    "rules_directory",
]

ALLOW_FILE: Final = "allow.json"  # R-APPR-9: in R-MGR-1's home folder
FORMAT: Final = "harness9-allow"
VERSION: Final = 2  # R-APPR-13: version 1 held prefix rules, read as exact ones
_PREFIX_VERSION: Final = 1
RULE_NOT_KEPT: Final = "the rule {rule} was not kept: {message}"  # R-APPR-9
MAX_OFFER_WORDS: Final = 3  # R-APPR-8: the offers are all the words, then the first 3, 2, 1 and *
WILDCARD: Final = "*"  # R-APPR-7: a rule's last word *: any further words, none included

Rule = tuple[str, ...]
"""The words of a rule (R-APPR-7)."""

# R-APPR-6: outside quotes, unescaped, each makes the command one the shell could do more with.
_OPERATORS: Final = frozenset(";&|<>()")
_EXPANSIONS: Final = frozenset("$`")  # also inside double quotes
_DOUBLE_ESCAPES: Final = frozenset('$`"\\')
_BLANKS: Final = frozenset(" \t")
_PATTERN: Final = frozenset("*?[{")  # R-APPR-6: globs and bash's brace expansion, in any word
_TILDE_AFTER: Final = frozenset("=:")  # R-APPR-6: bash expands ~ at a word's start and after these
_RESERVED: Final = frozenset(
    {"!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function"}
    | {"if", "in", "select", "then", "time", "until", "while"}
)
_SAFE_WORD: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./-_")


class AllowFileError(Harness9Error):
    """The allow file cannot be used (R-APPR-9); it is left exactly as it was."""

    code: ClassVar[str] = "allow_file_unusable"


class AllowRule:
    """An approval callback's answer: run this command and allow the rule ``words`` here from
    now on (R-APPR-7). The registry checks that the rule covers the command."""

    __slots__ = ("words",)

    def __init__(self, words: Sequence[str]) -> None:
        self.words: Rule = tuple(words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AllowRule) and other.words == self.words

    def __hash__(self) -> int:
        return hash(self.words)

    def __repr__(self) -> str:
        return f"AllowRule({list(self.words)!r})"


def _split(command: str) -> list[tuple[str, bool]] | None:
    """R-APPR-6's words of ``command``, each with whether the shell would expand it (an
    unquoted ``*``, ``?``, ``[`` or ``{`` anywhere in it, or ``~`` at its start or after an
    unquoted ``=`` or ``:``); None when the command is no single program's start at all."""
    if "\n" in command or "\r" in command:
        return None
    words: list[tuple[str, bool]] = []
    word: list[str] = []
    started = expands = False
    previous = ""  # the last character taken outside quotes, for ~ after = or :
    i, n = 0, len(command)
    while i < n:
        char = command[i]
        if char in _BLANKS:
            if started:
                words.append(("".join(word), expands))
                word, started, expands, previous = [], False, False, ""
            i += 1
            continue
        if char in _OPERATORS or char in _EXPANSIONS or (char == "#" and not started):
            return None
        if char == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            word.append(command[i + 1 : end])
            i, previous = end + 1, ""
        elif char == '"':
            i += 1
            while True:
                if i >= n:
                    return None
                inner = command[i]
                if inner == '"':
                    break
                if inner in _EXPANSIONS:
                    return None
                if inner == "\\" and i + 1 < n:
                    follow = command[i + 1]
                    word.append(follow if follow in _DOUBLE_ESCAPES else inner + follow)
                    i += 2
                    continue
                word.append(inner)
                i += 1
            i, previous = i + 1, ""
        elif char == "\\":
            if i + 1 >= n:
                return None
            word.append(command[i + 1])
            i, previous = i + 2, ""
        else:
            if char in _PATTERN or (char == "~" and (not started or previous in _TILDE_AFTER)):
                expands = True
            word.append(char)
            i, previous = i + 1, char
        started = True
    if started:
        words.append(("".join(word), expands))
    if not words or "=" in words[0][0] or words[0][0] in _RESERVED:
        return None
    return words


def command_words(command: str) -> Rule | None:
    """The words of ``command`` by R-APPR-6's splitting, or None when no rule may cover it.

    None whenever the shell could do more than start one program with the words as written:
    control operators, redirections, expansions (a pattern or ``~`` included: a file named
    ``--output=x`` would become a word), a comment, an open quote, an assignment or a reserved
    word first.
    """
    words = _split(command)
    if words is None or any(expands for _, expands in words):
        return None
    return tuple(word for word, _ in words)


def rule_words(text: str) -> Rule | None:
    """The rule ``text`` names, as ``rule_text`` writes it and ``allow --remove`` takes it
    (R-APPR-10): a command's words, the last of them possibly the unquoted wildcard ``*``."""
    words = _split(text)
    if words is None or any(expands for _, expands in words[:-1]):
        return None
    last, expands = words[-1]
    if expands and last != WILDCARD:
        return None
    rule = tuple(word for word, _ in words)
    if (last == WILDCARD) != expands or (len(rule) < 2 and expands):
        return None  # a quoted '*' last is no word of an exact rule; * alone is no rule
    return rule


def covers(rule: Sequence[str], words: Rule) -> bool:
    """Whether ``rule`` covers a command of ``words`` (R-APPR-7): the same words, or, for a rule
    ending in ``*``, at least one word before it and those words first."""
    if rule and rule[-1] == WILDCARD:
        prefix = tuple(rule[:-1])
        return 0 < len(prefix) <= len(words) and words[: len(prefix)] == prefix
    return len(rule) > 0 and tuple(rule) == words


def covering_rule(rules: Sequence[Sequence[str]], words: Rule | None) -> Rule | None:
    """The first of ``rules`` that covers a command of ``words`` (R-APPR-7), else None."""
    if words is None:
        return None
    for rule in rules:
        if covers(rule, words):
            return tuple(rule)
    return None


def rule_offers(words: Rule | None) -> list[Rule]:
    """The rules the UI offers for a command of ``words`` (R-APPR-8): exactly this command
    (unless its last word is ``*``, which a rule reads as the wildcard), then its first 3, 2 and
    1 words followed by ``*``, narrowest first; none for a command without words."""
    if words is None:
        return []
    exact = [] if words[-1] == WILDCARD else [words]
    return exact + [(*words[:k], WILDCARD) for k in range(min(MAX_OFFER_WORDS, len(words)), 0, -1)]


def rule_text(words: Sequence[str]) -> str:
    """A rule as shown and as ``allow --remove`` takes it (R-APPR-7): words joined by one
    space, each quoted as a POSIX shell reads it back unless it needs no quotes; a final
    wildcard is the bare ``*``."""
    wildcard = len(words) > 1 and words[-1] == WILDCARD
    shown = [_quoted(word) for word in (words[:-1] if wildcard else words)]
    return " ".join([*shown, WILDCARD] if wildcard else shown)


def _quoted(word: str) -> str:
    if word and all(c in _SAFE_WORD for c in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def rules_directory(workdir: str | os.PathLike[str]) -> str:
    """The directory rules are kept for: ``workdir`` with symbolic links resolved (R-APPR-7)."""
    return os.path.realpath(os.fspath(workdir))


def _unusable(path: Path, reason: str) -> AllowFileError:
    return AllowFileError(TableSaid("err_allow_unusable", path=path, reason=reason))  # R-LANG-3


def _parse(path: Path, text: str) -> dict[str, list[Rule]]:
    """The directories' rules of a file's text (R-APPR-9's form), else AllowFileError."""
    try:
        data = loads(text, unique_keys=True)
    except JSONError as exc:
        raise _unusable(path, f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _unusable(path, f'no "format": "{FORMAT}"')
    version = data.get("version")
    if version not in (_PREFIX_VERSION, VERSION) or isinstance(version, bool):
        raise _unusable(path, f"version {version!r}, not {VERSION}")
    directories = data.get("directories")
    if set(data) != {"format", "version", "directories"} or not isinstance(directories, dict):
        raise _unusable(path, 'expected the members "format", "version" and "directories"')
    rules: dict[str, list[Rule]] = {}
    for directory, items in directories.items():
        if not isinstance(items, list) or not all(
            isinstance(rule, list) and rule and all(isinstance(word, str) for word in rule) for rule in items
        ):
            raise _unusable(path, f"the rules of {directory} are not lists of words")
        # R-APPR-13: a version-1 rule covered every command starting with its words; it is
        # read as the exact rule of its words, never wider (one ending in * cannot be, and goes)
        rules[directory] = [tuple(rule) for rule in items if version == VERSION or rule[-1] != WILDCARD]
    return rules


class AllowRules:
    """The allow file ``path`` (R-APPR-9): read fresh each time, written whole or not at all."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"AllowRules({str(self.path)!r})"

    def load(self) -> dict[str, list[Rule]]:
        """Every directory's rules; ``{}`` when the file does not exist (nothing is created).

        Raises:
            AllowFileError: the file cannot be read or is not an allow file of this form.
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise _unusable(self.path, exc.strerror or "cannot be read") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _unusable(self.path, "not UTF-8") from None
        return _parse(self.path, text)

    def rules_for(self, directory: str) -> list[Rule]:
        """The rules of ``directory`` (as ``rules_directory`` gives it), in the file's order."""
        return self.load().get(directory, [])

    def add(self, directory: str, rule: Sequence[str]) -> None:
        """Keep ``rule`` for ``directory``; nothing is written when it is kept already.

        Raises:
            AllowFileError: the file is unusable (it is not written), or cannot be written.
        """
        rules = self.load()
        kept = rules.setdefault(directory, [])
        if tuple(rule) not in kept:
            kept.append(tuple(rule))
            self._write(rules)

    def remove(self, directory: str, rule: Sequence[str]) -> bool:
        """Forget ``rule`` for ``directory``; False, with nothing written, when it was not kept.

        Raises:
            AllowFileError: the file is unusable (it is not written), or cannot be written.
        """
        rules = self.load()
        kept = rules.get(directory, [])
        if tuple(rule) not in kept:
            return False
        kept.remove(tuple(rule))
        self._write(rules)
        return True

    def _write(self, rules: Mapping[str, Sequence[Rule]]) -> None:
        """The whole file anew: a temporary file of mode 0600 beside it, renamed over it."""
        document = {
            "format": FORMAT,
            "version": VERSION,
            "directories": {
                directory: [list(rule) for rule in sorted(set(rules[directory]))]
                for directory in sorted(rules)
                if rules[directory]
            },
        }
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        target = Path(os.path.realpath(self.path))  # a linked file stays linked: its target is replaced
        try:
            if not target.parent.is_dir():
                target.parent.mkdir(mode=0o700, parents=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(text)
                    stream.flush()
                    os.fsync(stream.fileno())
                os.replace(temporary, target)
            except BaseException:
                os.unlink(temporary)
                raise
        except (OSError, ValueError) as exc:  # ValueError: a word no UTF-8 can hold (a lone surrogate)
            reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
            raise AllowFileError(f"{self.path}: cannot be written ({reason})") from None
