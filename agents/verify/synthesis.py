"""Step 4: synthesis (FORMA 2.6). Choose the best hypothesis among those the evidence supports,
name the runner-up and each rival's exclusion. Deterministic: supported hypotheses first, then the
template fit (lower scaled chi2; a class contradiction counts as a rival's chi2 margin), then the
number of credible lines."""
from __future__ import annotations

from dataclasses import dataclass, field

from agents.verify.analysis import HypothesisResult, rules


@dataclass
class Synthesis:
    best: HypothesisResult | None
    runner_up: HypothesisResult | None
    excluded: list[dict] = field(default_factory=list)  # {idx, z, class, reason}
    concerns: list[str] = field(default_factory=list)
    rival_delta_chi2: float | None = None  # best vs the best rival of another class / z

    def as_dict(self) -> dict:
        b = self.best
        return {
            "best_hypothesis_idx": None if b is None else b.idx,
            "classification": None if b is None else b.spectype,
            "redshift": None if b is None else (b.systemic_z if b.systemic_z is not None else b.hypothesis.z),
            "anchor_line": None if b is None else b.anchor,
            "runner_up_idx": None if self.runner_up is None else self.runner_up.idx,
            "rival_delta_chi2": None if self.rival_delta_chi2 is None else round(self.rival_delta_chi2, 1),
            "excluded_hypotheses": self.excluded, "concerns": self.concerns,
        }


def _rank_key(res: HypothesisResult):
    """Supported first, then the template fit (scaled delta chi2), a hypothesis a class rule
    contradicts counted as losing by credibility.rival_min_delta_chi2 (a QSO without a broad line
    does not outrank a galaxy the template fits about as well, but one it fits far worse does not
    win for lacking a contradiction), then the credible lines."""
    d = res.hypothesis.delta_chi2
    if d is not None and res.fatal:
        d += rules()["credibility"]["rival_min_delta_chi2"]
    return (res.verdict != "SUPPORTED", d if d is not None else -res.hypothesis.score, -len(res.credible()))


def _is_rival(a: HypothesisResult, b: HypothesisResult) -> bool:
    return a.spectype != b.spectype or abs(a.hypothesis.z - b.hypothesis.z) > 0.01 * (1 + a.hypothesis.z)


def synthesise(results: list[HypothesisResult]) -> Synthesis:
    if not results:
        return Synthesis(None, None, concerns=["no hypothesis"])
    ranked = sorted(results, key=_rank_key)
    best = ranked[0]
    rivals = [r for r in ranked[1:] if _is_rival(best, r)]
    syn = Synthesis(best, rivals[0] if rivals else None)
    if best.verdict != "SUPPORTED":
        syn.concerns.append("no hypothesis is supported by two credible key lines without a class contradiction")
    bd = best.hypothesis.delta_chi2
    with_chi2 = [r.hypothesis.delta_chi2 for r in rivals if r.hypothesis.delta_chi2 is not None]
    if bd is not None and with_chi2:
        syn.rival_delta_chi2 = min(with_chi2) - bd
    for r in rivals:
        if r.fatal:
            reason = "; ".join(r.fatal)
        elif r.verdict != "SUPPORTED":
            reason = f"{len([ln for ln in r.credible() if ln.key])} credible key line(s)"
        elif r.hypothesis.delta_chi2 is not None and bd is not None:
            reason = f"template chi2 worse by {r.hypothesis.delta_chi2 - bd:.1f} (scaled)"
        else:
            reason = "fewer credible lines"
        syn.excluded.append({"idx": r.idx, "z": round(r.hypothesis.z, 5), "class": r.spectype, "reason": reason})
    syn.concerns += best.concerns
    return syn
