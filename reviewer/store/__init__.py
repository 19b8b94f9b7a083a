"""DuckDB persistence: schema, migrations, row codecs and the SQL (the only SQL in the house).

`Store(path)` opens the file (a `Database`: connection, transactions, lifecycle) and holds one
repository per concern, each with its own SQL: store.spectra, .trajectories, .images, .labels,
.sessions, .queue, .reviews, .verdict_state, .claims, .triage.

Review rules live above it (reviewer/labels.py, conflicts.py, curation.py, ...): nothing here
imports from reviewer/ outside this package.
"""
from reviewer.store.connection import LOCK_SIGN, StoreDamaged, StoreReadOnly, StoreSchemaError, StoreUnavailable
from reviewer.store.paths import default_db_path, resolve_db_path
from reviewer.store.repository import Store

__all__ = ["LOCK_SIGN", "Store", "StoreDamaged", "StoreReadOnly", "StoreSchemaError", "StoreUnavailable",
           "default_db_path", "resolve_db_path"]
