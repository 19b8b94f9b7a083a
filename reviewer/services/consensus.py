"""Consensus between reviewers: the DESI multi-inspector merge rules (reference.md section 4.3) for
visual-inspection labels, and the same idea for trajectory verdicts. Pure functions: rows in
(dicts as the store returns them), a decision out.

VI labels auto-merge only when every pair of inspectors agrees: the same spectype, dz/(1+z) below
0.0033 (about 990 km/s) and qualities at most 1 apart. A blank VI z or spectype means "the pipeline
is right", as in prospect, so the pipeline's value stands in for it.

Trajectory verdicts agree when every reviewer reaches the same effective label: an approval stands
for the agent's own answer, an override for its corrected label, a rejection for "this trajectory is
unusable" (agreeing only with other rejections). Labels compare as the VI rule does: YES/NO equal
for vet; type equal and dz/(1+z) < 0.0033 for verify.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from agents.trajectory import UNJUDGEABLE, finite_or_none

DZ_MAX = 0.0033  # |dz| / (1 + z): DESI auto-merge tolerance
QUALITY_SPREAD_MAX = 1
QUALITY_CONFLICT = 999  # DESI's best_quality when qualities differ by more than 1


def dz_over_1pz(z1: float, z2: float) -> float:
    """|z1 - z2| / (1 + min(z1, z2)): the stricter of the two normalisations."""
    return abs(float(z1) - float(z2)) / (1.0 + min(float(z1), float(z2)))


def same_z(z1: float | None, z2: float | None, tolerance: float = DZ_MAX) -> bool:
    """Both absent, or both present and within tolerance."""
    if z1 is None or z2 is None:
        return z1 is None and z2 is None
    return dz_over_1pz(z1, z2) < tolerance


# -- VI labels -------------------------------------------------------------------------------
@dataclass
class VIMerge:
    status: str  # empty | single | merged | conflict
    n_vi: int
    reviewers: list[str]
    best_z: float | None = None
    best_spectype: str | None = None
    best_quality: float | None = None  # mean quality; QUALITY_CONFLICT when spread > 1
    best_issues: str = ""
    comments: str = ""
    reasons: list[str] = field(default_factory=list)  # why it is a conflict

    @property
    def is_conflict(self) -> bool:
        return self.status == "conflict"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _upper(value: Any) -> str | None:
    text = str(value).strip().upper() if value is not None else ""
    return text or None


def merge_vi_labels(labels: Iterable[dict[str, Any]], pipeline_z: float | None = None,
                    pipeline_spectype: str | None = None) -> VIMerge:
    """Merge each inspector's current VI label of one spectrum (keys: reviewer, quality, issues, z,
    spectype, comment). See the module doc for the rules."""
    rows = list(labels)
    reviewers = [str(r.get("reviewer")) for r in rows]
    if not rows:
        return VIMerge("empty", 0, [])
    zs = [r.get("z") if r.get("z") is not None else pipeline_z for r in rows]
    types = [_upper(r.get("spectype")) or _upper(pipeline_spectype) for r in rows]
    qualities = [r.get("quality") for r in rows]
    issues = "".join(c for c in "RCS" if any(c in (r.get("issues") or "") for r in rows))
    comments = " | ".join(f"{who}: {r['comment'].strip()}" for who, r in zip(reviewers, rows, strict=True)
                          if (r.get("comment") or "").strip())
    known_z = [z for z in zs if z is not None]
    known_q = [q for q in qualities if q is not None]
    merge = VIMerge(
        "single" if len(rows) == 1 else "merged", len(rows), reviewers,
        best_z=sum(known_z) / len(known_z) if known_z else None,
        best_spectype=types[0] if len(set(types)) == 1 else None,
        best_quality=sum(known_q) / len(known_q) if known_q else None,
        best_issues=issues, comments=comments,
    )
    if len(rows) == 1:
        return merge
    reasons = merge.reasons
    if len(set(types)) > 1:
        reasons.append("spectype differs: " + ", ".join(f"{w}={t or '-'}" for w, t in zip(reviewers, types, strict=True)))
    if any(q is None for q in qualities):
        reasons.append("quality not set by " + ", ".join(w for w, q in zip(reviewers, qualities, strict=True) if q is None))
    if known_q and max(known_q) - min(known_q) > QUALITY_SPREAD_MAX:
        reasons.append(f"quality differs by {max(known_q) - min(known_q)} (> {QUALITY_SPREAD_MAX})")
        merge.best_quality = QUALITY_CONFLICT
    if 0 < len(known_z) < len(zs):
        reasons.append("z missing for " + ", ".join(w for w, z in zip(reviewers, zs, strict=True) if z is None))
    worst = max((dz_over_1pz(a, b) for a, b in combinations(known_z, 2)), default=0.0)
    if worst >= DZ_MAX:
        reasons.append(f"dz/(1+z) = {worst:.4f} (>= {DZ_MAX})")
    if reasons:
        merge.status = "conflict"
        merge.best_z = None if worst >= DZ_MAX else merge.best_z
    return merge


# -- trajectory verdicts ---------------------------------------------------------------------
def normalise_label(label: dict[str, Any] | None) -> dict[str, Any]:
    """{'answer': 'YES'} (vet) or {'type': 'QSO', 'z': 2.1} (verify), from the spellings in use."""
    label = dict(label or {})
    out: dict[str, Any] = {}
    answer = next((label[k] for k in ("answer", "label", "prediction") if label.get(k) is not None), None)
    if answer is not None:
        out["answer"] = _upper(answer)
    kind = next((label[k] for k in ("type", "spectype", "class", "classification") if label.get(k) is not None), None)
    if kind is not None:
        out["type"] = _upper(kind)
    z = label.get("z", label.get("redshift"))
    if z is not None:
        out["z"] = float(z)
    return out


def labels_agree(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Vet: the same YES/NO. Verify: the same type and z within DZ_MAX (both absent counts as equal)."""
    a, b = normalise_label(a), normalise_label(b)
    if "answer" in a or "answer" in b:
        return a.get("answer") == b.get("answer")
    return a.get("type") == b.get("type") and same_z(a.get("z"), b.get("z"))


def describe_label(label: dict[str, Any] | None) -> str:
    n = normalise_label(label)
    if "answer" in n:
        return str(n["answer"])
    if "type" in n or "z" in n:
        z = f" z={n['z']:.4f}" if n.get("z") is not None else ""
        return f"{n.get('type') or '?'}{z}"
    return "-"


@dataclass
class VerdictConsensus:
    status: str  # unreviewed | single | agreed | conflict
    n_reviews: int
    reviewers: list[str]
    action: str | None = None  # approve | override | reject when agreed (or single)
    label: dict[str, Any] | None = None  # the agreed effective label (None for reject)
    reasons: list[str] = field(default_factory=list)

    @property
    def is_conflict(self) -> bool:
        return self.status == "conflict"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def effective_label(review: dict[str, Any], agent_label: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a verdict says the right answer is: the agent's for approve, the given one for override."""
    if review["action"] == "approve":
        return normalise_label(agent_label)
    if review["action"] == "override":
        return normalise_label(review.get("label"))
    return None


def verdict_consensus(reviews: Iterable[dict[str, Any]], agent_label: dict[str, Any] | None = None) -> VerdictConsensus:
    """Consensus of each reviewer's current verdict (keys: reviewer, action, label) on one trajectory.
    `agent_label` is the trajectory's own answer ({'answer': 'YES'} or {'type':..., 'z':...})."""
    rows = [r for r in reviews if r.get("action") and r["action"] != "clear"]
    who = [str(r.get("reviewer")) for r in rows]
    if not rows:
        return VerdictConsensus("unreviewed", 0, [])
    labels = [effective_label(r, agent_label) for r in rows]
    actions = [r["action"] for r in rows]
    result = VerdictConsensus("single" if len(rows) == 1 else "agreed", len(rows), who)
    rejects = [a == "reject" for a in actions]
    if any(rejects) and not all(rejects):
        result.reasons.append("reject vs not: " + ", ".join(f"{w}={a}" for w, a in zip(who, actions, strict=True)))
    else:
        for (wa, la), (wb, lb) in combinations(zip(who, labels, strict=True), 2):
            if la is not None and lb is not None and not labels_agree(la, lb):
                result.reasons.append(f"label differs: {wa}={describe_label(la)} vs {wb}={describe_label(lb)}")
    if result.reasons:
        result.status = "conflict"
        return result
    result.action = "reject" if all(rejects) else ("override" if "override" in actions else "approve")
    if result.action != "reject":
        # the agreed label: an override's own (it may carry a z the approvals lack), else the agent's
        result.label = next((lab for a, lab in zip(actions, labels, strict=True) if a == "override"), labels[0])
    return result


def agent_label(task: str, answer: Any = None, answer_z: Any = None, outcome: dict[str, Any] | None = None) -> dict[str, Any]:
    """A trajectory's own answer as a label: {'answer': YES/NO} for vet tasks, {'type', 'z'} for
    verify. Reads the store's summary columns first, then the outcome (vet: `prediction`; verify:
    the FORMA brief's `type` / `redshift`); none for a refusal (status unjudgeable)."""
    outcome = outcome or {}
    if outcome.get("status") == UNJUDGEABLE:  # refused: no answer to approve
        return {}
    if task != "verify":
        value = answer if answer is not None else (outcome.get("prediction") or outcome.get("answer"))
        return {"answer": _upper(value)} if _upper(value) else {}
    brief = outcome.get("brief") if isinstance(outcome.get("brief"), dict) else {}
    kind = answer if answer is not None else (brief.get("type") or outcome.get("type"))
    z = finite_or_none(answer_z)  # never NaN or inf: such a z reaches the forms' redshift fields
    z = z if z is not None else finite_or_none(brief.get("redshift", outcome.get("z")))
    label: dict[str, Any] = {}
    if _upper(kind):
        label["type"] = _upper(kind)
    if z is not None:
        label["z"] = z
    return label


# -- an answer against the settled label -----------------------------------------------------
def answer_correct(predicted: Any, predicted_z: Any, truth: Any, truth_z: Any) -> bool:
    """Is the agent's answer right? Vet: the same YES/NO; verify: the same type, and z within DZ_MAX
    when the truth has one. No answer (None or NaN) is wrong."""
    if predicted is None or (isinstance(predicted, float) and math.isnan(predicted)):
        return False
    if str(predicted).upper() != str(truth).upper():
        return False
    truth_z = _number(truth_z)
    if truth_z is None:
        return True
    return same_z(_number(predicted_z), truth_z, DZ_MAX)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
