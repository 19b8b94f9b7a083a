"""The review queue: trajectories with, for one reviewer, what they have done and whether people disagree."""
from __future__ import annotations

from typing import Any

from reviewer.store.base import StoreBase

QUEUE_STATES = ("todo", "done", "all")

_QUEUE_SQL = """
WITH latest AS (
    SELECT trajectory_id, reviewer, action, CAST(label AS VARCHAR) AS label_text
    FROM reviews
    QUALIFY row_number() OVER (PARTITION BY trajectory_id, reviewer ORDER BY created_at DESC, seq DESC) = 1
), agg AS (
    SELECT trajectory_id,
           count(*) FILTER (WHERE action <> 'clear') AS n_reviews,
           count(DISTINCT CASE WHEN action <> 'clear' THEN action || coalesce(label_text, '') END) AS n_opinions
    FROM latest GROUP BY trajectory_id
)
SELECT t.id AS trajectory_id, t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer, t.answer_z,
       t.credibility, t.n_steps, t.created_at, s.object_id, s.survey, s.pipeline_class, s.pipeline_z,
       coalesce(a.n_reviews, 0) AS n_reviews, coalesce(a.n_opinions, 0) > 1 AS disagreement,
       CASE WHEN m.action IS NULL OR m.action = 'clear' THEN NULL ELSE m.action END AS my_action
       {position}
FROM trajectories t
LEFT JOIN spectra s USING (spectrum_id)
LEFT JOIN agg a ON a.trajectory_id = t.id
LEFT JOIN latest m ON m.trajectory_id = t.id AND m.reviewer = ?
{session_join}
{where}
ORDER BY {order}
"""


class QueueMixin(StoreBase):
    def queue_items(self, reviewer: str | None = None, *, task: str | None = None, agent_name: str | None = None,
                    backend: str | None = None, credibility: str | None = None, state: str = "all",
                    disagreement: bool | None = None, reviewed_by: str | None = None,
                    session_id: str | None = None, limit: int = 5000) -> list[dict[str, Any]]:
        """Queue rows in review order. `state` is relative to `reviewer` (todo: no verdict of theirs yet);
        `reviewed_by` keeps items someone has a verdict on; `session_id` limits to a campaign, in its order."""
        if state not in QUEUE_STATES:
            raise ValueError(f"state must be one of {', '.join(QUEUE_STATES)}; got {state!r}")
        conds, params = [], [reviewer or ""]
        for column, value in (("t.task", task), ("t.agent_name", agent_name), ("t.backend", backend),
                              ("t.credibility", credibility)):
            if value:
                conds.append(f"{column} = ?")
                params.append(value)
        if state == "todo":
            conds.append("(m.action IS NULL OR m.action = 'clear')")
        elif state == "done":
            conds.append("(m.action IS NOT NULL AND m.action <> 'clear')")
        if disagreement is not None:
            conds.append("(coalesce(a.n_opinions, 0) > 1) = ?")
            params.append(bool(disagreement))
        if reviewed_by:
            conds.append("EXISTS (SELECT 1 FROM latest r WHERE r.trajectory_id = t.id AND r.reviewer = ? "
                         "AND r.action <> 'clear')")
            params.append(reviewed_by)
        session_join, position, order = "", "", "t.created_at, t.id"
        if session_id:
            session_join = "JOIN session_items si ON si.trajectory_id = t.id AND si.session_id = ?"
            params.insert(1, session_id)
            position, order = ", si.position", "si.position"
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        sql = _QUEUE_SQL.format(position=position, session_join=session_join, where=where, order=order)
        sql += " LIMIT ?"
        params.append(int(limit))
        return self._rows(sql, params)

    def queue_progress(self, reviewer: str, session_id: str | None = None) -> dict[str, int]:
        """How many items this reviewer has a current verdict on, of how many (one count query)."""
        params: list = [reviewer]
        scope = ""
        if session_id:
            scope = "JOIN session_items si ON si.trajectory_id = t.id AND si.session_id = ?"
            params.append(session_id)
        row = self._row(
            "WITH mine AS (SELECT trajectory_id, action FROM reviews WHERE reviewer = ? "
            "QUALIFY row_number() OVER (PARTITION BY trajectory_id ORDER BY created_at DESC, seq DESC) = 1) "
            "SELECT count(*) AS total, count(m.action) FILTER (WHERE m.action <> 'clear') AS done "
            f"FROM trajectories t {scope} LEFT JOIN mine m ON m.trajectory_id = t.id", params)
        return {"done": int(row["done"]), "total": int(row["total"])}

    def queue_choices(self) -> dict[str, list[str]]:
        """Values the queue filters can take: the tasks and backends that have trajectories."""
        tasks = [r[0] for r in self._execute("SELECT DISTINCT task FROM trajectories ORDER BY 1").fetchall()]
        backends = [r[0] for r in self._execute("SELECT DISTINCT backend FROM trajectories ORDER BY 1").fetchall()]
        return {"tasks": tasks, "backends": backends}
