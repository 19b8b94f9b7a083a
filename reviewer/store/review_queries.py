"""Queries behind consensus, stats, curation, exports and LLM judges.

Scope: most readers take `session` (an audit session's id or name). With it, only the labels
written in that session count, and, once the session is closed, only those written before it
closed: a closed session's labels are frozen for export and stats.
"""
from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

from reviewer.store.codec import new_id, now, to_json
from reviewer.store.connection import damage_of
from reviewer.store.database import PASS_MEMORY_LIMIT, Database
from reviewer.store.duckdb_words import write_errno
from reviewer.store.labels import LabelRepository
from reviewer.store.pair_counts import NOBODY, own_and_pair_counts_sql, pair_counts_sql
from reviewer.store.sessions import SessionRepository

if TYPE_CHECKING:  # pandas is read only where a frame is made: a command that makes none does not import it
    import pandas as pd

RESOLUTION_KINDS = ("trajectory", "spectrum")
RESOLUTION_ACTIONS = ("approve", "override", "reject")
# label tables whose rows carry session_id (revisions have none: they are scoped by time only)
_SESSION_TABLES = ("reviews", "vi_labels", "annotations", "ratings", "preferences", "curation_events",
                   "resolutions", "claim_flags", "step_judgments")
_TIME_TABLES = (*_SESSION_TABLES, "revisions", "judge_failures")
# Moves with every write the statistics and the triage report are read from: the newest verdict, score,
# resolution and step judgment (label sequence numbers only grow), the trajectories' and claim results' count and
# newest write, the triage weights stored, and which campaigns are closed when (an order-free checksum).
# ~20 ms at 1M trajectories and 11M claim results.
_STATS_MARK_SQL = """
SELECT (SELECT max(seq) FROM reviews), (SELECT max(seq) FROM ratings), (SELECT max(seq) FROM resolutions),
       (SELECT max(seq) FROM step_judgments),
       (SELECT count(*) FROM trajectories), (SELECT max(saved_at) FROM trajectories),
       (SELECT count(*) FROM claim_results), (SELECT max(created_at) FROM claim_results),
       (SELECT count(*) FROM triage_models), (SELECT coalesce(sum(hash(id, closed_at)), 0) FROM audit_sessions)
"""


_NOT_WITHDRAWN = "action <> 'clear'"  # a verdict that is current (a 'clear' row withdraws the reviewer's verdict)
# ReviewRepository.others_label_unlabelled over the whole store ($1: the reviewer): per other person, their
# verdicts counted less those on trajectories the reviewer also gave one (one scan of the kept pair counts),
# their current scores less those shared, and any resolution by another where the reviewer has no verdict
_OTHERS_UNLABELLED_SQL = f"""
SELECT EXISTS (
    SELECT 1 FROM (
        SELECT CASE WHEN reviewer_b IN ('{NOBODY}', $1) THEN reviewer_a ELSE reviewer_b END AS who,
               CASE WHEN reviewer_b = '{NOBODY}' THEN n ELSE -n END AS n
        FROM verdict_pair_counts WHERE reviewer_b = '{NOBODY}' OR $1 IN (reviewer_a, reviewer_b)
    ) WHERE who <> $1 GROUP BY who HAVING sum(n) > 0
) OR EXISTS (
    SELECT 1 FROM (
        SELECT rater AS who, count(*) AS n FROM current_ratings WHERE rater_kind = 'human' AND rater <> $1 GROUP BY 1
        UNION ALL
        SELECT CASE WHEN rater_a = $1 THEN rater_b ELSE rater_a END, -sum(n) FROM rating_pair_counts
        WHERE $1 IN (rater_a, rater_b) GROUP BY 1
    ) GROUP BY who HAVING sum(n) > 0
) OR EXISTS (
    SELECT 1 FROM resolutions WHERE item_kind = 'trajectory' AND merger <> $1
    AND item_id NOT IN (SELECT trajectory_id FROM current_reviews WHERE reviewer = $1 AND action <> 'clear')
)"""


class UnknownSession(ValueError):
    pass


def _write_error(exc: Exception, path) -> OSError:
    """DuckDB's failure to write `path` as the OSError Python's own file writes raise (errno and its
    words when DuckDB's message names one, else EIO with DuckDB's first line)."""
    text = str(exc)
    code = write_errno(text)
    if code is None:
        return OSError(errno.EIO, text.splitlines()[0], str(path))
    return OSError(code, os.strerror(code), str(path))


def _newest_sql(table: str, who: str, value: str, scope: str, keep: str = "") -> str:
    """Each `who`'s newest `value` per trajectory in a label table (its rows meeting `scope`), kept where
    `keep` holds."""
    return (f"SELECT * FROM (SELECT trajectory_id, {who}, {value} FROM {table} WHERE true {scope} "
            f"QUALIFY row_number() OVER (PARTITION BY trajectory_id, {who} ORDER BY created_at DESC, seq DESC) = 1)"
            f"{f' WHERE {keep}' if keep else ''}")


class ReviewRepository:
    """Reads across the label tables (scoped to a session's frozen labels), resolutions, LLM judges'
    failures and whole-table exports. Resolutions register their merger with `labels`; a session is
    found by id or name through `sessions`."""

    def __init__(self, db: Database, labels: LabelRepository, sessions: SessionRepository):
        self.db = db
        self._labels = labels
        self._sessions = sessions

    # -- session scope -----------------------------------------------------------------------
    def _scope(self, session: str | None, table: str, alias: str = "") -> tuple[str, list[Any]]:
        """SQL condition (starting with AND) limiting a label table to a session's frozen labels."""
        if session is None:
            return "", []
        found = self._sessions.find_session(session)
        if found is None:
            raise UnknownSession(f"no audit session named {session!r}")
        p = f"{alias}." if alias else ""
        conds, params = [], []
        if table in _SESSION_TABLES:
            conds.append(f"{p}session_id = ?")
            params.append(found["id"])
        if found["closed_at"] is not None and table in _TIME_TABLES:
            conds.append(f"{p}created_at <= ?")
            params.append(found["closed_at"])
        if table in ("revisions", "judge_failures"):
            conds.append(f"{p}trajectory_id IN (SELECT trajectory_id FROM session_items WHERE session_id = ?)")
            params.append(found["id"])
        return "".join(f" AND {c}" for c in conds), params

    # -- resolutions (a merger's answer to a conflict) ---------------------------------------
    def add_resolution(self, item_kind: str, item_id: str, merger: str, action: str | None = None,
                       label: dict | None = None, merger_comment: str | None = None,
                       session_id: str | None = None, *, id: str | None = None,
                       created_at: datetime | None = None) -> str:
        """Resolve a conflict. Trajectories: `action` approve / override (with `label`) / reject.
        Spectra: `label` = the merged VI fields {quality, issues, z, spectype}. The latest wins; a
        label written after it by anyone reopens the conflict."""
        if item_kind not in RESOLUTION_KINDS:
            raise ValueError(f"item_kind must be one of {', '.join(RESOLUTION_KINDS)}; got {item_kind!r}")
        if item_kind == "trajectory":
            if action not in RESOLUTION_ACTIONS:
                raise ValueError(f"a trajectory resolution is one of {', '.join(RESOLUTION_ACTIONS)}; got {action!r}")
            if action == "override" and not label:
                raise ValueError("an override resolution needs the corrected label")
        elif action is not None or not label:
            raise ValueError("a spectrum resolution has no action and needs the merged VI label")
        merger = self._labels.add_reviewer(merger)
        row = {"id": id or new_id(), "item_kind": item_kind, "item_id": item_id, "merger": merger, "action": action,
               "label": to_json(label), "merger_comment": merger_comment, "session_id": session_id,
               "created_at": created_at or now()}
        self.db.execute(f"INSERT INTO resolutions ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)}) "
                        "ON CONFLICT DO NOTHING", list(row.values()))
        return row["id"]

    def latest_resolutions(self, item_kind: str, session: str | None = None) -> dict[str, dict[str, Any]]:
        scope, params = self._scope(session, "resolutions")
        rows = self.db.rows(
            f"SELECT * FROM resolutions WHERE item_kind = ? {scope} "
            "QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY created_at DESC, seq DESC) = 1",
            [item_kind, *params])
        return {r["item_id"]: r for r in rows}

    # -- current labels, in bulk -------------------------------------------------------------
    def current_reviews(self, session: str | None = None, task: str | None = None,
                        trajectory_id: str | None = None,
                        trajectory_ids: Sequence[str] | None = None, *,
                        reviewer: str | None = None) -> list[dict[str, Any]]:
        """Each reviewer's current verdict on each trajectory (withdrawn ones left out), with the
        trajectory's task, answer, answer_z and outcome; of one trajectory, or of some (one query);
        `reviewer`: that reviewer's only (the rows scanned are theirs: a per-reviewer read)."""
        sql, params = self._current_reviews_sql(
            "r.trajectory_id, r.reviewer, r.action, r.label, r.comment, r.created_at, r.seq, t.spectrum_id, t.task, "
            "t.agent_name, t.backend, t.model, t.answer, t.answer_z, t.credibility, t.outcome, s.object_id, s.survey",
            session, task, trajectory_id, trajectory_ids, reviewer)
        return self.db.rows(sql, params)

    def labelled_by(self, reviewer: str, kind: str, item_ids: Sequence[str], session: str | None = None) -> set[str]:
        """Which of `item_ids` (trajectories for kind 'trajectory', spectra for 'spectrum') hold a current
        label of `reviewer` (a verdict not withdrawn, or a VI label) in the session's scope: where blind
        review lets them see the item's other labels (reviewer.services.labels.LabelService.sees_others)."""
        if not item_ids:
            return set()
        if kind == "trajectory":
            sql, params = self._current_reviews_sql("r.trajectory_id, r.action, r.created_at, r.seq", session,
                                                    trajectory_ids=item_ids, reviewer=reviewer)
            return {row[0] for row in self.db.execute(f"SELECT DISTINCT trajectory_id FROM ({sql})", params).fetchall()}
        scope, params = self._scope(session, "vi_labels")
        return {row[0] for row in self.db.execute(
            f"SELECT DISTINCT spectrum_id FROM vi_labels WHERE reviewer = ? {scope} "
            "AND spectrum_id IN (SELECT unnest(?::VARCHAR[]))", [reviewer, *params, list(item_ids)]).fetchall()}

    def others_label_unlabelled(self, reviewer: str, session: str | None = None) -> bool:
        """Whether, in the session's scope, another's label that the Stats tab or the triage is read from stands
        on a trajectory where `reviewer` has no current label of that kind: another reviewer's current verdict
        (not withdrawn) or a merger's resolution where they have no current verdict; another person's current
        score (the LLM judges' are no reviewer's) where they have none. What blind review would hide of the
        figures computed from everyone's labels (reviewer.services.labels.LabelService.sees_team_figures).

        The whole store is read from what is kept on write (reviewer/store/pair_counts.py): someone has a
        verdict where `reviewer` has none exactly when their own count exceeds the count of trajectories the
        two share; for scores, their current rows (one per rubric version: never fewer than their trajectories)
        against the count shared. Small tables, one scan of the current scores and one of the reviewer's own
        current verdicts (~15 ms at 1M trajectories on a busy 2-core machine; an anti-join of every current
        row with the reviewer's own took 60-120 ms there). A session's scope: its labels' newest, grouped by
        trajectory. Each table is read once in the query: DuckDB 2.0.1's common_subplan optimizer answered a
        query reading one subquery twice (a NOT IN of the reviewer's verdicts beside another) wrongly."""
        if session is None:
            # scalar (every row fetched): a result left open refuses the cursor's next relation read
            return bool(self.db.scalar(_OTHERS_UNLABELLED_SQL, [reviewer]))
        verdict_scope, verdict_params = self._scope(session, "reviews")
        score_scope, score_params = self._scope(session, "ratings")
        resolution_scope, resolution_params = self._scope(session, "resolutions")
        verdicts = _newest_sql("reviews", "reviewer", "action", verdict_scope, keep=_NOT_WITHDRAWN)
        scores = _newest_sql("ratings", "rater", "rater_kind", score_scope)
        sql = (f"SELECT EXISTS (SELECT 1 FROM (SELECT trajectory_id, reviewer, true AS verdict FROM ({verdicts}) "
               "UNION ALL SELECT item_id, merger, false FROM resolutions WHERE item_kind = 'trajectory' "
               f"{resolution_scope}) GROUP BY trajectory_id HAVING bool_or(reviewer <> ?) "
               "AND NOT bool_or(verdict AND reviewer = ?)) "
               f"OR EXISTS (SELECT 1 FROM ({scores}) GROUP BY trajectory_id "
               "HAVING bool_or(rater_kind = 'human' AND rater <> ?) AND NOT bool_or(rater = ?))")
        return bool(self.db.scalar(sql, [*verdict_params, *resolution_params, reviewer, reviewer,
                                         *score_params, reviewer, reviewer]))

    def latest_review_times(self, trajectory_ids: Sequence[str], session: str | None = None) -> dict[str, Any]:
        """{trajectory id: when its newest current verdict was made} for some trajectories (those with
        one): what orders a list of them by their latest label without reading the labels."""
        if session is None:  # the current verdicts kept on write: the label table is not joined with every
            # trajectory (the Conflicts tab orders its ~6,300 conflicts at 1M trajectories: 45 -> 12 ms, docs/benchmarks.md)
            return dict(self.db.execute(
                "SELECT trajectory_id, max(created_at) FROM current_reviews WHERE action <> 'clear' "
                "AND trajectory_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1", [list(trajectory_ids)]).fetchall())
        sql, params = self._current_reviews_sql("r.trajectory_id, r.action, r.created_at, r.seq", session,
                                                trajectory_ids=trajectory_ids)
        return dict(self.db.execute(f"SELECT trajectory_id, max(created_at) FROM ({sql}) GROUP BY 1",
                                    params).fetchall())

    def _current_reviews_sql(self, columns: str, session: str | None, task: str | None = None,
                             trajectory_id: str | None = None,
                             trajectory_ids: Sequence[str] | None = None,
                             reviewer: str | None = None) -> tuple[str, list[Any]]:
        """The query of `current_reviews` selecting `columns` (over `reviews r`, `trajectories t`,
        `spectra s`; action, created_at and seq among them), in its order."""
        scope, params = self._scope(session, "reviews", "r")
        task_cond = ""
        for column, value in (("t.task", task), ("r.trajectory_id", trajectory_id), ("r.reviewer", reviewer)):
            if value is not None:
                task_cond += f" AND {column} = ?"
                params.append(value)
        if trajectory_ids is not None:
            task_cond += " AND r.trajectory_id IN (SELECT unnest(?::VARCHAR[]))"
            params.append(list(trajectory_ids))
        return (f"SELECT * FROM (SELECT {columns} FROM reviews r JOIN trajectories t ON t.id = r.trajectory_id "
                f"LEFT JOIN spectra s ON s.spectrum_id = t.spectrum_id WHERE true {scope}{task_cond} "
                "QUALIFY row_number() OVER (PARTITION BY r.trajectory_id, r.reviewer "
                "ORDER BY r.created_at DESC, r.seq DESC) = 1) "
                "WHERE action <> 'clear' ORDER BY trajectory_id, created_at, seq"), params

    def current_vi_labels(self, session: str | None = None, spectrum_id: str | None = None, *,
                          spectrum_ids: Sequence[str] | None = None, with_header: bool = False) -> list[dict[str, Any]]:
        """Each inspector's current VI label of each spectrum (of one, or of some), with the spectrum's ids
        and pipeline answers (`with_header`: and its FITS header, which the exports' columns are read from;
        decoding every labelled spectrum's header was most of the Conflicts tab's time at 1M trajectories)."""
        scope, params = self._scope(session, "vi_labels", "v")
        if spectrum_id is not None:
            scope += " AND v.spectrum_id = ?"
            params.append(spectrum_id)
        if spectrum_ids is not None:
            scope += " AND v.spectrum_id IN (SELECT unnest(?::VARCHAR[]))"
            params.append(list(spectrum_ids))
        return self.db.rows(
            "SELECT v.*, s.object_id, s.target AS spectrum_target, s.survey, s.file_name, s.pipeline_class, "
            f"s.pipeline_z{', s.header' if with_header else ''} FROM vi_labels v LEFT JOIN spectra s USING (spectrum_id) "
            f"WHERE true {scope} "
            "QUALIFY row_number() OVER (PARTITION BY v.spectrum_id, v.reviewer ORDER BY v.created_at DESC, v.seq DESC) = 1 "
            "ORDER BY v.spectrum_id, v.created_at, v.seq", params)

    # -- stats tables ------------------------------------------------------------------------
    def ratings_frame(self, session: str | None = None, rater_kind: str | None = None,
                      rubric_version: str | None = None, task: str | None = None, *,
                      scores_only: bool = False) -> pd.DataFrame:
        """Current score of each rater (person or LLM judge) per trajectory and rubric version:
        trajectory_id, rater, rater_kind, score, rubric_version, created_at, task, agent_name, backend, model
        (`scores_only`: the first four, the trajectories not read)."""
        scope, params = self._scope(session, "ratings", "r")
        conds = ""
        for column, value in (("r.rater_kind", rater_kind), ("r.rubric_version", rubric_version), ("t.task", task)):
            if value is not None:
                conds += f" AND {column} = ?"
                params.append(str(value))
        # a frame straight from DuckDB (no JSON column here): dicts first cost ~1 s at 25k ratings
        columns, join = "r.trajectory_id, r.rater, r.rater_kind, r.score", ""
        if not scores_only:
            columns += ", r.rubric_version, r.created_at, t.task, t.agent_name, t.backend, t.model"
        if not scores_only or task is not None:
            join = "LEFT JOIN trajectories t ON t.id = r.trajectory_id"
        return self.db.frame(
            f"SELECT {columns} FROM ratings r {join} "
            f"WHERE true {scope}{conds} QUALIFY row_number() OVER (PARTITION BY r.trajectory_id, r.rater, "
            "r.rubric_version ORDER BY r.created_at DESC, r.seq DESC) = 1 ORDER BY r.rater, r.trajectory_id", params)

    def scores_where_people_scored(self, session: str | None = None) -> pd.DataFrame:
        """`ratings_frame(scores_only=True)` plus rubric_version, of the trajectories a person scored only (the
        judges against people: an LLM judge may score every trajectory, people a few). Read from the current
        scores kept on write (a campaign's: its scores, newest each)."""
        scope, params = self._scope(session, "ratings")
        current = "current_ratings" if session is None else (
            f"(SELECT * FROM ratings WHERE true {scope} QUALIFY row_number() OVER "
            "(PARTITION BY trajectory_id, rater, rubric_version ORDER BY created_at DESC, seq DESC) = 1)")
        return self.db.frame(
            f"WITH cur AS (SELECT trajectory_id, rater, rater_kind, score, rubric_version FROM {current}) "
            "SELECT * FROM cur WHERE trajectory_id IN (SELECT trajectory_id FROM cur WHERE rater_kind = 'human') "
            "ORDER BY rater, trajectory_id", params)

    # -- stats summaries: small tables counted in DuckDB, whatever the number of labels ----------
    def stats_mark(self) -> tuple:
        """A value that moves with every write the statistics are read from (_STATS_MARK_SQL)."""
        return tuple(self.db.execute(_STATS_MARK_SQL).fetchall()[0])

    def rating_counts(self, session: str | None = None) -> pd.DataFrame:
        """How many of each rater's current scores (`ratings_frame`'s rows) have each value:
        rater, rater_kind, score, n."""
        scope, params = self._scope(session, "ratings")
        current = "current_ratings" if session is None else (
            f"(SELECT * FROM ratings WHERE true {scope} QUALIFY row_number() OVER "
            "(PARTITION BY trajectory_id, rater, rubric_version ORDER BY created_at DESC, seq DESC) = 1)")
        return self.db.frame(f"SELECT rater, any_value(rater_kind) AS rater_kind, score, count(*) AS n FROM {current} "
                             "GROUP BY rater, score ORDER BY rater, score", params)

    def rating_pairs(self, session: str | None = None) -> pd.DataFrame:
        """For each pair of raters (rater_a < rater_b) and pair of scores, on how many trajectories the two
        gave them: rater_a, rater_b, score_a, score_b, n. A rater's score of a trajectory is their newest,
        whatever its rubric version."""
        if session is None:  # counted as the scores are written
            return self.db.frame("SELECT rater_a, rater_b, score_a, score_b, n FROM rating_pair_counts WHERE n > 0 "
                                 "ORDER BY ALL")
        scope, params = self._scope(session, "ratings")
        return self.db.frame(f"WITH newest AS ({_newest_sql('ratings', 'rater', 'score', scope)}) "
                             f"{pair_counts_sql('rater', 'score')} ORDER BY ALL", params)

    def verdict_pairs(self, session: str | None = None) -> pd.DataFrame:
        """Each reviewer's current verdicts (`current_reviews`'), counted: for each pair of reviewers (reviewer_a <
        reviewer_b) and pair of actions, on how many trajectories the two gave them, and, with reviewer_b
        and action_b NULL, how many of each action each reviewer gave: reviewer_a, reviewer_b, action_a,
        action_b, n."""
        if session is None:  # counted as the verdicts are written
            return self.db.frame(f"SELECT reviewer_a, nullif(reviewer_b, '{NOBODY}') AS reviewer_b, action_a, "
                                 f"nullif(action_b, '{NOBODY}') AS action_b, n FROM verdict_pair_counts WHERE n > 0 "
                                 "ORDER BY ALL")
        scope, params = self._scope(session, "reviews")
        newest = _newest_sql("reviews", "reviewer", "action", scope, keep="action <> 'clear'")
        return self.db.frame(f"WITH newest AS ({newest}) "
                             f"{own_and_pair_counts_sql('reviewer', 'action', 'NULL::VARCHAR')} ORDER BY ALL", params)

    # -- curation board ----------------------------------------------------------------------
    def curation_inputs(self, session: str | None = None, task: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """What the curation board is computed from: the trajectories (with object and survey), and their
        curation events and revision heads within the session's scope."""
        return {"trajectories": self.curation_trajectories(session, task), **self.curation_history(session)}

    def _curation_where(self, session: str | None, task: str | None, ids: Sequence[str] | None,
                        untouched: bool) -> tuple[str, list[Any]]:
        """WHERE clause over `trajectories t`: the session's items, the task; and, when `ids` or
        `untouched` is given, only the trajectories in `ids` or (untouched) those with no curation event
        and no revision in the session's scope."""
        conds, params = [], []
        if session is not None:
            found = self._sessions.find_session(session)
            if found is None:
                raise UnknownSession(f"no audit session named {session!r}")
            conds.append("t.id IN (SELECT trajectory_id FROM session_items WHERE session_id = ?)")
            params.append(found["id"])
        if task is not None:
            conds.append("t.task = ?")
            params.append(task)
        if ids is not None or untouched:
            some = []
            if ids is not None:
                some.append("t.id IN (SELECT unnest(?::VARCHAR[]))")
                params.append(list(ids))
            if untouched:
                ev_scope, ev_params = self._scope(session, "curation_events", "e")
                rv_scope, rv_params = self._scope(session, "revisions", "r")
                some.append("(NOT EXISTS (SELECT 1 FROM curation_events e WHERE e.trajectory_id = t.id "
                            f"{ev_scope}) AND NOT EXISTS (SELECT 1 FROM revisions r WHERE r.trajectory_id = t.id "
                            f"{rv_scope}))")
                params += ev_params + rv_params
            conds.append("(" + " OR ".join(some) + ")")
        return ("WHERE " + " AND ".join(conds)) if conds else "", params

    def curation_trajectories(self, session: str | None = None, task: str | None = None, *,
                              ids: Sequence[str] | None = None, untouched: bool = False, offset: int = 0,
                              limit: int | None = None) -> list[dict[str, Any]]:
        """The board's trajectories (id, spectrum_id, task, agent_name, backend, model, answer, object_id,
        survey) in board order (created_at, id), a page of them with `limit`; `ids` / `untouched`: see
        `_curation_where`."""
        where, params = self._curation_where(session, task, ids, untouched)
        page = ""
        if limit is not None:
            page = " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        elif offset:
            page = " OFFSET ?"
            params.append(int(offset))
        return self.db.rows(
            "SELECT t.id, t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer, s.object_id, s.survey "
            f"FROM trajectories t LEFT JOIN spectra s USING (spectrum_id) {where} ORDER BY t.created_at, t.id{page}",
            params)

    def count_curation_trajectories(self, session: str | None = None, task: str | None = None, *,
                                    ids: Sequence[str] | None = None, untouched: bool = False) -> int:
        where, params = self._curation_where(session, task, ids, untouched)
        return int(self.db.scalar(f"SELECT count(*) FROM trajectories t {where}", params))

    def curation_history(self, session: str | None = None,
                         trajectory_ids: Sequence[str] | None = None) -> dict[str, list[dict[str, Any]]]:
        """Curation events and revision heads (no text) within the session's scope, in time order: of
        every trajectory, or of `trajectory_ids` only."""
        ev_scope, ev_params = self._scope(session, "curation_events")
        rv_scope, rv_params = self._scope(session, "revisions")
        if trajectory_ids is not None:
            ev_scope += " AND trajectory_id IN (SELECT unnest(?::VARCHAR[]))"
            rv_scope += " AND trajectory_id IN (SELECT unnest(?::VARCHAR[]))"
            ev_params, rv_params = [*ev_params, list(trajectory_ids)], [*rv_params, list(trajectory_ids)]
        events = self.db.rows(f"SELECT * FROM curation_events WHERE true {ev_scope} ORDER BY created_at, seq", ev_params)
        revisions = self.db.rows("SELECT id, seq, trajectory_id, step_idx, version, reviewer, created_at FROM revisions "
                                 f"WHERE true {rv_scope} ORDER BY created_at, seq", rv_params)
        return {"events": events, "revisions": revisions}

    def revisions_in_scope(self, trajectory_id: str, session: str | None = None) -> list[dict[str, Any]]:
        """Every revision row of a trajectory (all versions) within the session's frozen time."""
        scope, params = self._scope(session, "revisions")
        return self.db.rows(f"SELECT * FROM revisions WHERE trajectory_id = ? {scope} ORDER BY created_at, seq",
                            [trajectory_id, *params])

    # -- LLM judges --------------------------------------------------------------------------
    def rated_trajectory_ids(self, rater: str, rubric_version: str) -> set[str]:
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT trajectory_id FROM ratings WHERE rater = ? AND rubric_version = ?",
            [rater, str(rubric_version)]).fetchall()}

    def add_judge_failure(self, trajectory_id: str, judge: str, rubric_version: str, error: str,
                          reply: str | None = None) -> str:
        """A judge call that gave no usable score (no score in the reply, or the call failed)."""
        row_id = new_id()
        self.db.execute(
            "INSERT INTO judge_failures (id, trajectory_id, judge, rubric_version, error, reply, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", [row_id, trajectory_id, judge, str(rubric_version), error, reply, now()])
        return row_id

    def judge_failures(self, judge: str | None = None) -> list[dict[str, Any]]:
        cond, params = ("WHERE judge = ?", [judge]) if judge else ("", [])
        return self.db.rows(f"SELECT * FROM judge_failures {cond} ORDER BY created_at, seq", params)

    # -- whole tables (Parquet export) -------------------------------------------------------
    def table_names(self) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name").fetchall()]

    def _table_query(self, table: str, session: str | None, columns: str = "*") -> tuple[str, list[Any]]:
        """SELECT of a whole table (label tables limited to the session's frozen labels when given;
        the session's own rows for audit_sessions / session_items / session_reviewers / gold_items /
        item_reservations)."""
        if table not in self.table_names():
            raise ValueError(f"no table {table!r}")
        cond, params = self._scope(session, table)
        if session is not None and table in ("audit_sessions", "session_items", "session_reviewers", "gold_items",
                                             "item_reservations"):
            key = "id" if table == "audit_sessions" else "session_id"
            cond, params = f" AND {key} = ?", [self._sessions.find_session(session)["id"]]
        return f"SELECT {columns} FROM {table} WHERE true {cond}", params

    def table_frame(self, table: str, session: str | None = None) -> pd.DataFrame:
        """A whole table as a DataFrame (scoped as `_table_query`)."""
        sql, params = self._table_query(table, session)
        return self.db.execute(sql, params).df()

    def copy_table_to_parquet(self, table: str, path: str | os.PathLike, session: str | None = None) -> int:
        """Write a whole table (scoped as `_table_query`) to a Parquet file, streamed by DuckDB (bounded
        memory, whatever the table's size); returns the rows written. JSON columns are written as text,
        as `table_frame(...).to_parquet` writes them."""
        types = self.db.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' "
                                "AND table_name = ? ORDER BY column_index", [table]).fetchall()
        columns = ", ".join(f'CAST("{name}" AS VARCHAR) AS "{name}"' if kind == "JSON" else f'"{name}"'
                            for name, kind in types)
        sql, params = self._table_query(table, session, columns or "*")
        target = str(path).replace("'", "''")
        # one thread: DuckDB's parallel writer buffers row groups per thread to keep the rows in order
        # (~0.5 GB for 2M steps on 2 threads, more on more); alone it streams in ~0.1 GB, hardly slower
        threads = self.db.scalar("SELECT current_setting('threads')")
        self.db.execute("SET threads = 1")
        try:
            with self.db.memory_limit(PASS_MEMORY_LIMIT):
                cur = self.db.execute_with_retries(f"COPY ({sql}) TO '{target}' (FORMAT parquet)", params)
                return int(cur.fetchall()[0][0])  # before the limit's reset, on the same cursor
        except duckdb.IOException as exc:  # the file could not be written, or the database could not be read
            if str(path) not in str(exc):
                raise damage_of(self.db.path, exc) or exc from exc
            raise _write_error(exc, path) from exc
        finally:
            self.db.execute(f"SET threads = {int(threads)}")


