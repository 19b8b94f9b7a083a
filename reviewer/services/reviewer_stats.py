"""Each reviewer of a campaign measured on its gold items (issue 47, item 1): `specreview reviewers`.

A reviewer's verdict on a gold item stands for a label as everywhere else (reviewer.services.consensus
.effective_label: an approval for the agent's answer, an override for its corrected label) and is right
when that label agrees with the known answer by the rule reviewers are compared with
(consensus.labels_agree: the same YES/NO; the same class and dz/(1+z) < 0.0033). A rejection ("unusable,
no label") gives no answer: it is counted apart (`gold_rejected`), not as a miss.

- gold_accuracy: right / answered, with its 95 % Wilson score interval (Wilson 1927, JASA 22, 209; Brown,
  Cai & DasGupta 2001, Statist. Sci. 16, 101, recommend it over the normal interval for small n);
- yes_bias (yes/no tasks): the reviewer's YES rate minus the known answers' YES rate on the same items
  (positive: says YES more often than the truth);
- z_bias_kms (verify): the median signed velocity offset c (z - z_true) / (1 + z_true) of the reviewer's z
  from the known z, on the items whose class they got right (agents.verify.evaluation.velocity_offset, the
  bias verify's evaluation reports);
- gold_drift: accuracy on the first and the second half of the gold items they answered, in the order of
  their verdicts (the middle one, for an odd count, in the second half), and `gold_in_order`, each answer
  right or not in that order.
- median_seconds, p90_seconds, items_per_hour, timed, rushed (issue 47, item 3): the active time of their
  verdicts in the campaign (reviewer.services.review_times; null when none was timed: the CLI, imports), and
  how many verdicts were given in under a quarter of their usual time (marked for a second look).
- first_looks, first_look_agreement, revised_after_reveal (issue 47, item 2; a campaign with a first look):
  how many first answers they gave before the agent's was shown; the share of them that agree with the
  agent's answer (labels_agree); and, of those followed by a verdict with a label (not a rejection), the
  share whose verdict's label differs from their first answer: how often seeing the agent changed the
  answer (anchoring, measured). Null without first looks.
"""
from __future__ import annotations

import math
from statistics import median
from typing import Any

from agents.verify.evaluation import velocity_offset
from reviewer.services.consensus import agent_label, effective_label, labels_agree, normalise_label
from reviewer.services.review_times import reviewer_times

Z_95 = 1.959963984540054  # the standard normal's 97.5th percentile
UNTIMED = {"timed": 0, "median_seconds": None, "p90_seconds": None, "items_per_hour": None, "rushed": 0}


def wilson_interval(right: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion right/n (None for n = 0):
    (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    if n <= 0:
        return None
    p = right / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)


def gold_outcomes(verdicts: list[dict[str, Any]], gold: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each verdict on a gold item (rows of store.reviews.current_reviews) against its known answer (rows of
    store.sessions.gold_items by trajectory id), in the order the verdicts were given: reviewer, trajectory_id,
    task, rejected, right, said (the label the verdict stands for), truth."""
    out = []
    for v in sorted(verdicts, key=lambda r: (r["created_at"], r["seq"])):
        known = gold.get(v["trajectory_id"])
        if known is None:
            continue
        truth = {"answer": known["answer"]} if known["task"] != "verify" else \
            {"type": known["answer"], "z": known["answer_z"]}
        said = effective_label(v, agent_label(v["task"], v.get("answer"), v.get("answer_z"), v.get("outcome")))
        rejected = v["action"] == "reject"
        out.append({"reviewer": v["reviewer"], "trajectory_id": v["trajectory_id"], "task": known["task"],
                    "rejected": rejected, "said": normalise_label(said),
                    "right": (not rejected) and bool(normalise_label(said)) and labels_agree(said, truth),
                    "truth": truth})
    return out


def _accuracy(rows: list[dict[str, Any]]) -> float | None:
    return sum(r["right"] for r in rows) / len(rows) if rows else None


def reviewer_figures(name: str, labelled: int, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """One reviewer's figures from their gold outcomes (`gold_outcomes`, theirs only, in order)."""
    answered = [o for o in outcomes if not o["rejected"]]
    right = sum(o["right"] for o in answered)
    interval = wilson_interval(right, len(answered))
    vet = [o for o in answered if o["task"] != "verify"]
    yes_bias = (sum(o["said"].get("answer") == "YES" for o in vet) - sum(o["truth"]["answer"] == "YES" for o in vet)) \
        / len(vet) if vet else None
    offsets = [velocity_offset(o["said"]["z"], o["truth"]["z"]) for o in answered if o["task"] == "verify"
               and o["said"].get("type") == o["truth"]["type"] and o["said"].get("z") is not None
               and o["truth"]["z"] is not None]
    half = len(answered) // 2
    return {
        "reviewer": name, "labelled": labelled, "gold_n": len(answered), "gold_right": right,
        "gold_rejected": len(outcomes) - len(answered),
        "gold_accuracy": right / len(answered) if answered else None,
        "gold_accuracy_interval": list(interval) if interval else None,
        "yes_bias": yes_bias, "z_bias_kms": median(offsets) if offsets else None, "z_bias_n": len(offsets),
        "gold_drift": {"first_half": {"n": half, "accuracy": _accuracy(answered[:half])},
                       "second_half": {"n": len(answered) - half, "accuracy": _accuracy(answered[half:])}},
        "gold_in_order": [o["right"] for o in answered],
    }


def first_look_figures(store, looks: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """One reviewer's first looks (rows of store.labels.first_looks) against the agent's answers and their own
    verdicts after (rows of store.reviews.current_reviews)."""
    if not looks:
        return {"first_looks": 0, "first_look_agreement": None, "revised_after_reveal": None}
    after = {v["trajectory_id"]: v for v in verdicts}
    agreed, revised, followed = 0, 0, 0
    for look in looks:
        row = store.trajectories.trajectory_summary(look["trajectory_id"]) or {}
        agent = agent_label(row.get("task"), row.get("answer"), row.get("answer_z"), row.get("outcome"))
        agreed += bool(agent) and labels_agree(look["label"], agent)
        verdict = after.get(look["trajectory_id"])
        said = effective_label(verdict, agent) if verdict is not None else None
        if said:
            followed += 1
            revised += not labels_agree(said, look["label"])
    return {"first_looks": len(looks), "first_look_agreement": agreed / len(looks),
            "revised_after_reveal": revised / followed if followed else None}


def reviewer_report(store, campaign: dict[str, Any]) -> list[dict[str, Any]]:
    """Every reviewer of the campaign (those assigned, and any other with a verdict in it), by name."""
    session = store.sessions.get_session(campaign["id"]) or campaign
    verdicts = store.reviews.current_reviews(session=campaign["id"])
    gold = {g["trajectory_id"]: g for g in store.sessions.gold_items(campaign["id"])}
    outcomes = gold_outcomes(verdicts, gold)
    people = sorted(set(session.get("reviewers") or []) | {v["reviewer"] for v in verdicts})
    times = {t["reviewer"]: {**t, "rushed": len(t["rushed"])}
             for t in reviewer_times(store, campaign["id"], by_task=False)}
    looks = store.labels.first_looks(campaign["id"]) if session.get("first_look") else []
    return [{**reviewer_figures(name, sum(v["reviewer"] == name for v in verdicts),
                                [o for o in outcomes if o["reviewer"] == name]),
             **{k: v for k, v in times.get(name, UNTIMED).items() if k != "reviewer"},
             **first_look_figures(store, [x for x in looks if x["reviewer"] == name],
                                  [v for v in verdicts if v["reviewer"] == name])} for name in people]
