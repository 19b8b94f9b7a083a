"""Databases this program cannot or must not write (issue 18, findings 6 and 9): a newer schema, a
half-finished migration, a read-only file or folder, a file another process holds. Each is one line in
the CLI naming the file and what to do (exit 1, no traceback), a StoreUnavailable (the app turns it into
its page message), and nothing on disk changes."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from reviewer.cli import main
from reviewer.store import Store, StoreDamaged, StoreUnavailable
from reviewer.store.schema import LATEST_VERSION, MIGRATIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")


def build(path: Path) -> Path:
    """A database at the latest schema with a spectrum, a VI label and an open campaign in it."""
    with Store(path) as store:
        store.spectra.add_spectrum({"spectrum_id": "s1", "source_path": "x/s1.fits", "file_sha256": "ab" * 32})
        store.labels.add_vi_label("s1", "ann", quality=3)
        store.sessions.create_session("may", "verdicts", [], reviewers=["ann"])
    return path


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Content hash and mtime of every file in the database's folder (the file, any .wal beside it)."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.iterdir()) if p.is_file()}


def counts(path: Path) -> dict[str, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


def one_line(err: str, *words: str) -> str:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)
    return err


# -- finding 6: a newer or half-migrated schema ----------------------------------------------------------
# Each migration commits with its schema_version row, so a half-finished one is a file whose recorded
# versions and tables disagree: written by another build or program, edited by hand, restored in part.
# what the error names: the latest migration's first object, tables before indexes, by name
LATEST_TABLE = sorted(re.findall(r"CREATE (TABLE|INDEX) (\w+)", MIGRATIONS[-1].sql),
                      key=lambda made: (made[0] != "TABLE", made[1]))[0][1]
SCHEMA_CASES = {
    "newer": (f"INSERT INTO schema_version (version, description) VALUES ({LATEST_VERSION + 1}, 'from the future')",
              "newer"),
    "later tables without their version row": (f"DELETE FROM schema_version WHERE version = {LATEST_VERSION}",
                                                LATEST_TABLE),
    "a gap in the recorded versions": ("DELETE FROM schema_version WHERE version = 3", "3"),
    "a recorded version without its table": ("DROP TABLE claim_flags", "claim_flags"),
    "tables but no schema_version": ("DROP TABLE schema_version", "of version 1"),
}


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_a_newer_or_half_migrated_schema_is_refused_and_left_as_it_was(case, tmp_path, capsys):
    sql, word = SCHEMA_CASES[case]
    path = build(tmp_path / "db" / "review.duckdb")
    con = duckdb.connect(str(path))
    con.execute(sql)
    con.close()
    before, rows = fingerprint(path.parent), counts(path)

    assert main(["session", "list", "--db", str(path)]) == 1
    one_line(capsys.readouterr().err, path.name, word)
    with pytest.raises(StoreUnavailable, match=path.name) as refused:
        Store(path)
    assert not isinstance(refused.value, StoreDamaged)  # restoring a backup is not the only way out
    from layouts.app import create_app

    shown = create_app(path).main[0].object
    assert path.name in shown and word in shown and str(tmp_path) not in shown
    assert fingerprint(path.parent) == before and counts(path) == rows


def test_a_newer_schema_says_upgrade(tmp_path, capsys):
    path = build(tmp_path / "review.duckdb")
    con = duckdb.connect(str(path))
    con.execute(SCHEMA_CASES["newer"][0])
    con.close()
    assert main(["triage", "--db", str(path)]) == 1
    one_line(capsys.readouterr().err, path.name, str(LATEST_VERSION + 1), "upgrade")


# -- finding 9: a read-only file or folder ---------------------------------------------------------------
def unprivileged() -> list[str]:
    """A command prefix under which file modes bind: none for a normal user; as root, setpriv without
    the capabilities that let root write anywhere (so chmod means what it says)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv is not installed: a chmod cannot stop root")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def specreview(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*unprivileged(), sys.executable, "-m", "reviewer.cli", *args], capture_output=True,
                          text=True, timeout=180, cwd=REPO_ROOT, env=ENV)


@pytest.fixture
def read_only(tmp_path):
    """Makes a file or folder read-only (and writable again at teardown); skips when writes still work."""
    made = []

    def make(path: Path) -> Path:
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
        made.append(path)
        probe = path / "probe" if path.is_dir() else path
        tried = subprocess.run([*unprivileged(), sys.executable, "-c", "import sys; open(sys.argv[1], 'a').close()",
                                str(probe)], capture_output=True)
        if tried.returncode == 0:
            pytest.skip("this user writes read-only files (no way to drop that here)")
        return path

    yield make
    for path in made:
        path.chmod(stat.S_IMODE(path.stat().st_mode) | 0o200)


def test_a_read_only_file_is_called_read_only_not_damaged(tmp_path, read_only):
    path = build(tmp_path / "db" / "review.duckdb")
    read_only(path)
    before = fingerprint(path.parent)
    done = specreview("session", "list", "--db", str(path))
    assert done.returncode == 1
    err = one_line(done.stderr, path.name, "read-only")
    assert "damaged" not in err and "backup" not in err and str(tmp_path) not in err
    assert fingerprint(path.parent) == before


@pytest.mark.parametrize("argv", [["session", "close", "may"], ["triage", "--refresh"]])
def test_a_write_into_a_read_only_folder_is_one_line(tmp_path, read_only, argv):
    path = build(tmp_path / "db" / "review.duckdb")
    rows = counts(path)
    read_only(path.parent)
    before = fingerprint(path.parent)
    assert specreview("session", "list", "--db", str(path)).returncode == 0  # reading still works
    done = specreview(*argv, "--db", str(path))
    assert done.returncode == 1
    err = one_line(done.stderr, path.name, "read-only")
    assert "damaged" not in err and str(tmp_path) not in err
    assert fingerprint(path.parent) == before and counts(path) == rows


# -- finding 9: the lock message names the holder's pid, not its command line ----------------------------
def test_the_locked_message_names_the_pid_not_the_holders_program(tmp_path, capsys):
    path = build(tmp_path / "review.duckdb")
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreUnavailable) as locked:
            Store(path)
        assert main(["session", "list", "--db", str(path)]) == 1
        err = capsys.readouterr().err
        from layouts.app import create_app

        shown = create_app(path).main[0].object
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    programs = {sys.executable, os.path.realpath(sys.executable), Path(sys.executable).parent.as_posix()}
    for text in (str(locked.value), err, shown):
        assert f"PID {holder.pid}" in text, text
        assert not any(program in text for program in programs), text
        assert str(tmp_path) not in text
