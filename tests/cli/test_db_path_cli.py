"""A database path that names no regular file is refused before SQLite opens it (SPEC R-CLI-24).

SQLite opens ``/dev/null`` and leaves ``/dev/null-journal`` beside it, and blocks on a FIFO;
every command that opens the database refuses such a path in one line naming it, and nothing is
created beside it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from tests.cli.helpers import cli, one_error

SPECIAL: Final = (
    "not a regular file (a device, FIFO, socket or folder cannot hold a database); "
    "give the path of an SQLite file or a postgresql:// URL"
)
COMMANDS: Final = (
    ["--provider", "offline", "run", "hi"],
    ["sessions"],
    ["search", "hi"],
    ["show", "abcd"],
    ["prune", "--older-than", "1"],
    ["fork", "abcd"],
)
BESIDE: Final = ("-journal", "-wal", "-shm")


@pytest.fixture
def beside_null() -> Iterator[list[Path]]:
    """The files SQLite would make beside ``/dev/null`` that are not there now; after the test,
    any it made (it failed: only root can write in ``/dev``) are removed, so none stays."""
    made = [path for path in (Path(os.devnull + suffix) for suffix in BESIDE) if not path.exists()]
    yield made
    for path in made:
        path.unlink(missing_ok=True)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "spool" / "pipe"
    path.parent.mkdir()
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "spool" / "sock"
    path.parent.mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        yield path


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: args[-2] if args[0] == "--provider" else args[0])
def test_the_null_device_is_refused_and_nothing_is_made_beside_it(
    env: dict[str, str], work: Path, args: list[str], beside_null: list[Path]
) -> None:
    assert one_error(cli(["--db", os.devnull, *args], env, work)) == f"--db {os.devnull}: {SPECIAL}"
    assert not any(path.exists() for path in beside_null)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: args[-2] if args[0] == "--provider" else args[0])
def test_a_fifo_is_refused_without_waiting_on_it(env: dict[str, str], work: Path, fifo: Path, args: list[str]) -> None:
    assert one_error(cli(["--db", str(fifo), *args], env, work)) == f"--db {fifo}: {SPECIAL}"
    assert os.listdir(fifo.parent) == ["pipe"]


def test_a_socket_a_folder_and_a_link_to_a_device_are_refused(env: dict[str, str], work: Path, unix_socket: Path) -> None:
    link = unix_socket.parent / "link.db"
    link.symlink_to(os.devnull)
    for path in (unix_socket, unix_socket.parent, link):
        assert one_error(cli(["--provider", "offline", "--db", str(path), "run", "hi"], env, work)) == f"--db {path}: {SPECIAL}"
    assert sorted(os.listdir(unix_socket.parent)) == ["link.db", "sock"]


def test_the_variable_and_the_default_file_are_named_as_given(env: dict[str, str], work: Path, fifo: Path, db: Path) -> None:
    assert one_error(cli(["sessions"], env, work, HARNESS9_DB=str(fifo))) == f"HARNESS9_DB {fifo}: {SPECIAL}"
    db.mkdir(parents=True)  # the default file of HARNESS9_HOME is a folder
    assert one_error(cli(["--provider", "offline", "run", "hi"], env, work)) == f"{db}: {SPECIAL}"
    assert os.listdir(db.parent) == ["sessions.db"]


def test_the_refusal_is_in_the_language_of_the_program(env: dict[str, str], work: Path, fifo: Path) -> None:
    result = cli(["--db", str(fifo), "sessions"], env, work, HARNESS9_LANG="zh")
    assert result.returncode == 1
    assert result.stderr == (
        f"harness9-ref: 错误：--db {fifo}：不是普通文件（设备、FIFO、套接字或文件夹都不能作数据库）；"
        "请给出 SQLite 文件的路径或 postgresql:// URL\n"
    )


def test_copy_refuses_a_destination_that_is_no_regular_file(
    env: dict[str, str], work: Path, fifo: Path, db: Path, beside_null: list[Path]
) -> None:
    cli(["--provider", "offline", "run", "hi"], env, work)
    for target in (Path(os.devnull), fifo):
        assert one_error(cli(["copy", str(db), str(target)], env, work)) == f"copy DST {target}: {SPECIAL}"
    assert not any(path.exists() for path in beside_null)
    assert os.listdir(fifo.parent) == ["pipe"]
