"""Step 5: the result auditor (FORMA 2.7): CONFIRM / NEEDS_REVISION / UNCERTAIN with credibility
HIGH / MEDIUM / LOW. Deterministic rules that always run; each one names its id and evidence and
either caps the credibility or passes. Credibility = the lowest cap; HIGH needs every rule to pass.
Thresholds live in kb/forma/rules.yaml (credibility)."""
from __future__ import annotations

from dataclasses import dataclass, field

import kb
from agents.verify.analysis import HypothesisResult
from agents.verify.feature_auditor import FeatureAudit
from agents.verify.synthesis import Synthesis

LEVELS = ("LOW", "MEDIUM", "HIGH")
C_KMS = 299792.458


@dataclass
class RuleOutcome:
    rule: str
    cap: str  # the highest credibility this rule allows (HIGH = passes)
    evidence: str
    revision: bool = False  # True when the rule asks for a revision (not just caution)
    advisory: bool = False  # a LOW cap that asks for caution (a human), not for a revision


@dataclass
class AuditResult:
    verdict: str
    credibility: str
    outcomes: list[RuleOutcome] = field(default_factory=list)
    confirmed_lines: list[list] = field(default_factory=list)
    reobserve: bool = False
    human_review_reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "credibility": self.credibility, "confirmed_lines": self.confirmed_lines,
                "rules": [o.__dict__ for o in self.outcomes], "reobserve": self.reobserve}


def cfg() -> dict:
    return kb.load("forma/rules")["credibility"]


def _cap(ok_high: bool, ok_medium: bool) -> str:
    return "HIGH" if ok_high else "MEDIUM" if ok_medium else "LOW"


def rule_supported(best: HypothesisResult, syn: Synthesis, fa: FeatureAudit, pixels) -> RuleOutcome:
    """RA-SUPPORT: the chosen hypothesis needs two credible key lines and no class contradiction."""
    key = [ln.name for ln in best.credible() if ln.key]
    ok = best.verdict == "SUPPORTED"
    ev = (f"{len(key)} credible key line(s): {', '.join(key) or 'none'}"
          + (f"; fatal: {'; '.join(best.fatal)}" if best.fatal else ""))
    return RuleOutcome("RA-SUPPORT", "HIGH" if ok else "LOW", ev, revision=not ok)


def rule_line_count(best, syn, fa, pixels) -> RuleOutcome:
    """RA-LINES: >= 3 credible lines for HIGH, >= 2 for MEDIUM (<= 2 caps at MEDIUM)."""
    n = len(best.credible())
    return RuleOutcome("RA-LINES", _cap(n >= cfg()["high_min_likely"], n >= cfg()["medium_min_likely"]),
                       f"{n} credible LIKELY line(s)")


def rule_snr(best, syn, fa, pixels) -> RuleOutcome:
    """RA-SNR: median S/N per pixel >= 5 for HIGH, >= 2 for MEDIUM."""
    s = pixels.median_snr
    return RuleOutcome("RA-SNR", _cap(s >= cfg()["min_median_snr_high"], s >= cfg()["min_median_snr_medium"]),
                       f"median S/N {s:.1f}")


def rule_z_consistency(best, syn, fa, pixels) -> RuleOutcome:
    """RA-ZSCATTER: the credible lines agree on z (std <= 0.002) and the anchor z lies within
    0.002 of the hypothesis z (the CWT centring limit)."""
    sc = best.z_scatter or 0.0
    lim = cfg()["z_scatter_max"]
    dz = abs(best.systemic_z - best.hypothesis.z) if best.systemic_z is not None else 0.0
    ok = sc <= lim and dz <= lim * (1 + best.hypothesis.z)
    return RuleOutcome("RA-ZSCATTER", "HIGH" if ok else "MEDIUM",
                       f"line z scatter {sc:.4f}, anchor vs fit {dz:.4f}", revision=not ok)


def rule_rival(best, syn, fa, pixels) -> RuleOutcome:
    """RA-RIVAL: the best rival (another class or z) must fit worse by a scaled delta chi2 >= 25
    (MEDIUM) or >= 100 (HIGH), unless the rival is excluded by a fatal class rule or has no support."""
    d = syn.rival_delta_chi2
    if d is None:
        return RuleOutcome("RA-RIVAL", "MEDIUM", "no template rival to compare")
    rival = syn.runner_up
    excluded = rival is not None and (rival.fatal or rival.verdict != "SUPPORTED")
    if d < 0 and not excluded:
        return RuleOutcome("RA-RIVAL", "LOW", f"a supported rival fits better (delta chi2 {d:.1f})", revision=True)
    if d <= -cfg()["rival_min_delta_chi2"]:
        return RuleOutcome("RA-RIVAL", "LOW", f"rival {rival.spectype} z={rival.hypothesis.z:.4f} fits far better "
                                              f"(delta chi2 {d:.1f}) and is excluded only by: "
                                              f"{', '.join(rival.fatal) or 'missing lines'}",
                           revision=True)
    if excluded and d < cfg()["rival_min_delta_chi2"]:
        return RuleOutcome("RA-RIVAL", "MEDIUM", f"rival {rival.spectype} z={rival.hypothesis.z:.4f} close in chi2 "
                                                 f"({d:.1f}) but excluded: {', '.join(rival.fatal) or 'unsupported'}")
    return RuleOutcome("RA-RIVAL", _cap(d >= cfg()["high_rival_delta_chi2"], d >= cfg()["rival_min_delta_chi2"]),
                       f"best rival worse by delta chi2 {d:.1f} (scaled)")


def rule_removed(best, syn, fa, pixels) -> RuleOutcome:
    """RA-REMOVED: a removed anchor caps at LOW; >= 2 removed lines cap at MEDIUM and ask for review.
    A trough beside an emission line read as an absorption line (FA-EMISSION-GAP) is not counted."""
    removed = [v for v in fa.removed(best.idx) if v.rule != "FA-EMISSION-GAP"]
    names = [v.line for v in removed]
    anchor_gone = best.anchor is None and removed
    if anchor_gone:
        return RuleOutcome("RA-REMOVED", "LOW", f"no anchor left after removing {', '.join(names)}", revision=True)
    if len(removed) >= 2:
        return RuleOutcome("RA-REMOVED", "MEDIUM", f"{len(removed)} lines removed: {', '.join(names)}", revision=True)
    return RuleOutcome("RA-REMOVED", "HIGH", f"{len(removed)} line(s) removed")


def rule_flagged_anchor(best, syn, fa, pixels) -> RuleOutcome:
    """RA-ANCHOR: an anchor resting only on FLAGGED lines caps at MEDIUM."""
    if best.anchor is None:
        return RuleOutcome("RA-ANCHOR", "LOW", "no credible low-ionisation anchor")
    anchors = [ln for ln in best.credible() if ln.name in best.anchor.split(", ")]
    if anchors and all(ln.audit == "FLAG" for ln in anchors):
        return RuleOutcome("RA-ANCHOR", "MEDIUM", f"anchor {best.anchor} is flagged ({anchors[0].audit_rule})")
    return RuleOutcome("RA-ANCHOR", "HIGH", f"anchor {best.anchor}")


def rule_explained(best, syn, fa, pixels, features=()) -> RuleOutcome:
    """RA-EXPLAINED: of the five strongest features, >= 80 % should be lines of the chosen hypothesis
    (or sky); < 50 % caps at MEDIUM (unexplained strong features)."""
    strong = sorted(features, key=lambda f: -f.snr)[:5]
    if not strong:
        return RuleOutcome("RA-EXPLAINED", "LOW", "no features")
    sky = [s["wave"] for s in kb.load("forma/sky")["sky_lines"]]
    claimed = [ln.observed for ln in best.lines if ln.observed is not None and ln.status in ("LIKELY", "MARGINAL")]
    n_ok = sum(1 for f in strong if any(abs(f.wavelength - c) < max(f.fwhm_A, 5) for c in claimed)
               or any(abs(f.wavelength - s) < 10 for s in sky))
    frac = n_ok / len(strong)
    return RuleOutcome("RA-EXPLAINED", _cap(frac >= 0.8, frac >= 0.4),
                       f"{n_ok}/{len(strong)} strongest features explained")


BALMER_ORDER = (("H-alpha", "H-beta"), ("H-beta", "H-gamma"), ("H-gamma", "H-delta"))


def rule_balmer_decrement(best, syn, fa, pixels) -> RuleOutcome:
    """RA-BALMER: recombination makes each Balmer emission line stronger than the next one up the
    series (Ha/Hb >= 2.86, Hb/Hg ~ 2.1); a weaker member LIKELY while the stronger one is only
    MARGINAL or NOT_FOUND in unmasked data is a contradiction -> LOW, revision."""
    by = {ln.name: ln for ln in best.lines if ln.kind == "emission"}
    for strong, weak in BALMER_ORDER:
        s, w = by.get(strong), by.get(weak)
        if s and w and w in best.credible() and s.status in ("NOT_FOUND", "MARGINAL"):
            return RuleOutcome("RA-BALMER", "LOW", f"{weak} found at {w.observed:.1f} Å but the stronger {strong} "
                                                   f"is {s.status} at {s.predicted:.1f} Å in unmasked data",
                               revision=True)
    return RuleOutcome("RA-BALMER", "HIGH", "Balmer series consistent")


def rule_doublets(best, syn, fa, pixels) -> RuleOutcome:
    """RA-DOUBLET: a flux ratio fixed by atomic physics ([O III] 4959/5007 = 1/2.98, [N II] 1/3.05,
    [S II] within its density limits, H-beta/H-alpha at most 0.40) contradicted by > 5 sigma in the
    chosen hypothesis (kb/forma/audits.yaml line_ratios): the identification or the data is wrong
    -> LOW, revision."""
    bad = fa.contradictions.get(best.idx, [])
    if bad:
        return RuleOutcome("RA-DOUBLET", "LOW", "; ".join(bad), revision=True)
    return RuleOutcome("RA-DOUBLET", "HIGH", "fixed line ratios consistent")


def rule_z_precision(best, syn, fa, pixels) -> RuleOutcome:
    """RA-ZPREC: the stated 1-sigma of the z must meet the precision an answer is vouched for
    (kb/forma/audits.yaml z_precision, 50 km/s for galaxies and QSOs): within it for MEDIUM, within
    half of it for HIGH. A z resting on broad or high-ionisation lines, or on the template alone,
    states hundreds of km/s and is LOW: a human checks it."""
    req = kb.load("forma/audits")["z_precision"]["classes"].get(best.spectype)
    z = best.systemic_z if best.systemic_z is not None else best.hypothesis.z
    err = best.systemic_z_err if best.systemic_z is not None else None
    if req is None:
        return RuleOutcome("RA-ZPREC", "HIGH", f"no velocity requirement for {best.spectype}")
    if err is None:
        from agents.verify.analysis import template_z_err
        err = template_z_err(best.hypothesis)
    sv = C_KMS * err / (1 + z)
    return RuleOutcome("RA-ZPREC", _cap(sv <= req / 2, sv <= req),
                       f"stated 1-sigma {sv:.0f} km/s against the {req:.0f} km/s requirement", advisory=True)


RULES = (rule_supported, rule_doublets, rule_z_precision, rule_balmer_decrement,
         rule_line_count, rule_snr, rule_z_consistency, rule_rival, rule_removed,
         rule_flagged_anchor)


def audit_result(syn: Synthesis, fa: FeatureAudit, pixels, features=()) -> AuditResult:
    best = syn.best
    if best is None:
        return AuditResult("UNCERTAIN", "LOW", [RuleOutcome("RA-SUPPORT", "LOW", "no hypothesis", True)],
                           human_review_reasons=["no hypothesis"])
    outcomes = [rule(best, syn, fa, pixels) for rule in RULES]
    outcomes.append(rule_explained(best, syn, fa, pixels, features))
    cred = LEVELS[min(LEVELS.index(o.cap) for o in outcomes)]
    revisions = [o for o in outcomes if o.revision]
    if best.verdict != "SUPPORTED" or pixels.median_snr < cfg()["min_median_snr_medium"] / 2:
        verdict = "UNCERTAIN"
    elif revisions or (cred != "HIGH" and any(o.cap == "LOW" and not o.advisory for o in outcomes)):
        verdict = "NEEDS_REVISION"
    else:
        verdict = "CONFIRM"
    reasons = [f"{o.rule}: {o.evidence}" for o in outcomes if o.cap != "HIGH"]
    confirmed = [[ln.name, round(ln.observed, 2)] for ln in best.credible() if ln.audit in ("KEEP", "FLAG")]
    n_cred = len(best.credible())
    return AuditResult(verdict, cred, outcomes, confirmed, reobserve=n_cred <= 2, human_review_reasons=reasons)
