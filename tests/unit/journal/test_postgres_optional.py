"""psycopg is optional (the ``postgres`` extra, docs/scale.md): obelisk, and a journal in
an SQLite file, never import it; a ``postgresql://`` journal without it is refused with
one clear ``JournalError`` naming the extra; a URL's password never reaches a message."""

from __future__ import annotations

import subprocess
import sys

import pytest

import obelisk
from obelisk.interpreter.runtime.durable.postgres import is_postgres, shown

WITHOUT_PSYCOPG = """
import sys
sys.modules["psycopg"] = None  # as if the extra were not installed
import obelisk

@obelisk.tool
def echo(v: int) -> int:
    return v

done = obelisk.run_sync([{"_tool": "echo", "v": 1, "_outputPath": "†state.a"}], [echo],
                        journal=sys.argv[1])
assert done.status == "completed", done.status
try:
    obelisk.Journal("postgresql://someone:secret@127.0.0.1:1/none")
except obelisk.JournalError as error:
    print(error)
"""


def test_without_psycopg_a_file_journal_works_and_a_url_names_the_extra(tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PSYCOPG, str(tmp_path) + "/runs.db"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "needs psycopg 3: pip install 'obelisk[postgres]'" in done.stdout
    assert "secret" not in done.stdout


def test_a_file_journal_does_not_import_psycopg(tmp_path: object) -> None:
    code = (
        "import sys, obelisk\n"
        "@obelisk.tool\ndef echo(v: int) -> int:\n    return v\n"
        "obelisk.run_sync([{'_tool': 'echo', 'v': 1}], [echo], journal=sys.argv[1])\n"
        "assert 'psycopg' not in sys.modules, 'psycopg was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path) + "/runs.db"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_url_that_reaches_no_server_is_one_journal_error_without_its_password() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(obelisk.JournalError, match="cannot open journal") as caught:
        obelisk.Journal("postgresql://someone:secret@127.0.0.1:1/none?connect_timeout=2")
    assert "secret" not in str(caught.value)
    assert "postgresql://someone:***@127.0.0.1:1/none" in str(caught.value)


def test_urls_are_told_from_paths_and_shown_without_passwords() -> None:
    assert is_postgres("postgresql://h/db") and is_postgres("postgres://h/db")
    assert not is_postgres("runs.db") and not is_postgres("postgresql.db")
    assert shown("postgresql://u:p@h:5/db") == "postgresql://u:***@h:5/db"
    assert shown("postgresql://u@h/db") == "postgresql://u@h/db"
