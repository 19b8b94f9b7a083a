"""Where the database lives: `--db PATH` beats $SPECREVIEW_DB beats a file in the per-user data folder."""
from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

from agents.settings import DB

ENV_VAR = DB.name
DB_FILENAME = "specreview.duckdb"


def default_db_path() -> Path:
    """The database used when nothing else is said: `<user data dir>/specreview/specreview.duckdb`."""
    return Path(user_data_dir("specreview", appauthor=False)) / DB_FILENAME


def resolve_db_path(db: str | os.PathLike | None = None) -> Path:
    """The database file to open: the explicit `db`, else $SPECREVIEW_DB, else `default_db_path()`.

    Returns an absolute path (so one file is one registry key however it was spelt) and creates
    the parent folder, since DuckDB will not: mode 0700, only its user may list or read it (a folder
    that exists keeps its mode).
    """
    chosen = db if db not in (None, "") else DB.text()
    path = Path(chosen).expanduser() if chosen is not None else default_db_path()
    path = path.resolve()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path
