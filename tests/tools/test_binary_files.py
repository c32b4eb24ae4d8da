"""read_file on files that are not text (harness9_ref/tools/_read_file.py; SPEC R-TOOL-9).

Real binaries of this machine (an ELF executable, a compressed file) and files written byte by
byte around the first block's boundary, read through the registry as the engine calls it.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness9_ref.memory.context import format_token_count
from harness9_ref.tools import BINARY_FILE, BINARY_SNIFF_BYTES, Registry
from harness9_ref.tools._read_file import is_text

BLOCK = 8192


def read(work: Path, name: str, *, cap: int | None = None) -> str:
    registry = Registry(work) if cap is None else Registry(work, output_cap=cap)
    return registry.execute("read_file", json.dumps({"path": name}))


def described(size: str) -> str:
    return f"binary file, {size}, not read"


def test_the_block_and_the_line_are_those_spec_pins() -> None:
    assert BINARY_SNIFF_BYTES == BLOCK
    assert BINARY_FILE == "binary file, {size}, not read"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs an ELF executable of the system")
def test_a_real_executable_is_described_not_sent(tmp_path: Path) -> None:
    source = Path(shutil.which("true") or "/bin/true")
    shutil.copyfile(source, tmp_path / "true")
    size = (tmp_path / "true").stat().st_size
    figure = format_token_count(size)
    observation = read(tmp_path, "true")
    assert observation == described(f"{figure[:-1]} {figure[-1]}B")  # an executable is a few KB at least
    assert "\n" not in observation and "ELF" not in observation


def test_a_compressed_file_is_described(tmp_path: Path) -> None:
    (tmp_path / "notes.txt.gz").write_bytes(gzip.compress(b"hello " * 1000, mtime=0))
    assert read(tmp_path, "notes.txt.gz").startswith("binary file, ")


def test_text_files_are_read_as_before(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("中文 and ascii\n\ttabs\x1b[1m escapes are text\n", encoding="utf-8")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbfhi")
    assert read(tmp_path, "a.txt") == "中文 and ascii\n\ttabs\x1b[1m escapes are text\n"
    assert read(tmp_path, "empty") == ""
    assert read(tmp_path, "bom") == "\ufeffhi"


@pytest.mark.parametrize("offset", [0, 1, BLOCK - 1])
def test_a_nul_anywhere_in_the_first_block_makes_a_binary_file(tmp_path: Path, offset: int) -> None:
    data = bytearray(b"a" * (BLOCK + 10))
    data[offset] = 0
    (tmp_path / "f").write_bytes(bytes(data))
    assert read(tmp_path, "f") == described("8.2 KB")


@pytest.mark.parametrize("tail", [b"\x00", b"\xff", b"\xc0\xaf"])
def test_bytes_after_the_first_block_are_not_judged(tmp_path: Path, tail: bytes) -> None:
    (tmp_path / "f").write_bytes(b"a" * BLOCK + tail)
    assert read(tmp_path, "f").startswith("a" * BLOCK)


@pytest.mark.parametrize("char", ["é", "中", "😀"])
def test_a_character_split_by_the_block_end_is_valid_at_every_cut(tmp_path: Path, char: str) -> None:
    encoded = char.encode("utf-8")
    for before in range(BLOCK - len(encoded) + 1, BLOCK + 1):
        (tmp_path / "f").write_bytes(b"a" * before + encoded + b"z")
        assert read(tmp_path, "f") == "a" * before + char + "z", before


@pytest.mark.parametrize("bad", [b"\xf0\x80", b"\xed\xa0", b"\xe0\x80", b"\xf4\x90", b"\xc0", b"\xff"])
def test_an_invalid_beginning_at_the_block_end_is_not_a_split_character(tmp_path: Path, bad: bytes) -> None:
    (tmp_path / "f").write_bytes(b"a" * (BLOCK - len(bad)) + bad + b"\x80\x80tail")
    assert read(tmp_path, "f").startswith("binary file, ")


def test_the_block_is_judged_whatever_the_output_cap(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"a" * 5000 + b"\x00" + b"z" * 1000)
    assert read(tmp_path, "f", cap=16) == described("6 KB")
    (tmp_path / "t").write_bytes(b"a" * 5000)
    assert read(tmp_path, "t", cap=16) == "a" * 16 + "\n[truncated: showing the first 16 of 5000 bytes]"


@pytest.mark.parametrize(
    ("size", "text"), [(1, "1 B"), (999, "999 B"), (1000, "1 KB"), (100_200, "100.2 KB"), (1_250_000, "1.3 MB")]
)
def test_the_size_is_r_fmt_with_a_space_and_the_unit(tmp_path: Path, size: int, text: str) -> None:
    (tmp_path / "f").write_bytes(b"\x00" * size)
    assert read(tmp_path, "f") == described(text)


def _completes(data: bytes) -> bool:
    """Whether some continuation bytes (at most three) make ``data`` valid UTF-8: its end is then
    nothing or the beginning of a well-formed sequence (the second bytes allowed after E0, ED, F0
    and F4 all lie in 80, 90, A0 or BF)."""
    for length in range(4):
        for suffix in itertools.product((0x80, 0x90, 0xA0, 0xBF), repeat=length):
            try:
                (data + bytes(suffix)).decode("utf-8")
            except UnicodeDecodeError:
                continue
            return True
    return False


@given(st.binary(max_size=24) | st.text(max_size=8).map(lambda t: t.encode("utf-8")[:-1]))
def test_a_block_is_text_exactly_when_it_has_no_nul_and_some_end_completes_it(data: bytes) -> None:
    assert is_text(data) == (b"\x00" not in data and _completes(data))
