"""The points of the Stats plots a reviewer selects to filter the queue to those items (issue 47, item 7):
one point per item, each carrying its trajectory id.

- gold_points: each verdict on a campaign's gold item against its known answer
  (reviewer.services.reviewer_stats.gold_outcomes): who, which item, and whether it was right, missed or
  rejected, numbered in the order of that reviewer's verdicts; a box over one reviewer's "missed" row is
  their misses on gold.
- judge_points: each trajectory a judge and people scored (reviewer.services.stats.judge_gaps: the judge
  against the people's median score), with how far apart they are and the trajectory's stored credibility
  (the FORMA verdict's tier; "none" without one); a box over the LOW row, far right, is low credibility
  with judge-human disagreement.
"""
from __future__ import annotations

from typing import Any

from reviewer.services.reviewer_stats import gold_outcomes
from reviewer.services.stats import judge_gaps

GOLD_OUTCOMES = ("right", "missed", "rejected")  # the gold plot's rows, top to bottom
CREDIBILITY_ROWS = ("HIGH", "MEDIUM", "LOW", "none")  # the judge plot's rows, top to bottom


def gold_points(store, session_id: str | None, reviewers: list[str] | None = None) -> list[dict[str, Any]]:
    """Each verdict on a gold item of the campaign `session_id` (none outside a campaign), of every reviewer or
    of `reviewers` only (blind review: the reviewer's own): reviewer, trajectory_id, task, outcome (one of
    GOLD_OUTCOMES), nth (1 for the reviewer's first gold verdict)."""
    if not session_id:
        return []
    gold = {g["trajectory_id"]: g for g in store.sessions.gold_items(session_id)}
    if not gold:
        return []
    verdicts = store.reviews.current_reviews(session=session_id, trajectory_ids=list(gold))
    out, counted = [], {}
    for o in gold_outcomes(verdicts, gold):
        if reviewers is not None and o["reviewer"] not in reviewers:
            continue
        counted[o["reviewer"]] = counted.get(o["reviewer"], 0) + 1
        outcome = "rejected" if o["rejected"] else "right" if o["right"] else "missed"
        out.append({"reviewer": o["reviewer"], "trajectory_id": o["trajectory_id"], "task": o["task"],
                    "outcome": outcome, "nth": counted[o["reviewer"]]})
    return out


def judge_points(store, session_id: str | None = None, people: list[str] | None = None) -> list[dict[str, Any]]:
    """Each trajectory scored by a judge and by people (of a campaign's scores, with `session_id`; against
    `people` only, blind review: the reviewer's own): trajectory_id, judge, judge_score, people (their median
    score), gap (judge minus people), disagreement (|gap|), credibility (one of CREDIBILITY_ROWS)."""
    ratings = store.reviews.scores_where_people_scored(session_id)
    if people is not None:
        ratings = ratings[(ratings["rater_kind"] != "human") | ratings["rater"].isin(people)]
    gaps = judge_gaps(ratings)
    if gaps.empty:
        return []
    tiers = store.trajectories.credibility_of(gaps["trajectory_id"].unique())
    return [{"trajectory_id": r["trajectory_id"], "judge": str(r["judge"]), "judge_score": float(r["judge_score"]),
             "people": float(r["people"]), "gap": float(r["gap"]), "disagreement": abs(float(r["gap"])),
             "credibility": _tier(tiers.get(r["trajectory_id"]))} for r in gaps.to_dict("records")]


def _tier(credibility: str | None) -> str:
    tier = str(credibility or "").strip().upper()
    return tier if tier in CREDIBILITY_ROWS else "none"
