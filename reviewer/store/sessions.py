"""Audit sessions (campaigns): a named set of trajectories, the reviewers assigned, a mode, blind or
not. Closing a session stamps `closed_at` once; freezing its labels (refusing later writes, reading
labels up to `closed_at` for export and stats) is the review layer's job."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reviewer.store.codec import new_id, now, to_json
from reviewer.store.database import Database
from reviewer.store.labels import LabelRepository

SESSION_MODES = ("verdicts", "rating", "curation")


class SessionRepository:
    """Audit sessions; assigning a reviewer registers them with `labels`."""

    def __init__(self, db: Database, labels: LabelRepository):
        self.db = db
        self._labels = labels

    def create_session(
        self, name: str, mode: str, trajectory_ids: Iterable[str], reviewers: Iterable[str] = (),
        blind: bool = True, filters: dict | None = None, created_by: str | None = None, *,
        id: str | None = None, created_at: datetime | None = None,
    ) -> str:
        """Create a campaign over `trajectory_ids` (kept in the given order) in one transaction."""
        if mode not in SESSION_MODES:
            raise ValueError(f"mode must be one of {', '.join(SESSION_MODES)}; got {mode!r}")
        if not name.strip():
            raise ValueError("a session needs a name")
        session_id = id or new_id()
        items = list(dict.fromkeys(trajectory_ids))
        people = list(dict.fromkeys(r.strip() for r in reviewers if r.strip()))
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO audit_sessions (id, name, mode, blind, filters, created_by, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [session_id, name.strip(), mode, bool(blind), to_json(filters), created_by, created_at or now()],
            )
            self.db.insert_rows("session_items", ("session_id", "trajectory_id", "position"),
                                [[session_id, tid, pos] for pos, tid in enumerate(items)], ignore_duplicates=True)
            for person in people:
                self._labels.add_reviewer(person)
            self.db.insert_rows("session_reviewers", ("session_id", "reviewer"),
                                [[session_id, person] for person in people], ignore_duplicates=True)
        return session_id

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row plus `trajectory_ids` (in order) and `reviewers`."""
        row = self.db.row("SELECT * FROM audit_sessions WHERE id = ?", [session_id])
        if row is None:
            return None
        row["trajectory_ids"] = self.session_items(session_id)
        row["reviewers"] = [r[0] for r in self.db.execute(
            "SELECT reviewer FROM session_reviewers WHERE session_id = ? ORDER BY reviewer", [session_id]).fetchall()]
        return row

    def find_session(self, name_or_id: str) -> dict[str, Any] | None:
        """A session by id, else the newest session with that name."""
        return self.db.row(
            "SELECT * FROM audit_sessions WHERE id = ? OR name = ? ORDER BY (id = ?) DESC, created_at DESC LIMIT 1",
            [name_or_id, name_or_id, name_or_id])

    def session_items(self, session_id: str) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT trajectory_id FROM session_items WHERE session_id = ? ORDER BY position", [session_id]).fetchall()]

    def holds_item(self, session_id: str, trajectory_id: str) -> bool:
        return self.db.row("SELECT 1 AS one FROM session_items WHERE session_id = ? AND trajectory_id = ?",
                           [session_id, trajectory_id]) is not None

    def list_sessions(self, reviewer: str | None = None, include_closed: bool = True) -> list[dict[str, Any]]:
        """Sessions, newest first; with `reviewer`, only those that person is assigned to."""
        conds, params = [], []
        if reviewer is not None:
            conds.append("id IN (SELECT session_id FROM session_reviewers WHERE reviewer = ?)")
            params.append(reviewer)
        if not include_closed:
            conds.append("closed_at IS NULL")
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return self.db.rows(f"SELECT * FROM audit_sessions {where} ORDER BY created_at DESC, id", params)

    def close_session(self, session_id: str, at: datetime | None = None) -> bool:
        """Close a session once; returns False when it was already closed or does not exist."""
        cur = self.db.execute(
            "UPDATE audit_sessions SET closed_at = ? WHERE id = ? AND closed_at IS NULL RETURNING id",
            [at or now(), session_id],
        )
        return bool(cur.fetchall())
