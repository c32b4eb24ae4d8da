"""A private PostgreSQL server for the tests, from the Debian binaries (initdb + postgres).

It lives in a temporary folder: data directory and unix socket there, no TCP listener, so the
port only names the socket. As root the server runs as ``nobody`` (PostgreSQL refuses to run
as root), the folder chowned to it. fsync is off and shared_buffers small, so it starts in
about a second: the tests crash the server process, never the machine, so a commit the server
acknowledged still survives (synchronous_commit stays on for that).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final
from urllib.parse import quote

__all__ = ["PgServer", "find_bindir"]

PORT: Final = 5432  # only names the socket file in the private folder
START_TIMEOUT: Final = 30.0
SETTINGS: Final = ("fsync=off", "full_page_writes=off", "shared_buffers=16MB", "max_connections=60")


def find_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` with initdb and postgres, or None."""
    found = [
        Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin") if Path(p, "postgres").exists() and Path(p, "initdb").exists()
    ]
    found.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return found[-1] if found else None


class PgServer:
    """One server: ``start()``, ``stop()`` (fast shutdown, or ``immediate`` as a crash), ``remove()``."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="h9pg-"))
        self.data = self.folder / "data"
        self._as_user: list[str] = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
        if self._as_user:
            shutil.chown(self.folder, "nobody")
        self._process: subprocess.Popen[bytes] | None = None
        self._run(str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")

    @property
    def url(self) -> str:
        """The admin URL: the ``postgres`` database as the ``postgres`` superuser, over the socket."""
        return f"postgresql://postgres@/postgres?host={self.folder}&port={PORT}"

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as_user, *command], check=False, capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr.decode(errors='replace')[-500:]}")

    def start(self) -> None:
        import psycopg

        self._log = open(self.folder / "server.log", "ab")  # noqa: SIM115 (closed by stop)
        options = [arg for setting in SETTINGS for arg in ("-c", setting)]
        self._process = subprocess.Popen(
            [*self._as_user, str(self.bindir / "postgres"), "-D", str(self.data), "-k", str(self.folder),
             "-p", str(PORT), "-c", "listen_addresses=", *options],
            stdout=subprocess.DEVNULL, stderr=self._log,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise RuntimeError(f"the test server did not start; see {self.folder / 'server.log'}") from None
                time.sleep(0.05)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` rolls back and disconnects clients, ``immediate`` is a crash."""
        if self._process is None:
            return
        self._run(str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-m", mode, "-w")
        self._process.wait(timeout=60)
        self._process = None
        self._log.close()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def schema_url(admin_url: str, schema: str) -> str:
    """``admin_url`` with ``schema`` as its search path: a test's own, empty namespace."""
    return f"{admin_url}{'&' if '?' in admin_url else '?'}options={quote(f'-csearch_path={schema}')}"
