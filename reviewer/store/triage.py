"""Triage inputs and results (tables `triage_models`, `triage_priority`): persistence only.

What the signals mean, how the weights are fitted and what a priority is are decided in
`reviewer.services.triage`; the store hands it the inputs in bulk (one query each) and keeps what it computed:
the weight vectors it used and each trajectory's cached priority with its signals. The queue's order
"priority" (reviewer/store/queue.py) reads the cached priorities.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import duckdb

from reviewer.store.claims import CLAIM_COUNTS_SQL, _claim_counts_sql
from reviewer.store.codec import new_id, now, to_json
from reviewer.store.database import Database

if TYPE_CHECKING:  # pandas is read only where a frame is made: a command that makes none does not import it
    import pandas as pd

TRIAGE_MODEL_KINDS = ("default", "fitted")

# Per trajectory: what the agents answered and the inputs of the triage signals. `n_reviewers`
# counts the people whose current verdict on it is not withdrawn (read from `reviews` itself, so it
# does not wait for verdict_state to be synced).
# What a trajectory's cached signals (table triage_signals) were computed from: its row and its
# contradicted-claim count (over `trajectories t` joined with `claims c`). Its siblings on the same
# spectrum are covered by recomputing a whole spectrum when any of its trajectories changed.
INPUTS_HASH = ("hash(t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer, t.answer_z, t.credibility, "
               "t.created_at, CAST(t.outcome AS VARCHAR), coalesce(c.contradicted, 0))")


def _current_verdicts_sql(of: str = "") -> str:
    """Each reviewer's current verdict per trajectory (as `current`, from the table kept on write), of the
    trajectories meeting `of`."""
    return f"current AS (SELECT trajectory_id, action FROM current_reviews{f' WHERE {of}' if of else ''})"


_CURRENT_VERDICTS_SQL = _current_verdicts_sql()
_LABELS_MARK_SQL = ("SELECT (SELECT count(*) FROM reviews), (SELECT coalesce(max(seq), 0) FROM reviews), "
                    "(SELECT count(*) FROM resolutions WHERE item_kind = 'trajectory'), "
                    "(SELECT coalesce(max(seq), 0) FROM resolutions WHERE item_kind = 'trajectory')")
# people whose current verdict on a trajectory is not withdrawn (reads `current`)
_SEEN_SQL = "seen AS (SELECT trajectory_id, count(*) AS n_reviewers FROM current WHERE action <> 'clear' GROUP BY 1)"
# per labelled trajectory, whether the agent's answer was right (reads `current`): the latest trajectory
# resolution where there is one (approve = right), else more than half of the current verdicts approve
_TRUTH_SQL = ("WITH votes AS (SELECT trajectory_id, count(*) FILTER (WHERE action = 'approve') AS n_approve, "
              "count(*) AS n FROM current WHERE action <> 'clear' GROUP BY 1), "
              "res AS (SELECT item_id AS trajectory_id, action FROM resolutions WHERE item_kind = 'trajectory' "
              "AND action IN ('approve', 'override', 'reject') "
              "QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY created_at DESC, seq DESC) = 1) "
              "SELECT trajectory_id, CASE WHEN r.action IS NOT NULL THEN r.action = 'approve' "
              "ELSE 2 * v.n_approve > v.n END AS correct FROM votes v FULL JOIN res r USING (trajectory_id)")


# `{trajectories}`: the table itself, or `picked` (the trajectories of some spectra, a CTE) whose claim
# results and verdicts alone are then read: a refresh of one item's priority after a verdict read the
# whole claim and label tables: 0.13 s at 100k trajectories, 0.7 s at 1M (now ~12 ms at either)
_TRIAGE_ITEMS_SQL = """
{claims},
{current}, {seen}
SELECT t.id AS trajectory_id, t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer, t.answer_z,
       t.credibility, t.created_at,
       t.outcome -> '$.margin' AS margin, t.outcome ->> '$.status' AS status,
       coalesce(TRY_CAST(t.outcome ->> '$.llm_disagrees' AS BOOLEAN), false) AS llm_disagrees,
       coalesce(c.contradicted, 0) AS contradicted,
       coalesce(n.n_reviewers, 0) AS n_reviewers,
       {inputs_hash} AS inputs_hash
FROM {trajectories} t
LEFT JOIN claims c ON c.trajectory_id = t.id
LEFT JOIN seen n ON n.trajectory_id = t.id
"""

# Spectra (NULL: the trajectories without one, compared with each other like a spectrum) whose cached
# signals are stale: a trajectory with no row, a row whose trajectory is gone, or a row whose inputs
# differ from a trajectory's or claim result's written in the last RECHECK_MINUTES. The writers of what
# the signals are computed from (trajectories.save_trajectory: a trajectory and its siblings;
# claims.save_claims: its contradicted count) delete the rows they make stale just before their own
# transaction (never in it: a conflict with a read storing signals would fail the write),
# and a bulk insert leaves new trajectories without rows: anti-joins find both. The recent recheck
# closes the race of a refresh that read its inputs before such a write committed and stored its rows
# after (snapshot isolation lets both commit); comparing every row's inputs would cost over a second at
# 100k, the recent ones cost little.
RECHECK_MINUTES = 10
_STALE_SQL = f"""
WITH recent AS (
    SELECT id FROM trajectories WHERE saved_at >= now() - INTERVAL {RECHECK_MINUTES} MINUTE
    UNION SELECT trajectory_id FROM claim_results WHERE created_at >= now() - INTERVAL {RECHECK_MINUTES} MINUTE
), picked AS (SELECT * FROM claim_results WHERE trajectory_id IN (SELECT id FROM recent)),
claims AS ({_claim_counts_sql("picked")})
SELECT DISTINCT spectrum_id FROM (
    SELECT t.spectrum_id FROM trajectories t ANTI JOIN triage_signals s ON s.trajectory_id = t.id
    UNION ALL SELECT s.spectrum_id FROM triage_signals s ANTI JOIN trajectories t ON t.id = s.trajectory_id
    UNION ALL SELECT t.spectrum_id FROM trajectories t JOIN triage_signals s ON s.trajectory_id = t.id
        LEFT JOIN claims c ON c.trajectory_id = t.id
        WHERE t.id IN (SELECT id FROM recent) AND s.inputs_hash <> {INPUTS_HASH}
)
"""
# Whether the anti joins of _STALE_SQL can find nothing: no trajectory or claim result written in the last
# RECHECK_MINUTES, and the signals' trajectories are the trajectories (equal counts, and equal sums of
# the ids' 64-bit hashes: an order-free checksum of the two sets). Four column scans, ~30 ms at 1M
# trajectories, where the joins cost ~150 ms on every Stats or triage read. Two different sets with the
# same count and the same sum would need a collision of 64-bit hash sums; a later write rechecks anyway.
_SURELY_FRESH_SQL = f"""
SELECT NOT EXISTS (SELECT 1 FROM trajectories WHERE saved_at >= now() - INTERVAL {RECHECK_MINUTES} MINUTE)
   AND NOT EXISTS (SELECT 1 FROM claim_results WHERE created_at >= now() - INTERVAL {RECHECK_MINUTES} MINUTE)
   AND (SELECT count(*) FROM trajectories) = (SELECT count(*) FROM triage_signals)
   AND (SELECT coalesce(sum(hash(id)), 0) FROM trajectories)
       = (SELECT coalesce(sum(hash(trajectory_id)), 0) FROM triage_signals)
"""
# What moves with every write the signals are computed from, in any order: the trajectories' and claim
# results' counts and the sums of their write times (a save or a check deletes its rows and writes them
# again, now). ~3 ms at 1M trajectories and 11M claim results: read before a check that finds nothing
# stale, it says later that nothing can have become stale since (the check's ~35 ms skipped after a verdict).
_INPUTS_MARK_SQL = ("SELECT (SELECT count(*) FROM trajectories), (SELECT sum(epoch_us(saved_at)) FROM trajectories), "
                    "(SELECT count(*) FROM claim_results), (SELECT sum(epoch_us(created_at)) FROM claim_results)")
# The inputs' hash of some trajectories now (one parameter: their ids), as CTE `now_` (id, h).
_CURRENT_INPUTS_SQL = f"""
WITH ids AS (SELECT unnest(?::VARCHAR[]) AS id),
picked AS (SELECT * FROM claim_results WHERE trajectory_id IN (SELECT id FROM ids)),
claims AS ({_claim_counts_sql("picked")}),
now_ AS (SELECT t.id, {INPUTS_HASH} AS h FROM trajectories t LEFT JOIN claims c ON c.trajectory_id = t.id
         WHERE t.id IN (SELECT id FROM ids))
"""
SIGNAL_COLUMNS = ("spectrum_id", "task", "agent", "answer", "n_contradicted", "margin", "credibility", "unjudgeable",
                  "contradicted", "disagreement", "low_credibility", "closeness")
_SIGNAL_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN", "DOUBLE",
                 "DOUBLE", "DOUBLE", "DOUBLE")


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
            conds.append("task = ?")
            params.append(task)
        if spectrum_ids is not None:
            ids = list(dict.fromkeys(spectrum_ids))
            # a semi-join, not list_contains: the list may hold every spectrum (a first fill of the cache);
            # None in it stands for the trajectories without a spectrum
            null = " OR spectrum_id IS NULL" if None in ids else ""
            conds.append(f"(spectrum_id IN (SELECT unnest(?::VARCHAR[])){null})")
            params.append([i for i in ids if i is not None])
        if not conds:
            sql = _TRIAGE_ITEMS_SQL.format(claims=f"WITH claims AS ({CLAIM_COUNTS_SQL})", current=_CURRENT_VERDICTS_SQL,
                                           seen=_SEEN_SQL, inputs_hash=INPUTS_HASH, trajectories="trajectories")
            return self.db.rows(f"{sql} ORDER BY t.created_at, t.id")
        picked = f"WITH picked AS (SELECT * FROM trajectories WHERE {' AND '.join(conds)})"
        of_picked = "trajectory_id IN (SELECT id FROM picked)"
        claims = (f"{picked}, picked_claims AS (SELECT * FROM claim_results WHERE {of_picked}), "
                  f"claims AS ({_claim_counts_sql('picked_claims')})")
        current = _current_verdicts_sql(of_picked)
        sql = _TRIAGE_ITEMS_SQL.format(claims=claims, current=current, seen=_SEEN_SQL, inputs_hash=INPUTS_HASH,
                                       trajectories="picked")
        return self.db.rows(f"{sql} ORDER BY t.created_at, t.id", params)

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

    # -- cached signals (triage_signals) ------------------------------------------------------
    def stale_signal_spectra(self) -> list[str | None]:
        """Spectra whose cached signals must be recomputed (None: the trajectories without a spectrum).
        Not checked again while nothing they are computed from was written since a check found none."""
        # read before the check: a write during it moves the mark; rows dropped by a write that then failed
        # leave it where it was, and are counted instead (Database.drop_derived)
        mark = self._signals_mark()
        if self.db.in_step_at.get("triage_signals") == mark:
            return []
        stale = [] if self.db.scalar(_SURELY_FRESH_SQL) else [r[0] for r in self.db.execute(_STALE_SQL).fetchall()]
        if not stale:
            self.db.in_step_at["triage_signals"] = mark
        return stale

    def signals_mark(self) -> tuple | None:
        """The write mark of what the stored signals are computed from, when every signal was last found in
        step at it (stale_signal_spectra); else None. In a transaction with a read: what that read saw."""
        mark = self._signals_mark()
        return mark if self.db.in_step_at.get("triage_signals") == mark else None

    def _signals_mark(self) -> tuple:
        return (self.db.dropped("triage_signals"), *self.db.execute(_INPUTS_MARK_SQL).fetchall()[0])

    def put_signals(self, spectrum_ids: list[str | None], rows: list[dict[str, Any]]) -> int:
        """Replace the cached signals of the given spectra's trajectories by `rows` (dicts: trajectory_id,
        inputs_hash and SIGNAL_COLUMNS), in one transaction: rows of trajectories gone are dropped with them."""
        ids = [i for i in spectrum_ids if i is not None]
        null = " OR spectrum_id IS NULL" if None in spectrum_ids else ""
        columns = ("trajectory_id", "inputs_hash", *SIGNAL_COLUMNS)
        types = ("VARCHAR", "UBIGINT", *_SIGNAL_TYPES)
        # one statement of column arrays (unnest zips them): 100k rows in well under a second
        select = ", ".join(f"unnest(?::{kind}[]) AS {name}" for name, kind in zip(columns, types, strict=True))
        try:
            self._put_signals(ids, null, columns, select, rows)
        except (duckdb.TransactionException, duckdb.ConstraintException):
            # another thread stored or invalidated the same rows at once (DuckDB reports a key both
            # inserted as a constraint error): nothing stored here; the caller checks again
            return 0
        return len(rows)

    def _put_signals(self, ids, null, columns, select, rows) -> None:
        with self.db.transaction():
            self.db.execute(f"DELETE FROM triage_signals WHERE spectrum_id IN (SELECT unnest(?::VARCHAR[])){null}", [ids])
            if rows:
                # only rows whose inputs are still those they were computed from: a trajectory or claim
                # written since (by another thread) is left without a row, so its spectrum is stale
                self.db.execute(
                    f"INSERT OR REPLACE INTO triage_signals ({', '.join(columns)}) {_CURRENT_INPUTS_SQL} "
                    f"SELECT new.* FROM (SELECT {select}) new JOIN now_ ON now_.id = new.trajectory_id "
                    "AND now_.h = new.inputs_hash",
                    [[r["trajectory_id"] for r in rows], *[[r[c] for r in rows] for c in columns]])

    def clear_signals(self) -> None:
        self.db.drop_derived("triage_signals")

    def cached_signals(self, task: str | None = None, columns: Iterable[str] = SIGNAL_COLUMNS, ordered: bool = True,
                       with_truth: bool = False, rows: str = "all", answered: bool = False,
                       categories: Iterable[str] = ()) -> pd.DataFrame:
        """Every trajectory's cached signals (of `task`; `columns` of SIGNAL_COLUMNS) with its current number
        of reviewers (people whose current verdict is not withdrawn, counted now); in the default queue's
        order unless not `ordered` (a report that aggregates: the join and sort cost ~1 s at 1M rows); with
        `with_truth` also `correct`, the labelled truth of `labelled_truth` (NULL: no human label).
        `rows`: all of them, or only the "labelled" ones (a truth; `correct` read with them), or only the
        "unreviewed" (no truth and no reviewer): a triage report reads the two apart, the first few, the
        second many with no join to carry (~0.1 s of joins and text at 1M trajectories). `answered`: only
        the trajectories whose agent answered (unjudgeable refusals left out: selecting them out of a
        frame cost ~0.25 s of string copies at 1M rows). `categories`: text columns read as pandas
        categories (Database.frame)."""
        if rows not in ("all", "labelled", "unreviewed"):
            raise ValueError(f"rows is all, labelled or unreviewed; got {rows!r}")
        picked = [c for c in columns if c in SIGNAL_COLUMNS]
        conds, params = (["s.task = ?"], [task]) if task else ([], [])
        if answered:
            conds.append("NOT s.unjudgeable")
        where = f"WHERE {' AND '.join(conds)}" if conds else ""
        with_truth = with_truth or rows == "labelled"
        truth = f", truth AS ({_TRUTH_SQL})" if with_truth or rows == "unreviewed" else ""
        joins = {"all": ("LEFT JOIN truth h ON h.trajectory_id = s.trajectory_id " if with_truth else "")
                 + "LEFT JOIN seen n ON n.trajectory_id = s.trajectory_id ",
                 "labelled": "JOIN truth h ON h.trajectory_id = s.trajectory_id "
                             "LEFT JOIN seen n ON n.trajectory_id = s.trajectory_id ",
                 "unreviewed": "ANTI JOIN truth h ON h.trajectory_id = s.trajectory_id "
                               "ANTI JOIN seen n ON n.trajectory_id = s.trajectory_id "}[rows]
        reviewers = "0 AS n_reviewers" if rows == "unreviewed" else "coalesce(n.n_reviewers, 0) AS n_reviewers"
        # a frame straight from DuckDB: 100k dicts would cost more than the query (and each text column
        # left out saves ~30 ms at 100k rows)
        return self.db.frame(
            f"WITH {_CURRENT_VERDICTS_SQL}, {_SEEN_SQL}{truth} SELECT s.trajectory_id, {''.join('s.' + c + ', ' for c in picked)}"
            f"{'h.correct, ' if with_truth else ''}{reviewers} FROM triage_signals s "
            f"{'JOIN trajectories t ON t.id = s.trajectory_id ' if ordered else ''}{joins}{where}"
            f"{' ORDER BY t.created_at, t.id' if ordered else ''}", params, categories=tuple(categories))

    # -- priced signals (triage_signals.priority: the priority before review, under stored weights) ----
    def unpriced(self, model_id: str) -> pd.DataFrame:
        """The answered trajectories whose stored priority is not under the weights `model_id` (new rows,
        or other weights): their features, by trajectory id."""
        return self.db.frame("SELECT trajectory_id, contradicted, disagreement, low_credibility, closeness "
                             "FROM triage_signals WHERE NOT unjudgeable AND priced_by IS DISTINCT FROM ?",
                             [model_id]).set_index("trajectory_id")

    def put_prices(self, trajectory_ids: list[str], priorities: list[float], model_id: str) -> bool:
        """Store each trajectory's priority under the weights `model_id`. False when a concurrent write of the
        same rows won (the caller reads again)."""
        if not trajectory_ids:
            return True
        try:
            self.db.execute("UPDATE triage_signals SET priority = p.priority, priced_by = ? FROM "
                            "(SELECT unnest(?::VARCHAR[]) AS id, unnest(?::DOUBLE[]) AS priority) p "
                            "WHERE triage_signals.trajectory_id = p.id", [model_id, trajectory_ids, priorities])
        except (duckdb.TransactionException, duckdb.ConstraintException):
            return False
        return True

    def priced_labelled(self, model_id: str, trajectory_ids: list[str] | None = None) -> pd.DataFrame | None:
        """The labelled answers (trajectory_id, task, agent, priority, correct) under the stored priorities of
        `model_id`, None while any answered trajectory's is not priced under it. Refusals are left out.
        With `trajectory_ids`, those trajectories' alone (when a caller knows every answer priced)."""
        if trajectory_ids is not None:
            # list_contains on a few ids is an index lookup alone, and a scan of every signal (~30 ms at 1M
            # trajectories) beside another condition or inside a join: two reads, joined and filtered here;
            # the truth's labels are read for those trajectories alone
            of = "list_contains(?, trajectory_id)"
            signals = self.db.frame(f"SELECT trajectory_id, task, agent, priority, unjudgeable FROM triage_signals "
                                    f"WHERE {of}", [trajectory_ids], categories=("task", "agent"))
            truth = self.db.frame(f"WITH {_current_verdicts_sql(of)}, truth AS ({_TRUTH_SQL}) "
                                  f"SELECT trajectory_id, correct FROM truth WHERE {of}", [trajectory_ids] * 2)
            answered = signals.loc[~signals.pop("unjudgeable").to_numpy(bool)]
            return answered.merge(truth, on="trajectory_id")
        if self.db.scalar("SELECT count(*) FROM triage_signals WHERE NOT unjudgeable AND priced_by IS DISTINCT FROM ?",
                          [model_id]):
            return None
        return self.db.frame(
            f"WITH {_CURRENT_VERDICTS_SQL}, truth AS ({_TRUTH_SQL}) SELECT s.trajectory_id, s.task, s.agent, s.priority, "
            "h.correct FROM triage_signals s JOIN truth h ON h.trajectory_id = s.trajectory_id WHERE NOT s.unjudgeable",
            categories=("task", "agent"))

    def labels_mark(self) -> tuple:
        """What the labelled truth is read from, as (rows, newest seq) of the verdicts and of the trajectory
        resolutions: both are only appended, one row at a time, so a later mark says which rows are new."""
        return tuple(self.db.execute(_LABELS_MARK_SQL).fetchall()[0])

    def labelled_between(self, before: tuple, after: tuple) -> list[str] | None:
        """The trajectories with a verdict or resolution written between two labels_mark()s (read in the
        snapshot of `after`); None when a row committed out of its seq's order (a transaction of many labels
        taking its seqs before a later single label committed): more rows than those above `before`'s seq."""
        rows = self.db.execute(
            "SELECT trajectory_id, 'review' FROM reviews WHERE seq > ? UNION ALL SELECT item_id, 'resolution' "
            "FROM resolutions WHERE item_kind = 'trajectory' AND seq > ?", [before[1], before[3]]).fetchall()
        new_reviews = sum(kind == "review" for _, kind in rows)
        if new_reviews != after[0] - before[0] or len(rows) - new_reviews != after[2] - before[2]:
            return None
        return sorted({tid for tid, _ in rows})

    def priced_answers(self) -> pd.DataFrame:
        """Every answered trajectory's stored priority (task, agent, priority), labelled or not; refusals left
        out. The unreviewed answers are these less the labelled ones (a reviewer's verdict makes a truth)."""
        return self.db.frame("SELECT task, agent, priority FROM triage_signals WHERE NOT unjudgeable",
                             categories=("task", "agent"))

    def labelled_truth(self) -> pd.DataFrame:
        """Per labelled trajectory (trajectory_id, correct): was the agent's answer right? As
        reviewer.services.triage.trajectory_truth decides it, in one aggregate: the latest trajectory resolution
        decides where there is one (approve = right), else the current verdicts (withdrawn ones left out):
        right when more than half approve."""
        return self.db.frame(f"WITH {_CURRENT_VERDICTS_SQL}, truth AS ({_TRUTH_SQL}) "
                               "SELECT * FROM truth ORDER BY trajectory_id")

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
