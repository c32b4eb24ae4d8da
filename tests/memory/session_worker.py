"""A child process that writes numbered batches to a session database (SPEC R-SES-8, R-DB-8).

``tests/memory/storage/test_session_reliability.py`` runs it with ``sys.executable -m
tests.memory.session_worker`` from the repository root, kills it, runs several at once, and then
checks the file. The batch format and its checker live here too, so that the writers and the
tests agree on them.

Every message of a batch says who wrote it, which batch it belongs to and where in the batch it
sits: ``"<writer> <batch> <part>/<size> <padding>"``. Reading a session back,
``split_batches`` rebuilds the batches and fails on any that is incomplete or interleaved.

Modes:

``append DB SESSION --seed N --max-batches N --max-seconds S``
    Prints ``ready`` once the database is open, then appends batches numbered on from the
    newest batch already in the session, printing each number after ``add_messages`` returns.
    It is meant to be killed; the limits only stop a writer nobody killed.

``concurrent DB --writer W --shared ID --own ID … --batches N [--manager-per-thread] [--busy-timeout-ms MS]``
    One thread per ``--own`` session. Each thread waits for a line on stdin, then writes
    ``--batches`` batches to the shared session and as many to its own, alternating. Prints one
    JSON object: the error of every thread that failed (an empty list when none did) and the
    longest any one batch took, in seconds. ``--busy-timeout-ms`` shortens R-DB-3's busy
    timeout in this process, so that a test of many writers can be short and still tell a
    writer that waits while the others commit from one that gives up (R-SES-8).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Sequence
from contextlib import ExitStack
from typing import NamedTuple

import harness9_ref.memory.storage._sqlite_db
from harness9_ref.memory.storage import Manager, Session
from harness9_ref.schema import ROLE_ASSISTANT, ROLE_USER, Message, ToolCall

__all__ = ["APPEND_LARGEST", "MAX_BATCH", "Part", "batch_messages", "batch_size", "main", "split_batches"]

MAX_BATCH = 12  # messages in the largest batch of the concurrent mode
APPEND_LARGEST = 40  # messages in the largest batch of the append mode


class Part(NamedTuple):
    writer: str
    batch: int
    position: int
    size: int
    padding: int


def batch_size(writer: str, batch: int, largest: int = MAX_BATCH) -> int:
    """A size from 1 to ``largest`` that every process computes alike (``hash`` is salted per process)."""
    return 1 + zlib.crc32(f"{writer} {batch}".encode()) % largest


def batch_messages(writer: str, batch: int, size: int, padding: int = 0) -> list[Message]:
    """``size`` messages: assistant tool calls and their results, in turn, numbered for ``split_batches``."""
    msgs = []
    for index in range(size):
        content = f"{writer} {batch} {index}/{size} " + "." * padding
        call_id = f"call_{writer}_{batch}_{index}"
        if index % 2 == 0:
            msgs.append(Message(ROLE_ASSISTANT, content, (ToolCall(call_id, "bash", f'{{"batch": {batch}}}'),)))
        else:
            msgs.append(Message(ROLE_USER, content, tool_call_id=f"call_{writer}_{batch}_{index - 1}"))
    return msgs


def parse_part(msg: Message) -> Part:
    writer, batch, place, padding = msg.content.split(" ")
    position, size = place.split("/")
    return Part(writer, int(batch), int(position), int(size), len(padding))


def split_batches(msgs: Sequence[Message]) -> dict[str, list[tuple[int, int]]]:
    """Each writer's batches as ``(batch, size)`` in stored order.

    Raises:
        AssertionError: a batch is cut short, another batch's messages sit inside it, or a
            message does not read back exactly as ``batch_messages`` wrote it.
    """
    batches: dict[str, list[tuple[int, int]]] = {}
    position = 0
    while position < len(msgs):
        first = parse_part(msgs[position])
        assert first.position == 0, f"message {position} is {first}, the middle of a batch whose start is missing"
        written = batch_messages(first.writer, first.batch, first.size, first.padding)
        stored = list(msgs[position : position + first.size])
        assert stored == written, f"batch {first.batch} of {first.writer} at message {position} is torn or interleaved"
        batches.setdefault(first.writer, []).append((first.batch, first.size))
        position += first.size
    return batches


def _next_batch(session: Session) -> int:
    newest = session.get_messages(limit=1)
    return parse_part(newest[0]).batch + 1 if newest else 0


def _append(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    with Manager(args.db) as manager:
        session = manager.open_session(args.session)
        print("ready", flush=True)
        deadline = time.monotonic() + args.max_seconds
        batch = _next_batch(session)
        for _ in range(args.max_batches):
            if time.monotonic() > deadline:
                break
            size = batch_size("w", batch, APPEND_LARGEST)
            session.add_messages(batch_messages("w", batch, size, rng.choice((0, 10, 500, 3000))))
            print(batch, flush=True)
            batch += 1


def _concurrent(args: argparse.Namespace) -> None:
    if args.busy_timeout_ms is not None:
        harness9_ref.memory.storage._sqlite_db.BUSY_TIMEOUT_MS = args.busy_timeout_ms  # type: ignore[misc]
    shared_manager = None if args.manager_per_thread else Manager(args.db)
    errors: list[str] = []
    longest = [0.0]
    start = threading.Event()

    def write(thread: int, own_id: str) -> None:
        writer = f"{args.writer}.{thread}"
        try:
            with ExitStack() as stack:
                manager = shared_manager or stack.enter_context(Manager(args.db))
                shared, own = manager.open_session(args.shared), manager.open_session(own_id)
                start.wait()
                for batch in range(args.batches):
                    for session in (shared, own):
                        msgs = batch_messages(writer, batch, batch_size(writer, batch))
                        started = time.monotonic()
                        session.add_messages(msgs)
                        longest[0] = max(longest[0], time.monotonic() - started)
        except BaseException:
            errors.append(f"{writer}: {traceback.format_exc()}")

    threads = [threading.Thread(target=write, args=(i, own)) for i, own in enumerate(args.own)]
    for thread in threads:
        thread.start()
    print("ready", flush=True)
    sys.stdin.readline()
    start.set()
    for thread in threads:
        thread.join()
    if shared_manager is not None:
        shared_manager.close()
    print(json.dumps({"errors": errors, "longest": longest[0]}), flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    append = modes.add_parser("append")
    append.add_argument("db")
    append.add_argument("session")
    append.add_argument("--seed", type=int, default=0)
    append.add_argument("--max-batches", type=int, default=100_000)
    append.add_argument("--max-seconds", type=float, default=30.0)
    concurrent = modes.add_parser("concurrent")
    concurrent.add_argument("db")
    concurrent.add_argument("--writer", required=True)
    concurrent.add_argument("--shared", required=True)
    concurrent.add_argument("--own", nargs="+", required=True)
    concurrent.add_argument("--batches", type=int, required=True)
    concurrent.add_argument("--manager-per-thread", action="store_true")
    concurrent.add_argument("--busy-timeout-ms", type=int)
    args = parser.parse_args(argv)
    if args.mode == "append":
        _append(args)
    else:
        _concurrent(args)


if __name__ == "__main__":
    main()
