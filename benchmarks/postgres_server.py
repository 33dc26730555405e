"""A throwaway PostgreSQL server on loopback, for the tests and the journal benchmark.

:func:`start` makes a cluster in a temporary folder with ``initdb`` (PostgreSQL's own
programs: on ``PATH``, or Debian's ``/usr/lib/postgresql/<version>/bin``), starts it
with ``pg_ctl`` on 127.0.0.1 and a free port, and returns a :class:`Server` whose
``url`` reaches its ``postgres`` database (trust authentication, loopback only) and
whose :meth:`Server.stop` stops it and removes the folder.  As root (PostgreSQL
refuses to run as root) the programs run as the ``postgres`` user through
``runuser``.  Raises :class:`Unavailable`, with the reason, when PostgreSQL is not
installed or does not start.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Server", "Unavailable", "start"]


class Unavailable(Exception):
    """PostgreSQL cannot be started here (the message says why)."""


def _programs() -> Path:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if debian:
        return Path(debian[-1]).parent
    raise Unavailable("PostgreSQL's initdb is not installed (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """A running server: ``url`` reaches its ``postgres`` database."""

    url: str
    folder: Path
    bin: Path
    prefix: list[str] = field(default_factory=list)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder."""
        subprocess.run(
            [*self.prefix, str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-w",
             "-m", "fast", "stop"],
            capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)


def start(*, durable: bool = True) -> Server:
    """Start a server (see the module docstring).  ``durable=False`` turns ``fsync``
    off: faster, for tests that never cut the power."""
    programs = _programs()
    prefix: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="obelisk-pg-"))
    try:
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                raise Unavailable("running as root without runuser to become 'postgres'")
            prefix = ["runuser", "-u", "postgres", "--"]
            os.chmod(folder, 0o755)
            shutil.chown(folder, "postgres")
        data, port = folder / "data", _free_port()
        _run([*prefix, str(programs / "initdb"), "-D", str(data), "-U", "postgres",
              "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], "initdb")  # fmt: skip
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder}"
        if not durable:
            options += " -c fsync=off -c full_page_writes=off"
        _run([*prefix, str(programs / "pg_ctl"), "-D", str(data), "-l",
              str(folder / "server.log"), "-o", options, "-w", "-t", "60", "start"],
             "pg_ctl start", folder / "server.log")  # fmt: skip
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Server(f"postgresql://postgres@127.0.0.1:{port}/postgres", folder, programs, prefix)


def _run(command: list[str], what: str, log: Path | None = None) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-800:] if log and log.exists() else ""
        raise Unavailable(f"{what} failed ({done.returncode}): {done.stderr[-800:]} {tail}")
