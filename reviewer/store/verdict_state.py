"""The stored consensus of each trajectory's verdicts (table `verdict_state`) and its settled label
(table `settled_labels`): persistence only.

What the consensus and the settled label are, is decided in `reviewer.services.conflicts`; the store keeps
them per trajectory and scope ('' = every label, or an audit session id) with the newest label row
they reflect (and, for the settled label, a hash of the trajectory's answer columns), and says which
rows are behind the labels or the trajectory.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from reviewer.store.database import Database

if TYPE_CHECKING:  # pandas is read only where a frame is made: a command that makes none does not import it
    import pandas as pd

# The trajectory's columns its own answer and credibility are read from (consensus.agent_label,
# conflicts._credibility), over `trajectories t`: a settled label stored with another hash is behind.
OWN_HASH = "hash(t.task, t.answer, t.answer_z, t.credibility, CAST(t.outcome AS VARCHAR))"
_KEYS = ("trajectory_id", "scope")
_STATE_TYPES = {"trajectory_id": "VARCHAR", "scope": "VARCHAR", "n_reviews": "INTEGER", "status": "VARCHAR",
                "synced_seq": "BIGINT"}
_SETTLED_TYPES = {"trajectory_id": "VARCHAR", "scope": "VARCHAR", "synced_seq": "BIGINT", "own_hash": "UBIGINT",
                  "n_reviews": "INTEGER", "settled": "BOOLEAN", "truth": "VARCHAR", "truth_z": "DOUBLE",
                  "truth_source": "VARCHAR", "predicted": "VARCHAR", "predicted_z": "DOUBLE", "credibility": "VARCHAR",
                  "correct": "BOOLEAN", "task": "VARCHAR"}

_WANTED_SQL = """
WITH labels AS (
    SELECT trajectory_id, session_id, seq FROM reviews WHERE seq > ?
    UNION ALL SELECT item_id, session_id, seq FROM resolutions WHERE item_kind = 'trajectory' AND seq > ?
), wanted AS (
    SELECT trajectory_id, '' AS scope, max(seq) AS seq FROM labels {where} GROUP BY 1
    UNION ALL
    SELECT trajectory_id, session_id, max(seq) FROM labels WHERE session_id IS NOT NULL {also} GROUP BY 1, 2
)"""
_LABELS_BEHIND = "v.synced_seq IS NULL OR v.synced_seq < w.seq OR s.synced_seq IS NULL OR s.synced_seq < w.seq"
_STATES_SQL = """LEFT JOIN (SELECT * FROM verdict_state {where}) v ON v.trajectory_id = w.trajectory_id AND v.scope = w.scope
LEFT JOIN (SELECT * FROM settled_labels {where}) s ON s.trajectory_id = w.trajectory_id AND s.scope = w.scope"""
_BEHIND_SQL = f"""{_WANTED_SQL}
SELECT w.trajectory_id, w.scope, w.seq, {{own_hash}} AS own_hash FROM wanted w
{_STATES_SQL}
LEFT JOIN (SELECT * FROM trajectories {{where_id}}) t ON t.id = w.trajectory_id
WHERE {_LABELS_BEHIND} OR s.own_hash IS DISTINCT FROM {{own_hash}}
"""
# Behind their labels only (no trajectory saved since everything was last in step): the join with every
# trajectory for its answer's hash is left out (~50 ms at 1M), the hashes of the few rows behind read apart.
_BEHIND_LABELS_SQL = f"""{_WANTED_SQL}
SELECT w.trajectory_id, w.scope, w.seq FROM wanted w
{_STATES_SQL}
WHERE {_LABELS_BEHIND}
"""

# What moves whenever a stored consensus or settled label can fall behind (_BEHIND_SQL's inputs): a label or
# resolution written (each takes the next `seq`), a trajectory saved again (a save deletes and inserts its
# row, with saved_at its time) or removed (the count). Aggregates of single columns: a few ms at 1M rows.
_WRITE_MARK_SQL = ("SELECT (SELECT max(seq) FROM reviews), (SELECT max(seq) FROM resolutions), "
                   "(SELECT count(*) FROM trajectories), (SELECT max(saved_at) FROM trajectories)")


class VerdictStateRepository:
    def __init__(self, db: Database):
        self.db = db

    def verdict_states_behind(self, trajectory_id: str | None = None, answers_changed: bool = True,
                              labels_after: tuple[int | None, int | None] | None = None) -> list[dict[str, Any]]:
        """(trajectory_id, scope, seq, own_hash) whose stored consensus or settled label predates their
        newest verdict or resolution, or whose settled label was computed from other answer columns of
        the trajectory (own_hash: the trajectory's now, read before the labels are). Without
        `answers_changed` (no trajectory saved or removed since the stored rows were last all in step)
        only the labels are compared: with `labels_after` (the newest review and resolution `seq` when they
        were), only the labels written since (a trajectory's newest label is then one of them)."""
        after = [-1 if s is None else s for s in (labels_after or (None, None))]  # seq starts at 1
        where, also, where_id, params = "", "", "", [*after]
        if trajectory_id is not None:  # each table read for the one trajectory (a join scanned 1M rows)
            where, also, where_id = "WHERE trajectory_id = ?", "AND trajectory_id = ?", "WHERE id = ?"
            params += [trajectory_id] * 5
        if answers_changed:
            return self.db.rows(_BEHIND_SQL.format(where=where, also=also, where_id=where_id, own_hash=OWN_HASH),
                                params)
        behind = self.db.rows(_BEHIND_LABELS_SQL.format(where=where, also=also), params[:6])
        ids = list({r["trajectory_id"] for r in behind})
        # list_contains on a few ids is an index lookup (~1 ms; a join scanned the table)
        hashes = dict(self.db.execute(f"SELECT t.id, {OWN_HASH} FROM trajectories t WHERE list_contains(?, t.id)",
                                      [ids]).fetchall()) if ids else {}
        return [{**r, "own_hash": hashes.get(r["trajectory_id"])} for r in behind]

    def write_mark(self) -> tuple:
        """A value that changes with every write that can put a stored consensus behind (_WRITE_MARK_SQL):
        read before a full check, it says later whether anything was written since."""
        return tuple(self.db.execute(_WRITE_MARK_SQL).fetchall()[0])

    def put_verdict_states(self, rows: list[dict[str, Any]]) -> bool:
        """Store the consensus and settled label of each (trajectory, scope) once, from dicts:
        trajectory_id, scope, synced_seq, own_hash, status and the other columns of settled_labels
        (verdict_state keeps n_reviews and status), in one statement per table. A stored row is
        replaced unless it reflects a newer label row (synced_seq never goes back). False when a
        concurrent store of the same rows won (after Database's retries): the caller checks again."""
        if not rows:
            return True
        try:
            self.db.upsert_synced("verdict_state", _STATE_TYPES, _KEYS, rows)
            self.db.upsert_synced("settled_labels", _SETTLED_TYPES, _KEYS, rows)
        except (duckdb.TransactionException, duckdb.ConstraintException):
            return False
        return True

    def settled_labels(self, scope: str = "", task: str | None = None) -> pd.DataFrame:
        """The stored settled labels of a scope (of `task`), one row per trajectory, by trajectory id:
        trajectory_id, spectrum_id, task, agent_name, backend, model (the trajectory's now), credibility,
        predicted, predicted_z, truth, truth_z, truth_source, correct."""
        cond, params = ("AND t.task = ?", [scope, task]) if task is not None else ("", [scope])
        # a frame straight from DuckDB: no dicts, no JSON decoded
        return self.db.frame(
            "SELECT s.trajectory_id, t.spectrum_id, t.task, t.agent_name, t.backend, t.model, s.credibility, "
            "s.predicted, s.predicted_z, s.truth, s.truth_z, s.truth_source, s.correct "
            f"FROM settled_labels s JOIN trajectories t ON t.id = s.trajectory_id WHERE s.scope = ? AND s.settled {cond} "
            "ORDER BY s.trajectory_id", params)

    def settled_counts(self, scope: str = "") -> pd.DataFrame:
        """The stored settled labels of a scope counted by task, truth, predicted, credibility and correct
        (a few rows per task, whatever the number of labels): those columns and n."""
        return self.db.frame("SELECT task, truth, predicted, credibility, correct, count(*) AS n FROM settled_labels "
                             "WHERE scope = ? AND settled GROUP BY ALL ORDER BY ALL", [scope])

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
