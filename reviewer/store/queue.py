"""The review queue: trajectories with, for one reviewer, what they have done, whether people disagree and
how many of the agent's claims the checker found contradicted."""
from __future__ import annotations

import re
from typing import Any

from reviewer.store.claims import CLAIM_COUNTS_SQL, ClaimRepository
from reviewer.store.codec import now
from reviewer.store.database import Database
from reviewer.store.sessions import HOLDERS_SQL

QUEUE_STATES = ("todo", "done", "all")
# "default": creation order (a campaign's own order inside a session); "contradicted": the most
# contradicted claims first, ties in the default order; "priority": the highest cached triage priority
# first (reviewer/services/triage.py computes it; `specreview triage --refresh` and the label service after a
# verdict recompute it), items without one last, ties in the default order.
QUEUE_ORDERS = ("default", "contradicted", "priority")
# The most trajectory ids a queue may be restricted to (`selected_ids`: a selection in the Stats tab): the ids
# travel as one list parameter of every queue read, so their number bounds each read's cost.
MAX_SELECTED_IDS = 5000

# Disagreement is read from `verdict_state`, which the label service keeps (reviewer/services/conflicts.py
# decides what disagreeing means); contradicted claims from `claim_results` (each trajectory's latest
# checker version). This query only counts and pages. Each query joins only the tables its columns,
# filters and order name (an `n` press asks for one neighbour, not for every item's claim counts).
_MINE_SQL = """SELECT trajectory_id, action FROM reviews WHERE reviewer = ?
    QUALIFY row_number() OVER (PARTITION BY trajectory_id ORDER BY created_at DESC, seq DESC) = 1"""
# alias -> (its CTE, or None; its join); the parameters of each, in order, are added where it is used
_JOINS = {
    "s": (None, "LEFT JOIN spectra s USING (spectrum_id)"),
    "v": (None, "LEFT JOIN verdict_state v ON v.trajectory_id = t.id AND v.scope = ?"),
    "m": (f"mine AS ({_MINE_SQL})", "LEFT JOIN mine m ON m.trajectory_id = t.id"),
    "c": (f"claims AS ({CLAIM_COUNTS_SQL})", "LEFT JOIN claims c ON c.trajectory_id = t.id"),
    "p": (None, "LEFT JOIN triage_priority p ON p.trajectory_id = t.id"),
}
# `status`: how an item without an answer ended (outcome status, e.g. "unjudgeable"); the outcome is
# read only for those rows, so a page of answered items parses no JSON.
_QUEUE_COLUMNS = """t.id AS trajectory_id, t.spectrum_id, t.task, t.agent_name, t.backend, t.model, t.answer,
       CASE WHEN t.answer IS NULL THEN t.outcome ->> '$.status' END AS status,
       t.answer_z, t.credibility, t.n_steps, t.created_at, s.object_id, s.survey, s.pipeline_class, s.pipeline_z,
       coalesce(v.n_reviews, 0) AS n_reviews, {disagreement} AS disagreement,
       CASE WHEN m.action IS NULL OR m.action = 'clear' THEN NULL ELSE m.action END AS my_action,
       coalesce(c.contradicted, 0) AS contradicted, p.priority"""
_QUEUE_COLUMNS_NO_CLAIMS = _QUEUE_COLUMNS.replace("coalesce(c.contradicted, 0) AS contradicted, ", "")


def _disagreement_sql(blind: bool) -> str:
    """Whether reviewers disagree on the item, as this reviewer may see it: under blind review only
    once they have a verdict of their own on it (the rule of reviewer.services.labels.LabelService.sees_others)."""
    stored = "coalesce(v.status = 'conflict', false)"
    return f"({stored} AND coalesce(m.action <> 'clear', false))" if blind else stored


def _queue_key(order: str | None, session_id: str | None) -> list[str]:
    """The queue's sort key, column by column, each ascending and never NULL, so that the key's tuple
    order is the queue's order: pages sort by it, and `n` finds the next item as the first row past
    the current one's key (a keyset read, no numbering of the whole queue). `t.id` ends every key, so
    no two items tie."""
    order = order or "default"
    if order not in QUEUE_ORDERS:
        raise ValueError(f"order must be one of {', '.join(QUEUE_ORDERS)}; got {order!r}")
    base = ["si.position", "t.id"] if session_id else ["t.created_at", "t.id"]
    if order == "contradicted":
        return ["-coalesce(c.contradicted, 0)", *base]
    if order == "priority":  # highest first, items without a priority last
        return ["p.priority IS NULL", "coalesce(-p.priority, 0)", *base]
    return base


def _queue_order(order: str | None, session_id: str | None) -> str:
    """The ORDER BY of the queue (it refers to the query's tables, so it goes inside windows too)."""
    return ", ".join(_queue_key(order, session_id))


def _past(names: list[str], key: list[Any], op: str) -> tuple[str, list[Any]]:
    """(SQL, parameters) of "the row's key is `op` ('<' or '>') `key`" in the key's tuple order, written
    out column by column (k0 op c0 OR (k0 = c0 AND (k1 op c1 OR ...))): a comparison of one column with a
    constant is one the scan can prune row groups by, a comparison of whole rows is not."""
    sql, params = f"{names[-1]} {op} ?", [key[-1]]
    for name, value in zip(reversed(names[:-1]), reversed(key[:-1]), strict=True):
        sql, params = f"({name} {op} ? OR ({name} = ? AND {sql}))", [value, value, *params]
    return sql, params


class QueueRepository:
    """The review queue's pages, counts and positions; a page's claim counts are read from `claims`."""

    def __init__(self, db: Database, claims: ClaimRepository):
        self.db = db
        self._claims = claims

    def content_mark(self) -> tuple[int, int, int]:
        """(spectra, trajectories, newest verdict seq): moves when anyone, anywhere (another browser,
        the CLI), adds spectra, trajectories or verdicts. Three aggregate reads DuckDB answers from
        its metadata and the label table's zone maps, cheap enough for every page to poll."""
        row = self.db.row("SELECT (SELECT count(*) FROM spectra) AS s, (SELECT count(*) FROM trajectories) AS t, "
                          "(SELECT coalesce(max(seq), 0) FROM reviews) AS r")
        return (int(row["s"]), int(row["t"]), int(row["r"])) if row else (0, 0, 0)

    def verdicts_after(self, seq: int) -> int:
        """How many verdict rows were stored after the one numbered `seq` (a content_mark's third value)."""
        return int(self.db.scalar("SELECT count(*) FROM reviews WHERE seq > ?", [seq]))

    def _queue_query(self, columns: str, reviewer: str | None, *, task=None, agent_name=None, backend=None,
                     credibility=None, state: str = "all", disagreement: bool | None = None,
                     reviewed_by: str | None = None, session_id: str | None = None, contradicted: bool | None = None,
                     order: str | None = None, blind: bool = False,
                     same_object: bool | None = None, within: tuple[str, list] | None = None,
                     overlap: int | None = None, selected_ids: list[str] | None = None) -> tuple[str, list]:
        """(SQL, parameters) of the filtered queue with `columns`. `order` is only validated here
        (`_queue_order` writes it, and the joins it needs are made); `contradicted` True keeps items
        with a contradicted claim, False those without; `same_object` True keeps items whose object has
        several spectra (the cross-match's groups), False the others; `blind`: disagreement is shown and filtered
        only where `reviewer` has a verdict (blind review); `within`: one more condition (SQL, its parameters);
        `overlap` (a campaign's reviewers per item, with `session_id`): only the items `reviewer` may still
        take, i.e. gold items, items they hold (a verdict, a live reservation), and items fewer than
        `overlap` others hold (store.sessions.HOLDERS_SQL); `selected_ids` (None: any): only those trajectories
        (at most MAX_SELECTED_IDS; an empty list is an empty queue)."""
        if state not in QUEUE_STATES:
            raise ValueError(f"state must be one of {', '.join(QUEUE_STATES)}; got {state!r}")
        order_sql = _queue_order(order, session_id)
        disagree = _disagreement_sql(blind)
        columns = columns.replace("{disagreement}", disagree)
        conds, where_params = [], []
        for column, value in (("t.task", task), ("t.agent_name", agent_name), ("t.backend", backend),
                              ("t.credibility", credibility)):
            if value:
                conds.append(f"{column} = ?")
                where_params.append(value)
        if state == "todo":
            conds.append("(m.action IS NULL OR m.action = 'clear')")
        elif state == "done":
            conds.append("(m.action IS NOT NULL AND m.action <> 'clear')")
        if disagreement is not None:
            conds.append(f"{disagree} = ?")
            where_params.append(bool(disagreement))
        if contradicted is not None:
            conds.append("(coalesce(c.contradicted, 0) > 0) = ?")
            where_params.append(bool(contradicted))
        if same_object is not None:
            conds.append("(t.spectrum_id IN (SELECT spectrum_id FROM object_groups)) = ?")
            where_params.append(bool(same_object))
        if reviewed_by:
            conds.append("t.id IN (SELECT trajectory_id FROM reviews WHERE reviewer = ? QUALIFY row_number() OVER "
                         "(PARTITION BY trajectory_id ORDER BY created_at DESC, seq DESC) = 1 AND action <> 'clear')")
            where_params.append(reviewed_by)
        if overlap is not None:
            if not session_id:
                raise ValueError("reviewers per item (overlap) are a campaign's: give its session_id")
            conds.append("(t.id IN (SELECT trajectory_id FROM gold_items WHERE session_id = ?) OR t.id NOT IN "
                         f"(SELECT trajectory_id FROM ({HOLDERS_SQL}) GROUP BY trajectory_id "
                         "HAVING count(*) FILTER (WHERE reviewer <> ?) >= ? AND NOT bool_or(reviewer = ?)))")
            where_params.extend([session_id, session_id, session_id, now(), reviewer or "", int(overlap),
                                 reviewer or ""])
        if selected_ids is not None:
            if len(selected_ids) > MAX_SELECTED_IDS:
                raise ValueError(f"a queue holds at most {MAX_SELECTED_IDS:,} selected items; got {len(selected_ids):,}")
            conds.append("t.id IN (SELECT unnest(?::VARCHAR[]))")  # a hash semi-join, not a scan per row
            where_params.append([str(i) for i in selected_ids])
        if within is not None:
            conds.append(within[0])
            where_params.extend(within[1])
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        named = f"{columns} {where} {order_sql}"
        used = [alias for alias in _JOINS if re.search(rf"\b{alias}\.", named)]
        ctes = [_JOINS[a][0] for a in used if _JOINS[a][0]]
        joins = [_JOINS[a][1] for a in used]
        # parameters in the order they appear: CTEs (mine: the reviewer), joins (v: the scope), WHERE
        params: list = [reviewer or ""] if "m" in used else []
        if "v" in used:
            params.append(session_id or "")
        if session_id:
            joins.append("JOIN session_items si ON si.trajectory_id = t.id AND si.session_id = ?")
            params.append(session_id)
        with_sql = ("WITH " + ", ".join(ctes)) if ctes else ""
        sql = f"{with_sql}\nSELECT {columns}\nFROM trajectories t\n" + "\n".join(joins) + f"\n{where}"
        return sql, [*params, *where_params]

    def queue_items(self, reviewer: str | None = None, *, offset: int = 0, limit: int = 200,
                    **filters: Any) -> list[dict[str, Any]]:
        """One page of queue rows in review order (creation order, or the campaign's order; with
        `order="contradicted"` the most contradicted claims first, with `order="priority"` the highest
        cached triage priority first; each row carries its `priority`, None when not computed). `state` is relative to `reviewer`
        (todo: no verdict of theirs yet); `reviewed_by` keeps items someone has a verdict on;
        `session_id` limits to a campaign; `contradicted` True/False keeps items with / without a
        contradicted claim. Page with `offset` / `limit`: nothing is capped."""
        order = _queue_order(filters.get("order"), filters.get("session_id"))
        # Claim counts that neither filter nor order are read for the page's items only, after it is
        # chosen: the aggregate over every trajectory's claims was most of a page's time at 100k.
        counts_after = filters.get("contradicted") is None and "c." not in order
        columns = _QUEUE_COLUMNS_NO_CLAIMS if counts_after else _QUEUE_COLUMNS
        columns += ", si.position" if filters.get("session_id") else ""
        # The page's ids first, with only the joins its filters and order name, then its columns for those
        # rows alone: every join of _JOINS is a LEFT JOIN of at most one row per trajectory, so the page
        # is the same. Joining every column for the whole queue before the top-N cost twice as much
        # (100k trajectories: 20 -> 12 ms for the first page, 37 -> 19 ms halfway, "todo" and "priority" alike).
        ids_sql, ids_params = self._queue_query("t.id", reviewer, **filters)
        within = (f"t.id IN ({ids_sql} ORDER BY {order} LIMIT ? OFFSET ?)", [*ids_params, int(limit), int(offset)])
        sql, params = self._queue_query(columns, reviewer, within=within, **filters)
        rows = self.db.rows(f"{sql} ORDER BY {order}", params)
        if counts_after and rows:
            counts = self._claims.claim_counts(r["trajectory_id"] for r in rows)
            for row in rows:
                row["contradicted"] = counts.get(row["trajectory_id"], {}).get("contradicted", 0)
        return rows

    def queue_count(self, reviewer: str | None = None, **filters: Any) -> int:
        sql, params = self._queue_query("count(*)", reviewer, **filters)
        return int(self.db.scalar(sql, params))

    def queue_position(self, trajectory_id: str, reviewer: str | None = None, **filters: Any) -> int | None:
        """The 0-based position of an item in the filtered, ordered queue (None: not in it)."""
        order = _queue_order(filters.get("order"), filters.get("session_id"))
        sql, params = self._queue_query(f"t.id AS tid, row_number() OVER (ORDER BY {order}) - 1 AS pos",
                                        reviewer, **filters)
        row = self.db.row(f"SELECT pos FROM ({sql}) WHERE tid = ?", [*params, trajectory_id])
        return None if row is None else int(row["pos"])

    def queue_neighbour(self, trajectory_id: str | None, delta: int, reviewer: str | None = None,
                        **filters: Any) -> tuple[str, int] | None:
        """(trajectory id, position) of the item `delta` places from `trajectory_id` in the filtered,
        ordered queue (the first item when `trajectory_id` is not in the queue; never before the
        first); None past the end. What `n` / `b` ask: the current item's sort key, then the rows past
        it, the nearest first, and a count of the rows before it: three reads with the key as constants,
        compared column by column, so that a key's leading column (creation time) prunes the scan
        (at 1M, 34 -> 9 ms; numbering the whole queue had taken 5x as long as a keyset read)."""
        keys = _queue_key(filters.get("order"), filters.get("session_id"))
        names = [f"k{i}" for i in range(len(keys))]
        sql, params = self._queue_query(
            "t.id AS tid, " + ", ".join(f"{key} AS {name}" for key, name in zip(keys, names, strict=True)),
            reviewer, **filters)
        delta = int(delta)
        here = self.db.row(f"SELECT * FROM ({sql}) WHERE tid = ?", [*params, trajectory_id or ""])
        if here is None:  # not in the queue: its first item
            first = self.db.row(f"SELECT tid FROM ({sql}) ORDER BY {', '.join(names)} LIMIT 1", params)
            return None if first is None else (first["tid"], 0)
        key = [here[name] for name in names]
        before_sql, before_params = _past(names, key, "<")
        before = int(self.db.scalar(f"SELECT count(*) FROM ({sql}) WHERE {before_sql}", [*params, *before_params]))
        if delta == 0:
            return here["tid"], before
        way, direction = (">", "") if delta > 0 else ("<", " DESC")
        past_sql, past_params = _past(names, key, way)
        row = self.db.row(f"SELECT tid FROM ({sql}) WHERE {past_sql} ORDER BY "
                          f"{', '.join(n + direction for n in names)} LIMIT 1 OFFSET {abs(delta) - 1}",
                          [*params, *past_params])
        if row is not None:
            return row["tid"], before + delta
        if delta > 0:
            return None  # past the end
        first = self.db.row(f"SELECT tid FROM ({sql}) ORDER BY {', '.join(names)} LIMIT 1", params)
        return None if first is None else (first["tid"], 0)  # never before the first

    def queue_progress(self, reviewer: str, session_id: str | None = None) -> dict[str, int]:
        """How many items this reviewer has a current verdict on, of how many (one count query)."""
        params: list = [reviewer]
        scope = ""
        if session_id:
            scope = "JOIN session_items si ON si.trajectory_id = t.id AND si.session_id = ?"
            params.append(session_id)
        row = self.db.row(
            "WITH mine AS (SELECT trajectory_id, action FROM reviews WHERE reviewer = ? "
            "QUALIFY row_number() OVER (PARTITION BY trajectory_id ORDER BY created_at DESC, seq DESC) = 1) "
            "SELECT count(*) AS total, count(m.action) FILTER (WHERE m.action <> 'clear') AS done "
            f"FROM trajectories t {scope} LEFT JOIN mine m ON m.trajectory_id = t.id", params)
        return {"done": int(row["done"]), "total": int(row["total"])}

    def queue_choices(self) -> dict[str, list[str]]:
        """Values the queue filters can take: the tasks and backends that have trajectories."""
        tasks = [r[0] for r in self.db.execute("SELECT DISTINCT task FROM trajectories ORDER BY 1").fetchall()]
        backends = [r[0] for r in self.db.execute("SELECT DISTINCT backend FROM trajectories ORDER BY 1").fetchall()]
        return {"tasks": tasks, "backends": backends}
