"""Migrations on a real DuckDB file: fresh -> latest, re-open is a no-op, a failure changes nothing."""
import duckdb
import pytest

from reviewer.store import Store
from reviewer.store.schema import LATEST_VERSION, MIGRATIONS, Migration, MigrationError, current_version, migrate

EXPECTED_TABLES = {
    "schema_version", "spectra", "tasks", "trajectories", "steps", "images", "reviewers", "reviews", "vi_labels",
    "annotations", "ratings", "preferences", "revisions", "curation_events", "audit_sessions", "session_items",
    "session_reviewers",
}


def tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def test_fresh_database_reaches_latest_version(tmp_path):
    path = tmp_path / "fresh.duckdb"
    store = Store(path)
    assert store.schema_version == LATEST_VERSION == len(MIGRATIONS)
    store.close()
    con = duckdb.connect(str(path), read_only=True)
    assert tables(con) >= EXPECTED_TABLES
    versions = con.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [v[0] for v in versions] == list(range(1, LATEST_VERSION + 1))
    con.close()


def test_reopening_applies_nothing(tmp_path):
    path = tmp_path / "again.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    before = con.execute("SELECT version, applied_at FROM schema_version ORDER BY version").fetchall()
    assert migrate(con) == LATEST_VERSION
    assert con.execute("SELECT version, applied_at FROM schema_version ORDER BY version").fetchall() == before
    con.close()
    store = Store(path)
    assert store.schema_version == LATEST_VERSION
    store.close()


def test_failing_migration_leaves_version_and_tables_unchanged(tmp_path):
    con = duckdb.connect(str(tmp_path / "broken.duckdb"))
    assert migrate(con) == LATEST_VERSION
    broken = Migration("half-done", "CREATE TABLE half_done (x INTEGER); SELECT * FROM no_such_table;")
    with pytest.raises(MigrationError) as info:
        migrate(con, [*MIGRATIONS, broken])
    assert info.value.version == LATEST_VERSION
    assert current_version(con) == LATEST_VERSION
    assert "half_done" not in tables(con)
    # the next good migration still applies on top
    good = Migration("add a column", "ALTER TABLE spectra ADD COLUMN note VARCHAR;")
    assert migrate(con, [*MIGRATIONS, good]) == LATEST_VERSION + 1
    assert "note" in {r[0] for r in con.execute("DESCRIBE spectra").fetchall()}
    con.close()


def test_newer_database_than_program_is_refused(tmp_path):
    con = duckdb.connect(str(tmp_path / "future.duckdb"))
    migrate(con)
    con.execute("INSERT INTO schema_version (version, description) VALUES (?, 'from the future')", [LATEST_VERSION + 1])
    with pytest.raises(RuntimeError, match="newer"):
        migrate(con)
    con.close()
