"""Reviewers' judgments of single steps (table `step_judgments`, schema version 14): persistence only.

A judgment is correct / partly / incorrect, with failure-mode tags (kb/step_failure_modes.yaml; the label
service checks them against it), or 'clear' (the reviewer withdraws their judgment of that step). Like
every label it is append-only: the latest row per reviewer, trajectory and step wins
(`LabelRepository.append`: a client id written again stores nothing new), and reads within a campaign
count that campaign's labels, frozen at its close (ReviewRepository's scope).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reviewer.store.database import Database
from reviewer.store.labels import LabelRepository

if TYPE_CHECKING:
    import pandas as pd

STEP_JUDGMENTS = ("correct", "partly", "incorrect")
CLEAR = "clear"  # withdraws the reviewer's judgment of the step
_CURRENT = ("QUALIFY row_number() OVER (PARTITION BY j.trajectory_id, j.step_idx, j.reviewer "
            "ORDER BY j.created_at DESC, j.seq DESC) = 1")


class StepJudgmentRepository:
    """Writes and reads step judgments. `scope(session, table, alias)` is the review queries' SQL condition
    limiting a label table to a campaign's frozen labels (ReviewRepository._scope)."""

    def __init__(self, db: Database, labels: LabelRepository, scope: Callable[..., tuple[str, list[Any]]]):
        self.db = db
        self._labels = labels
        self._scope = scope

    def add_step_judgment(
        self, trajectory_id: str, reviewer: str, step_idx: int, judgment: str, tags: Iterable[str] = (),
        taxonomy_version: str = "1", comment: str | None = None, session_id: str | None = None, *,
        id: str | None = None, created_at: datetime | None = None,
    ) -> str:
        """One reviewer's judgment of step `step_idx` (correct / partly / incorrect, or 'clear'), with its
        failure-mode tags (in the order given, no repeats). Returns the row's id."""
        if judgment not in (*STEP_JUDGMENTS, CLEAR):
            raise ValueError(f"judgment must be one of {', '.join((*STEP_JUDGMENTS, CLEAR))}; got {judgment!r}")
        if isinstance(step_idx, bool) or not isinstance(step_idx, int) or step_idx < 0:
            raise ValueError(f"step_idx is a step's index (0 or more); got {step_idx!r}")
        reviewer = self._labels.add_reviewer(reviewer)
        return self._labels.append("step_judgments", {
            "trajectory_id": trajectory_id, "step_idx": step_idx, "reviewer": reviewer, "judgment": judgment,
            "tags": [] if judgment == CLEAR else list(dict.fromkeys(tags)),
            "taxonomy_version": str(taxonomy_version), "comment": comment, "session_id": session_id,
        }, id, created_at)

    def step_judgments_for(self, trajectory_id: str, reviewer: str | None = None,
                           session: str | None = None) -> list[dict[str, Any]]:
        """Each reviewer's current judgment of each step of a trajectory (withdrawn ones left out), by step."""
        scope, params = self._scope(session, "step_judgments", "j")
        sql = f"SELECT * FROM step_judgments j WHERE j.trajectory_id = ? {scope}"
        params = [trajectory_id, *params]
        if reviewer is not None:
            sql += " AND j.reviewer = ?"
            params.append(reviewer)
        rows = self.db.rows(f"{sql} {_CURRENT} ORDER BY j.step_idx, j.reviewer", params)
        return [r for r in rows if r["judgment"] != CLEAR]

    def judged_steps(self, session: str | None = None, task: str | None = None) -> list[dict[str, Any]]:
        """Every current judgment (withdrawn ones left out) with its trajectory's task, spectrum and agent
        and the step as stored (kind, text, tool call): the process-supervision rows, ordered by
        trajectory, step and reviewer."""
        scope, params = self._scope(session, "step_judgments", "j")
        cond = ""
        if task is not None:
            cond, params = " AND t.task = ?", [*params, task]
        return self.db.rows(
            "SELECT * FROM (SELECT j.id AS judgment_id, j.trajectory_id, j.step_idx, j.reviewer, j.judgment, j.tags, "
            "j.taxonomy_version, j.comment, j.session_id, j.created_at, t.spectrum_id, t.task, t.agent_name, "
            "t.backend, t.model, t.answer, t.answer_z, s.kind AS step_kind, s.text AS step_text, s.tool_name, "
            "s.tool_args FROM step_judgments j JOIN trajectories t ON t.id = j.trajectory_id "
            "LEFT JOIN steps s ON s.trajectory_id = j.trajectory_id AND s.idx = j.step_idx "
            f"WHERE true {scope}{cond} {_CURRENT}) WHERE judgment <> 'clear' "
            "ORDER BY trajectory_id, step_idx, reviewer", params)

    def failure_mode_counts(self, session: str | None = None, reviewer: str | None = None) -> pd.DataFrame:
        """Current judgments (of `reviewer` only, when given) counted per task, agent (name, backend, model),
        judgment and tag (tag NULL: the judgment's count, each judged step once; a tag: the judged steps
        carrying it). Columns: task, agent_name, backend, model, judgment, tag, n."""
        scope, params = self._scope(session, "step_judgments", "j")
        if reviewer is not None:
            scope, params = f"{scope} AND j.reviewer = ?", [*params, reviewer]
        return self.db.frame(
            "WITH cur AS (SELECT * FROM (SELECT j.trajectory_id, j.judgment, j.tags FROM step_judgments j "
            f"WHERE true {scope} {_CURRENT}) WHERE judgment <> 'clear'), "
            "judged AS (SELECT t.task, t.agent_name, t.backend, t.model, c.judgment, c.tags FROM cur c "
            "JOIN trajectories t ON t.id = c.trajectory_id) "
            "SELECT task, agent_name, backend, model, judgment, NULL::VARCHAR AS tag, count(*) AS n FROM judged "
            "GROUP BY ALL UNION ALL "
            "SELECT task, agent_name, backend, model, judgment, tag, count(*) AS n FROM "
            "(SELECT task, agent_name, backend, model, judgment, unnest(tags) AS tag FROM judged) GROUP BY ALL "
            "ORDER BY ALL", params)
