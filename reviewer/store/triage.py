"""Triage inputs and results (tables `triage_models`, `triage_priority`): persistence only.

What the signals mean, how the weights are fitted and what a priority is are decided in
`reviewer.triage`; the store hands it the inputs in bulk (one query each) and keeps what it computed:
the weight vectors it used and each trajectory's cached priority with its signals. The queue's order
"priority" (reviewer/store/queue.py) reads the cached priorities.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewer.store.claims import CLAIM_COUNTS_SQL
from reviewer.store.codec import new_id, now, to_json
from reviewer.store.database import Database

TRIAGE_MODEL_KINDS = ("default", "fitted")

# Per trajectory: what the agents answered and the inputs of the triage signals. `n_reviewers`
# counts the people whose current verdict on it is not withdrawn (read from `reviews` itself, so it
# does not wait for verdict_state to be synced).
_TRIAGE_ITEMS_SQL = f"""
WITH claims AS ({CLAIM_COUNTS_SQL}),
current AS (
    SELECT trajectory_id, action FROM reviews
    QUALIFY row_number() OVER (PARTITION BY trajectory_id, reviewer ORDER BY created_at DESC, seq DESC) = 1
), seen AS (
    SELECT trajectory_id, count(*) AS n_reviewers FROM current WHERE action <> 'clear' GROUP BY trajectory_id
)
SELECT t.id AS trajectory_id, t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer, t.answer_z,
       t.credibility, t.created_at,
       t.outcome -> '$.margin' AS margin, t.outcome ->> '$.status' AS status,
       coalesce(TRY_CAST(t.outcome ->> '$.llm_disagrees' AS BOOLEAN), false) AS llm_disagrees,
       coalesce(c.contradicted, 0) AS contradicted,
       coalesce(n.n_reviewers, 0) AS n_reviewers
FROM trajectories t
LEFT JOIN claims c ON c.trajectory_id = t.id
LEFT JOIN seen n ON n.trajectory_id = t.id
"""


class TriageRepository:
    def __init__(self, db: Database):
        self.db = db

    # -- inputs ------------------------------------------------------------------------------
    def triage_items(self, task: str | None = None, spectrum_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Every trajectory (of `task`, of the given spectra, else all) with its answer, credibility, the
        decision margin and status its outcome recorded (None when absent), the verify LLM review's disagreement
        flag, the number of contradicted claims (latest checker version) and the number of reviewers
        with a current verdict. Ordered by creation, like the default queue."""
        conds, params = [], []
        if task:
            conds.append("t.task = ?")
            params.append(task)
        if spectrum_ids is not None:
            conds.append("list_contains(?, t.spectrum_id)")
            params.append(list(dict.fromkeys(spectrum_ids)))
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return self.db.rows(f"{_TRIAGE_ITEMS_SQL} {where} ORDER BY t.created_at, t.id", params)

    def recorded_measurements(self, trajectory_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """{trajectory id: the measurements its model steps recorded (steps.data.measurements), in
        step order}; trajectories that recorded none are absent."""
        ids = list(dict.fromkeys(trajectory_ids))
        if not ids:
            return {}
        rows = self.db.rows(
            "SELECT trajectory_id, data -> '$.measurements' AS measurements FROM steps "
            "WHERE kind = 'think' AND list_contains(?, trajectory_id) AND (data -> '$.measurements') IS NOT NULL "
            "ORDER BY trajectory_id, idx", [ids])
        out: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if isinstance(row["measurements"], list):
                out.setdefault(row["trajectory_id"], []).extend(m for m in row["measurements"] if isinstance(m, dict))
        return out

    def review_history(self, task: str | None = None) -> list[dict[str, Any]]:
        """Each reviewer's current verdict on each trajectory (withdrawn ones left out), oldest first,
        with the trajectory's task, agent and answer, and `n_before`: how many other reviewers' current
        verdicts on it were written before this one (what was already seen when it was given)."""
        where, params = ("AND t.task = ?", [task]) if task else ("", [])
        return self.db.rows(
            "WITH current AS (SELECT * FROM reviews QUALIFY row_number() OVER "
            "(PARTITION BY trajectory_id, reviewer ORDER BY created_at DESC, seq DESC) = 1) "
            "SELECT r.trajectory_id, r.reviewer, r.action, r.label, r.created_at, r.seq, "
            "row_number() OVER (PARTITION BY r.trajectory_id ORDER BY r.created_at, r.seq) - 1 AS n_before, "
            "t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer "
            f"FROM current r JOIN trajectories t ON t.id = r.trajectory_id WHERE r.action <> 'clear' {where} "
            "ORDER BY r.created_at, r.seq", params)

    # -- weight vectors ----------------------------------------------------------------------
    def save_triage_model(self, kind: str, features: list[str], weights: list[float], n_labels: int = 0,
                          n_errors: int = 0, info: dict[str, Any] | None = None) -> str:
        """Record a weight vector ([intercept, one per feature]); returns its id."""
        if kind not in TRIAGE_MODEL_KINDS:
            raise ValueError(f"kind must be one of {', '.join(TRIAGE_MODEL_KINDS)}; got {kind!r}")
        if len(weights) != len(features) + 1:
            raise ValueError(f"{len(features)} features need {len(features) + 1} weights; got {len(weights)}")
        model_id = new_id()
        self.db.execute(
            "INSERT INTO triage_models (id, kind, features, weights, n_labels, n_errors, info, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [model_id, kind, to_json(list(features)), to_json([float(w) for w in weights]), int(n_labels),
             int(n_errors), to_json(info), now()])
        return model_id

    def triage_model(self, model_id: str | None = None) -> dict[str, Any] | None:
        """A stored weight vector by id, else the one saved last (None: none yet)."""
        if model_id is not None:
            return self.db.row("SELECT * FROM triage_models WHERE id = ?", [model_id])
        return self.db.row("SELECT * FROM triage_models ORDER BY created_at DESC, id LIMIT 1")

    # -- cached priorities -------------------------------------------------------------------
    def put_priorities(self, rows: Iterable[dict[str, Any]], model_id: str) -> int:
        """Replace the cached priority of each trajectory in `rows` (dicts: trajectory_id, priority,
        signals), in one transaction. Returns rows written."""
        stamp = now()
        values = [[r["trajectory_id"], float(r["priority"]), to_json(r.get("signals") or {}), model_id, stamp]
                  for r in rows]
        if not values:
            return 0
        with self.db.transaction():
            self.db.execute("DELETE FROM triage_priority WHERE list_contains(?, trajectory_id)",
                            [[v[0] for v in values]])
            self.db.insert_rows("triage_priority", ("trajectory_id", "priority", "signals", "model_id", "computed_at"),
                                values)
        return len(values)

    def priorities(self, trajectory_ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """{trajectory id: {priority, signals, model_id, computed_at}} of the cached priorities (all, or
        of the given trajectories)."""
        if trajectory_ids is None:
            rows = self.db.rows("SELECT * FROM triage_priority")
        else:
            ids = list(dict.fromkeys(trajectory_ids))
            if not ids:
                return {}
            rows = self.db.rows("SELECT * FROM triage_priority WHERE list_contains(?, trajectory_id)", [ids])
        return {r.pop("trajectory_id"): r for r in rows}
