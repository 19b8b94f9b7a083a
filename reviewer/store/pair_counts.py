"""How often each pair of reviewers gave each pair of verdicts, and each pair of raters each pair of
scores, on the same trajectory (tables verdict_pair_counts, rating_pair_counts, schema 13): what Cohen's
kappa and Spearman's rho are computed from (reviewer.services.stats), kept as labels are written.

Counting them from every current label took ~0.1 s of a Stats read at 1M trajectories (a self-join of
250k current scores). A label changes only its own trajectory's pairs, so the writer counts that
trajectory's pairs before and after it (`pairs_in`, from its few current rows read once) and adds the
difference, in the label's transaction.

The pairs are those of the current rows (reviewer/store/schema.py V13): a reviewer's current verdict
unless withdrawn ('clear'), with each reviewer's own counts as pairs with reviewer_b = '' (a key has no
NULL); a rater's newest score of the trajectory whatever its rubric version.
"""
from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

# a reviewer's own verdicts are counted as a pair with nobody
NOBODY = ""


def pair_counts_sql(who: str, value: str) -> str:
    """Over CTE `newest` (trajectory_id, `who`, `value`: each one's current value per trajectory): for each
    pair of `who` (a < b) and pair of values, on how many trajectories the two gave them."""
    return (f"SELECT a.{who} AS {who}_a, b.{who} AS {who}_b, a.{value} AS {value}_a, b.{value} AS {value}_b, "
            f"count(*) AS n FROM newest a JOIN newest b ON a.trajectory_id = b.trajectory_id AND a.{who} < b.{who} "
            "GROUP BY ALL")


def own_and_pair_counts_sql(who: str, value: str, nobody: str) -> str:
    """`pair_counts_sql`, and each one's own counts of each value as pairs with `nobody` (an SQL value)."""
    return (f"SELECT {who} AS {who}_a, {nobody} AS {who}_b, {value} AS {value}_a, {nobody} AS {value}_b, count(*) AS n "
            f"FROM newest GROUP BY ALL UNION ALL {pair_counts_sql(who, value)}")


# every pair of the current verdicts and of the current scores (what the migration fills the counts with)
VERDICT_PAIRS_SQL = ("WITH newest AS (SELECT trajectory_id, reviewer, action FROM current_reviews WHERE action <> 'clear') "
                     f"{own_and_pair_counts_sql('reviewer', 'action', repr(NOBODY))}")
RATING_PAIRS_SQL = ("WITH newest AS (SELECT trajectory_id, rater, arg_max(score, (created_at, seq)) AS score "
                    f"FROM current_ratings GROUP BY ALL) {pair_counts_sql('rater', 'score')}")


# label table -> (its pair counts table, the counts' key columns)
PAIRS = {"reviews": ("verdict_pair_counts", ("reviewer_a", "reviewer_b", "action_a", "action_b")),
         "ratings": ("rating_pair_counts", ("rater_a", "rater_b", "score_a", "score_b"))}


def pairs_in(table: str, current: list[dict[str, Any]]) -> Counter:
    """The pairs of one trajectory's current rows of a label table (rows of current_reviews or current_ratings),
    as the SQL above counts them: read once around a label, two queries of a few ms each on its write path."""
    if table == "reviews":
        given = sorted((r["reviewer"], r["action"]) for r in current if r["action"] != "clear")
        pairs = Counter((who, NOBODY, action, NOBODY) for who, action in given)
    else:  # each rater's newest score, whatever the rubric version
        newest: dict[str, dict[str, Any]] = {}
        for r in sorted(current, key=lambda r: (r["created_at"], r["seq"])):
            newest[r["rater"]] = r
        given, pairs = sorted((who, r["score"]) for who, r in newest.items()), Counter()
    # names compared as DuckDB compares them (UTF-8 bytes: the code points' order)
    pairs.update((a, b, x, y) for (a, x), (b, y) in combinations(given, 2) if a < b)
    return pairs


def add_pairs(db, table: str, before: Counter, after: Counter) -> None:
    """Add `after` - `before` (one trajectory's pairs around a label) to the table's stored counts."""
    counts, keys = PAIRS[table]
    delta: dict[tuple, Any] = {k: after.get(k, 0) - before.get(k, 0) for k in before.keys() | after.keys()}
    delta = {k: n for k, n in delta.items() if n}
    if not delta:
        return
    marks = ", ".join(f"({', '.join('?' for _ in (*keys, 'n'))})" for _ in delta)  # a few rows: VALUES
    db.execute(f"INSERT INTO {counts} ({', '.join(keys)}, n) VALUES {marks} "
               f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET n = {counts}.n + excluded.n",
               [value for key, n in delta.items() for value in (*key, n)])
