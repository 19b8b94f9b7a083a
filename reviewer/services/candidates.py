"""Redshift candidates of the item on screen, for the model overlay and the corrected label (no Panel).

What the item itself says: the FORMA hypotheses in a verify trajectory (`redshift_hypotheses`, with
what `analyse_hypothesis` found of each), the agent's answer, and the survey pipeline's class and z.
A reviewer's own z (a marked line) joins them as a candidate of its own. None of these changes the
agent's answer: choosing one sets the frame and, for a verify item, the corrected label's z.

The answer and the hypothesis it stands for are one row, whose source names both; the survey
pipeline's z and class are always a row of their own, however near the answer. A hypothesis's score is
FORMA's, 100 / (1 + delta-chi2), delta-chi2 being its chi2 above the best template fit's (scaled by that
fit's reduced chi2): 100 is the best fit, 50 one unit of delta-chi2 above it, 1 about 99 above; a
line-match hypothesis (no template) scores at most 1 and has no delta-chi2.
"""
from __future__ import annotations

import math
from typing import Any

from reviewer.services.consensus import DZ_MAX


def finite_or_none(value) -> float | None:
    """`value` as a finite float, or None (a missing, NaN or unreadable z is no z)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def redshift_candidates(item) -> list[dict[str, Any]]:
    """[{key, z, class, source, score, dchi2, chi2, lines}], best first: the agent's answer, its
    hypotheses (by score), one per (class, z within DZ_MAX x (1+z)); then the pipeline's, always."""
    out: list[dict[str, Any]] = []
    if item is None:
        return out
    label = item.agent_label or {}
    if finite_or_none(label.get("z")) is not None and label.get("type"):
        out.append({"z": finite_or_none(label["z"]), "class": str(label["type"]).upper(), "source": "agent's answer"})
    found: dict[int, str] = {}
    hyps: list[dict] = []
    for step in (item.trajectory.steps if item.trajectory is not None else []):
        data = step.data or {}
        if step.tool_name == "redshift_hypotheses" and step.kind == "tool_result":
            hyps = list(data.get("hypotheses") or [])
        if step.tool_name == "analyse_hypothesis" and step.kind == "tool_result" and data.get("summary"):
            s = data["summary"]
            found[s.get("idx")] = f"{s.get('n_likely', 0)} lines likely, verdict {s.get('verdict', '?')}"
    for h in sorted(hyps, key=lambda h: -(finite_or_none(h.get("score")) or 0)):
        if finite_or_none(h.get("z")) is None:
            continue
        out.append({"z": finite_or_none(h["z"]), "class": str(h.get("class") or "").upper(), "score": h.get("score"),
                    "dchi2": delta_chi2(h), "chi2": h.get("chi2"),
                    "lines": found.get(h.get("idx"), ", ".join(h.get("matched") or [])),
                    "source": f"hypothesis {h.get('idx')} ({h.get('source', '?')})"})
    out = dedupe(out)
    record = item.record or {}
    if finite_or_none(record.get("pipeline_z")) is not None and record.get("pipeline_class"):
        z, cls = finite_or_none(record["pipeline_z"]), str(record["pipeline_class"]).upper()
        out.append({"z": z, "class": cls, "source": "survey pipeline", "key": f"pipeline:{cls}:{z:.6f}"})
    return out


def delta_chi2(hypothesis: dict) -> float | None:
    """A hypothesis's delta-chi2 above the best template fit: as recorded, else from FORMA's score
    (100 / (1 + delta-chi2)) for a template or Redrock hypothesis; None for a line match."""
    recorded = finite_or_none(hypothesis.get("delta_chi2"))
    if recorded is not None:
        return recorded
    score = finite_or_none(hypothesis.get("score"))
    if hypothesis.get("source") not in ("template", "redrock") or score is None or score <= 0:
        return None
    return max(100.0 / score - 1.0, 0.0)


def dedupe(candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One candidate per (class, z within DZ_MAX x (1+z)): the first keeps its z and source and takes
    what it lacks (score, delta-chi2, chi2, lines) from the ones it stands for, and names the hypothesis
    it stands for in its source."""
    kept: list[dict[str, Any]] = []
    for c in candidates:
        same = next((k for k in kept if k["class"] == c["class"] and abs(k["z"] - c["z"]) <= DZ_MAX * (1 + c["z"])), None)
        if same is None:
            kept.append({**c, "key": f"{c['class']}:{c['z']:.6f}"})
        else:
            if c["source"].startswith("hypothesis") and "hypothesis" not in same["source"]:
                same["source"] = f"{same['source']} = {c['source']}"
            for field in ("score", "dchi2", "chi2", "lines"):
                if same.get(field) in (None, "") and c.get(field) not in (None, ""):
                    same[field] = c[field]
    return kept


def z_from_marked_line(observed_wave: float, rest_wave: float) -> float:
    """The redshift that puts a line of rest wavelength `rest_wave` at `observed_wave` (both vacuum Å)."""
    return observed_wave / rest_wave - 1.0
