"""The DuckDB error texts reviewer/store/duckdb_words.py reads, provoked with the installed DuckDB:
an upgrade that rewords one of them fails here, not in a reviewer's hands."""
from __future__ import annotations

import errno
import os
import subprocess
import sys

import duckdb
import pytest

from reviewer.store.duckdb_words import is_damage, is_duplicate_key, is_lock, lock_pid, write_errno


def test_a_lock_held_by_another_process_is_recognised_with_its_pid(tmp_path):
    db = tmp_path / "held.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); sys.stdin.read()", str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(duckdb.IOException) as refused:
            duckdb.connect(str(db))
        text = str(refused.value)
        assert is_lock(text.replace(str(db), "held.duckdb"))  # read without the path, as the store does
        assert lock_pid(text) == holder.pid
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()


def test_a_file_that_is_not_a_database_is_damage(tmp_path):
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"this is not a database" * 400)
    with pytest.raises(duckdb.Error) as refused:
        duckdb.connect(str(junk))
    assert is_damage(refused.value) and not is_lock(str(refused.value))


def test_a_duplicate_key_is_recognised_and_another_constraint_is_not():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
    con.execute("INSERT INTO t VALUES (1, 1)")
    with pytest.raises(duckdb.ConstraintException) as duplicate:
        con.execute("INSERT INTO t VALUES (1, 2)")
    assert is_duplicate_key(duplicate.value)
    with pytest.raises(duckdb.ConstraintException) as null:
        con.execute("INSERT INTO t VALUES (2, NULL)")
    assert not is_duplicate_key(null.value)


@pytest.mark.parametrize("where, code", [("missing/out.parquet", errno.ENOENT), ("a_folder", errno.EEXIST)])
def test_a_copy_that_cannot_write_names_the_system_error(tmp_path, where, code):
    (tmp_path / "a_folder").mkdir()
    con = duckdb.connect()
    with pytest.raises(duckdb.Error) as refused:
        con.execute(f"COPY (SELECT 1 AS x) TO '{tmp_path / where}' (FORMAT parquet)")
    assert write_errno(str(refused.value)) == code, str(refused.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_copy_into_a_read_only_folder_is_permission_denied(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(duckdb.Error) as refused:
            duckdb.connect().execute(f"COPY (SELECT 1 AS x) TO '{folder / 'out.parquet'}' (FORMAT parquet)")
        assert write_errno(str(refused.value)) == errno.EACCES, str(refused.value)
    finally:
        folder.chmod(0o700)
