"""Parse a 5 MB SSE stream: MB/s of our parser, and of the official SDK's on the same bytes.

Run by hand from the repository root: ``python benchmarks/bench_providers.py``. Our number is
the whole path of R-PRV-15 … R-PRV-17 (SSE decoding, JSON, assembly of the message and usage),
and, like for like with the SDK, our SSE decoding plus the strict JSON of every event.
When the ``openai`` package is installed, its SSE decoder plus ``json.loads`` of every event
(what its ``Stream`` does before building pydantic objects) runs on the same chunks, and the
ratio is printed; the SDK's object construction is left out, so the comparison flatters it.

The runs alternate (ours, the SDK's, ours, …) and the best of each is kept, so that a busy
machine slows both alike instead of whichever happened to run during the busy moment.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness9_ref.provider import SSEDecoder
from harness9_ref.provider import openai as openai_wire
from harness9_ref.schema import strict_json

TARGET_BYTES = 5 * 1024 * 1024
READ_SIZE = 16 * 1024  # a typical socket read
REPEATS = 5


def make_stream() -> bytes:
    """An OpenAI stream of short text deltas (with obfuscation keys, as real ones have)."""
    lines = []
    size, i = 0, 0
    while size < TARGET_BYTES:
        chunk = {
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1760000000, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": {"content": f"token{i} "}, "logprobs": None, "finish_reason": None}],
            "usage": None, "obfuscation": "x" * (i % 7),
        }
        line = f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n".encode()
        lines.append(line)
        size += len(line)
        i += 1
    usage = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "choices": [],
             "usage": {"prompt_tokens": 10, "completion_tokens": i, "total_tokens": 10 + i}}
    lines.append(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
    return b"".join(lines)


def chunks_of(body: bytes) -> list[bytes]:
    return [body[i : i + READ_SIZE] for i in range(0, len(body), READ_SIZE)]


def best_seconds(*runs: Callable[[], object]) -> list[float]:
    """The best time of each run over REPEATS rounds, the runs alternating within a round."""
    best = [float("inf")] * len(runs)
    for _ in range(REPEATS):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            run()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def ours(chunks: list[bytes]) -> None:
    final = openai_wire.parse_stream(200, [("content-type", "text/event-stream")], chunks)[-1]
    assert final.type == "done", final


def ours_decode_and_json(chunks: list[bytes]) -> None:
    decoder = SSEDecoder()
    for chunk in chunks:
        for event in decoder.feed(chunk):
            if event.data != "[DONE]":
                strict_json.loads(event.data, replace_surrogates=True)


def sdk_parser() -> Callable[[list[bytes]], None] | None:
    try:
        from openai._streaming import SSEDecoder  # type: ignore[import-not-found]
    except ImportError:
        return None

    def run(chunks: list[bytes]) -> None:
        for event in SSEDecoder().iter_bytes(iter(chunks)):
            if event.data != "[DONE]":
                json.loads(event.data)

    return run


def main() -> None:
    body = make_stream()
    chunks = chunks_of(body)
    mb = len(body) / 1e6
    print(f"stream: {mb:.1f} MB in {len(chunks)} reads of {READ_SIZE} bytes")
    sdk = sdk_parser()
    if sdk is None:
        ours_s, json_s = best_seconds(lambda: ours(chunks), lambda: ours_decode_and_json(chunks))
    else:
        ours_s, json_s, sdk_s = best_seconds(
            lambda: ours(chunks), lambda: ours_decode_and_json(chunks), lambda: sdk(chunks)
        )
    print(f"ours (decode + assemble):     {mb / ours_s:7.1f} MB/s  ({ours_s * 1000:.0f} ms)")
    print(f"ours (decode + json):         {mb / json_s:7.1f} MB/s  ({json_s * 1000:.0f} ms)")
    if sdk is None:
        print("official SDK: not installed (pip install openai) - no ratio")
        return
    print(f"openai SDK (decode + json):   {mb / sdk_s:7.1f} MB/s  ({sdk_s * 1000:.0f} ms)")
    print(f"ratio ours / SDK throughput:  {sdk_s / ours_s:.2f}x (decode + assemble), {sdk_s / json_s:.2f}x (decode + json)")


if __name__ == "__main__":
    main()
