"""The opened database file under `Store`: its connection, per-thread cursors, transactions, lifecycle
and the SQL helpers every repository runs its statements through (row decoding included)."""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from reviewer.store.codec import from_json, utc
from reviewer.store.connection import SharedConnection, damage_of, release, shared_connection, unwritable_of
from reviewer.store.duckdb_words import is_duplicate_key
from reviewer.store.paths import resolve_db_path

# DuckDB's memory limit during a pass over whole tables (the open-time probe, a Parquet export): its
# buffer pool keeps every block read cached up to 80 % of the machine's memory, which such a pass has
# no use for. At 1M trajectories (a 2.7 GB file) `specreview export parquet` peaked at 694 MB, 439 MB with it.
# Only in a process of its own (Database.memory_limit): the limit is global to the database.
PASS_MEMORY_LIMIT = "128MB"

# Optimistic concurrency: two threads inserting the same key at once (the same reviewer, a retried
# label id) make one of them fail with a conflict or a duplicate-key error even under ON CONFLICT
# DO NOTHING, since neither sees the other's uncommitted row. Run again, the statement sees the
# committed row and does nothing, which is what it meant.
_CONFLICT_RETRIES = 5
T = TypeVar("T")


def _is_race(sql: str, exc: Exception) -> bool:
    if isinstance(exc, duckdb.TransactionException):
        return True
    return is_duplicate_key(exc) and "ON CONFLICT DO NOTHING" in sql


def _zipped_lists(types: dict[str, str], columns: Sequence[str]) -> str:
    """The SELECT list of one statement that binds each column as one list of its SQL type
    (`types`: column -> type) and zips the lists by unnest into rows."""
    return ", ".join(f"unnest(?::{types[c]}[]) AS {c}" for c in columns)


class Database:
    """One opened database file. The repositories each hold it and run their statements through it;
    `Store` opens it and closes it."""

    def __init__(self, path: str | os.PathLike | None = None):
        """Open (or join this process's open connection to) a database file.

        `path=None` uses $SPECREVIEW_DB or the per-user default; ":memory:" gives a private
        in-memory database (not shared, gone on close).
        """
        memory = str(path) == ":memory:"
        self.path: Path | None = None if memory else resolve_db_path(path)
        self._shared: SharedConnection = shared_connection(self.path)

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        return self._shared.version

    def close(self) -> None:
        """Close the process's connection to this file: every Store on the same file closes with it."""
        release(self._shared)

    @property
    def is_open(self) -> bool:
        return not self._shared.closed

    def __repr__(self) -> str:
        return f"Database({str(self.path) if self.path else ':memory:'!r})"

    # -- SQL helpers (the only place statements run) ----------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All writes of this thread inside the block commit together or not at all."""
        with self._shared.transaction() as cur:
            yield cur

    def write_together(self, write: Callable[[], T]) -> T:
        """`write()` in one transaction (joined to this thread's open one, if any), one thread of the process
        at a time. A conflict with a concurrent writer outside it (a transaction writing the same key: a
        conflict, or a duplicate key neither saw the other insert, even under ON CONFLICT) runs it again,
        as execute does a statement."""
        if self.in_transaction():
            return write()
        for attempt in range(_CONFLICT_RETRIES):
            try:
                with self._shared.together_lock, self.transaction():
                    return write()
            except (duckdb.TransactionException, duckdb.ConstraintException) as exc:
                if attempt == _CONFLICT_RETRIES - 1 or not _is_race("ON CONFLICT DO NOTHING", exc):
                    raise
                time.sleep(0.001 * (attempt + 1))
        raise AssertionError("unreachable")

    def in_transaction(self) -> bool:
        """Whether this thread is inside `transaction()` (its writes may still be rolled back)."""
        return self._shared.in_transaction()

    @property
    def known_reviewers(self) -> set[str]:
        """Reviewer names known to be stored (committed): the process-wide cache `add_reviewer` keeps."""
        return self._shared.known_reviewers

    @property
    def in_step_at(self) -> dict[str, tuple]:
        """{derived table: the write mark at which all of it was last found in step}: process-wide, per file."""
        return self._shared.in_step_at

    @property
    def derived(self) -> dict[str, tuple]:
        """{name: (the key it was derived at, what a service derived from this file)}: process-wide, per file;
        a service keeps here what it may use again while its key (a write mark) stands."""
        return self._shared.derived

    def dropped(self, table: str) -> int:
        """How many times rows of a derived table were dropped by `drop_derived` (a mark recorded with an
        older count is not in step: the rows may be missing at an unchanged mark)."""
        return self._shared.dropped.get(table, 0)

    def drop_derived(self, table: str, where: str = "true", params: Sequence[Any] = ()) -> None:
        """Delete rows of a derived table that its write mark may not see go (a write that then fails)."""
        self.execute(f"DELETE FROM {table} WHERE {where}", params)
        self._shared.dropped[table] = self.dropped(table) + 1

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self._shared.cursor()

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        """A damaged or unwritable file said as such (it shows itself on the first read of a bad block)."""
        try:
            yield
        except duckdb.Error as exc:
            refused = unwritable_of(self.path, exc) or damage_of(self.path, exc)
            if refused is not None:
                raise refused from exc
            raise

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> duckdb.DuckDBPyConnection:
        with self._refusals():
            return self.execute_with_retries(sql, params)

    def frame(self, sql: str, params: Sequence[Any] | None = None, categories: Sequence[str] = ()):
        """A query's rows as a pandas DataFrame, through Arrow: text stays columnar (DuckDB's `df()` makes a
        Python string of every value first: ~1 s for three text columns at 1M rows, ~0.1 s this way).
        The dtypes are `df()`'s but for nullable booleans, which come as objects (True, False, None), and
        the `categories` columns, pandas categories in sorted order (dictionary-encoded in Arrow: a few
        distinct values in many rows become codes without a string per row)."""
        with self._refusals():
            table = self.cursor().sql(sql, params=params).to_arrow_table()
        import pyarrow.compute as pc  # here, not at import: most commands read no frame

        for name in categories:
            at = table.schema.get_field_index(name)
            table = table.set_column(at, name, pc.dictionary_encode(table.column(at)))
        frame = table.to_pandas()
        for name in categories:  # sorted, as astype("category") makes them (an order-sensitive groupby agrees)
            frame[name] = frame[name].cat.reorder_categories(sorted(frame[name].cat.categories))
        return frame

    def execute_with_retries(self, sql: str, params: Sequence[Any] | None) -> duckdb.DuckDBPyConnection:
        cur = self.cursor()
        if self._shared.in_transaction():
            return cur.execute(sql, params)
        for attempt in range(_CONFLICT_RETRIES):
            try:
                return cur.execute(sql, params)
            except (duckdb.TransactionException, duckdb.ConstraintException) as exc:
                if attempt == _CONFLICT_RETRIES - 1 or not _is_race(sql, exc):
                    raise
                time.sleep(0.001 * (attempt + 1))
        raise AssertionError("unreachable")

    def probe(self) -> None:
        """Read every row of every table once per process (a hash over whole rows, so every column's
        blocks are read and checksummed), so that a damaged file is reported when it is opened
        (StoreDamaged) rather than in the middle of someone's work. Later calls cost nothing."""
        if self._shared.probed:
            return
        tables = [r[0] for r in self.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()]
        # with a small buffer pool: DuckDB would keep every block it read cached (the whole file, up to
        # 80 % of the machine's memory), which a check has no use for
        with self.memory_limit(PASS_MEMORY_LIMIT):
            for table in tables:
                self.execute(f"SELECT count(*), sum(hash(t)) FROM {table} t").fetchall()
        self._shared.probed = True

    @contextmanager
    def memory_limit(self, limit: str) -> Iterator[None]:
        """DuckDB's memory limit (its buffer pool) set to `limit` for the block, then the default again
        (nothing here sets another). For a pass over whole tables, whose blocks need not stay cached.
        Not on a connection the app serves (pinned): the limit is the whole database's, and reviewers'
        queries run beside the pass (a command run through the app, pages opening at once)."""
        if self._shared.pinned:
            yield
            return
        self.execute(f"SET memory_limit = '{limit}'")
        try:
            yield
        finally:
            self.execute("RESET memory_limit")

    def upsert_synced(self, table: str, types: dict[str, str], keys: Sequence[str],
                      rows: list[dict[str, Any]]) -> None:
        """Insert rows (dicts with the keys of `types`, column name -> SQL type) into a table of stored
        consensus keyed by `keys`, replacing a stored row only by one that reflects a label row at least
        as new (`synced_seq` never goes back). One statement of column arrays, zipped by unnest:
        multi-row VALUES of 10k rows cost seconds to parse."""
        select = _zipped_lists(types, types)
        updates = ", ".join(f"{c} = excluded.{c}" for c in types if c not in keys)
        self.execute(
            f"INSERT INTO {table} ({', '.join(types)}) SELECT {select} ON CONFLICT ({', '.join(keys)}) "
            f"DO UPDATE SET {updates} WHERE excluded.synced_seq >= {table}.synced_seq",
            [[r.get(c) for r in rows] for c in types])

    def insert_rows(self, table: str, columns: Sequence[str], rows: list[Sequence[Any]],
                    ignore_duplicates: bool = False) -> None:
        """Insert many rows in one statement: each column bound as one list of its SQL type, the lists
        zipped by unnest. A multi-row VALUES statement binds and parses every value apart (~175 ms for
        a vet group's 960 steps, against ~25 ms this way); executemany runs one statement per row."""
        if not rows:
            return
        types = self._column_types(table)
        select = _zipped_lists(types, columns)
        sql = f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select}"
        if ignore_duplicates:
            sql += " ON CONFLICT DO NOTHING"
        self.execute(sql, [list(values) for values in zip(*rows, strict=True)])

    def _column_types(self, table: str) -> dict[str, str]:
        types = self._shared.column_types.get(table)
        if types is None:
            types = dict(self.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ?",
                [table]).fetchall())
            self._shared.column_types[table] = types
        return types

    def rows(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.execute(sql, params)
        return _decode(cur.description, cur.fetchall())

    def row(self, sql: str, params: Sequence[Any] | None = None) -> dict[str, Any] | None:
        rows = self.rows(sql, params)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        # fetchall, not fetchone: DuckDB keeps a result not read to its end open on this thread's cursor,
        # and the cursor's next relation (`frame`) is then refused ("unfinished result")
        rows = self.execute(sql, params).fetchall()
        return rows[0][0] if rows else None


def _decode(description, rows: list[tuple]) -> list[dict[str, Any]]:
    """Rows as dicts, with JSON columns parsed and timestamps in UTC."""
    names = [d[0] for d in description]
    kinds = [str(d[1]) for d in description]
    json_cols = [i for i, k in enumerate(kinds) if k == "JSON"]
    time_cols = [i for i, k in enumerate(kinds) if k.startswith("TIMESTAMP")]
    out = []
    for row in rows:
        values = list(row)
        for i in json_cols:
            values[i] = from_json(values[i])
        for i in time_cols:
            values[i] = utc(values[i])
        out.append(dict(zip(names, values, strict=True)))
    return out


def forget_signals(db: Database, where: str, params: list[Any]) -> None:
    """Drop the stored triage signals (table triage_signals) a write is about to make stale, before its
    own transaction and never inside it: a read storing signals at the same moment would make the
    write itself fail on DuckDB's conflict check. Retried on a conflict (Database.execute); skipped
    inside a caller's transaction (a batch), where the readers' recheck of recent writes
    (reviewer/store/triage.py) finds what it changed."""
    if db.in_transaction():
        return
    # still conflicting after the retries: the write goes on; the readers' recheck finds its rows
    with contextlib.suppress(duckdb.TransactionException, duckdb.ConstraintException):
        db.drop_derived("triage_signals", where, params)
