"""The stored consensus of each spectrum's VI labels (table `vi_state`): persistence only.

Whether a spectrum's VI labels are in conflict is decided in `reviewer.services.conflicts` (the DESI
merge of reviewer.services.consensus); the store keeps, per spectrum and scope ('' = every label, or
an audit session id), whether they conflict, whether a merger's resolution is newer than them, when
the newest of them was made (the Conflicts tab's order), and the newest label row the state reflects,
and says which states are behind their labels. So the Conflicts tab reads the conflicts it shows
instead of merging every labelled spectrum's labels on each refresh.
"""
from __future__ import annotations

from typing import Any

import duckdb

from reviewer.store.database import Database

_TYPES = {"spectrum_id": "VARCHAR", "scope": "VARCHAR", "conflict": "BOOLEAN", "resolved": "BOOLEAN",
          "updated_at": "TIMESTAMPTZ", "synced_seq": "BIGINT"}

_BEHIND_SQL = """
WITH labels AS (
    SELECT spectrum_id, session_id, seq FROM vi_labels
    UNION ALL SELECT item_id, session_id, seq FROM resolutions WHERE item_kind = 'spectrum'
), wanted AS (
    SELECT spectrum_id, '' AS scope, max(seq) AS seq FROM labels GROUP BY 1
    UNION ALL
    SELECT spectrum_id, session_id, max(seq) FROM labels WHERE session_id IS NOT NULL GROUP BY 1, 2
)
SELECT w.spectrum_id, w.scope, w.seq, s.pipeline_z, s.pipeline_class FROM wanted w
LEFT JOIN vi_state v ON v.spectrum_id = w.spectrum_id AND v.scope = w.scope
LEFT JOIN spectra s ON s.spectrum_id = w.spectrum_id
WHERE v.synced_seq IS NULL OR v.synced_seq < w.seq
"""


class VIStateRepository:
    def __init__(self, db: Database):
        self.db = db

    def vi_states_behind(self) -> list[dict[str, Any]]:
        """(spectrum_id, scope, seq, pipeline_z, pipeline_class) whose stored state predates their newest
        VI label or resolution (seq: that newest row's), with the spectrum's pipeline answers the merge
        falls back on."""
        return self.db.rows(_BEHIND_SQL)

    def put_vi_states(self, rows: list[dict[str, Any]]) -> bool:
        """Store each (spectrum, scope)'s state (dicts with the keys of `_TYPES`) in one statement; a stored
        row is replaced unless it reflects a newer label row. False when a concurrent store of the same
        rows won: the caller checks again."""
        if not rows:
            return True
        try:
            self.db.upsert_synced("vi_state", _TYPES, ("spectrum_id", "scope"), rows)
        except (duckdb.TransactionException, duckdb.ConstraintException):
            return False
        return True

    def vi_conflicts(self, scope: str = "", include_resolved: bool = False) -> list[tuple[str, Any]]:
        """(spectrum id, its newest label's time) of the spectra whose stored state is a conflict, open
        (or resolved too, with `include_resolved`)."""
        resolved = "" if include_resolved else "AND NOT resolved"
        return self.db.execute(f"SELECT spectrum_id, updated_at FROM vi_state WHERE scope = ? AND conflict {resolved}",
                               [scope]).fetchall()
