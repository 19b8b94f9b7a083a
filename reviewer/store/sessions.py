"""Audit sessions (campaigns): a named set of trajectories, the reviewers assigned, a mode, blind or
not; optionally reviewers per item (`per_item`), gold items with known answers (table gold_items, apart
from session_items so that nothing the queue reads marks them) and the items reserved for a reviewer
(item_reservations). Closing a session stamps `closed_at` once; freezing its labels (refusing later writes,
reading labels up to `closed_at` for export and stats) is the review layer's job, and what a plan, a gold
item or a reservation means is reviewer/services/campaigns.py's."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar

from reviewer.store.codec import new_id, now, to_json
from reviewer.store.database import Database
from reviewer.store.labels import LabelRepository

T = TypeVar("T")
SESSION_MODES = ("verdicts", "rating", "curation")
GOLD_SOURCES = ("file", "survey", "consensus")

# Who holds each item of a campaign: the reviewers with a current verdict on it in the campaign's scope
# (the newest row per reviewer, not withdrawn) and those holding a reservation that has not expired.
# Parameters: the session id twice, then the time the reservations are read at.
HOLDERS_SQL = """SELECT trajectory_id, reviewer FROM reviews WHERE session_id = ?
    QUALIFY row_number() OVER (PARTITION BY trajectory_id, reviewer ORDER BY created_at DESC, seq DESC) = 1
        AND action <> 'clear'
    UNION SELECT trajectory_id, reviewer FROM item_reservations WHERE session_id = ? AND expires_at > ?"""


class SessionRepository:
    """Audit sessions; assigning a reviewer registers them with `labels`."""

    def __init__(self, db: Database, labels: LabelRepository):
        self.db = db
        self._labels = labels

    def create_session(
        self, name: str, mode: str, trajectory_ids: Iterable[str], reviewers: Iterable[str] = (),
        blind: bool = True, filters: dict | None = None, created_by: str | None = None, *,
        id: str | None = None, created_at: datetime | None = None, per_item: int | None = None,
        gold: Iterable[dict[str, Any]] = (), gold_rate: float | None = None, first_look: bool = False,
    ) -> str:
        """Create a campaign over `trajectory_ids` (kept in the given order) in one transaction; `gold`:
        rows (trajectory_id, answer, answer_z, source, origin) of the items among them with a known answer."""
        if mode not in SESSION_MODES:
            raise ValueError(f"mode must be one of {', '.join(SESSION_MODES)}; got {mode!r}")
        if not name.strip():
            raise ValueError("a session needs a name")
        if per_item is not None and int(per_item) < 1:
            raise ValueError(f"reviewers per item must be at least 1; got {per_item}")
        session_id = id or new_id()
        items = list(dict.fromkeys(trajectory_ids))
        people = list(dict.fromkeys(r.strip() for r in reviewers if r.strip()))
        gold = list(gold)
        if any(g["trajectory_id"] not in items for g in gold):
            raise ValueError("a gold item must be one of the campaign's items")
        if any(g["source"] not in GOLD_SOURCES for g in gold):
            raise ValueError(f"a gold answer's source is one of {', '.join(GOLD_SOURCES)}")
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO audit_sessions (id, name, mode, blind, filters, created_by, created_at, per_item, "
                "gold_rate, first_look) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [session_id, name.strip(), mode, bool(blind), to_json(filters), created_by, created_at or now(),
                 per_item, gold_rate, bool(first_look)],
            )
            self.db.insert_rows("gold_items", ("session_id", "trajectory_id", "answer", "answer_z", "source", "origin"),
                                [[session_id, g["trajectory_id"], g["answer"], g.get("answer_z"), g["source"],
                                  g.get("origin")] for g in gold], ignore_duplicates=True)
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

    # -- gold items and reservations (reviewer/services/campaigns.py) ---------------------------
    def gold_items(self, session_id: str) -> list[dict[str, Any]]:
        """The campaign's gold items with their known answers, in queue order, each with its task."""
        return self.db.rows(
            "SELECT g.trajectory_id, g.answer, g.answer_z, g.source, g.origin, t.task, si.position "
            "FROM gold_items g JOIN session_items si USING (session_id, trajectory_id) "
            "LEFT JOIN trajectories t ON t.id = g.trajectory_id WHERE g.session_id = ? ORDER BY si.position",
            [session_id])

    def is_gold(self, session_id: str, trajectory_id: str) -> bool:
        return self.db.row("SELECT 1 AS one FROM gold_items WHERE session_id = ? AND trajectory_id = ?",
                           [session_id, trajectory_id]) is not None

    def reserve(self, session_id: str, trajectory_id: str, reviewer: str, expires_at: datetime) -> None:
        """Hold an item for a reviewer until `expires_at` (a reservation held already is moved to it), and
        release the reviewer's reservations of the campaign's other items: one reviewer holds the item on
        their screen, not every item they passed."""
        def write():
            self.db.execute("DELETE FROM item_reservations WHERE session_id = ? AND reviewer = ? AND trajectory_id <> ?",
                            [session_id, reviewer, trajectory_id])
            self.db.execute(
                "INSERT INTO item_reservations (session_id, trajectory_id, reviewer, expires_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (session_id, trajectory_id, reviewer) DO UPDATE SET expires_at = excluded.expires_at",
                [session_id, trajectory_id, reviewer, expires_at])

        self.db.write_together(write)

    def holders(self, session_id: str, trajectory_id: str, at: datetime) -> set[str]:
        """Who holds the item at `at`: a current verdict on it in the campaign, or a live reservation."""
        return {r[0] for r in self.db.execute(
            f"SELECT DISTINCT reviewer FROM ({HOLDERS_SQL}) WHERE trajectory_id = ?",
            [session_id, session_id, at, trajectory_id]).fetchall()}

    def verdict_counts(self, session_id: str) -> dict[str, int]:
        """How many reviewers have a current verdict in the campaign on each of its items (0 included)."""
        rows = self.db.execute(
            "WITH v AS (SELECT trajectory_id FROM reviews WHERE session_id = ? QUALIFY row_number() OVER "
            "(PARTITION BY trajectory_id, reviewer ORDER BY created_at DESC, seq DESC) = 1 AND action <> 'clear') "
            "SELECT si.trajectory_id, count(v.trajectory_id) FROM session_items si "
            "LEFT JOIN v ON v.trajectory_id = si.trajectory_id WHERE si.session_id = ? GROUP BY 1",
            [session_id, session_id]).fetchall()
        return {tid: int(n) for tid, n in rows}

    def in_turn(self, work: Callable[[], T]) -> T:
        """`work()` (reads and writes of the store) in one transaction, one thread of the process at a time:
        a check of who holds an item and the verdict it allows are written together."""
        return self.db.write_together(work)
