"""DuckDB store: schema + migrations and the one repository class (the only SQL in the house)."""
from reviewer.store.connection import StoreUnavailable
from reviewer.store.ingest import IngestSummary, ingest_paths, spectrum_id_for
from reviewer.store.paths import default_db_path, resolve_db_path
from reviewer.store.repository import Store

__all__ = [
    "Store", "StoreUnavailable", "default_db_path", "resolve_db_path", "ingest_paths", "IngestSummary",
    "spectrum_id_for",
]
