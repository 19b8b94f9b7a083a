"""The stored consensus of each trajectory's verdicts (table `verdict_state`): persistence only.

What the consensus is, is decided in `reviewer.conflicts`; the store keeps its result per
trajectory and scope ('' = every label, or an audit session id) with the newest label row it
reflects, and says which rows are behind the labels.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reviewer.store.database import Database

_ROWS_PER_PUT = 500

_BEHIND_SQL = """
WITH labels AS (
    SELECT trajectory_id, session_id, seq FROM reviews
    UNION ALL SELECT item_id, session_id, seq FROM resolutions WHERE item_kind = 'trajectory'
), wanted AS (
    SELECT trajectory_id, '' AS scope, max(seq) AS seq FROM labels {where} GROUP BY 1
    UNION ALL
    SELECT trajectory_id, session_id, max(seq) FROM labels WHERE session_id IS NOT NULL {also} GROUP BY 1, 2
)
SELECT w.trajectory_id, w.scope, w.seq FROM wanted w
LEFT JOIN verdict_state v USING (trajectory_id, scope)
WHERE v.synced_seq IS NULL OR v.synced_seq < w.seq
"""


class VerdictStateRepository:
    def __init__(self, db: Database):
        self.db = db

    def verdict_states_behind(self, trajectory_id: str | None = None) -> list[dict[str, Any]]:
        """(trajectory_id, scope, seq) whose stored consensus predates their newest verdict or resolution."""
        where, also, params = "", "", []
        if trajectory_id is not None:
            where, also, params = "WHERE trajectory_id = ?", "AND trajectory_id = ?", [trajectory_id, trajectory_id]
        return self.db.rows(_BEHIND_SQL.format(where=where, also=also), params)

    def put_verdict_states(self, rows: list[tuple[str, str, int, str, int]]) -> None:
        """Store the consensus of (trajectory_id, scope, n_reviews, status, synced_seq) rows, each
        (trajectory, scope) once, in a few multi-row statements (a stored one is replaced; its
        synced_seq never goes back)."""
        for start in range(0, len(rows), _ROWS_PER_PUT):
            chunk = rows[start:start + _ROWS_PER_PUT]
            self.db.execute(
                "INSERT INTO verdict_state (trajectory_id, scope, n_reviews, status, synced_seq) VALUES "
                + ", ".join("(?, ?, ?, ?, ?)" for _ in chunk)
                + " ON CONFLICT (trajectory_id, scope) DO UPDATE SET n_reviews = excluded.n_reviews, "
                "status = excluded.status, synced_seq = greatest(verdict_state.synced_seq, excluded.synced_seq)",
                [v for tid, scope, n, status, seq in chunk for v in (tid, scope, int(n), status, int(seq))])

    def conflicted_trajectory_ids(self, scope: str = "") -> list[str]:
        """Trajectories whose stored consensus is an open conflict."""
        return [r[0] for r in self.db.execute(
            "SELECT trajectory_id FROM verdict_state WHERE scope = ? AND status = 'conflict' ORDER BY trajectory_id",
            [scope]).fetchall()]

    def resolved_trajectory_ids(self, scope: str = "") -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT trajectory_id FROM verdict_state WHERE scope = ? AND status = 'resolved' ORDER BY trajectory_id",
            [scope]).fetchall()]

    def latest_resolutions_of(self, trajectory_ids: Sequence[str],
                              session_id: str | None = None) -> dict[str, dict[str, Any]]:
        """`latest_resolution` of each of some trajectories (those that have one), in one query."""
        cond, params = ("AND session_id = ?", [session_id]) if session_id else ("", [])
        rows = self.db.rows(
            "SELECT * FROM resolutions WHERE item_kind = 'trajectory' AND item_id IN (SELECT unnest(?::VARCHAR[])) "
            f"{cond} QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY created_at DESC, seq DESC) = 1",
            [list(trajectory_ids), *params])
        return {r["item_id"]: r for r in rows}

    def latest_resolution(self, trajectory_id: str, session_id: str | None = None) -> dict[str, Any] | None:
        cond, params = ("AND session_id = ?", [session_id]) if session_id else ("", [])
        return self.db.row(
            f"SELECT * FROM resolutions WHERE item_kind = 'trajectory' AND item_id = ? {cond} "
            "ORDER BY created_at DESC, seq DESC LIMIT 1", [trajectory_id, *params])
