"""Database files for tests: each test writes to its own."""
from __future__ import annotations

import shutil
from pathlib import Path


def own_copy(template: Path, folder: Path) -> Path:
    """A copy of a closed database file for one test (writes there reach no other test)."""
    path = folder / template.name
    shutil.copyfile(template, path)
    return path


def undo_version_18(con) -> None:
    """Take a file (a DuckDB connection to it) back from schema version 18: first looks gone."""
    con.execute("DROP TABLE IF EXISTS first_looks")
    con.execute("ALTER TABLE audit_sessions DROP COLUMN IF EXISTS first_look")
    con.execute("DELETE FROM schema_version WHERE version = 18")


def undo_version_17(con) -> None:
    """Take a file (a DuckDB connection to it) back from schema version 17 (and the later ones): the verdicts'
    active time gone (DuckDB drops a column only from a table without indexes: the one on reviews is made
    again after)."""
    undo_version_18(con)
    con.execute("DROP INDEX IF EXISTS reviews_trajectory")
    con.execute("ALTER TABLE reviews DROP COLUMN IF EXISTS active_s")
    con.execute("CREATE INDEX reviews_trajectory ON reviews (trajectory_id)")
    con.execute("DELETE FROM schema_version WHERE version = 17")


def undo_version_16(con) -> None:
    """Take a file (a DuckDB connection to it) back from schema version 16 (and the later ones): the claim
    checks' record gone."""
    undo_version_17(con)
    con.execute("DROP TABLE IF EXISTS claim_checks")
    con.execute("DELETE FROM schema_version WHERE version = 16")


def undo_version_15(con) -> None:
    """Take a file (a DuckDB connection to it) back from schema version 15 (and the later ones): the campaigns'
    plan, gold items and reservations gone."""
    undo_version_16(con)
    for table in ("gold_items", "item_reservations"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    for column in ("per_item", "gold_rate"):
        con.execute(f"ALTER TABLE audit_sessions DROP COLUMN IF EXISTS {column}")
    con.execute("DELETE FROM schema_version WHERE version = 15")


def undo_version_14(con) -> None:
    """Take a file (a DuckDB connection to it) back from schema version 14 (and the later ones): the step
    judgments gone."""
    undo_version_15(con)
    con.execute("DROP TABLE IF EXISTS step_judgments")
    con.execute("DELETE FROM schema_version WHERE version = 14")


def undo_version_13(con) -> None:
    """Take a file (a DuckDB connection to it) back from schema version 13 (and the later ones): the current
    labels and their pair counts, the settled labels' task and the stored triage priorities gone, the version
    row too."""
    undo_version_14(con)
    for table in ("current_reviews", "current_ratings", "verdict_pair_counts", "rating_pair_counts"):
        con.execute(f"DROP TABLE {table}")
    con.execute("ALTER TABLE settled_labels DROP COLUMN task")
    con.execute("ALTER TABLE triage_signals DROP COLUMN priority")
    con.execute("ALTER TABLE triage_signals DROP COLUMN priced_by")
    con.execute("DELETE FROM schema_version WHERE version = 13")
