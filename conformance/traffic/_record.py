"""Recorded provider exchanges: the fixture format, and ``python -m conformance record``.

A fixture is a folder ``fixtures/providers/<provider>/<name>/`` holding ``exchange.json`` (the
request without secrets, the status, the headers, the body's sha256 and arrival chunks, and
what SPEC.md says an implementation makes of the response) and ``response.body`` (the exact
response bytes; an SSE stream byte for byte). ``fixtures/README.md`` describes each member.

``record`` sends one real request and writes such a folder, with the gaps between its reads. The API key is sent and never
written: the request keeps only the headers in ``REQUEST_HEADERS``, the response loses the
headers in ``DROPPED_HEADERS``, any occurrence of the key in what is written is
replaced by ``REDACTED``, and the written files are read back and checked (SPEC R-PRV-3).
"""

from __future__ import annotations

import datetime
import hashlib
import http.client
import itertools
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from harness9_ref.provider import DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_OPENAI_BASE_URL, HttpRequest, anthropic, openai
from harness9_ref.schema import Message, ToolDefinition, strict_json

__all__ = [
    "Exchange", "FixtureError", "RecordError", "dump_exchange", "find_exchanges", "gaps_between",
    "load_exchange", "record",
]

EXCHANGE_FILE: Final = "exchange.json"
BODY_FILE: Final = "response.body"
PROVIDERS: Final = ("openai", "anthropic")
DEFAULT_BASE_URLS: Final = MappingProxyType(
    {"openai": DEFAULT_OPENAI_BASE_URL, "anthropic": DEFAULT_ANTHROPIC_BASE_URL}
)  # SPEC R-PRV-3
# The request is the provider's own (R-PRV-4, R-PRV-5, R-PRV-8, R-PRV-9): what is recorded is
# exactly what the reference sends.
BUILDERS: Final[Mapping[str, Callable[..., HttpRequest]]] = MappingProxyType(
    {"openai": openai.build_request, "anthropic": anthropic.build_request}
)
KEY_VARIABLES: Final = MappingProxyType(
    {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
)
# The only request headers a fixture keeps; authorization and x-api-key never.
REQUEST_HEADERS: Final = frozenset({"content-type", "accept", "anthropic-version"})
SECRET_HEADERS: Final = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "cookie", "set-cookie"}
)
ACCOUNT_HEADERS: Final = frozenset(
    {"openai-organization", "openai-project", "anthropic-organization-id"}
)
# Framing headers describe one connection; the replay server sets its own.
FRAMING_HEADERS: Final = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade"}
)
DROPPED_HEADERS: Final = SECRET_HEADERS | ACCOUNT_HEADERS | FRAMING_HEADERS
REDACTED: Final = b"<redacted>"
READ_SIZE: Final = 65536


class FixtureError(ValueError):
    """A fixture is unreadable or inconsistent; the message starts with the file it concerns."""


class RecordError(Exception):
    """A recording could not be made; nothing secret is in the message."""


@dataclass(frozen=True)
class Exchange:
    """One recorded request and response, as loaded from an ``exchange.json``.

    ``name`` is ``"<provider>/<folder name>"``; ``headers`` keeps the recorded order and
    lower-case names; ``chunks`` holds the byte lengths of the recorded reads (empty when none
    were recorded) and ``gaps`` the seconds between each read and the next (empty when not
    recorded, SPEC R-REC-13); ``expect`` is what SPEC.md says an implementation makes of the
    response.
    """

    name: str
    directory: Path
    provider: str
    description: str
    quirks: tuple[str, ...]
    provenance: str
    method: str
    path: str
    request_headers: Mapping[str, str]
    request_body: Any
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    chunks: tuple[int, ...]
    stream: bool
    expect: Mapping[str, Any]
    gaps: tuple[float, ...] = ()


def _need(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in data:
        raise FixtureError(f"{where}: missing {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        wanted, got = kind.__name__, type(value).__name__
        raise FixtureError(f"{where}: {key!r} should be {wanted}, got {got}")
    return value


def _request(data: Mapping[str, Any], where: str) -> tuple[str, str, dict[str, str], Any]:
    path = _need(data, "path", str, where)
    if not path.startswith("/"):
        raise FixtureError(f"{where}: request path {path!r} does not start with '/'")
    headers = _need(data, "headers", dict, where)
    for name, value in headers.items():
        if name not in REQUEST_HEADERS or not isinstance(value, str):
            raise FixtureError(
                f"{where}: request header {name!r} is not one a fixture keeps "
                f"({', '.join(sorted(REQUEST_HEADERS))}, with string values)"
            )
    if "body" not in data:
        raise FixtureError(f"{where}: the request has no 'body'")
    return _need(data, "method", str, where), path, headers, data["body"]


def _response_headers(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, list):
        raise FixtureError(f"{where}: response headers should be a list of [name, value] pairs")
    pairs = []
    for pair in raw:
        if not (isinstance(pair, list) and [type(s) for s in pair] == [str, str]):
            raise FixtureError(f"{where}: response header {pair!r} is not a [name, value] pair")
        if pair[0] != pair[0].lower() or pair[0] in SECRET_HEADERS | ACCOUNT_HEADERS:
            raise FixtureError(f"{where}: response header {pair[0]!r} is upper-case or secret")
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _body(response: Mapping[str, Any], folder: Path, where: str) -> tuple[bytes, tuple[int, ...]]:
    name = _need(response, "body_file", str, where)
    if Path(name).name != name:
        raise FixtureError(f"{where}: body_file {name!r} should name a file beside {EXCHANGE_FILE}")
    try:
        body = (folder / name).read_bytes()
    except OSError as exc:
        raise FixtureError(f"{where}: cannot read the body file: {exc}") from None
    digest, recorded = hashlib.sha256(body).hexdigest(), _need(response, "sha256", str, where)
    if digest != recorded.lower():
        raise FixtureError(f"{where}: sha256 of {name} is {digest}, but {recorded} was recorded")
    chunks = response.get("chunks", [])
    if not isinstance(chunks, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in chunks
    ):
        raise FixtureError(f"{where}: chunks should be a list of positive byte counts")
    if chunks and sum(chunks) != len(body):
        total = sum(chunks)
        raise FixtureError(f"{where}: chunks add up to {total} bytes, but {name} has {len(body)}")
    return body, tuple(chunks)


def _gaps(response: Mapping[str, Any], chunks: Sequence[int], where: str) -> tuple[float, ...]:
    """The recorded gaps between reads (SPEC R-REC-13): absent in older fixtures."""
    gaps = response.get("gaps", [])
    if not isinstance(gaps, list) or not all(
        isinstance(g, (int, float)) and not isinstance(g, bool) and 0 <= g < float("inf") for g in gaps
    ):
        raise FixtureError(f"{where}: gaps should be a list of non-negative numbers of seconds")
    if gaps and len(gaps) != len(chunks) - 1:
        raise FixtureError(f"{where}: {len(gaps)} gaps for {len(chunks)} chunks; there is one fewer gap than chunks")
    return tuple(float(g) for g in gaps)


def load_exchange(path: Path | str) -> Exchange:
    """Load one fixture and check it against its own sha256 and recorded chunks.

    Args:
        path: the fixture folder or its ``exchange.json``.

    Raises:
        FixtureError: the file is missing or malformed, the body's sha256 differs, the chunks
            do not add up to the body's length, or a secret header was kept. The message
            names the file.
    """
    file = Path(path)
    if file.is_dir():
        file = file / EXCHANGE_FILE
    where = str(file)
    try:
        data = strict_json.loads(file.read_text(encoding="utf-8"), finite=False, unique_keys=True)
    except (OSError, ValueError) as exc:
        raise FixtureError(f"{where}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise FixtureError(f"{where}: not a JSON object")
    provider = _need(data, "provider", str, where)
    if provider not in PROVIDERS:
        raise FixtureError(f"{where}: provider should be openai or anthropic, got {provider!r}")
    quirks = _need(data, "quirks", list, where)
    if not all(isinstance(quirk, str) for quirk in quirks):
        raise FixtureError(f"{where}: quirks should be strings")
    method, request_path, request_headers, request_body = _request(
        _need(data, "request", dict, where), where
    )
    response = _need(data, "response", dict, where)
    status = _need(response, "status", int, where)
    if not 100 <= status <= 599:
        raise FixtureError(f"{where}: {status} is not an HTTP status")
    body, chunks = _body(response, file.parent, where)
    return Exchange(
        name=f"{provider}/{file.parent.name}",
        directory=file.parent,
        provider=provider,
        description=_need(data, "description", str, where),
        quirks=tuple(quirks),
        provenance=_need(data, "provenance", str, where),
        method=method,
        path=request_path,
        request_headers=MappingProxyType(request_headers),
        request_body=request_body,
        status=status,
        headers=_response_headers(response.get("headers"), where),
        body=body,
        chunks=chunks,
        stream=_need(data, "stream", bool, where),
        expect=MappingProxyType(_need(data, "expect", dict, where)),
        gaps=_gaps(response, chunks, where),
    )


def find_exchanges(paths: Iterable[Path | str]) -> list[Exchange]:
    """Load every fixture at or below the given folders (or ``exchange.json`` files), sorted.

    Raises:
        FixtureError: a fixture is broken, or a path holds no fixture at all.
    """
    found: list[Exchange] = []
    for raw in paths:
        path = Path(raw)
        files = [path] if path.is_file() else sorted(path.rglob(EXCHANGE_FILE))
        if not files:
            raise FixtureError(f"{path}: no {EXCHANGE_FILE} here or below")
        found.extend(load_exchange(file) for file in files)
    return found


def _dump(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, dict) and value:
        members = [f"{inner}{_dump(k, inner)}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + indent + "}"
    if isinstance(value, list) and value:
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        if numbers or (len(value) == 2 and all(isinstance(v, str) for v in value)):
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
        return "[\n" + ",\n".join(inner + _dump(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def dump_exchange(data: Mapping[str, Any]) -> str:
    """Write an exchange as indented JSON with a final newline.

    Header pairs and chunk lists stay on one line each, so a fixture reads top to bottom.
    """
    return _dump(dict(data), "") + "\n"


def gaps_between(arrivals: Sequence[float]) -> list[float]:
    """The seconds between each read's arrival and the next, to the millisecond (SPEC R-REC-13)."""
    return [round(max(0.0, b - a), 3) for a, b in itertools.pairwise(arrivals)]


def _send(
    request: urllib.request.Request, timeout: float
) -> tuple[int, list[tuple[str, str]], bytes, list[int], list[float]]:
    response: Any
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:  # an error status is worth recording too
        response = error
    except (urllib.error.URLError, OSError) as exc:
        raise RecordError(f"cannot reach {request.full_url}: {exc}") from None
    pieces: list[bytes] = []
    arrivals: list[float] = []
    try:
        with response:
            read = getattr(response, "read1", response.read)
            while piece := read(READ_SIZE):
                pieces.append(piece)
                arrivals.append(time.monotonic())
    except (OSError, http.client.HTTPException) as exc:
        raise RecordError(f"the answer from {request.full_url} broke off: {exc!r}") from None
    headers = [(name.lower(), value) for name, value in response.headers.items()]
    return int(response.status), headers, b"".join(pieces), [len(piece) for piece in pieces], gaps_between(arrivals)


def record(
    provider: str,
    model: str,
    message: str,
    out: Path | str,
    *,
    stream: bool = False,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    overwrite: bool = False,
) -> Exchange:
    """Send one real request and write it as a fixture folder with an empty ``expect``.

    Args:
        provider: ``"openai"`` or ``"anthropic"``.
        model: the model name, sent exactly as given.
        message: the text of the one user message.
        out: the fixture folder to write (created if needed).
        stream: ask for a streamed answer.
        base_url: the API's base URL (SPEC R-PRV-3 defaults).
        api_key: the key; defaults to ``OPENAI_API_KEY`` or ``ANTHROPIC_API_KEY``.
        timeout: seconds for connecting and for each read.
        overwrite: replace an existing fixture in ``out``.

    Raises:
        RecordError: no key, an empty message, an existing fixture, or no connection.
    """
    if provider not in PROVIDERS:
        raise RecordError(f"provider should be openai or anthropic, got {provider!r}")
    key = api_key if api_key is not None else os.environ.get(KEY_VARIABLES[provider], "")
    if not key:
        raise RecordError(f"no API key: set {KEY_VARIABLES[provider]}")
    if not message.strip():
        raise RecordError("the message is empty; the request would carry nothing to answer")
    folder = Path(out)
    if (folder / EXCHANGE_FILE).exists() and not overwrite:
        raise RecordError(f"{folder / EXCHANGE_FILE} exists; pass --force to replace it")
    tools: Sequence[ToolDefinition] = ()
    built = BUILDERS[provider](
        model, [Message("user", message)], tools, stream=stream, api_key=key,
        base_url=base_url or DEFAULT_BASE_URLS[provider],
    )
    url, body = built.url, built.body
    kept = {name.lower(): value for name, value in built.headers if name.lower() in REQUEST_HEADERS}
    request = urllib.request.Request(url, data=body, headers=dict(built.headers), method=built.method)
    status, headers, answer, chunks, gaps = _send(request, timeout)

    secret_bytes = key.encode("utf-8")
    redacted = secret_bytes in answer or any(key in value for _, value in headers)
    if secret_bytes in answer:  # the read sizes no longer fit; keep the body as one read
        answer = answer.replace(secret_bytes, REDACTED)
        chunks, gaps = [len(answer)], []
    shown = [[n, v.replace(key, REDACTED.decode())] for n, v in headers if n not in DROPPED_HEADERS]
    today = datetime.date.today().isoformat()
    provenance = f"Recorded from {url} on {today} by python -m conformance record."
    if redacted:
        provenance += " The API key echoed in the response was replaced by <redacted>."
    exchange: dict[str, Any] = {
        "provider": provider,
        "description": f"The {'streamed ' if stream else ''}answer of {model} to one user message.",
        "quirks": [],
        "provenance": provenance,
        "request": {"method": "POST", "path": urllib.parse.urlsplit(url).path, "headers": kept},
        "response": {
            "status": status,
            "headers": shown,
            "body_file": BODY_FILE,
            "sha256": hashlib.sha256(answer).hexdigest(),
            "chunks": chunks,
            **({"gaps": gaps} if gaps else {}),
        },
        "stream": stream,
        "expect": {},
    }
    exchange["request"]["body"] = json.loads(body)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / BODY_FILE).write_bytes(answer)
    (folder / EXCHANGE_FILE).write_text(dump_exchange(exchange), encoding="utf-8")
    files = (folder / BODY_FILE, folder / EXCHANGE_FILE)
    if any(secret_bytes in file.read_bytes() for file in files):  # e.g. a key in the URL
        for file in files:
            file.unlink()
        raise RecordError("the API key would have been written; nothing was kept")
    return load_exchange(folder)
