"""``python -m conformance serve | record | proxy``: recorded provider traffic on 127.0.0.1.

``serve`` replays fixtures or a cassette (SPEC R-REC-3 … R-REC-5), ``record`` sends one real
request and writes it as a fixture, ``proxy`` forwards an application's requests upstream and
writes every exchange into a cassette (SPEC R-REC-1, R-REC-2, R-REC-6). Both servers give the
faults ``--fault`` asks for (R-REC-8) and stop on SIGTERM as on Ctrl+C (R-REC-14). Failures the
user can fix are one line on stderr and exit code 2 (``conformance._cli_args.Abort``).
"""

from __future__ import annotations

import argparse
import signal
import time
from pathlib import Path
from typing import Any

from .._cli_args import Abort, port, seconds
from ._cassette import Cassette, CassetteError, compile_redactions
from ._faults import FaultError
from ._proxy import Forwarder, Upstream
from ._record import PROVIDERS, FixtureError, RecordError, find_exchanges, record
from ._replay import CHUNKINGS, REPLAYS, ReplayServer, SeenRequest

__all__ = ["add_traffic_commands"]

_LABELS = {"openai": "OpenAI", "anthropic": "Anthropic"}


def _show(seen: SeenRequest) -> None:
    if seen.recorded:
        answer = f"recorded {seen.exchange}"
    elif seen.exchange is None and seen.difference.startswith("not recorded"):
        answer = seen.difference
    elif seen.exchange is not None:
        answer = seen.exchange
    else:
        answer = f"HTTP {seen.status}" + (f": {seen.difference}" if seen.difference else "")
    fault = f" (fault: {seen.fault.text})" if seen.fault is not None else ""
    print(f"{seen.method} {seen.path} -> {answer}{fault}", flush=True)


def _until_interrupted(server: ReplayServer, providers: list[str]) -> None:
    """Print the base URLs, then wait for Ctrl+C or SIGTERM, which ends the wait the same way
    (SPEC R-REC-14); the server is stopped either way."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        for provider in providers:
            print(f"{_LABELS[provider]} base URL: {server.base_url_for(provider)}")
        print("press Ctrl+C to stop", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        server.stop()


def _start(server: ReplayServer) -> None:
    try:
        server.start()
    except OSError as exc:
        raise Abort(f"cannot listen on 127.0.0.1:{server.port}: {exc.strerror or exc}") from None


def _serve(args: argparse.Namespace) -> int:
    try:
        exchanges = find_exchanges(args.fixtures)
    except FixtureError as exc:
        raise Abort(str(exc)) from None
    ignore = [field.strip() for text in args.ignore for field in text.split(",") if field.strip()]
    try:
        server = ReplayServer(
            exchanges,
            args.chunking,
            pause=args.pause,
            port=port(args.port),
            on_request=_show,
            replay=args.replay,
            ignore=ignore,
            timing=args.timing,
            faults=args.fault,
        )
    except ValueError as exc:  # a --timing or --fault the grammar refuses
        raise Abort(str(exc)) from None
    _start(server)
    timing = "" if args.timing == "fast" else f", timing: {args.timing}"
    print(f"serving {len(exchanges)} recorded exchanges (chunking: {args.chunking}{timing})")
    _until_interrupted(server, sorted({e.provider for e in exchanges}, reverse=True))
    print(f"{len(server.requests_seen)} requests, {len(server.unexpected)} unexpected")
    unused = server.unused()
    print(f"{len(unused)} unused: {', '.join(unused)}" if unused else "0 unused")
    return 1 if server.unexpected else 0


def _proxy(args: argparse.Namespace) -> int:
    try:
        upstream = Upstream.parse(args.upstream)
    except ValueError as exc:
        raise Abort(f"--upstream {exc}") from None
    try:
        redactions = compile_redactions(args.redact)
    except ValueError as exc:
        raise Abort(str(exc)) from None
    listen = port(args.port)
    try:
        upstream.check(timeout=args.timeout)
    except OSError as exc:
        raise Abort(f"cannot reach the upstream {args.upstream}: {exc.strerror or exc}") from None
    cassette = Cassette(args.out, redactions)
    forwarder = Forwarder({p: upstream for p in PROVIDERS}, cassette, timeout=args.timeout)
    try:
        server = ReplayServer([], port=listen, on_request=_show, forward=forwarder, faults=args.fault)
    except FaultError as exc:
        raise Abort(str(exc)) from None
    _start(server)
    try:
        cassette.open()
    except CassetteError as exc:
        server.stop()
        raise Abort(str(exc)) from None
    print(f"recording {args.upstream} into {args.out}")
    _until_interrupted(server, ["openai", "anthropic"])
    cassette.close()
    print(f"recorded {len(cassette.written)} exchanges in {args.out}")
    return 0


def _record(args: argparse.Namespace) -> int:
    try:
        exchange = record(
            args.provider,
            args.model,
            args.message,
            args.out,
            stream=args.stream,
            base_url=args.base_url,
            timeout=args.timeout,
            overwrite=args.force,
        )
    except RecordError as exc:
        raise Abort(str(exc)) from None
    reads = len(exchange.chunks)
    print(f"recorded HTTP {exchange.status}, {len(exchange.body)} bytes in {reads} reads")
    print(f"wrote {exchange.directory}; fill in its description, quirks and expect")
    return 0


def add_traffic_commands(commands: Any) -> None:
    """Add ``serve``, ``record`` and ``proxy`` to the sub-command parsers."""
    serve = commands.add_parser(
        "serve", help="replay recorded provider exchanges on 127.0.0.1, with faults on demand, until Ctrl+C"
    )
    serve.add_argument(
        "fixtures",
        nargs="+",
        type=Path,
        metavar="FIXTURE_DIR",
        help="fixture folders, cassettes, or folders above them such as fixtures/providers",
    )
    serve.add_argument("--chunking", choices=CHUNKINGS, default="recorded")
    serve.add_argument("--port", type=int, default=0, help="default: any free port")
    serve.add_argument(
        "--pause", type=float, default=0.0, metavar="SECONDS", help="wait between body pieces"
    )
    serve.add_argument(
        "--replay",
        choices=REPLAYS,
        default="repeat",
        help="once: each exchange answers one request; repeat (default): any number",
    )
    serve.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="FIELDS",
        help="body members left out of matching, comma-separated (a.b reaches into a); repeatable",
    )
    serve.add_argument(
        "--timing",
        default="fast",
        metavar="fast|recorded|xF",
        help="fast (default): no waits; recorded: the gaps the proxy recorded; xF: F times them",
    )
    _add_fault(serve)
    serve.set_defaults(handler=_serve)

    rec = commands.add_parser(
        "record", help="send one real request and write it as a fixture (expect left empty)"
    )
    rec.add_argument("--provider", choices=PROVIDERS, required=True)
    rec.add_argument("--model", required=True)
    rec.add_argument("--message", required=True, metavar="TEXT", help="the one user message")
    rec.add_argument("--out", type=Path, required=True, metavar="DIR", help="the fixture folder")
    rec.add_argument("--stream", action="store_true", help="ask for a streamed answer")
    rec.add_argument(
        "--base-url", metavar="URL", help="default: the provider's public API (SPEC R-PRV-3)"
    )
    rec.add_argument("--timeout", type=seconds, default=120.0, metavar="SECONDS")
    rec.add_argument("--force", action="store_true", help="replace an existing fixture")
    rec.set_defaults(handler=_record)

    proxy = commands.add_parser(
        "proxy", help="forward requests to an API and record each exchange until Ctrl+C"
    )
    proxy.add_argument(
        "--upstream", required=True, metavar="URL", help="e.g. https://api.openai.com"
    )
    proxy.add_argument("--out", type=Path, required=True, metavar="DIR", help="the cassette folder")
    proxy.add_argument("--port", type=int, default=0, help="default: any free port")
    proxy.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="REGEX",
        help="also replace what this matches by <redacted>, in bodies too; repeatable",
    )
    proxy.add_argument("--timeout", type=seconds, default=600.0, metavar="SECONDS")
    _add_fault(proxy)
    proxy.set_defaults(handler=_proxy)


def _add_fault(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="RULE",
        help="e.g. 'request=1, status=429, retry-after=2' or 'cut=3' (SPEC R-REC-8); repeatable",
    )
