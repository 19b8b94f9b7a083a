"""Step 3: the feature auditor (FORMA 2.5). Every LIKELY/MARGINAL line claimed by a hypothesis gets
KEEP / FLAG / REMOVE from deterministic rules; each verdict names its rule and evidence. In doubt:
FLAG, not REMOVE. REMOVED lines stop counting (they read as NOT_FOUND downstream)."""
from __future__ import annotations

from dataclasses import dataclass, field

import kb
from agents.tools.judgeable import quality_label
from agents.verify.analysis import HypothesisResult, LineResult


def sky() -> dict:
    return kb.load("forma/sky")


def doublets() -> list[dict]:
    return kb.load("forma/lines")["doublets"]


@dataclass
class FeatureVerdict:
    hypothesis: int
    line: str
    wl_obs: float
    value: str  # KEEP / FLAG / REMOVE
    rule: str
    evidence: str

    def as_dict(self) -> dict:
        return {"hypothesis": self.hypothesis, "line": self.line, "wl_obs": round(self.wl_obs, 2),
                "value": self.value, "rule": self.rule, "evidence": self.evidence}


@dataclass
class FeatureAudit:
    verdicts: list[FeatureVerdict] = field(default_factory=list)
    spectrum_quality: str = "not assessed"  # set by audit() from the measured S/N (quality_label)

    def removed(self, idx: int) -> list[FeatureVerdict]:
        return [v for v in self.verdicts if v.hypothesis == idx and v.value == "REMOVE"]


# --- single-line rules: (line, pixels, all features) -> (value, rule, evidence) or None ---------

def rule_sky_line(ln: LineResult, pixels, features):
    """FA-SKY: within 10 A of an airglow line ([O I] 5577/6300/6364, Na D) -> REMOVE."""
    s = sky()
    for sl in s["sky_lines"]:
        if abs(ln.observed - sl["wave"]) <= s["sky_tolerance_A"]:
            return ("REMOVE", "FA-SKY",
                    f"{ln.observed:.1f} Å is {abs(ln.observed - sl['wave']):.1f} Å from sky {sl['name']}")
    return None


def rule_telluric(ln: LineResult, pixels, features):
    """FA-OH-ZONE: in a telluric band or the OH forest (> 7800 A) -> FLAG, never KEEP."""
    s = sky()
    for band in s["sky_bands"]:
        if band["range"][0] <= ln.observed <= band["range"][1]:
            return "FLAG", "FA-OH-ZONE", f"{ln.observed:.1f} Å inside {band['name']}"
    if ln.observed > s["oh_zone_start_A"]:
        return "FLAG", "FA-OH-ZONE", f"{ln.observed:.1f} Å is in the OH zone (> {s['oh_zone_start_A']:.0f} Å)"
    return None


def _dominant(ln: LineResult) -> bool:
    r = kb.load("forma/rules")["matching"]
    return (ln.snr or 0) >= r["robust_snr"] and (ln.ridge_length or 0) >= r["robust_ridge"]


def rule_edges(ln: LineResult, pixels, features):
    """FA-EDGE: within 100 A of the coverage ends, or blue of 4000 A: REMOVE unless dominant
    (S/N >= 10 and ridge >= 5), then FLAG."""
    s = sky()
    near_end = (ln.observed - pixels.wave_min_all < s["end_transient_A"]
                or pixels.wave_max_all - ln.observed < s["end_transient_A"])
    blue = ln.observed < s["blue_edge_A"]
    if not (near_end or blue):
        return None
    where = "near the end of the coverage" if near_end else f"blue of {s['blue_edge_A']:.0f} Å"
    if _dominant(ln):
        return "FLAG", "FA-EDGE", f"{ln.name} at {ln.observed:.1f} Å is {where} (dominant: kept as FLAG)"
    return ("REMOVE", "FA-EDGE",
            f"{ln.name} at {ln.observed:.1f} Å is {where}, S/N {ln.snr or 0:.1f}, ridge {ln.ridge_length}")


def rule_width_class(ln: LineResult, pixels, features):
    """FA-WIDTH: a narrow line measured broad (>= 2000 km/s) or a broad line measured narrow (< 1000) -> FLAG."""
    r = kb.load("forma/rules")["widths"]
    if ln.kind != "emission" or ln.fwhm_kms is None:
        return None
    if ln.width == "narrow" and ln.fwhm_kms >= r["broad_min_kms"]:
        return "FLAG", "FA-WIDTH", f"narrow line {ln.name} measured {ln.fwhm_kms:.0f} km/s"
    if ln.width == "broad" and ln.fwhm_kms < r["narrow_max_kms"]:
        return "FLAG", "FA-WIDTH", f"broad line {ln.name} measured {ln.fwhm_kms:.0f} km/s"
    return None


LINE_RULES = (rule_sky_line, rule_edges, rule_telluric, rule_width_class)


# --- doublet rules over one hypothesis ---------------------------------------------------------

def doublet_verdicts(res: HypothesisResult) -> dict[str, tuple[str, str, str]]:
    """FA-ORPHAN / FA-DOUBLET-RATIO / FA-DOUBLET-SPACING / FA-CAHK-DEPTH per line name."""
    by_name = {ln.name: ln for ln in res.lines}
    tol = kb.load("forma/lines")["doublet_spacing_tolerance_A"]
    out: dict[str, tuple[str, str, str]] = {}
    z = res.hypothesis.z
    for d in doublets():
        a, b = by_name.get(d["a"]), by_name.get(d["b"])
        if a is None or b is None:
            continue
        found = {n: ln for n, ln in ((d["a"], a), (d["b"], b)) if ln.status in ("LIKELY", "MARGINAL")}
        if len(found) == 1:
            (name, ln), = found.items()
            other = b if ln is a else a
            if other.status == "NOT_FOUND":
                # the weak member of [O III]/[N II] may hide in the noise; the strong one may not
                weak_member = d.get("deeper") is None and ln is b and d["ratio"][1] < 0.5
                if not weak_member:
                    out[name] = ("FLAG", "FA-ORPHAN",
                                 f"{name} found but {other.name} missing at {other.predicted:.1f} Å")
            continue
        if len(found) < 2:
            continue
        sep = b.observed - a.observed
        expect = d["sep_rest"] * (1 + z)
        if abs(sep - expect) >= tol:
            ev = f"{d['name']} spacing {sep:.1f} Å vs {expect:.1f} Å expected"
            out[a.name] = out[b.name] = ("FLAG", "FA-DOUBLET-SPACING", ev)
            continue
        if a.amplitude is None or b.amplitude is None or b.amplitude == 0:
            continue
        ratio = abs(a.amplitude) / abs(b.amplitude)
        lo, hi = d["ratio"]
        if not lo <= ratio <= hi:
            rule = "FA-CAHK-DEPTH" if d.get("deeper") else "FA-DOUBLET-RATIO"
            ev = f"{d['name']} a/b = {ratio:.2f}, expected {lo}-{hi}"
            out[a.name] = out[b.name] = ("FLAG", rule, ev)
    return out


def audit(results: list[HypothesisResult], pixels, features) -> FeatureAudit:
    fa = FeatureAudit()
    for res in results:
        dbl = doublet_verdicts(res)
        for ln in res.lines:
            if ln.status not in ("LIKELY", "MARGINAL") or ln.observed is None:
                continue
            verdict = None
            for rule in LINE_RULES:
                verdict = rule(ln, pixels, features)
                if verdict is not None and verdict[0] == "REMOVE":
                    break
                if verdict is not None:
                    break
            if verdict is None and ln.name in dbl:
                verdict = dbl[ln.name]
            value, rule_id, ev = verdict if verdict else ("KEEP", "FA-KEEP",
                                                          f"{ln.name} at {ln.observed:.1f} Å passes every check")
            ln.audit, ln.audit_rule = value, rule_id
            fa.verdicts.append(FeatureVerdict(res.idx, ln.name, ln.observed, value, rule_id, ev))
    fa.spectrum_quality = quality_label(pixels.median_snr)
    return fa
