"""Plain helpers over query rows (dicts), shared by the services."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def group_rows(rows: Iterable[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    """Rows by the value of `key`, each group in the rows' order."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups
