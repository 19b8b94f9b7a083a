"""One read-write DuckDB connection per database file per process, and one cursor per thread.

DuckDB lets only one process hold a file read-write, and a connection object is not thread-safe:
the app (one process, many Tornado/Panel threads) therefore shares one connection per file, kept
in a module-level registry keyed by the resolved path, and every thread works through its own
`connection.cursor()` (a cheap child connection onto the same database).

Files are private: before it opens a database file the process's umask gains 0o077 (`private_files`),
so the file, its `.wal` (which DuckDB deletes at each checkpoint and creates again with the umask's
mode) and whatever else the process writes afterwards are readable by their user only (0600). An
existing file keeps the mode it has.
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from reviewer.store.duckdb_words import READ_ONLY_SIGN, is_damage, is_lock, lock_pid
from reviewer.store.schema import SchemaError, migrate


class StoreUnavailable(RuntimeError):
    """The database file cannot be opened (typically: another process holds it)."""


class StoreDamaged(StoreUnavailable):
    """The database file is not a readable DuckDB database (truncated, overwritten, corrupt)."""


class StoreReadOnly(StoreUnavailable):
    """The database file, or its folder, cannot be written by this user (or lies on a read-only disk)."""


class StoreSchemaError(StoreUnavailable):
    """The file's schema is newer than this program, or half-migrated (reviewer.store.schema.check_schema)."""


def _name(path) -> str:
    return Path(str(path)).name  # the name only: pages and logs need not show the server's folders


def damage_of(path, exc: Exception) -> StoreDamaged | None:
    """A StoreDamaged saying what is wrong with the file, when `exc` is DuckDB reporting a damaged file."""
    text = str(exc)
    if is_damage(exc):
        name = _name(path)
        first = text.splitlines()[0].replace(str(path), name)
        return StoreDamaged(f"the database file {name} is damaged or unreadable ({first}); "
                            "restore it from a backup or move it aside to start a new one")
    return None


def unwritable_of(path, exc: Exception) -> StoreReadOnly | None:
    """A StoreReadOnly naming the file and what to do, when `exc` is a write to it (or to its .wal)
    refused by the system. Only errors that name the database file count: a COPY to an export file
    that cannot be written is the export's problem, not the database's."""
    text = str(exc)
    found = READ_ONLY_SIGN.search(text)
    if path is None or found is None or str(path) not in text:
        return None
    return StoreReadOnly(f"the database file {_name(path)} is read-only here ({found.group(0).lower()}): "
                         "give this user write access to the file and its folder, or copy it to a writable "
                         "folder and open the copy")


PRIVATE_UMASK = 0o077


def _current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux); else set and reset."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(PRIVATE_UMASK)
    os.umask(mask)
    return mask


def private_files() -> None:
    """Make the files this process creates from now on readable and writable by their user only: the
    umask gains 0o077 (what it already withholds stays withheld). A database and its WAL hold every
    label and note; another user of the machine has no business reading them."""
    mask = _current_umask()
    if mask & PRIVATE_UMASK != PRIVATE_UMASK:
        os.umask(mask | PRIVATE_UMASK)


def locked_message(name: str, exc: Exception) -> str:
    """Who holds the file, by pid only: DuckDB's own words also give the holder's program path and user."""
    pid = lock_pid(str(exc))
    holder = f"another process (PID {pid})" if pid else "another process"
    return f"cannot open {name}: Could not set lock on it: {holder} has it open"


class SharedConnection:
    """The process-wide connection to one database file plus the per-thread cursors onto it."""

    def __init__(self, path: Path | None):
        self.path = path
        target = str(path) if path is not None else ":memory:"
        if path is not None:
            private_files()  # the file, if DuckDB creates it, and its .wal: 0600
        try:
            self.connection = duckdb.connect(target)
        except duckdb.Error as exc:
            name = _name(target)
            if isinstance(exc, duckdb.IOException) and is_lock(str(exc).replace(target, name)):
                raise StoreUnavailable(locked_message(name, exc)) from exc  # another process holds it: not damage
            refused = StoreUnavailable(f"cannot open {name}: {str(exc).replace(target, name)}")
            raise unwritable_of(target, exc) or damage_of(target, exc) or refused from exc
        self._local = threading.local()
        # (thread, cursor) of every thread that made one, so close() can close them all and
        # release the file lock; entries of finished threads are pruned as new ones arrive.
        self._cursors: list[tuple[weakref.ref, duckdb.DuckDBPyConnection]] = []
        self._cursors_lock = threading.Lock()
        # Database.write_together's writes, one thread at a time: DuckDB's optimistic concurrency fails
        # one of two transactions that write the same row, and under many threads a retry fails again
        self.together_lock = threading.Lock()
        self.closed = False
        self.pinned = False  # see pin()
        self.known_reviewers: set[str] = set()
        # {derived table: the write mark at which every row of it was last found in step}; see
        # VerdictStateRepository.write_mark (a file another process writes still moves the mark)
        self.in_step_at: dict[str, tuple] = {}
        # {derived table: how many times rows of it were dropped outside the writes its mark follows}
        self.dropped: dict[str, int] = {}
        self.probed = False  # every table read through once (Store.probe)
        self.column_types: dict[str, dict[str, str]] = {}  # {table: {column: SQL type}} (Database.insert_rows)
        self.derived: dict[str, tuple] = {}  # see Database.derived
        try:
            self.version = migrate(self.cursor())
        except Exception as exc:
            self.close()  # release the file: a refused database is not held open
            raise self._refusal(exc) from exc

    def _refusal(self, exc: Exception) -> Exception:
        """What the opening of a file whose schema could not be checked or migrated says."""
        refused = unwritable_of(self.path, exc)  # a migration that could not be written
        if refused is not None or not isinstance(exc, SchemaError):
            return refused or damage_of(self.path, exc) or exc
        name = _name(self.path)
        text = str(exc).replace(str(self.path), name)
        if type(exc) is SchemaError:  # refused by the check, before anything was written
            return StoreSchemaError(f"the database file {name} was not opened, and is unchanged: {text}")
        return StoreSchemaError(f"the database file {name} cannot be opened: {text}")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor (created on first use; released with the thread)."""
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            # made and registered under the lock `close` takes: a cursor made while the store closes
            # is either refused here or closed (interrupted) there, never left open on a closed file
            with self._cursors_lock:
                if self.closed:
                    raise StoreUnavailable(f"store {_name(self.path) if self.path else ':memory:'} is closed")
                cur = self.connection.cursor()
                live = []
                for thread_ref, other in self._cursors:
                    thread = thread_ref()
                    if thread is not None and thread.is_alive():
                        live.append((thread_ref, other))
                    else:
                        other.close()
                live.append((weakref.ref(threading.current_thread()), cur))
                self._cursors = live
            # Timestamps come back in UTC whatever the machine's zone is.
            cur.execute("SET TimeZone = 'UTC'")
            self._local.cursor = cur
            self._local.depth = 0
        return cur

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """BEGIN/COMMIT on this thread's cursor; ROLLBACK on any exception. Nested use joins the outer one."""
        cur = self.cursor()
        if self._local.depth:
            self._local.depth += 1
            try:
                yield cur
            finally:
                self._local.depth -= 1
            return
        cur.execute("BEGIN TRANSACTION")
        self._local.depth = 1
        try:
            yield cur
        except BaseException:
            self._local.depth = 0
            cur.execute("ROLLBACK")
            raise
        self._local.depth = 0
        try:
            cur.execute("COMMIT")
        except duckdb.Error as exc:
            refused = unwritable_of(self.path, exc)
            if refused is None:
                raise
            raise refused from exc

    def in_transaction(self) -> bool:
        return bool(getattr(self._local, "depth", 0))

    def close(self) -> None:
        with self._cursors_lock:
            if self.closed:
                return
            self.closed = True
            for _, cur in self._cursors:
                _close_cursor(cur)
            self._cursors = []
        _close_cursor(self.connection)


def _close_cursor(cur: duckdb.DuckDBPyConnection, tries: int = 100) -> None:
    """Close a thread's cursor (or the connection itself) even while a query runs on it (a read-ahead or
    a priority refresh that outlived its page): DuckDB refuses to close a busy one, so the query is
    interrupted (it fails there, as work on a closing store should) and the close retried."""
    for _ in range(tries):
        try:
            cur.close()
            return
        except duckdb.ResourceInUseException:
            cur.interrupt()
            time.sleep(0.01)
    cur.close()


_registry: dict[Path, SharedConnection] = {}
_registry_lock = threading.Lock()


def shared_connection(path: Path | None) -> SharedConnection:
    """The registry's connection for `path` (opened and migrated on first use); None = private in-memory db."""
    if path is None:
        return SharedConnection(None)
    with _registry_lock:
        shared = _registry.get(path)
        if shared is None or shared.closed:
            shared = SharedConnection(path)
            _registry[path] = shared
    return shared


def release(shared: SharedConnection) -> None:
    """Close a shared connection and forget it (every Store on that file is closed with it); a pinned
    one stays open."""
    if shared.pinned:
        return
    with _registry_lock:
        if shared.path is not None and _registry.get(shared.path) is shared:
            del _registry[shared.path]
    shared.close()


def pin(path: Path, pinned: bool = True) -> None:
    """Keep this process's connection to `path` open (opening it if need be) whoever calls
    Store.close(): the app pins the database it serves, since the CLI commands it runs for clients
    close their store when done. close_all() still closes it. pinned=False undoes it."""
    if pinned:
        shared_connection(path).pinned = True
        return
    with _registry_lock:
        shared = _registry.get(path)
    if shared is not None:
        shared.pinned = False


def close_all() -> None:
    """Close every open database of this process (tests, shutdown)."""
    with _registry_lock:
        items = list(_registry.values())
        _registry.clear()
    for shared in items:
        shared.close()
