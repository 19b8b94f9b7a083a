"""Agreement and accuracy statistics for the stats page (pure numpy/scipy/pandas; the UI plots them).

Inputs are the small tables of counts the store's review queries return (rating_counts, rating_pairs,
verdict_pairs: a few rows per rater or pair, whatever the number of labels) and:
- evaluation rows: task, predicted, predicted_z, credibility, truth, truth_z (a trajectory's answer
  against the approved or overridden human label), and correct when the store has it (else each
  row's `is_correct`); or those rows counted (conflicts.settled_counts: a column `n`).
"""
from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from reviewer.services.consensus import answer_correct

SCORES = (0, 1, 2, 3, 4, 5)
CREDIBILITY_TIERS = ("HIGH", "MEDIUM", "LOW")
POSITIVE = "YES"


# -- ratings ---------------------------------------------------------------------------------
# Each statistic is computed from small tables of counts (store.reviews.rating_counts, rating_pairs,
# verdict_pairs: a few rows per rater or pair of raters), never from one row per label: at 1M
# trajectories the rows cost ~0.3 s of pandas pivots per Stats read, the counts a few milliseconds.
def _weighted_median(values: np.ndarray, n: np.ndarray) -> float:
    """np.median of `values` each repeated `n` times (values sorted): the mean of the two middle ones."""
    total, cumulative = int(n.sum()), np.cumsum(n)
    lower, upper = (total - 1) // 2, total // 2
    at = np.searchsorted(cumulative, [lower, upper], side="right")
    return float((values[at[0]] + values[at[1]]) / 2)


def rating_distributions(counts: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per rater, from `counts` (rater, rater_kind, score, n: how many of the rater's current scores
    have each value): n, mean, median, counts of each integer score 0-5 (scores rounded), and the
    empirical CDF as (x, y) with y = fraction of scores <= x, at x = 0..5."""
    out: dict[str, dict[str, Any]] = {}
    for rater, group in counts.sort_values("score").groupby("rater", sort=True):
        values, n = group["score"].to_numpy(float), group["n"].to_numpy(np.int64)
        total = int(n.sum())
        rounded = np.clip(np.rint(values), 0, 5).astype(int)
        out[str(rater)] = {
            "rater_kind": str(group["rater_kind"].iloc[0]) if "rater_kind" in group else None,
            "n": total, "mean": float((values * n).sum() / total), "median": _weighted_median(values, n),
            "counts": {s: int(n[rounded == s].sum()) for s in SCORES},
            "cdf": {"x": list(SCORES), "y": [float(n[values <= s].sum() / total) for s in SCORES]},
        }
    return out


def _pair_tables(pairs: pd.DataFrame, who: str) -> dict[tuple[str, str], pd.DataFrame]:
    """The rows of each pair (`who`_a, `who`_b) of a pairs table (rows with no second one left out)."""
    both = pairs[pairs[f"{who}_b"].notna()]
    return {(str(a), str(b)): group for (a, b), group in both.groupby([f"{who}_a", f"{who}_b"], sort=False)}


def spearman(a: np.ndarray, b: np.ndarray, n: np.ndarray | None = None, min_shared: int = 3) -> tuple[float, float]:
    """Spearman's rank correlation and its p-value of paired scores `a`, `b` (each pair counted `n` times:
    the counts tables' rows); NaN, NaN with fewer than `min_shared` pairs or a constant side."""
    n = np.ones(len(a), np.int64) if n is None else np.asarray(n, np.int64)
    if n.sum() < min_shared or len(np.unique(a[n > 0])) < 2 or len(np.unique(b[n > 0])) < 2:
        return float("nan"), float("nan")
    # the ranks of the shared trajectories' scores: each score pair repeated as often as it occurs
    res = sps.spearmanr(np.repeat(a, n), np.repeat(b, n))
    return float(res.statistic), float(res.pvalue)


def rater_correlations(pairs: pd.DataFrame, raters: list[str], min_shared: int = 3) -> pd.DataFrame:
    """Spearman rank correlation of every pair of `raters` over the trajectories both scored, from
    `pairs` (rater_a < rater_b, score_a, score_b, n: on how many trajectories the two gave those scores).
    Columns: rater_a, rater_b, n_shared, spearman, p_value (NaN when fewer than `min_shared` shared
    trajectories or when either rater gave one constant score)."""
    tables = _pair_tables(pairs, "rater")
    rows = []
    for a, b in combinations(sorted(raters), 2):
        table = tables.get((a, b))
        n = np.zeros(0, np.int64) if table is None else table["n"].to_numpy(np.int64)
        rho = p = float("nan")
        if table is not None:
            rho, p = spearman(table["score_a"].to_numpy(float), table["score_b"].to_numpy(float), n, min_shared)
        rows.append({"rater_a": a, "rater_b": b, "n_shared": int(n.sum()), "spearman": rho, "p_value": p})
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "n_shared", "spearman", "p_value"])


# -- verdict agreement -----------------------------------------------------------------------
def kappa(table: np.ndarray, weights: str | None = None) -> float:
    """Cohen's kappa of a square table of counts (rows: one rater's category, columns: the other's on
    the same items), 1 - sum(w O) / sum(w E) with E the counts expected by chance from the margins and w
    the disagreement weights: none (0 on the diagonal, 1 elsewhere: Cohen 1960) or 'quadratic' ((i - j)^2
    / (k - 1)^2 for ordered categories, Cohen 1968; the categories must be the whole ordered scale, in
    order, seen or not). NaN when undefined: no items, or chance disagreement of 0 (both always gave one
    and the same category)."""
    table = np.asarray(table, float)
    n, k = table.sum(), table.shape[0]
    if n == 0:
        return float("nan")
    i, j = np.indices(table.shape)
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "quadratic":
        w = (i - j) ** 2 / max(k - 1, 1) ** 2
    else:
        raise ValueError(f"weights are None or 'quadratic'; got {weights!r}")
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    chance = float((w * expected).sum())
    if np.isclose(chance / n, 0.0):
        return float("nan")
    return float(1 - (w * table).sum() / chance)


def verdict_kappas(pairs: pd.DataFrame) -> pd.DataFrame:
    """Cohen's kappa of every reviewer pair over the trajectories both gave a verdict on, from
    `store.reviews.verdict_pairs` (each pair's counts of action pairs; each reviewer's own counts, with
    no second reviewer, name every reviewer). Columns: reviewer_a, reviewer_b, n_shared, agreement (raw
    fraction), kappa."""
    tables = _pair_tables(pairs, "reviewer")
    reviewers = sorted(set(pairs["reviewer_a"].astype(str)))
    rows = []
    for a, b in combinations(reviewers, 2):
        got = tables.get((a, b))
        table = np.zeros((0, 0))
        if got is not None:
            cats = sorted(set(got["action_a"]) | set(got["action_b"]), key=str)
            index = {c: i for i, c in enumerate(cats)}
            table = np.zeros((len(cats), len(cats)))
            np.add.at(table, (got["action_a"].map(index).to_numpy(), got["action_b"].map(index).to_numpy()),
                      got["n"].to_numpy(float))
        n = int(table.sum())
        rows.append({"reviewer_a": a, "reviewer_b": b, "n_shared": n,
                     "agreement": float(np.trace(table) / n) if n else float("nan"), "kappa": kappa(table)})
    return pd.DataFrame(rows, columns=["reviewer_a", "reviewer_b", "n_shared", "agreement", "kappa"])


# -- accuracy against approved labels --------------------------------------------------------
def is_correct(row: dict[str, Any] | pd.Series) -> bool:
    """`answer_correct` of an evaluation row (predicted, predicted_z, truth, truth_z)."""
    return answer_correct(row.get("predicted"), row.get("predicted_z"), row.get("truth"), row.get("truth_z"))


def _correct(rows: pd.DataFrame) -> np.ndarray:
    """Each row's correctness: its stored `correct` column (evaluation_frame), else `is_correct` per row."""
    if "correct" in rows:
        return rows["correct"].to_numpy(bool)
    return np.array([is_correct(r) for r in rows.to_dict("records")], bool)


def f1_positive(tp: int, fp: int, fn: int) -> float:
    """F1 of the positive class (YES) from its counts: 2TP / (2TP + FP + FN); NaN when there is neither
    a positive truth nor a positive prediction."""
    return float("nan") if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def _upper(rows: pd.DataFrame, column: str) -> pd.Series:
    """A text column upper-cased, missing values (or a missing column) as ''."""
    if column not in rows:
        return pd.Series("", index=rows.index)
    return rows[column].fillna("").astype(str).str.upper()


def _weights(rows: pd.DataFrame) -> np.ndarray:
    """How many evaluation rows each row stands for: its `n` (settled_counts' rows), else 1."""
    return rows["n"].to_numpy(np.int64) if "n" in rows else np.ones(len(rows), np.int64)


def task_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """Per task: n, n_positive (truth YES), accuracy, positive-class F1 (vet tasks only; NaN for
    verify), then a 'macro' row averaging the tasks' accuracy and F1 (F1 over vet tasks). `rows`:
    evaluation rows, or their counts (with `n`)."""
    columns = ["task", "n", "n_positive", "accuracy", "f1"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    # the rows counted by task, truth, answer and correctness: a few rows per task, whatever the labels
    counts = pd.DataFrame({"task": rows["task"].to_numpy(), "truth": _upper(rows, "truth").to_numpy(),
                           "predicted": _upper(rows, "predicted").to_numpy(), "correct": _correct(rows),
                           "n": _weights(rows)}).groupby(["task", "truth", "predicted", "correct"]).sum().reset_index()
    out = []
    for task, group in counts.groupby("task", sort=True):
        n, truth, predicted = group["n"].to_numpy(np.int64), group["truth"].to_numpy(str), group["predicted"].to_numpy(str)
        is_vet = bool(np.isin(truth, ("YES", "NO")).all())
        yes, said_yes = truth == POSITIVE, predicted == POSITIVE
        out.append({"task": task, "n": int(n.sum()), "n_positive": int(n[yes].sum()) if is_vet else 0,
                    "accuracy": float(n[group["correct"].to_numpy(bool)].sum() / n.sum()),
                    "f1": f1_positive(int(n[yes & said_yes].sum()), int(n[~yes & said_yes].sum()),
                                      int(n[yes & ~said_yes].sum())) if is_vet else float("nan")})
    frame = pd.DataFrame(out, columns=columns)
    macro = {"task": "macro", "n": int(frame["n"].sum()), "n_positive": int(frame["n_positive"].sum()),
             "accuracy": float(frame["accuracy"].mean()),
             "f1": float(frame["f1"].mean()) if frame["f1"].notna().any() else float("nan")}
    return pd.concat([frame, pd.DataFrame([macro])], ignore_index=True)


def accuracy_vs_coverage(rows: pd.DataFrame, tiers: tuple[str, ...] = CREDIBILITY_TIERS) -> pd.DataFrame:
    """Accuracy when keeping only the most credible answers: for each tier in order (HIGH, then
    HIGH+MEDIUM, then all three), the coverage (kept / all rows, rows without a tier count in
    'all' only) and the accuracy of what is kept; also each tier's own n and accuracy. `rows`:
    evaluation rows, or their counts (with `n`).
    Columns: tier, n_tier, accuracy_tier, n_kept, coverage, accuracy."""
    columns = ["tier", "n_tier", "accuracy_tier", "n_kept", "coverage", "accuracy"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    correct, n = _correct(rows), _weights(rows)
    cred = _upper(rows, "credibility").to_numpy(str)
    out, kept = [], np.zeros(len(rows), bool)

    def accuracy(where: np.ndarray) -> float:
        return float(n[where & correct].sum() / n[where].sum()) if n[where].sum() else float("nan")

    for tier in tiers:
        mine = cred == tier
        kept |= mine
        out.append({"tier": tier, "n_tier": int(n[mine].sum()), "accuracy_tier": accuracy(mine),
                    "n_kept": int(n[kept].sum()), "coverage": float(n[kept].sum() / n.sum()), "accuracy": accuracy(kept)})
    return pd.DataFrame(out, columns=columns)


# -- the judges against people --------------------------------------------------------------
PEOPLE = "people (median)"  # the reference made of every person's score of a trajectory


def whole_score(values) -> np.ndarray:
    """Scores on the 0-5 rubric as its whole points, halves up (a median of 3 and 4 is 4): the categories
    of a weighted kappa and a confusion table."""
    return np.clip(np.floor(np.asarray(values, float) + 0.5), 0, 5).astype(int)


def people_median(humans: pd.DataFrame) -> pd.DataFrame:
    """The PEOPLE reference: the median of every person's score of each trajectory (trajectory_id, people)."""
    return humans.groupby("trajectory_id")["score"].median().rename("people").reset_index()


def judge_gaps(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per judge and trajectory scored by a judge and people under the same rubric version (the rows
    `judge_agreement` counts against PEOPLE): trajectory_id, judge, rubric_version, judge_score, people (their
    median), gap (judge minus people)."""
    columns = ["trajectory_id", "judge", "rubric_version", "judge_score", "people", "gap"]
    if ratings.empty:
        return pd.DataFrame(columns=columns)
    ratings = ratings.assign(rubric_version=ratings["rubric_version"].astype(str))
    humans = ratings[ratings["rater_kind"] == "human"]
    judged = ratings[ratings["rater_kind"] == "llm"].rename(columns={"rater": "judge", "score": "judge_score"})
    parts = [mine[["trajectory_id", "judge", "rubric_version", "judge_score"]].merge(
                 people_median(humans[humans["rubric_version"] == version]), on="trajectory_id")
             for version, mine in judged.groupby("rubric_version", sort=True)]
    both = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns[:-1])
    return both.assign(gap=both["judge_score"].astype(float) - both["people"].astype(float))[columns]


def judge_agreement(ratings: pd.DataFrame, criterion: str = "reasoning", min_shared: int = 3) -> list[dict[str, Any]]:
    """Each judge (rater_kind 'llm': a model, or the offline judge) against people's 0-5 scores of the same
    trajectories under the same rubric version, from current ratings (store.reviews.ratings_frame: trajectory_id,
    rater, rater_kind, score, rubric_version): against the median of every person's score (PEOPLE) and against
    each person. Per row: judge, people, criterion, rubric_version, n (trajectories both scored), qwk (quadratic-
    weighted kappa over whole scores 0-5), spearman and p_value (raw scores; NaN under `min_shared` or a constant
    side), exact (share of equal whole scores), bias (mean judge minus people), confusion (6 x 6 counts, rows:
    people's whole score, columns: the judge's)."""
    out: list[dict[str, Any]] = []
    if ratings.empty:
        return out
    ratings = ratings.assign(rubric_version=ratings["rubric_version"].astype(str))
    humans = ratings[ratings["rater_kind"] == "human"]
    judges = ratings[ratings["rater_kind"] == "llm"]
    for (judge, version), mine in judges.groupby(["rater", "rubric_version"], sort=True):
        same = humans[humans["rubric_version"] == version]
        median = people_median(same)
        references = [(PEOPLE, median)] + [
            (str(person), theirs[["trajectory_id", "score"]].rename(columns={"score": "people"}))
            for person, theirs in same.groupby("rater", sort=True)]
        for who, reference in references:
            both = mine[["trajectory_id", "score"]].merge(reference, on="trajectory_id")
            if both.empty:
                continue
            judged, people = both["score"].to_numpy(float), both["people"].to_numpy(float)
            confusion = np.zeros((len(SCORES), len(SCORES)), np.int64)
            np.add.at(confusion, (whole_score(people), whole_score(judged)), 1)
            rho, p = spearman(people, judged, min_shared=min_shared)
            out.append({"judge": str(judge), "people": who, "criterion": criterion, "rubric_version": version,
                        "n": len(both), "qwk": kappa(confusion, "quadratic"), "spearman": rho, "p_value": p,
                        "exact": float(np.trace(confusion) / len(both)), "bias": float((judged - people).mean()),
                        "confusion": confusion.tolist()})
    return out


def judge_report(store, session: str | None = None, judge: str | None = None,
                 people: list[str] | None = None) -> list[dict[str, Any]]:
    """`judge_agreement` of the store's current ratings (of a campaign's, with `session`), for one `judge`
    (rater name) or every one, against every person or only `people` (blind review: the reviewer's own)."""
    from agents.judge import RUBRIC

    ratings = store.reviews.scores_where_people_scored(session)
    if people is not None:
        ratings = ratings[(ratings["rater_kind"] != "human") | ratings["rater"].isin(people)]
    rows = judge_agreement(ratings, RUBRIC)
    return [r for r in rows if judge is None or r["judge"] == judge]


# -- step judgments: failure modes per task and agent ----------------------------------------
def failure_modes(counts: pd.DataFrame) -> pd.DataFrame:
    """Per task and agent, from `store.step_judgments.failure_mode_counts` (judgments counted per task,
    agent, judgment and tag): the steps judged, how many correct / partly / incorrect, then one column per
    failure-mode tag given (in the taxonomy's order): on how many judged steps. Agents are named as the
    triage names them (name/backend/model)."""
    from reviewer.services.step_judgments import agent_of, tag_ids

    head = ["task", "agent", "judged", "correct", "partly", "incorrect"]
    if counts.empty:
        return pd.DataFrame(columns=head)
    counts = counts.assign(agent=[agent_of(r) for r in counts.to_dict("records")])
    judged = counts[counts["tag"].isna()].pivot_table(index=["task", "agent"], columns="judgment", values="n",
                                                      aggfunc="sum", fill_value=0)
    tagged = counts[counts["tag"].notna()]
    tags = [t for t in tag_ids() if t in set(tagged["tag"])]
    by_tag = tagged.pivot_table(index=["task", "agent"], columns="tag", values="n", aggfunc="sum", fill_value=0)
    frame = judged.reindex(columns=head[3:], fill_value=0).join(by_tag.reindex(columns=tags), how="left")
    frame = frame.fillna(0).astype(np.int64).reset_index()
    frame.insert(2, "judged", frame[head[3:]].sum(axis=1))
    return frame[head + tags].sort_values(["task", "agent"]).reset_index(drop=True)


def review_stats(store, session: str | None = None) -> dict[str, Any]:
    """Everything the Stats tab shows, for the whole store or one campaign."""
    from reviewer.services.conflicts import settled_counts

    counts = store.reviews.rating_counts(session)
    verdicts = store.reviews.verdict_pairs(session)
    evaluation = settled_counts(store, session=session)
    settled = evaluation[evaluation["truth"].notna()] if not evaluation.empty else evaluation
    raters = sorted(counts["rater"].astype(str).unique())
    return {
        "distributions": rating_distributions(counts),
        "correlations": rater_correlations(store.reviews.rating_pairs(session), raters) if raters
        else pd.DataFrame(columns=["spearman"]),
        "kappas": verdict_kappas(verdicts) if not verdicts.empty else pd.DataFrame(),
        "scores": task_scores(settled) if not settled.empty else pd.DataFrame(),
        "coverage": accuracy_vs_coverage(evaluation[evaluation["task"] == "verify"])
        if not evaluation.empty else pd.DataFrame(),
        "failure_modes": failure_modes(store.step_judgments.failure_mode_counts(session)),
        "judges": judge_report(store, session),
    }
