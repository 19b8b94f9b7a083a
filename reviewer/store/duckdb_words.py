"""What DuckDB's error messages say, read in one place.

DuckDB raises a few exception types (IOException, ConstraintException, ...) whose message text is
the only way to tell a held lock from a damaged file, a duplicate key from another constraint, or
which system error stopped a COPY. Those texts are not an API: they are matched here only, and
tests/reviewer/store/test_duckdb_words.py provokes each error with the installed DuckDB and checks
that it is still recognised (pyproject caps duckdb for the same reason).
"""
from __future__ import annotations

import errno
import os
import re

import duckdb

# another process holds the file (matched without the path: a folder may be called "locks")
LOCK_SIGN = re.compile(r"could not set lock|conflicting lock", re.I)
# the system refused a write to the file, or to the folder its .wal goes in
READ_ONLY_SIGN = re.compile(r"permission denied|read-only file system", re.I)
# the file is not a readable database
DAMAGE_SIGNS = ("Corrupt database", "checksum", "Could not read enough bytes", "not a valid DuckDB database")
# "... (PID 1234) by user ...": the lock holder
_LOCK_PID = re.compile(r"\(PID (\d+)\)")
# system errors a COPY / write can meet, recognised by their strerror words in DuckDB's message
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR,
                errno.EISDIR, errno.EEXIST)  # EEXIST: DuckDB's words for a COPY onto a folder


def is_lock(text: str) -> bool:
    return LOCK_SIGN.search(text) is not None


def lock_pid(text: str) -> int | None:
    """The pid DuckDB's lock error names as the file's holder, when it names one."""
    found = _LOCK_PID.search(text)
    return int(found.group(1)) if found else None


def is_damage(exc: Exception) -> bool:
    text = str(exc)
    return isinstance(exc, duckdb.IOException) or any(sign in text for sign in DAMAGE_SIGNS)


def is_duplicate_key(exc: Exception) -> bool:
    return isinstance(exc, duckdb.ConstraintException) and "Duplicate key" in str(exc)


def write_errno(text: str) -> int | None:
    """The errno whose words DuckDB's message about a failed write carries, if any."""
    return next((code for code in WRITE_ERRNOS if os.strerror(code) in text), None)
