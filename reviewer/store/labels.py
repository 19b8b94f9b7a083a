"""Human (and LLM-judge) labels: append-only writers and latest-wins readers.

Every writer inserts one row and returns its id. The id is a client-generated UUID: pass the same
`id` again (a retried request) and nothing new is written. A change of mind is a new row; readers
return, per reviewer and item, the row with the latest `created_at` (ties: insertion order), and
`label_history` returns every row ever written.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import duckdb

from reviewer.store.codec import new_id, now, to_json
from reviewer.store.database import Database
from reviewer.store.duckdb_words import is_duplicate_key
from reviewer.store.pair_counts import add_pairs, pairs_in

REVIEW_ACTIONS = ("approve", "override", "reject", "clear")  # clear = withdraw my verdict
PREFERENCE_OUTCOMES = ("win", "tie", "loss")  # for trajectory_a against trajectory_b
CURATION_EVENTS = ("revise", "audit", "vote")
RATER_KINDS = ("human", "llm")
VI_ISSUES = "RCS"  # bad redshift fit, bad spectype fit, bad spectrum (prospect)
LABEL_TABLES = ("reviews", "vi_labels", "annotations", "ratings", "preferences", "revisions", "curation_events",
                "step_judgments")

# The label tables whose current row per key (the newest by created_at, then seq) is kept in a table of its
# own (reviewer/store/schema.py V13), written with the label: table -> (that table, key, columns kept)
_CURRENT = {"reviews": ("current_reviews", ("trajectory_id", "reviewer"), ("action",)),
            "ratings": ("current_ratings", ("trajectory_id", "rater", "rubric_version"), ("rater_kind", "score"))}
_LATEST = "QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY created_at DESC, seq DESC) = 1"


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def normalise_vi_issues(issues: str | Iterable[str] | None) -> str:
    """'sr' / ['S', 'R'] -> 'RS' (prospect order, no repeats); anything but R/C/S is an error."""
    letters = "".join(issues or "").upper().replace(" ", "")
    bad = sorted(set(letters) - set(VI_ISSUES))
    if bad:
        raise ValueError(f"VI issues are letters from {VI_ISSUES}; got {''.join(bad)!r}")
    return "".join(c for c in VI_ISSUES if c in letters)


class LabelRepository:
    """The reviewers and their labels (verdicts, VI labels, notes, ratings, preferences, revisions,
    curation events)."""

    def __init__(self, db: Database):
        self.db = db

    # -- reviewers ---------------------------------------------------------------------------
    def add_reviewer(self, name: str) -> str:
        name = (name or "").strip()
        if not name:
            raise ValueError("a reviewer needs a name")
        if name not in self.db.known_reviewers:
            self.db.execute(
                "INSERT INTO reviewers (name, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING", [name, now()]
            )
            if not self.db.in_transaction():  # a rollback could still undo it
                self.db.known_reviewers.add(name)
        return name

    def list_reviewers(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM reviewers ORDER BY name").fetchall()]

    def append(self, table: str, values: dict[str, Any], id: str | None, created_at: datetime | None) -> str:
        """Write one label row (`id`: the client's, else a new one); a row with that id already there
        is this very label, and nothing is written. Returns the id."""
        row = {"id": id or new_id(), **values, "created_at": created_at or now()}
        sql = f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})"
        if table in _CURRENT:
            return self.db.write_together(lambda: self._append_current(table, row, sql))
        if self.db.in_transaction():
            # a duplicate-key error would abort the caller's whole transaction
            self.db.execute(sql + " ON CONFLICT DO NOTHING", list(row.values()))
            return row["id"]
        # Alone, a plain INSERT is about twice as fast as ON CONFLICT DO NOTHING in DuckDB; the
        # id being the only key, a duplicate key means this very label is already stored.
        try:
            self.db.execute(sql, list(row.values()))
        except duckdb.ConstraintException as exc:
            if not is_duplicate_key(exc):
                raise
        return row["id"]

    def _append_current(self, table: str, row: dict[str, Any], sql: str) -> str:
        """`append` of a label whose current row per key is kept (_CURRENT): the label, then that row
        replaced by it when it is the newer, and its trajectory's pairs counted again
        (reviewer/store/pair_counts.py); inside the caller's transaction."""
        stored = self.db.execute(sql + " ON CONFLICT DO NOTHING RETURNING seq", list(row.values())).fetchall()
        if not stored:  # this very label (its id) was stored before, and its current row then
            return row["id"]
        current, keys, kept = _CURRENT[table]
        columns = (*keys, *kept, "created_at", "seq")
        before = self.db.rows(f"SELECT {', '.join(columns)} FROM {current} WHERE trajectory_id = ?",
                              [row["trajectory_id"]])
        newer = (f"excluded.created_at > {current}.created_at OR "
                 f"(excluded.created_at = {current}.created_at AND excluded.seq > {current}.seq)")
        replaced = self.db.rows(  # the row written, if this label is the newer (else none)
            f"INSERT INTO {current} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)}) "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
            f"{', '.join(f'{c} = excluded.{c}' for c in columns if c not in keys)} WHERE {newer} "
            f"RETURNING {', '.join(columns)}", [*(row[c] for c in (*keys, *kept, "created_at")), stored[0][0]])
        if replaced:
            after = [r for r in before if any(r[k] != replaced[0][k] for k in keys)] + replaced
            add_pairs(self.db, table, pairs_in(table, before), pairs_in(table, after))
        return row["id"]

    # -- writers -----------------------------------------------------------------------------
    def add_review(
        self, trajectory_id: str, reviewer: str, action: str, label: dict | None = None,
        comment: str | None = None, session_id: str | None = None, *, id: str | None = None,
        created_at: datetime | None = None, active_s: float | None = None,
    ) -> str:
        """A verdict on a trajectory: approve / override (with the corrected `label`) / reject / clear;
        `active_s`: the seconds the reviewer's page was in use on the item before it (None: not measured)."""
        _choice("action", action, REVIEW_ACTIONS)
        if action == "override" and not label:
            raise ValueError("an override needs the corrected label")
        reviewer = self.add_reviewer(reviewer)
        return self.append("reviews", {
            "trajectory_id": trajectory_id, "reviewer": reviewer, "action": action, "label": to_json(label),
            "comment": comment, "session_id": session_id, "active_s": active_s,
        }, id, created_at)

    def add_vi_label(
        self, spectrum_id: str, reviewer: str, quality: int | None = None, issues: str | Iterable[str] = "",
        z: float | None = None, spectype: str | None = None, comment: str | None = None,
        session_id: str | None = None, *, id: str | None = None, created_at: datetime | None = None,
    ) -> str:
        """DESI visual-inspection fields for a spectrum (quality 0-4 or None = unset, issues R/C/S)."""
        if quality is not None and not (isinstance(quality, int) and 0 <= quality <= 4):
            raise ValueError(f"VI quality is an integer 0-4; got {quality!r}")
        reviewer = self.add_reviewer(reviewer)
        return self.append("vi_labels", {
            "spectrum_id": spectrum_id, "reviewer": reviewer, "quality": quality,
            "issues": normalise_vi_issues(issues), "z": None if z is None else float(z),
            "spectype": spectype.upper() if spectype else None, "comment": comment, "session_id": session_id,
        }, id, created_at)

    def add_annotation(
        self, trajectory_id: str, reviewer: str, comment: str | None = None, step_idx: int | None = None,
        flags: Iterable[str] = (), session_id: str | None = None, *, id: str | None = None,
        created_at: datetime | None = None,
    ) -> str:
        """A note on one step (`step_idx`) or on the whole trajectory (None). A reviewer's newer note on
        the same step replaces the older one in `annotations_for`; an empty note with no flags clears it."""
        reviewer = self.add_reviewer(reviewer)
        return self.append("annotations", {
            "trajectory_id": trajectory_id, "step_idx": step_idx, "reviewer": reviewer, "comment": comment,
            "flags": list(dict.fromkeys(flags)), "session_id": session_id,
        }, id, created_at)

    def add_rating(
        self, trajectory_id: str, rater: str, score: float, rubric_version: str, rater_kind: str = "human",
        comment: str | None = None, session_id: str | None = None, *, id: str | None = None,
        created_at: datetime | None = None,
    ) -> str:
        """A 0-5 reasoning score under a rubric version, by a person or an LLM judge."""
        _choice("rater_kind", rater_kind, RATER_KINDS)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 5:
            raise ValueError(f"a rating is a number from 0 to 5; got {score!r}")
        if rater_kind == "human":
            rater = self.add_reviewer(rater)
        return self.append("ratings", {
            "trajectory_id": trajectory_id, "rater": rater, "rater_kind": rater_kind, "score": float(score),
            "rubric_version": str(rubric_version), "comment": comment, "session_id": session_id,
        }, id, created_at)

    def add_preference(
        self, trajectory_a: str, trajectory_b: str, reviewer: str, outcome: str, spectrum_id: str | None = None,
        comment: str | None = None, session_id: str | None = None, *, id: str | None = None,
        created_at: datetime | None = None,
    ) -> str:
        """Pairwise preference: `outcome` is for trajectory_a against trajectory_b (win / tie / loss)."""
        _choice("outcome", outcome, PREFERENCE_OUTCOMES)
        if trajectory_a == trajectory_b:
            raise ValueError("a preference compares two different trajectories")
        reviewer = self.add_reviewer(reviewer)
        return self.append("preferences", {
            "spectrum_id": spectrum_id, "trajectory_a": trajectory_a, "trajectory_b": trajectory_b,
            "reviewer": reviewer, "outcome": outcome, "comment": comment, "session_id": session_id,
        }, id, created_at)

    def add_revision(
        self, trajectory_id: str, step_idx: int, reviewer: str, text: str | None = None,
        tool_args: dict | None = None, image_sha: str | None = None, comment: str | None = None,
        *, id: str | None = None, created_at: datetime | None = None,
    ) -> str:
        """An edited version of one step (text and/or tool arguments, and the new render's sha).
        The version number is one more than the step's latest, assigned in the same statement."""
        reviewer = self.add_reviewer(reviewer)
        row_id = id or new_id()
        self.db.execute(
            "INSERT INTO revisions (id, trajectory_id, step_idx, version, reviewer, text, tool_args, image_sha, "
            "comment, created_at) SELECT ?, ?, ?, coalesce((SELECT max(version) FROM revisions "
            "WHERE trajectory_id = ? AND step_idx = ?), 0) + 1, ?, ?, ?, ?, ?, ? ON CONFLICT DO NOTHING",
            [row_id, trajectory_id, step_idx, trajectory_id, step_idx, reviewer, text, to_json(tool_args),
             image_sha, comment, created_at or now()],
        )
        return row_id

    def add_curation_event(
        self, trajectory_id: str, reviewer: str, event: str, value: str | None = None,
        comment: str | None = None, session_id: str | None = None, *, id: str | None = None,
        created_at: datetime | None = None,
    ) -> str:
        """A curation step: `revise` (submitted a revision), `audit` (value approve / request_changes),
        `vote` (value accept / reject)."""
        _choice("event", event, CURATION_EVENTS)
        reviewer = self.add_reviewer(reviewer)
        return self.append("curation_events", {
            "trajectory_id": trajectory_id, "reviewer": reviewer, "event": event, "value": value,
            "comment": comment, "session_id": session_id,
        }, id, created_at)

    def add_first_look(self, trajectory_id: str, reviewer: str, label: dict, session_id: str,
                       active_s: float | None = None, *, id: str | None = None,
                       created_at: datetime | None = None) -> str:
        """A reviewer's own answer on an item of a first-look campaign, given before the agent's was shown."""
        if not label:
            raise ValueError("a first look needs the reviewer's answer")
        reviewer = self.add_reviewer(reviewer)
        return self.append("first_looks", {"trajectory_id": trajectory_id, "reviewer": reviewer, "label": to_json(label),
                                           "active_s": active_s, "session_id": session_id}, id, created_at)

    def first_look(self, trajectory_id: str, reviewer: str, session_id: str) -> dict[str, Any] | None:
        """This reviewer's first look on the item in the campaign (the latest), or None."""
        return self.db.row("SELECT * FROM first_looks WHERE trajectory_id = ? AND reviewer = ? AND session_id = ? "
                           "ORDER BY created_at DESC, seq DESC LIMIT 1", [trajectory_id, reviewer, session_id])

    def first_looks(self, session_id: str) -> list[dict[str, Any]]:
        """Every reviewer's first look on each item of the campaign (the latest of each), oldest first."""
        return self.db.rows("SELECT * FROM first_looks WHERE session_id = ? "
                            f"{_LATEST.format(keys='trajectory_id, reviewer')} ORDER BY created_at, seq", [session_id])

    # -- latest-wins readers -----------------------------------------------------------------
    def latest_review(self, trajectory_id: str, reviewer: str) -> dict[str, Any] | None:
        """This reviewer's current verdict on the trajectory (None: none, or withdrawn with `clear`)."""
        row = self.db.row(
            "SELECT * FROM reviews WHERE trajectory_id = ? AND reviewer = ? "
            "ORDER BY created_at DESC, seq DESC LIMIT 1", [trajectory_id, reviewer])
        return None if row is None or row["action"] == "clear" else row

    def reviews_for(self, trajectory_id: str) -> list[dict[str, Any]]:
        """Current verdict of each reviewer (withdrawn ones left out), oldest first."""
        rows = self.db.rows(
            f"SELECT * FROM reviews WHERE trajectory_id = ? {_LATEST.format(keys='reviewer')} ORDER BY created_at, seq",
            [trajectory_id])
        return [r for r in rows if r["action"] != "clear"]

    def verdict_times(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Each reviewer's current verdict on each trajectory (in one campaign, or all) with the active
        seconds it took (rows without one left out): reviewer, task, trajectory_id, active_s, created_at,
        oldest first."""
        scope, args = ("WHERE r.session_id = ?", [session_id]) if session_id else ("", [])
        return self.db.rows(
            "SELECT * FROM (SELECT r.reviewer, t.task, r.trajectory_id, r.action, r.active_s, r.created_at, r.seq "
            f"FROM reviews r JOIN trajectories t ON t.id = r.trajectory_id {scope} "
            "QUALIFY row_number() OVER (PARTITION BY r.trajectory_id, r.reviewer ORDER BY r.created_at DESC, r.seq DESC) = 1) "
            "WHERE action <> 'clear' AND active_s IS NOT NULL ORDER BY created_at, seq", args)

    def latest_vi_label(self, spectrum_id: str, reviewer: str) -> dict[str, Any] | None:
        return self.db.row(
            "SELECT * FROM vi_labels WHERE spectrum_id = ? AND reviewer = ? ORDER BY created_at DESC, seq DESC LIMIT 1",
            [spectrum_id, reviewer])

    def vi_labels_for(self, spectrum_id: str) -> list[dict[str, Any]]:
        return self.db.rows(
            f"SELECT * FROM vi_labels WHERE spectrum_id = ? {_LATEST.format(keys='reviewer')} ORDER BY created_at, seq",
            [spectrum_id])

    def annotations_for(self, trajectory_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
        """Current note of each reviewer on each step (and on the whole trajectory), cleared ones left out."""
        sql = "SELECT * FROM annotations WHERE trajectory_id = ?"
        params: list[Any] = [trajectory_id]
        if reviewer is not None:
            sql += " AND reviewer = ?"
            params.append(reviewer)
        rows = self.db.rows(
            f"{sql} {_LATEST.format(keys='reviewer, step_idx')} ORDER BY step_idx NULLS FIRST, created_at, seq", params)
        return [r for r in rows if r["comment"] or r["flags"]]

    def latest_rating(self, trajectory_id: str, rater: str, rubric_version: str | None = None) -> dict[str, Any] | None:
        sql = "SELECT * FROM ratings WHERE trajectory_id = ? AND rater = ?"
        params: list[Any] = [trajectory_id, rater]
        if rubric_version is not None:
            sql += " AND rubric_version = ?"
            params.append(rubric_version)
        return self.db.row(sql + " ORDER BY created_at DESC, seq DESC LIMIT 1", params)

    def ratings_for(self, trajectory_id: str) -> list[dict[str, Any]]:
        """Current score of each rater under each rubric version."""
        return self.db.rows(
            f"SELECT * FROM ratings WHERE trajectory_id = ? {_LATEST.format(keys='rater, rubric_version')} "
            "ORDER BY created_at, seq", [trajectory_id])

    def preferences_for(self, trajectory_id: str | None = None, spectrum_id: str | None = None) -> list[dict[str, Any]]:
        """Current preference of each reviewer for each pair (a, b) = (b, a) involving the trajectory
        or spectrum; `outcome` is for that row's trajectory_a."""
        if (trajectory_id is None) == (spectrum_id is None):
            raise ValueError("give exactly one of trajectory_id, spectrum_id")
        if trajectory_id is not None:
            where, params = "(trajectory_a = ? OR trajectory_b = ?)", [trajectory_id, trajectory_id]
        else:
            where, params = "spectrum_id = ?", [spectrum_id]
        keys = "reviewer, least(trajectory_a, trajectory_b), greatest(trajectory_a, trajectory_b)"
        return self.db.rows(
            f"SELECT * FROM preferences WHERE {where} {_LATEST.format(keys=keys)} ORDER BY created_at, seq", params)

    def revisions_for(self, trajectory_id: str) -> list[dict[str, Any]]:
        """The current (latest) revision of each revised step."""
        return self.db.rows(
            f"SELECT * FROM revisions WHERE trajectory_id = ? {_LATEST.format(keys='step_idx')} ORDER BY step_idx",
            [trajectory_id])

    def curation_events_for(self, trajectory_id: str, latest: bool = True) -> list[dict[str, Any]]:
        """Curation events; with `latest`, each reviewer's current audit / vote / revise only."""
        qualify = _LATEST.format(keys="reviewer, event") if latest else ""
        return self.db.rows(
            f"SELECT * FROM curation_events WHERE trajectory_id = ? {qualify} ORDER BY created_at, seq",
            [trajectory_id])

    def labels_for(self, trajectory_id: str) -> dict[str, list[dict[str, Any]]]:
        """Every current label on a trajectory (and the VI labels of its spectrum), keyed by table."""
        spectrum_id = self.db.scalar("SELECT spectrum_id FROM trajectories WHERE id = ?", [trajectory_id])
        return {
            "reviews": self.reviews_for(trajectory_id),
            "annotations": self.annotations_for(trajectory_id),
            "ratings": self.ratings_for(trajectory_id),
            "preferences": self.preferences_for(trajectory_id=trajectory_id),
            "revisions": self.revisions_for(trajectory_id),
            "curation_events": self.curation_events_for(trajectory_id),
            "vi_labels": self.vi_labels_for(spectrum_id) if spectrum_id else [],
        }

    def label_history(self, table: str, trajectory_id: str | None = None, spectrum_id: str | None = None,
                      reviewer: str | None = None) -> list[dict[str, Any]]:
        """Every row ever written to a label table (oldest first), optionally narrowed."""
        _choice("table", table, LABEL_TABLES)
        conds, params = [], []
        if trajectory_id is not None:
            if table == "vi_labels":
                raise ValueError("vi_labels are per spectrum: use spectrum_id")
            if table == "preferences":
                conds.append("(trajectory_a = ? OR trajectory_b = ?)")
                params += [trajectory_id, trajectory_id]
            else:
                conds.append("trajectory_id = ?")
                params.append(trajectory_id)
        if spectrum_id is not None:
            if table not in ("vi_labels", "preferences"):
                raise ValueError(f"{table} rows are per trajectory: use trajectory_id")
            conds.append("spectrum_id = ?")
            params.append(spectrum_id)
        if reviewer is not None:
            conds.append(f"{'rater' if table == 'ratings' else 'reviewer'} = ?")
            params.append(reviewer)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return self.db.rows(f"SELECT * FROM {table} {where} ORDER BY created_at, seq", params)

    def count_labels(self, table: str) -> int:
        _choice("table", table, LABEL_TABLES)
        return int(self.db.scalar(f"SELECT count(*) FROM {table}"))

