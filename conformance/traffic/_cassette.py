"""Cassettes: the exchanges one run of an application recorded, in the fixtures format.

A cassette is a folder of fixture folders (``fixtures/README.md``), one per request, named
``<number>-<method>-<path>`` (``0001-post-v1-chat-completions``) so that their order is the
order the requests arrived in (SPEC R-REC-3); ``python -m conformance serve`` replays it.

What is written never holds a secret (SPEC R-REC-2, R-REC-15): the request keeps only the
headers a fixture keeps, the response loses the secret, account and framing headers and those
whose names say secret, and the request's secrets (the values of its secret headers and of its
query parameters named like a key), in every escaped form an upstream may echo them in, with
whatever ``--redact`` patterns match, are replaced by ``<redacted>`` in the path, the bodies
and the header values. Each exchange is written into a
hidden temporary folder that is renamed into place, and ``exchange.json`` appears last, so a
recording stopped at any moment leaves only complete exchanges behind (SPEC R-REC-6).
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import itertools
import json
import os
import re
import shutil
import tempfile
import threading
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from ._matching import conceal_query, provider_of, says_secret
from ._record import (
    ACCOUNT_HEADERS,
    BODY_FILE,
    DROPPED_HEADERS,
    EXCHANGE_FILE,
    REDACTED,
    REQUEST_HEADERS,
    SECRET_HEADERS,
    Exchange,
    dump_exchange,
    find_exchanges,
    gaps_between,
    load_exchange,
)

__all__ = ["Cassette", "CassetteError", "compile_redactions", "load_cassette"]

# A secret this long is also found inside a longer base64 text; a shorter one's few characters
# there could be found by chance in any base64 body, such as an image (SPEC R-REC-15).
_EMBEDDED_MIN: Final = 16
# Renamed to exchange.json once its folder is in place.
_PART: Final = EXCHANGE_FILE + ".part"
_NUMBER: Final = re.compile(r"(\d+)-")


def _dropped(name: str) -> bool:
    """Whether a response header is left out of the recording: a secret, account or framing
    header, or one whose name says secret (SPEC R-REC-2, R-REC-15)."""
    return name in DROPPED_HEADERS or says_secret(name)


class CassetteError(Exception):
    """The cassette folder cannot be used; the message is one line naming it."""


def load_cassette(folder: Path) -> list[Exchange]:
    """The exchanges of a cassette in recorded order; none when the folder holds none yet."""
    if not any(folder.glob(f"*/{EXCHANGE_FILE}")):
        return []
    return find_exchanges([folder])


def compile_redactions(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """The ``--redact`` patterns, checked; ValueError (one line) for a bad or empty-matching one."""
    compiled = []
    for pattern in patterns:
        try:
            regex = re.compile(pattern)
            re.compile(pattern.encode("utf-8"))
        except re.error as exc:
            message = f"--redact {pattern!r} is not a regular expression: {exc}"
            raise ValueError(message) from None
        if regex.fullmatch(""):
            raise ValueError(f"--redact {pattern!r} matches the empty text: it marks everything")
        compiled.append(regex)
    return compiled


def _decoded_basic(token: str) -> list[str]:
    """``user:pass`` and ``pass`` of a Basic credential, none when it is not one."""
    try:
        text = base64.b64decode(token, validate=True).decode("utf-8")
    except ValueError:
        return []
    return [text, text.partition(":")[2]] if ":" in text else []


def _secrets(path: str, headers: Iterable[tuple[str, str]]) -> list[str]:
    """The secrets a request carries (SPEC R-REC-15): the values of its secret and account
    headers and of every header whose name says secret, with the credential of ``Bearer <token>``
    or ``Basic <token>`` (and the ``user:pass`` and password inside the latter) and the value of
    each cookie on their own, and the values of its query parameters whose names say secret."""
    found: list[str] = []
    for name, value in headers:
        if name.lower() not in SECRET_HEADERS | ACCOUNT_HEADERS and not says_secret(name):
            continue
        credential = value.strip().partition(" ")[2].strip()
        found += [value.strip(), credential, *_decoded_basic(credential)]
        found.extend(part.partition("=")[2].strip() for part in value.split(";"))
    query = urllib.parse.urlsplit(path).query
    found.extend(v for n, v in urllib.parse.parse_qsl(query, keep_blank_values=True) if says_secret(n))
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def _forms(secret: str) -> set[str]:
    """A secret as it may be written back (SPEC R-REC-15): as it is, percent-encoded as
    ``quote`` and ``quote_plus`` make it (``/`` kept or encoded, hex digits in either case), in
    standard and URL-safe base64 (padded or not; from ``_EMBEDDED_MIN`` bytes on also the
    characters that encode only the secret inside a longer base64 text, whatever precedes it),
    and each of these JSON-escaped (non-ASCII as
    ``\\u`` escapes or not, ``/`` as ``\\/`` or not)."""
    forms = {secret}
    for quoted in (
        urllib.parse.quote(secret, safe=""), urllib.parse.quote(secret),
        urllib.parse.quote_plus(secret, safe=""), urllib.parse.quote_plus(secret, safe="/"),
    ):
        forms |= {quoted, re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quoted)}
    raw = secret.encode("utf-8")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(raw).decode("ascii")
        forms |= {encoded, encoded.rstrip("=")}
        if len(raw) >= _EMBEDDED_MIN:  # inside a longer text (``user:pass``), at any of 3 offsets
            for shift in range(3):
                shifted = encode(b"\0" * shift + raw).decode("ascii")
                forms.add(shifted[(8 * shift + 5) // 6 : 8 * (shift + len(raw)) // 6])
    for form in list(forms):
        for ascii_only in (True, False):
            escaped = json.dumps(form, ensure_ascii=ascii_only)[1:-1]
            forms |= {escaped, escaped.replace("/", "\\/")}
    return forms


class _Redactor:
    """Replaces the secrets and the ``--redact`` patterns in text, bytes and JSON values."""

    def __init__(self, secrets: Sequence[str], patterns: Sequence[re.Pattern[str]]) -> None:
        forms = sorted({form for secret in secrets for form in _forms(secret)}, key=len, reverse=True)
        alternatives = [re.escape(form) for form in forms] + [p.pattern for p in patterns]
        joined = "|".join(f"(?:{alternative})" for alternative in alternatives)
        self.text = re.compile(joined) if alternatives else None
        self.bytes = re.compile(joined.encode("utf-8")) if alternatives else None
        self.secrets = [form.encode("utf-8") for form in forms]

    def __call__(self, text: str) -> str:
        return self.text.sub(REDACTED.decode(), text) if self.text else text

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self(k): self.json(v) for k, v in value.items()}
        return value

    def pieces(self, pieces: Sequence[bytes]) -> tuple[bytes, list[int], list[int]]:
        """The body with its matches replaced, its read sizes with every boundary kept where it
        was relative to the text around it (one inside a match moves to its end), and for each
        of them the index of the last read it holds."""
        body = b"".join(pieces)
        matches = list(self.bytes.finditer(body)) if self.bytes is not None else []

        def moved(boundary: int) -> int:
            shift = 0
            for match in matches:
                if match.end() <= boundary:
                    shift += len(REDACTED) - (match.end() - match.start())
                elif match.start() < boundary:
                    return match.start() + shift + len(REDACTED)
                else:
                    break
            return boundary + shift

        ends = [moved(end) for end in itertools.accumulate(len(piece) for piece in pieces)]
        starts = [0, *ends]
        kept = [i for i, end in enumerate(ends) if end > starts[i]]
        sizes = [ends[i] - starts[i] for i in kept]
        # A read left empty joins the one before it, which is complete only when it has arrived.
        last = [next_kept - 1 for next_kept in [*kept[1:], len(ends)]]
        replaced = self.bytes.sub(lambda _: REDACTED, body) if self.bytes is not None else body
        return replaced, sizes, last


def _request_body(body: bytes) -> Any:
    """The request body as fixtures keep it: its JSON value, null when empty, else its text."""
    if not body:
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except ValueError:
        return body.decode("utf-8", errors="replace")


class Cassette:
    """Writes exchanges into a cassette folder as a recording proxy forwards them.

    Args:
        folder: the cassette folder; created by ``open()`` when missing. Exchanges already in
            it are kept, and new ones are numbered after them.
        redact: patterns whose matches are replaced, besides the request's secret headers.
    """

    def __init__(self, folder: Path, redact: Sequence[re.Pattern[str]] = ()) -> None:
        self.folder = folder
        self.created = False
        self.redact = tuple(redact)
        self.written: list[str] = []
        self._lock = threading.Lock()
        self._closed = False
        self._next = 1

    def open(self) -> Cassette:
        """Create the folder if needed and make sure files can be written in it."""
        try:
            self.created = not self.folder.exists()
            self.folder.mkdir(parents=True, exist_ok=True)
            numbers = [_NUMBER.match(p.name) for p in self.folder.iterdir() if p.is_dir()]
            self._next = 1 + max((int(m.group(1)) for m in numbers if m), default=0)
            tempfile.TemporaryFile(dir=self.folder).close()
        except OSError as exc:
            raise CassetteError(f"cannot write in {self.folder}: {exc.strerror or exc}") from None
        return self

    def reserve(self) -> int:
        """The number of the next exchange, taken when its request arrives."""
        with self._lock:
            number, self._next = self._next, self._next + 1
            return number

    def close(self) -> None:
        """Write nothing more, and remove the temporary folders of exchanges still in flight
        (and the folder itself when ``open()`` made it and nothing was written)."""
        with self._lock:
            self._closed = True
        for leftover in self.folder.glob(".*.tmp"):
            shutil.rmtree(leftover, ignore_errors=True)
        if self.created and not self.written:
            with contextlib.suppress(OSError):
                self.folder.rmdir()

    def redactor(self, path: str, headers: Sequence[tuple[str, str]]) -> _Redactor:
        """What hides the secrets of one request (SPEC R-REC-15) and the ``--redact`` matches."""
        return _Redactor(_secrets(path, headers), self.redact)

    def conceal(self, text: str, path: str, headers: Sequence[tuple[str, str]]) -> str:
        """``text`` (a request's path, or a line about it) as it may be printed: without the
        request's secrets, in any of their forms, nor the ``--redact`` matches (SPEC R-REC-15)."""
        return self.redactor(path, headers)(conceal_query(text))

    def write(
        self,
        number: int,
        upstream: str,
        request: tuple[str, str, Sequence[tuple[str, str]], bytes],
        status: int,
        headers: Sequence[tuple[str, str]],
        pieces: Sequence[bytes],
        arrivals: Sequence[float] = (),
    ) -> str:
        """Write one exchange and return its name; OSError when the recording was stopped.

        ``upstream`` is the URL named in its provenance; ``request`` is the method, path,
        headers and body the client sent; ``arrivals`` the time each piece arrived, in seconds
        on any clock, from which the gaps between reads are written (SPEC R-REC-13).
        """
        method, path, request_headers, request_body = request
        redactor = self.redactor(path, request_headers)
        body, chunks, ending = redactor.pieces(pieces)
        times = [arrivals[i] for i in ending] if arrivals else []
        gaps = gaps_between(times)
        kept = {n.lower(): v for n, v in request_headers if n.lower() in REQUEST_HEADERS}
        recorded_body = redactor.json(_request_body(request_body))
        route = redactor(conceal_query(path))
        slug = re.sub(r"[^a-z0-9]+", "-", route.partition("?")[0].lower()).strip("-")[:60]
        name = f"{number:04d}-{method.lower()}-{slug}"
        today = datetime.date.today().isoformat()
        exchange = {
            "provider": provider_of(path, request_headers),
            "description": f"{method} {route} as the application sent it.",
            "quirks": [],
            "provenance": f"Recorded from {upstream} on {today} by python -m conformance proxy.",
            "request": {"method": method, "path": route, "headers": kept, "body": recorded_body},
            "response": {
                "status": status,
                "headers": [[n, redactor(v)] for n, v in headers if not _dropped(n)],
                "body_file": BODY_FILE,
                "sha256": hashlib.sha256(body).hexdigest(),
                "chunks": chunks,
                **({"gaps": gaps} if gaps else {}),
            },
            "stream": isinstance(recorded_body, dict) and recorded_body.get("stream") is True,
            "expect": {},
        }
        text = dump_exchange(exchange)
        if any(s in body or s in text.encode("utf-8") for s in redactor.secrets):
            raise OSError("a secret would have been written; the exchange was not kept")
        return self._commit(name, body, text)

    def _commit(self, name: str, body: bytes, text: str) -> str:
        with self._lock:
            if self._closed:
                raise OSError("the recording was stopped")
            temp = self.folder / f".{name}.tmp"  # the reserved number makes it unique
            temp.mkdir()
        try:
            (temp / BODY_FILE).write_bytes(body)
            (temp / _PART).write_text(text, encoding="utf-8")
            with self._lock:
                if self._closed:
                    raise OSError("the recording was stopped")
                final = self.folder / name
                os.replace(temp, final)
                os.replace(final / _PART, final / EXCHANGE_FILE)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
        exchange = load_exchange(final)
        self.written.append(exchange.name)
        return exchange.name
