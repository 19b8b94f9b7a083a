"""Queries behind consensus, stats, curation, exports and LLM judges.

Scope: most readers take `session` (an audit session's id or name). With it, only the labels
written in that session count, and, once the session is closed, only those written before it
closed: a closed session's labels are frozen for export and stats.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

import pandas as pd

from reviewer.consensus import agent_label, merge_vi_labels, normalise_label, verdict_consensus
from reviewer.curation import curation_status
from reviewer.store.base import StoreBase
from reviewer.store.codec import new_id, now, to_json

RESOLUTION_KINDS = ("trajectory", "spectrum")
RESOLUTION_ACTIONS = ("approve", "override", "reject")
# label tables whose rows carry session_id (revisions have none: they are scoped by time only)
_SESSION_TABLES = ("reviews", "vi_labels", "annotations", "ratings", "preferences", "curation_events",
                   "resolutions")
_TIME_TABLES = _SESSION_TABLES + ("revisions", "judge_failures")


class UnknownSession(ValueError):
    pass


class ReviewQueriesMixin(StoreBase):
    # -- session scope -----------------------------------------------------------------------
    def find_session(self, name_or_id: str) -> dict[str, Any] | None:
        """A session by id, else the newest session with that name."""
        return self._row(
            "SELECT * FROM audit_sessions WHERE id = ? OR name = ? ORDER BY (id = ?) DESC, created_at DESC LIMIT 1",
            [name_or_id, name_or_id, name_or_id])

    def _scope(self, session: str | None, table: str, alias: str = "") -> tuple[str, list[Any]]:
        """SQL condition (starting with AND) limiting a label table to a session's frozen labels."""
        if session is None:
            return "", []
        found = self.find_session(session)
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
        merger = self.add_reviewer(merger)
        row = {"id": id or new_id(), "item_kind": item_kind, "item_id": item_id, "merger": merger, "action": action,
               "label": to_json(label), "merger_comment": merger_comment, "session_id": session_id,
               "created_at": created_at or now()}
        self._execute(f"INSERT INTO resolutions ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)}) "
                      "ON CONFLICT DO NOTHING", list(row.values()))
        return row["id"]

    def latest_resolutions(self, item_kind: str, session: str | None = None) -> dict[str, dict[str, Any]]:
        scope, params = self._scope(session, "resolutions")
        rows = self._rows(
            f"SELECT * FROM resolutions WHERE item_kind = ? {scope} "
            "QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY created_at DESC, seq DESC) = 1",
            [item_kind, *params])
        return {r["item_id"]: r for r in rows}

    # -- current labels, in bulk -------------------------------------------------------------
    def current_reviews(self, session: str | None = None, task: str | None = None,
                        trajectory_id: str | None = None) -> list[dict[str, Any]]:
        """Each reviewer's current verdict on each trajectory (withdrawn ones left out), with the
        trajectory's task, answer, answer_z and outcome."""
        scope, params = self._scope(session, "reviews", "r")
        task_cond = ""
        for column, value in (("t.task", task), ("r.trajectory_id", trajectory_id)):
            if value is not None:
                task_cond += f" AND {column} = ?"
                params.append(value)
        return self._rows(
            "SELECT * FROM (SELECT r.trajectory_id, r.reviewer, r.action, r.label, r.comment, r.created_at, r.seq, "
            "t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer, t.answer_z, t.credibility, t.outcome "
            f"FROM reviews r JOIN trajectories t ON t.id = r.trajectory_id WHERE true {scope}{task_cond} "
            "QUALIFY row_number() OVER (PARTITION BY r.trajectory_id, r.reviewer ORDER BY r.created_at DESC, r.seq DESC) = 1) "
            "WHERE action <> 'clear' ORDER BY trajectory_id, created_at, seq", params)

    def current_vi_labels(self, session: str | None = None, spectrum_id: str | None = None) -> list[dict[str, Any]]:
        """Each inspector's current VI label of each spectrum, with the spectrum's ids and pipeline answers."""
        scope, params = self._scope(session, "vi_labels", "v")
        if spectrum_id is not None:
            scope += " AND v.spectrum_id = ?"
            params.append(spectrum_id)
        return self._rows(
            "SELECT v.*, s.object_id, s.target AS spectrum_target, s.survey, s.file_name, s.pipeline_class, "
            "s.pipeline_z, s.header FROM vi_labels v LEFT JOIN spectra s USING (spectrum_id) "
            f"WHERE true {scope} "
            "QUALIFY row_number() OVER (PARTITION BY v.spectrum_id, v.reviewer ORDER BY v.created_at DESC, v.seq DESC) = 1 "
            "ORDER BY v.spectrum_id, v.created_at, v.seq", params)

    # -- consensus and the conflict queue ----------------------------------------------------
    def conflict_queue(self, kind: str | None = None, include_resolved: bool = False,
                       session: str | None = None) -> list[dict[str, Any]]:
        """Items where several reviewers disagree (see reviewer.consensus), oldest disagreement first.
        Each: kind ('trajectory' / 'spectrum'), item_id, spectrum_id, task, reasons, labels (the
        current labels in conflict), resolution (the latest merger row or None), resolved (a
        resolution newer than every label), updated_at."""
        items: list[dict[str, Any]] = []
        if kind in (None, "trajectory"):
            resolutions = self.latest_resolutions("trajectory", session)
            for tid, rows in _group(self.current_reviews(session), "trajectory_id").items():
                first = rows[0]
                result = verdict_consensus(rows, agent_label(first["task"], first["answer"], first["answer_z"],
                                                             first["outcome"]))
                if result.is_conflict:
                    items.append(_item("trajectory", tid, first, result.reasons, rows, resolutions.get(tid)))
        if kind in (None, "spectrum"):
            resolutions = self.latest_resolutions("spectrum", session)
            for sid, rows in _group(self.current_vi_labels(session), "spectrum_id").items():
                first = rows[0]
                merge = merge_vi_labels(rows, first["pipeline_z"], first["pipeline_class"])
                if merge.is_conflict:
                    items.append(_item("spectrum", sid, first, merge.reasons, rows, resolutions.get(sid)))
        if not include_resolved:
            items = [i for i in items if not i["resolved"]]
        return sorted(items, key=lambda i: (i["updated_at"], i["item_id"]))

    def vi_consensus(self, spectrum_id: str, session: str | None = None) -> dict[str, Any]:
        """The DESI merge of a spectrum's current VI labels, overridden by a newer merger resolution."""
        rows = self.current_vi_labels(session, spectrum_id=spectrum_id)
        spec = self.get_spectrum(spectrum_id) or {}
        out = merge_vi_labels(rows, spec.get("pipeline_z"), spec.get("pipeline_class")).as_dict()
        res = self.latest_resolutions("spectrum", session).get(spectrum_id)
        out["resolution"] = res if res and _newer(res, rows) else None
        return out

    def verdict_for(self, trajectory_id: str, session: str | None = None) -> dict[str, Any]:
        """The consensus verdict on a trajectory (reviewer.consensus.verdict_consensus as a dict),
        with `resolution` when a merger resolved it after the last review, and `final`:
        {action, label} that counts (the resolution, else the agreed verdict; None while in conflict)."""
        rows = self.current_reviews(session, trajectory_id=trajectory_id)
        traj = self._row("SELECT task, answer, answer_z, outcome FROM trajectories WHERE id = ?", [trajectory_id])
        own = agent_label(traj["task"], traj["answer"], traj["answer_z"], traj["outcome"]) if traj else {}
        return _final_verdict(rows, own, self.latest_resolutions("trajectory", session).get(trajectory_id))

    def evaluation_frame(self, session: str | None = None, task: str | None = None) -> pd.DataFrame:
        """One row per trajectory with a settled human label (agreed, single, or resolved; rejected
        trajectories and open conflicts left out): trajectory_id, spectrum_id, task, agent_name,
        backend, model, credibility, predicted, predicted_z, truth, truth_z, truth_source."""
        resolutions = self.latest_resolutions("trajectory", session)
        out = []
        for tid, rows in _group(self.current_reviews(session, task), "trajectory_id").items():
            first = rows[0]
            own = agent_label(first["task"], first["answer"], first["answer_z"], first["outcome"])
            final = _final_verdict(rows, own, resolutions.get(tid))["final"]
            if final is None or final["action"] == "reject":
                continue
            truth = normalise_label(final["label"])
            out.append({
                "trajectory_id": tid, "spectrum_id": first["spectrum_id"], "task": first["task"],
                "agent_name": first["agent_name"], "backend": first["backend"], "model": first["model"],
                "credibility": _credibility(first), "predicted": own.get("answer", own.get("type")),
                "predicted_z": own.get("z"), "truth": truth.get("answer", truth.get("type")),
                "truth_z": truth.get("z"), "truth_source": final["source"],
            })
        return pd.DataFrame(out, columns=["trajectory_id", "spectrum_id", "task", "agent_name", "backend", "model",
                                          "credibility", "predicted", "predicted_z", "truth", "truth_z",
                                          "truth_source"])

    # -- stats tables ------------------------------------------------------------------------
    def ratings_frame(self, session: str | None = None, rater_kind: str | None = None,
                      rubric_version: str | None = None, task: str | None = None) -> pd.DataFrame:
        """Current score of each rater (person or LLM judge) per trajectory and rubric version:
        trajectory_id, rater, rater_kind, score, rubric_version, created_at, task, agent_name, backend, model."""
        scope, params = self._scope(session, "ratings", "r")
        conds = ""
        for column, value in (("r.rater_kind", rater_kind), ("r.rubric_version", rubric_version), ("t.task", task)):
            if value is not None:
                conds += f" AND {column} = ?"
                params.append(str(value))
        rows = self._rows(
            "SELECT r.trajectory_id, r.rater, r.rater_kind, r.score, r.rubric_version, r.created_at, t.task, "
            "t.agent_name, t.backend, t.model FROM ratings r LEFT JOIN trajectories t ON t.id = r.trajectory_id "
            f"WHERE true {scope}{conds} QUALIFY row_number() OVER (PARTITION BY r.trajectory_id, r.rater, "
            "r.rubric_version ORDER BY r.created_at DESC, r.seq DESC) = 1 ORDER BY r.rater, r.trajectory_id", params)
        return pd.DataFrame(rows, columns=["trajectory_id", "rater", "rater_kind", "score", "rubric_version",
                                           "created_at", "task", "agent_name", "backend", "model"])

    def verdicts_frame(self, session: str | None = None, task: str | None = None) -> pd.DataFrame:
        """Each reviewer's current verdict: trajectory_id, reviewer, action, label (text), task, created_at."""
        rows = [{"trajectory_id": r["trajectory_id"], "reviewer": r["reviewer"], "action": r["action"],
                 "label": _label_text(r), "task": r["task"], "created_at": r["created_at"]}
                for r in self.current_reviews(session, task)]
        return pd.DataFrame(rows, columns=["trajectory_id", "reviewer", "action", "label", "task", "created_at"])

    # -- curation board ----------------------------------------------------------------------
    def curation_board(self, session: str | None = None, task: str | None = None, state: str | None = None,
                       **rules: Any) -> list[dict[str, Any]]:
        """Every trajectory (of the session, if given) with its curation state and who did what:
        trajectory_id, spectrum_id, task, agent_name, backend, model, answer, state, reviser,
        revised_at, approvals, change_requests, accepts, rejects, revised_steps."""
        conds, params = [], []
        if session is not None:
            found = self.find_session(session)
            if found is None:
                raise UnknownSession(f"no audit session named {session!r}")
            conds.append("id IN (SELECT trajectory_id FROM session_items WHERE session_id = ?)")
            params.append(found["id"])
        if task is not None:
            conds.append("task = ?")
            params.append(task)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        trajs = self._rows("SELECT id, spectrum_id, task, agent_name, backend, model, answer FROM trajectories "
                           f"{where} ORDER BY created_at, id", params)
        ev_scope, ev_params = self._scope(session, "curation_events")
        events = _group(self._rows(f"SELECT * FROM curation_events WHERE true {ev_scope} ORDER BY created_at, seq",
                                   ev_params), "trajectory_id")
        rv_scope, rv_params = self._scope(session, "revisions")
        revisions = _group(self._rows(
            "SELECT id, seq, trajectory_id, step_idx, version, reviewer, created_at FROM revisions "
            f"WHERE true {rv_scope} ORDER BY created_at, seq", rv_params), "trajectory_id")
        board = []
        for t in trajs:
            status = curation_status(events.get(t["id"], []), revisions.get(t["id"], []), **rules)
            if state is not None and status.state != state:
                continue
            board.append({"trajectory_id": t["id"], **{k: t[k] for k in ("spectrum_id", "task", "agent_name",
                                                                       "backend", "model", "answer")},
                          **status.as_dict(),
                          "revised_steps": sorted({r["step_idx"] for r in revisions.get(t["id"], [])})})
        return board

    def revisions_in_scope(self, trajectory_id: str, session: str | None = None) -> list[dict[str, Any]]:
        """Every revision row of a trajectory (all versions) within the session's frozen time."""
        scope, params = self._scope(session, "revisions")
        return self._rows(f"SELECT * FROM revisions WHERE trajectory_id = ? {scope} ORDER BY created_at, seq",
                          [trajectory_id, *params])

    # -- LLM judges --------------------------------------------------------------------------
    def rated_trajectory_ids(self, rater: str, rubric_version: str) -> set[str]:
        return {r[0] for r in self._execute(
            "SELECT DISTINCT trajectory_id FROM ratings WHERE rater = ? AND rubric_version = ?",
            [rater, str(rubric_version)]).fetchall()}

    def add_judge_failure(self, trajectory_id: str, judge: str, rubric_version: str, error: str,
                          reply: str | None = None) -> str:
        """A judge call that gave no usable score (no score in the reply, or the call failed)."""
        row_id = new_id()
        self._execute(
            "INSERT INTO judge_failures (id, trajectory_id, judge, rubric_version, error, reply, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", [row_id, trajectory_id, judge, str(rubric_version), error, reply, now()])
        return row_id

    def judge_failures(self, judge: str | None = None) -> list[dict[str, Any]]:
        cond, params = ("WHERE judge = ?", [judge]) if judge else ("", [])
        return self._rows(f"SELECT * FROM judge_failures {cond} ORDER BY created_at, seq", params)

    # -- whole tables (Parquet export) -------------------------------------------------------
    def table_names(self) -> list[str]:
        return [r[0] for r in self._execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name").fetchall()]

    def table_frame(self, table: str, session: str | None = None) -> pd.DataFrame:
        """A whole table as a DataFrame (label tables limited to the session's frozen labels when given;
        the session's own rows for audit_sessions / session_items / session_reviewers)."""
        if table not in self.table_names():
            raise ValueError(f"no table {table!r}")
        cond, params = self._scope(session, table)
        if session is not None and table in ("audit_sessions", "session_items", "session_reviewers"):
            key = "id" if table == "audit_sessions" else "session_id"
            cond, params = f" AND {key} = ?", [self.find_session(session)["id"]]
        return self._execute(f"SELECT * FROM {table} WHERE true {cond}", params).df()


# -- helpers ---------------------------------------------------------------------------------
def _group(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
    return groups


def _newer(resolution: dict[str, Any], labels: list[dict[str, Any]]) -> bool:
    return all((resolution["created_at"], resolution["seq"]) > (r["created_at"], r["seq"]) for r in labels)


def _item(kind: str, item_id: str, first: dict[str, Any], reasons: list[str], rows: list[dict[str, Any]],
          resolution: dict[str, Any] | None) -> dict[str, Any]:
    return {"kind": kind, "item_id": item_id, "spectrum_id": first.get("spectrum_id"), "task": first.get("task"),
            "reasons": reasons, "labels": rows, "resolution": resolution,
            "resolved": bool(resolution) and _newer(resolution, rows),
            "updated_at": max(r["created_at"] for r in rows)}


def _final_verdict(rows: list[dict[str, Any]], own: dict[str, Any], resolution: dict[str, Any] | None) -> dict[str, Any]:
    result = verdict_consensus(rows, own).as_dict()
    result["resolution"] = resolution if resolution and _newer(resolution, rows) else None
    final = None
    if result["resolution"] is not None:
        res = result["resolution"]
        label = own if res["action"] == "approve" else (res["label"] if res["action"] == "override" else None)
        final = {"action": res["action"], "label": label, "source": "resolution"}
    elif result["status"] in ("single", "agreed"):
        final = {"action": result["action"], "label": result["label"], "source": result["status"]}
    result["final"] = final
    return result


def _credibility(row: dict[str, Any]) -> str | None:
    if row.get("credibility"):
        return str(row["credibility"]).upper()
    brief = (row.get("outcome") or {}).get("brief") or {}
    value = brief.get("confidence") or (row.get("outcome") or {}).get("credibility")
    return str(value).upper() if value else None


def _label_text(row: dict[str, Any]) -> str | None:
    from reviewer.consensus import describe_label

    return describe_label(row["label"]) if row.get("label") else None
