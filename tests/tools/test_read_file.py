"""The read_file tool (harness9_ref/tools/_read_file.py, _output.py; SPEC R-TOOL-3, R-TOOL-4, R-TOOL-7).

Files that are not text (R-TOOL-9) are tested in test_binary_files.py.

Every test works on real files, directories, symbolic links and FIFOs under ``tmp_path``.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness9_ref.tools import Registry, _read_file
from harness9_ref.tools._output import utf8_prefix

NOTE = "\n[truncated: showing the first {cap} of {total} bytes]"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("nested", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    return root


def read(registry: Registry, path: str) -> str:
    return registry.execute("read_file", json.dumps({"path": path}))


def test_a_file_is_read_by_a_relative_or_an_absolute_path_inside(work: Path) -> None:
    registry = Registry(work)
    assert read(registry, "a.txt") == "hello\n"
    assert read(registry, "sub/b.txt") == "nested"
    assert read(registry, "sub/../a.txt") == "hello\n"
    assert read(registry, str(work / "sub" / "b.txt")) == "nested"


def test_dot_dot_that_leaves_the_working_directory_is_refused_even_when_the_file_exists(work: Path) -> None:
    assert read(Registry(work), "../secret.txt") == "error: path escapes the working directory: ../secret.txt"
    assert read(Registry(work), "sub/../../secret.txt").startswith("error: path escapes")


def test_an_absolute_path_outside_is_refused(work: Path) -> None:
    outside = str(work.parent / "secret.txt")
    assert read(Registry(work), outside) == f"error: path escapes the working directory: {outside}"
    assert read(Registry(work), "/").startswith("error: path escapes")


def test_a_sibling_directory_sharing_the_prefix_is_outside(work: Path) -> None:
    sibling = work.parent / "work2"
    sibling.mkdir()
    (sibling / "x").write_text("no", encoding="utf-8")
    assert read(Registry(work), "../work2/x").startswith("error: path escapes")


def test_a_symbolic_link_to_a_file_outside_is_refused(work: Path) -> None:
    (work / "link").symlink_to(work.parent / "secret.txt")
    assert read(Registry(work), "link") == "error: path escapes the working directory: link"


def test_a_symbolic_link_to_a_directory_outside_is_refused(work: Path) -> None:
    (work / "out").symlink_to(work.parent)
    assert read(Registry(work), "out/secret.txt") == "error: path escapes the working directory: out/secret.txt"


def test_a_dangling_link_pointing_outside_is_refused_and_one_inside_is_missing(work: Path) -> None:
    (work / "far").symlink_to(work.parent / "nothing")
    (work / "near").symlink_to(work / "nothing")
    assert read(Registry(work), "far").startswith("error: path escapes")
    assert read(Registry(work), "near") == "error: no such file: near"


def test_links_inside_the_working_directory_are_followed(work: Path) -> None:
    (work / "alias").symlink_to(work / "sub")
    assert read(Registry(work), "alias/b.txt") == "nested"


def test_a_working_directory_reached_through_a_link_works(work: Path) -> None:
    via = work.parent / "via"
    via.symlink_to(work)
    assert read(Registry(via), "a.txt") == "hello\n"
    assert read(Registry(via), str(work / "a.txt")) == "hello\n"


def test_a_missing_file_and_a_directory_have_their_own_errors(work: Path) -> None:
    assert read(Registry(work), "nope.txt") == "error: no such file: nope.txt"
    assert read(Registry(work), "sub") == "error: is a directory: sub"
    assert read(Registry(work), ".") == "error: is a directory: ."
    assert read(Registry(work), "") == "error: is a directory: "


def test_a_fifo_is_refused_without_blocking(work: Path) -> None:
    os.mkfifo(work / "pipe")
    assert read(Registry(work), "pipe") == "error: not a regular file: pipe"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_an_error_observation(work: Path) -> None:
    locked = work / "locked"
    locked.write_text("x", encoding="utf-8")
    locked.chmod(0)
    assert read(Registry(work), "locked") == "error: cannot read locked: Permission denied"


def test_a_nul_byte_in_the_path_is_an_error_observation(work: Path) -> None:
    assert read(Registry(work), "a\x00b").startswith("error: cannot read a\x00b: ")


def test_a_read_that_fails_is_a_cannot_read_observation(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-TOOL-7: a disk error while the file is read (staged: no real disk fails on demand)."""

    def failing(fd: int, cap: int, size: int) -> tuple[bytes, int]:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(_read_file, "_read_head", failing)
    assert read(Registry(work), "a.txt") == f"error: cannot read a.txt: {os.strerror(errno.EIO)}"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads a pseudo-file of /proc")
def test_a_file_longer_than_its_size_says_is_counted_to_its_end() -> None:
    """R-TOOL-4: the note's total is the bytes read to the end, not the size ``fstat`` gives
    (0 for a pseudo-file of /proc; a growing file is the same case)."""
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert sleeper.stdout is not None
        assert sleeper.stdout.readline() == "ready\n"  # from now on its memory map stays as it is
        folder = f"/proc/{sleeper.pid}"
        assert os.stat(f"{folder}/smaps").st_size == 0
        with open(f"{folder}/smaps", "rb") as stream:
            total = len(stream.read())
        assert total > 8193  # more than the head, so the rest is counted
        observation = read(Registry(folder, output_cap=10), "smaps")
        assert observation.endswith(NOTE.format(cap=10, total=total))
    finally:
        sleeper.kill()
        sleeper.wait()


def test_invalid_utf8_after_the_first_block_is_replaced_by_u_fffd(work: Path) -> None:
    (work / "bin").write_bytes(b"x" * 8192 + b"ok \xff\xfe end \xe4\xb8")  # R-TOOL-9: the first block is text
    assert read(Registry(work), "bin") == "x" * 8192 + "ok \ufffd\ufffd end \ufffd"


def test_a_file_of_exactly_the_cap_is_not_truncated(work: Path) -> None:
    (work / "big").write_bytes(b"a" * 65536)
    assert read(Registry(work), "big") == "a" * 65536


def test_a_longer_file_shows_the_first_65536_bytes_and_the_exact_note(work: Path) -> None:
    (work / "big").write_bytes(b"a" * 70000)
    assert read(Registry(work), "big") == "a" * 65536 + "\n[truncated: showing the first 65536 of 70000 bytes]"


@pytest.mark.parametrize(
    ("char", "offset"),
    [("é", 1), ("中", 1), ("中", 2), ("🍎", 1), ("🍎", 2), ("🍎", 3)],
)
def test_truncation_cuts_back_to_a_character_boundary(work: Path, char: str, offset: int) -> None:
    encoded = char.encode("utf-8")
    data = b"a" * (65536 - offset) + encoded + b"tail"
    (work / "big").write_bytes(data)
    assert read(Registry(work), "big") == "a" * (65536 - offset) + NOTE.format(cap=65536, total=len(data))


def test_a_character_ending_exactly_at_the_cap_is_kept(work: Path) -> None:
    data = b"a" * (65536 - 3) + "中".encode() + b"more"
    (work / "big").write_bytes(data)
    assert read(Registry(work), "big") == "a" * 65533 + "中" + NOTE.format(cap=65536, total=len(data))


def test_a_smaller_cap_applies_to_files(work: Path) -> None:
    (work / "t").write_text("中文字符", encoding="utf-8")  # 12 bytes
    assert read(Registry(work, output_cap=7), "t") == "中文" + NOTE.format(cap=7, total=12)


@pytest.mark.parametrize(
    ("data", "kept"),
    [
        (b"abc", b"abc"),
        (b"ab\xc3", b"ab"),
        (b"ab\xe4\xb8", b"ab"),
        (b"ab\xf0\x9f\x8d", b"ab"),
        (b"\xf0\x9f\x8d\x8e", b"\xf0\x9f\x8d\x8e"),
        (b"a\x80\x80\x80\x80", b"a\x80\x80\x80\x80"),  # stray continuation bytes: nothing to cut
        (b"a\xff", b"a\xff"),  # an invalid byte is not the start of a sequence
        (b"", b""),
    ],
)
def test_utf8_prefix_drops_only_a_sequence_cut_at_the_end(data: bytes, kept: bytes) -> None:
    assert utf8_prefix(data) == kept


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ("", 'missing required member "path"'),
        ("{}", 'missing required member "path"'),
        ("[]", "expected a JSON object, got an array"),
        ("null", "expected a JSON object, got null"),
        ('"a.txt"', "expected a JSON object, got a string"),
        ('{"path": 5}', 'member "path" must be a string, got a number'),
        ('{"path": null}', 'member "path" must be a string, got null'),
        ('{"path": ["a"]}', 'member "path" must be a string, got an array'),
    ],
)
def test_invalid_arguments_are_named(work: Path, arguments: str, detail: str) -> None:
    assert Registry(work).execute("read_file", arguments) == f"error: invalid arguments for read_file: {detail}"


@pytest.mark.parametrize("arguments", ['{"path": "a.txt"', '{"path": "a.txt", "n": NaN}', '{"path": "a.txt", "n": -Infinity}'])
def test_arguments_that_are_not_json_are_invalid(work: Path, arguments: str) -> None:
    observation = Registry(work).execute("read_file", arguments)
    assert observation == "error: invalid arguments for read_file: not valid JSON"


def test_a_number_out_of_the_binary64_range_is_json(work: Path) -> None:
    assert Registry(work).execute("read_file", '{"path": "a.txt", "n": 1e400}') == "hello\n"


def test_unknown_members_are_ignored(work: Path) -> None:
    assert Registry(work).execute("read_file", '{"path": "a.txt", "limit": 3}') == "hello\n"
