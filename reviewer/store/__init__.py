"""DuckDB persistence: schema, migrations, row codecs and the SQL (the only SQL in the house).

`Store(path)` opens the file (a `Database`: connection, transactions, lifecycle) and holds one
repository per concern, each with its own SQL: store.spectra, .trajectories, .images, .labels,
.sessions, .queue, .reviews, .verdict_state, .claims, .triage.

Review rules live above it (reviewer/services/labels.py, conflicts.py, curation.py, ...): nothing here
imports from reviewer/ outside this package.
"""
import duckdb

from reviewer.store.connection import StoreDamaged, StoreReadOnly, StoreSchemaError, StoreUnavailable
from reviewer.store.paths import default_db_path, resolve_db_path
from reviewer.store.repository import Store

# what a write that the database did not store raises (closed, read-only, full disk, I/O)
WRITE_FAILURES = (duckdb.Error, StoreUnavailable, OSError)

__all__ = ["WRITE_FAILURES", "Store", "StoreDamaged", "StoreReadOnly", "StoreSchemaError", "StoreUnavailable",
           "default_db_path", "resolve_db_path"]
