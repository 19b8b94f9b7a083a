"""The claim checker's results (table `claim_results`): persistence only.

What a claim is and whether the spectrum supports it is decided in `agents.claims`; the service
`reviewer.services.claims` turns its results into rows. The store keeps them per trajectory and checker
version: saving a version again replaces that version's rows, other versions stay. Reads use, per
trajectory, the version saved last (unless one is named). Each save also records that the trajectory
was checked under that version (table claim_checks, with no claim found too), which is what tells a
pending check (`unchecked`).

Reviewers' answers to the flags the checker raises (table `claim_flags`: a contradicted claim
confirmed or dismissed) are labels: append-only, the latest row per reviewer and claim wins, and the
label service (`reviewer.services.labels.LabelService.write_claim_flag`) decides what may be written.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reviewer.store.codec import now, to_json
from reviewer.store.database import Database, forget_signals
from reviewer.store.labels import LabelRepository

CLAIM_VERDICTS = ("supported", "contradicted", "unverifiable")
CLAIM_FLAG_DECISIONS = ("confirm", "dismiss")  # the claim is wrong / the checker is wrong
# the columns a row passed to save_claims may set (trajectory_id, checker_version, created_at: the store's)
CLAIM_ROW_FIELDS = ("step_idx", "claim_idx", "kind", "span_start", "span_end", "claim_text", "verdict", "claimed",
                    "measured", "tolerance", "unit", "window_lo", "window_hi", "reason", "result")
_COLUMNS = ("trajectory_id", "checker_version", *CLAIM_ROW_FIELDS, "created_at")
_CHECK_COLUMNS = ("trajectory_id", "checker_version", "n_claims", "checked_at")


def _latest_claims_sql(rows: str) -> str:
    """Per trajectory of `rows` (claim_results, or a CTE of some of its rows), the checker version
    saved last (ties: the greater version string)."""
    return f"""
SELECT trajectory_id, checker_version FROM {rows} GROUP BY trajectory_id, checker_version
QUALIFY row_number() OVER (PARTITION BY trajectory_id ORDER BY max(created_at) DESC, checker_version DESC) = 1
"""


def _claim_counts_sql(rows: str) -> str:
    """Verdict counts of each trajectory's latest checker version, over `rows`."""
    return f"""
SELECT r.trajectory_id,
       count(*) FILTER (WHERE r.verdict = 'supported') AS supported,
       count(*) FILTER (WHERE r.verdict = 'contradicted') AS contradicted,
       count(*) FILTER (WHERE r.verdict = 'unverifiable') AS unverifiable
FROM {rows} r JOIN ({_latest_claims_sql(rows)}) l USING (trajectory_id, checker_version)
GROUP BY r.trajectory_id
"""


# Of every trajectory (no parameters: used as a CTE by the queue when it filters or orders by them).
CLAIM_COUNTS_SQL = _claim_counts_sql("claim_results")
# Of some trajectories (one parameter, their ids): reads only their rows, not the whole table's
# aggregate (~50 ms instead of ~230 ms for a queue page at 1M claim results).
_PICKED_CLAIM_COUNTS_SQL = ("WITH picked AS (SELECT * FROM claim_results WHERE trajectory_id IN "
                            "(SELECT unnest(?::VARCHAR[])))" + _claim_counts_sql("picked"))


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _claim_values(trajectory_id: str, version: str, rows: Iterable[dict[str, Any]], stamp) -> list[list[Any]]:
    """The `claim_results` rows (_COLUMNS order) of one trajectory's results; ValueError names a bad row."""
    values = []
    for row in rows:
        unknown = set(row) - set(CLAIM_ROW_FIELDS)
        if unknown:
            raise ValueError(f"unknown claim result fields: {', '.join(sorted(unknown))}")
        missing = [k for k in ("step_idx", "claim_idx", "kind", "claim_text", "verdict") if row.get(k) is None]
        if missing:
            raise ValueError(f"claim result lacks {', '.join(missing)}")
        if row["verdict"] not in CLAIM_VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(CLAIM_VERDICTS)}; got {row['verdict']!r}")
        rec = dict(row)
        for key in ("claimed", "measured", "tolerance", "window_lo", "window_hi"):
            rec[key] = _number(rec.get(key))
        rec["result"] = to_json(rec.get("result"))
        values.append([trajectory_id, str(version), *(rec.get(c) for c in CLAIM_ROW_FIELDS), stamp])
    return values


class ClaimRepository:
    """Claim results and reviewers' answers to their flags (labels: written through `labels`)."""

    def __init__(self, db: Database, labels: LabelRepository):
        self.db = db
        self._labels = labels

    def save_claims(self, trajectory_id: str, version: str, rows: Iterable[dict[str, Any]]) -> int:
        """Replace this trajectory's claim results of checker `version` with `rows` (dicts with keys of
        CLAIM_ROW_FIELDS; step_idx, claim_idx, kind, claim_text and verdict required), in one
        transaction. An empty list records nothing (and clears that version). Returns rows written."""
        if not version:
            raise ValueError("a checker version is required")
        stamp = now()
        values = _claim_values(trajectory_id, version, rows, stamp)
        forget_signals(self.db, "trajectory_id = ?", [trajectory_id])  # its contradicted count changes
        with self.db.transaction():
            self.db.execute("DELETE FROM claim_results WHERE trajectory_id = ? AND checker_version = ?",
                            [trajectory_id, str(version)])
            if values:
                self.db.insert_rows("claim_results", _COLUMNS, values)
            self._record_checks(version, {trajectory_id: values}, stamp)
        return len(values)

    def _record_checks(self, version: str, checked: dict[str, list], stamp) -> None:
        """Table claim_checks: these trajectories checked under `version`, with their claims' count."""
        self.db.execute("DELETE FROM claim_checks WHERE checker_version = ? AND trajectory_id IN "
                        "(SELECT unnest(?::VARCHAR[]))", [str(version), list(checked)])
        self.db.insert_rows("claim_checks", _CHECK_COLUMNS,
                            [[tid, str(version), len(values), stamp] for tid, values in checked.items()])

    def save_claims_of(self, version: str, results: Iterable[tuple[str, Iterable[dict[str, Any]]]]) -> int:
        """`save_claims` for many trajectories at once ((trajectory id, rows) pairs, all of checker
        `version`), in one transaction of a few statements: a batch run's group of checked
        trajectories. Their stored triage signals are dropped first, except inside a caller's transaction
        (a campaign's group: see save_trajectories).
        Every row is validated before anything is written. Returns rows written."""
        if not version:
            raise ValueError("a checker version is required")
        stamp = now()
        checked = {tid: _claim_values(tid, version, rows, stamp) for tid, rows in results}
        if not checked:
            return 0
        # their contradicted counts change (a campaign's later check); a no-op in a caller's transaction
        forget_signals(self.db, "trajectory_id IN (SELECT unnest(?::VARCHAR[]))", [list(checked)])
        values = [v for vals in checked.values() for v in vals]
        with self.db.transaction():
            self.db.execute("DELETE FROM claim_results WHERE checker_version = ? AND trajectory_id IN "
                            "(SELECT unnest(?::VARCHAR[]))", [str(version), list(checked)])
            if values:
                self.db.insert_rows("claim_results", _COLUMNS, values)
            self._record_checks(version, checked, stamp)
        return len(values)

    def _unchecked_sql(self, version: str, prefix: str, trajectory_ids: Iterable[str] | None) -> tuple[str, list]:
        where, params = "", [version, prefix]
        if trajectory_ids is not None:
            where, params = "WHERE t.id IN (SELECT unnest(?::VARCHAR[]))", [list(trajectory_ids), *params]
        return (f"FROM trajectories t {where} {'AND' if where else 'WHERE'} NOT EXISTS (SELECT 1 FROM claim_checks c "
                "WHERE c.trajectory_id = t.id AND (c.checker_version = ? OR starts_with(c.checker_version, ?)))",
                params)

    def unchecked(self, versions: tuple[str, str], trajectory_ids: Iterable[str] | None = None,
                  limit: int | None = None) -> list[str]:
        """The trajectories (of `trajectory_ids`, else all) not checked (table claim_checks) under checker
        version `versions[0]` nor under one that starts with `versions[1]`, oldest saved first."""
        sql, params = self._unchecked_sql(*versions, trajectory_ids)
        sql = f"SELECT t.id {sql} ORDER BY t.saved_at, t.id" + ("" if limit is None else f" LIMIT {int(limit)}")
        return [r[0] for r in self.db.execute(sql, params).fetchall()]

    def count_unchecked(self, versions: tuple[str, str], trajectory_ids: Iterable[str] | None = None) -> int:
        """How many trajectories `unchecked` would give."""
        sql, params = self._unchecked_sql(*versions, trajectory_ids)
        return int(self.db.scalar(f"SELECT count(*) {sql}", params))

    def claims_for(self, trajectory_id: str, version: str | None = None) -> list[dict[str, Any]]:
        """The claim results of one trajectory in step and claim order: of checker `version`, or of the
        version saved last. `result` is the checker's whole result as a dict."""
        if version is not None:
            return self.db.rows("SELECT * FROM claim_results WHERE trajectory_id = ? AND checker_version = ? "
                                "ORDER BY step_idx, claim_idx", [trajectory_id, version])
        return self.db.rows(
            "SELECT * FROM claim_results WHERE trajectory_id = ? QUALIFY checker_version = first(checker_version) "
            "OVER (ORDER BY created_at DESC, checker_version DESC) ORDER BY step_idx, claim_idx", [trajectory_id])

    def claim_counts(self, trajectory_ids: Iterable[str]) -> dict[str, dict[str, int]]:
        """{trajectory id: {supported, contradicted, unverifiable}} from each one's latest checker
        version; trajectories with no stored result are absent."""
        ids = list(dict.fromkeys(trajectory_ids))
        if not ids:
            return {}
        rows = self.db.rows(_PICKED_CLAIM_COUNTS_SQL, [ids])
        return {r["trajectory_id"]: {v: int(r[v]) for v in CLAIM_VERDICTS} for r in rows}

    def claim_versions(self, trajectory_id: str) -> list[str]:
        """The checker versions with results stored for a trajectory, the latest saved first."""
        return [r[0] for r in self.db.execute(
            "SELECT checker_version FROM claim_results WHERE trajectory_id = ? GROUP BY checker_version "
            "ORDER BY max(created_at) DESC, checker_version DESC", [trajectory_id]).fetchall()]

    # -- reviewers' answers to contradicted-claim flags ------------------------------------------
    def add_claim_flag(
        self, trajectory_id: str, reviewer: str, step_idx: int, claim_idx: int, checker_version: str,
        claim_text: str, decision: str, result: dict | None = None, comment: str | None = None,
        session_id: str | None = None, *, id: str | None = None, created_at: datetime | None = None,
    ) -> str:
        """A reviewer's answer to the flag on one stored claim (claim_results' trajectory, checker
        version, step and claim index): `confirm` (the claim is wrong) or `dismiss` (the checker is).
        `result`: what the checker said about it, kept with the answer. Append-only; returns the id."""
        if decision not in CLAIM_FLAG_DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(CLAIM_FLAG_DECISIONS)}; got {decision!r}")
        reviewer = self._labels.add_reviewer(reviewer)
        return self._labels.append("claim_flags", {
            "trajectory_id": trajectory_id, "step_idx": int(step_idx), "claim_idx": int(claim_idx),
            "checker_version": str(checker_version), "claim_text": claim_text, "decision": decision,
            "reviewer": reviewer, "result": to_json(result), "comment": comment, "session_id": session_id,
        }, id, created_at)

    def claim_flags_for(self, trajectory_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
        """Each reviewer's current answer to each flagged claim of a trajectory (latest row per
        reviewer, checker version, step and claim), in step and claim order."""
        sql = "SELECT * FROM claim_flags WHERE trajectory_id = ?"
        params: list[Any] = [trajectory_id]
        if reviewer is not None:
            sql += " AND reviewer = ?"
            params.append(reviewer)
        return self.db.rows(
            f"{sql} QUALIFY row_number() OVER (PARTITION BY reviewer, checker_version, step_idx, claim_idx "
            "ORDER BY created_at DESC, seq DESC) = 1 ORDER BY step_idx, claim_idx, created_at, seq", params)

    def claim_flag_history(self, trajectory_id: str | None = None, reviewer: str | None = None) -> list[dict[str, Any]]:
        """Every answer ever written (oldest first), optionally of one trajectory / reviewer: the
        labelled examples a fit of the checker's tolerances reads."""
        conds, params = [], []
        if trajectory_id is not None:
            conds.append("trajectory_id = ?")
            params.append(trajectory_id)
        if reviewer is not None:
            conds.append("reviewer = ?")
            params.append(reviewer)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return self.db.rows(f"SELECT * FROM claim_flags {where} ORDER BY created_at, seq", params)
