"""Agreement and accuracy statistics for the stats page (pure numpy/scipy/pandas; the UI plots them).

Inputs are the DataFrames the store's review queries return:
- ratings: trajectory_id, rater, rater_kind, score (one current score per rater and trajectory);
- verdicts: trajectory_id, reviewer, action (approve / override / reject);
- evaluation rows: task, predicted, predicted_z, credibility, truth, truth_z (a trajectory's answer
  against the approved or overridden human label), and correct when the store has it (else each
  row's `is_correct`).
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
def rating_distributions(ratings: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per rater: n, mean, median, counts of each integer score 0-5 (scores rounded), and the
    empirical CDF as (x, y) with y = fraction of scores <= x, at x = 0..5."""
    out: dict[str, dict[str, Any]] = {}
    for rater, group in ratings.groupby("rater", sort=True):
        scores = group["score"].to_numpy(dtype=float)
        rounded = np.clip(np.rint(scores), 0, 5).astype(int)
        counts = {s: int((rounded == s).sum()) for s in SCORES}
        out[str(rater)] = {
            "rater_kind": str(group["rater_kind"].iloc[0]) if "rater_kind" in group else None,
            "n": int(scores.size), "mean": float(scores.mean()), "median": float(np.median(scores)),
            "counts": counts,
            "cdf": {"x": list(SCORES), "y": [float((scores <= s).mean()) for s in SCORES]},
        }
    return out


def _pivot(frame: pd.DataFrame, who: str, value: str) -> pd.DataFrame:
    # one column per rater; a rater's latest value per trajectory is already unique upstream, but
    # keep the last if not, so a duplicate cannot raise
    return frame.drop_duplicates(["trajectory_id", who], keep="last").pivot(index="trajectory_id", columns=who,
                                                                            values=value)


def rater_correlations(ratings: pd.DataFrame, min_shared: int = 3) -> pd.DataFrame:
    """Spearman rank correlation of every pair of raters over the trajectories both scored.
    Columns: rater_a, rater_b, n_shared, spearman, p_value (NaN when fewer than `min_shared`
    shared trajectories or when either rater gave one constant score)."""
    table = _pivot(ratings, "rater", "score")
    rows = []
    for a, b in combinations(sorted(table.columns), 2):
        both = table[[a, b]].dropna()
        rho = p = float("nan")
        if len(both) >= min_shared and both[a].nunique() > 1 and both[b].nunique() > 1:
            res = sps.spearmanr(both[a], both[b])
            rho, p = float(res.statistic), float(res.pvalue)
        rows.append({"rater_a": a, "rater_b": b, "n_shared": len(both), "spearman": rho, "p_value": p})
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "n_shared", "spearman", "p_value"])


# -- verdict agreement -----------------------------------------------------------------------
def cohen_kappa(a: list[Any], b: list[Any]) -> float:
    """Cohen's kappa of two raters' categorical labels on the same items (NaN when undefined:
    no items, or chance agreement of 1, i.e. both always gave one and the same category)."""
    if len(a) != len(b):
        raise ValueError("kappa needs two label lists of equal length")
    if not a:
        return float("nan")
    cats = sorted(set(a) | set(b), key=str)
    index = {c: i for i, c in enumerate(cats)}
    m = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b, strict=True):
        m[index[x], index[y]] += 1
    n = m.sum()
    p_o = np.trace(m) / n
    p_e = float((m.sum(axis=1) / n) @ (m.sum(axis=0) / n))
    if np.isclose(p_e, 1.0):
        return float("nan")
    return float((p_o - p_e) / (1 - p_e))


def verdict_kappas(verdicts: pd.DataFrame, column: str = "action") -> pd.DataFrame:
    """Cohen's kappa of every reviewer pair over the trajectories both gave a verdict on.
    Columns: reviewer_a, reviewer_b, n_shared, agreement (raw fraction), kappa."""
    table = _pivot(verdicts, "reviewer", column)
    rows = []
    for a, b in combinations(sorted(table.columns), 2):
        both = table[[a, b]].dropna()
        la, lb = both[a].tolist(), both[b].tolist()
        agreement = float(np.mean([x == y for x, y in zip(la, lb, strict=True)])) if la else float("nan")
        rows.append({"reviewer_a": a, "reviewer_b": b, "n_shared": len(la), "agreement": agreement,
                     "kappa": cohen_kappa(la, lb)})
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


def f1_positive(predicted: list[str], truth: list[str], positive: str = POSITIVE) -> float:
    """F1 of the positive class (YES): 2TP / (2TP + FP + FN); NaN when there is neither a positive
    truth nor a positive prediction."""
    tp = sum(p == positive and t == positive for p, t in zip(predicted, truth, strict=True))
    fp = sum(p == positive and t != positive for p, t in zip(predicted, truth, strict=True))
    fn = sum(p != positive and t == positive for p, t in zip(predicted, truth, strict=True))
    return float("nan") if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def task_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """Per task: n, n_positive (truth YES), accuracy, positive-class F1 (vet tasks only; NaN for
    verify), then a 'macro' row averaging the tasks' accuracy and F1 (F1 over vet tasks)."""
    columns = ["task", "n", "n_positive", "accuracy", "f1"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = rows.assign(_correct=_correct(rows))
    out = []
    for task, group in rows.groupby("task", sort=True):
        correct = group["_correct"].to_numpy(bool)
        truth = [str(t).upper() for t in group["truth"].tolist()]
        is_vet = all(t in ("YES", "NO") for t in truth)
        predicted = [str(p or "").upper() for p in group["predicted"].tolist()] if "predicted" in group else [""] * len(truth)
        out.append({"task": task, "n": len(truth), "n_positive": sum(t == POSITIVE for t in truth) if is_vet else 0,
                    "accuracy": float(np.mean(correct)),
                    "f1": f1_positive(predicted, truth) if is_vet else float("nan")})
    frame = pd.DataFrame(out, columns=columns)
    macro = {"task": "macro", "n": int(frame["n"].sum()), "n_positive": int(frame["n_positive"].sum()),
             "accuracy": float(frame["accuracy"].mean()),
             "f1": float(frame["f1"].mean()) if frame["f1"].notna().any() else float("nan")}
    return pd.concat([frame, pd.DataFrame([macro])], ignore_index=True)


def accuracy_vs_coverage(rows: pd.DataFrame, tiers: tuple[str, ...] = CREDIBILITY_TIERS) -> pd.DataFrame:
    """Accuracy when keeping only the most credible answers: for each tier in order (HIGH, then
    HIGH+MEDIUM, then all three), the coverage (kept / all rows, rows without a tier count in
    'all' only) and the accuracy of what is kept; also each tier's own n and accuracy.
    Columns: tier, n_tier, accuracy_tier, n_kept, coverage, accuracy."""
    columns = ["tier", "n_tier", "accuracy_tier", "n_kept", "coverage", "accuracy"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    correct = _correct(rows)
    cred = np.array([str(c or "").upper() for c in rows["credibility"].tolist()] if "credibility" in rows else [""] * len(rows))
    out, kept = [], np.zeros(len(rows), bool)
    for tier in tiers:
        mine = cred == tier
        kept |= mine
        out.append({"tier": tier, "n_tier": int(mine.sum()),
                    "accuracy_tier": float(correct[mine].mean()) if mine.any() else float("nan"),
                    "n_kept": int(kept.sum()), "coverage": float(kept.mean()),
                    "accuracy": float(correct[kept].mean()) if kept.any() else float("nan")})
    return pd.DataFrame(out, columns=columns)


def review_stats(store, session: str | None = None) -> dict[str, Any]:
    """Everything the Stats tab shows, for the whole store or one campaign."""
    from reviewer.services.conflicts import evaluation_frame

    ratings = store.reviews.ratings_frame(session=session, scores_only=True)
    verdicts = store.reviews.current_verdicts(session)
    evaluation = evaluation_frame(store, session=session)
    settled = evaluation[evaluation["truth"].notna()] if not evaluation.empty else evaluation
    return {
        "distributions": rating_distributions(ratings) if not ratings.empty else {},
        "correlations": rater_correlations(ratings) if not ratings.empty else pd.DataFrame(columns=["spearman"]),
        "kappas": verdict_kappas(verdicts) if not verdicts.empty else pd.DataFrame(),
        "scores": task_scores(settled) if not settled.empty else pd.DataFrame(),
        "coverage": accuracy_vs_coverage(evaluation[evaluation["task"] == "verify"])
        if not evaluation.empty else pd.DataFrame(),
    }
