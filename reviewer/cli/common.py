"""Helpers every subcommand shares: which database, and opening it with a readable error."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewer.store import Store, StoreUnavailable, resolve_db_path


def db_path(args: argparse.Namespace) -> Path:
    """`--db`, else $SPECREVIEW_DB, else the per-user default."""
    return resolve_db_path(getattr(args, "db", None))


def open_store(args: argparse.Namespace) -> Store | None:
    """The store named by the arguments, or None after printing why it cannot be opened (e.g. the
    app is running on it: DuckDB lets one process at a time write a file)."""
    path = db_path(args)
    try:
        return Store(path)
    except StoreUnavailable as exc:
        print(f"specreview: {exc}", file=sys.stderr)
        return None


def known_task(command: str, task_id: str) -> bool:
    """True for a kb task id; otherwise print why (naming the known tasks) and return False."""
    import kb

    try:
        kb.task(task_id)
    except KeyError as exc:
        print(f"specreview {command}: {exc.args[0]}", file=sys.stderr)
        return False
    return True
