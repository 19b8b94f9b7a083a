"""Step 3: the feature auditor (FORMA 2.5). Every LIKELY/MARGINAL line claimed by a hypothesis gets
KEEP / FLAG / REMOVE from deterministic rules; each verdict names its rule and evidence. In doubt:
FLAG, not REMOVE. REMOVED lines stop counting (they read as NOT_FOUND downstream)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import kb
from agents.tools.judgeable import quality_label
from agents.tools.linefit import forced_flux
from agents.verify.analysis import C_KMS, HypothesisResult, LineResult, pixel_step


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
    contradictions: dict[int, list[str]] = field(default_factory=dict)  # per hypothesis: failed ratio audits

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
    """FA-ORPHAN / FA-DOUBLET-SPACING / FA-CAHK-DEPTH per line name. The flux ratios of the emission
    doublets ([O III], [N II], [S II]) are measured by `ratio_verdicts` (a missing partner included);
    CWT amplitudes judge only the Ca H&K depths here."""
    by_name = {ln.name: ln for ln in res.lines}
    measured = {p["a"] for p in ratio_cfg()["pairs"]}
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
            if other.status == "NOT_FOUND" and d["a"] not in measured:
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
        if a.amplitude is None or b.amplitude is None or b.amplitude == 0 or d["a"] in measured:
            continue
        ratio = abs(a.amplitude) / abs(b.amplitude)
        lo, hi = d["ratio"]
        if not lo <= ratio <= hi:
            rule = "FA-CAHK-DEPTH" if d.get("deeper") else "FA-DOUBLET-RATIO"
            ev = f"{d['name']} a/b = {ratio:.2f}, expected {lo}-{hi}"
            out[a.name] = out[b.name] = ("FLAG", rule, ev)
    return out


# --- fixed flux ratios (issue 50, item 4): a doublet member cannot stand without its partner -----

def ratio_cfg() -> dict:
    return kb.load("forma/audits")["line_ratios"]


def _credible(ln: LineResult | None) -> bool:
    return ln is not None and ln.status == "LIKELY" and ln.audit != "REMOVE"


def _forced(pixels, ln: LineResult, centre: float, fwhm_kms: float, others) -> tuple[float, float] | None:
    c = ratio_cfg()
    fwhm_A = max(fwhm_kms / C_KMS * centre, c["min_fwhm_px"] * pixel_step(pixels, centre))
    excl = [(o_c, max(o_w / C_KMS * o_c, fwhm_A)) for o_c, o_w in others if abs(o_c - centre) > 0.5 * fwhm_A]
    m = forced_flux(pixels.wave, pixels.flux, pixels.ivar, centre, fwhm_A, excl, ln.kind)
    if m is None:
        return None
    return m["flux"], float(np.hypot(m["flux_err"], c["flux_systematic"] * m["flux"]))


def gap_verdicts(res: HypothesisResult) -> dict[str, tuple[str, str, str]]:
    """FA-EMISSION-GAP: an absorption line found within 1.5 FWHM of a credible emission line of the
    same hypothesis is the dip beside (or between) emission lines, not a stellar line: REMOVE."""
    em = [ln for ln in res.lines if ln.kind == "emission" and _credible(ln) and ln.observed and ln.fwhm_kms]
    out = {}
    for ln in res.lines:
        if ln.kind != "absorption" or ln.status not in ("LIKELY", "MARGINAL") or ln.observed is None:
            continue
        for e in em:
            fwhm_A = e.fwhm_kms / C_KMS * e.observed
            if abs(ln.observed - e.observed) <= 1.5 * fwhm_A:
                out[ln.name] = ("REMOVE", "FA-EMISSION-GAP", f"{ln.name} at {ln.observed:.1f} Å lies "
                                f"{abs(ln.observed - e.observed):.1f} Å from {e.name} emission (FWHM {fwhm_A:.1f} Å)")
                break
    return out


def ratio_verdicts(res: HypothesisResult, pixels) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
    """FA-DOUBLET-RATIO per line name, and the contradictions found: for each pair of kb
    line_ratios with a credible member, both fluxes are measured alike at the places the better
    member's z predicts; a ratio outside [lo, hi] by > n_sigma is a contradiction. The member that
    demands its missing partner is REMOVED; both are FLAGGED when both were found."""
    c = ratio_cfg()
    by_name = {ln.name: ln for ln in res.lines}
    widths = kb.load("forma/rules")["widths"]
    out: dict[str, tuple[str, str, str]] = {}
    found_ = []
    for pair in c["pairs"]:
        a, b = by_name.get(pair["a"]), by_name.get(pair["b"])
        if a is None or b is None or "MASKED" in (a.status, b.status) or not (_credible(a) or _credible(b)):
            continue
        ref = max((ln for ln in (a, b) if _credible(ln)), key=lambda ln: ln.snr or 0)
        fwhm = min(ref.fwhm_kms or widths["narrow_max_kms"], widths["narrow_max_kms"])
        if pair.get("narrow_only") and (res.spectype == "QSO" or (ref.fwhm_kms or 0) >= widths["narrow_max_kms"]
                                        or ref.broad_fwhm_kms):
            continue
        z = ref.implied_z
        others = [((o.observed or o.predicted), o.fwhm_kms or fwhm) for o in res.lines
                  if o.kind == "emission" and o.status != "MASKED"]
        ma = _forced(pixels, a, a.rest * (1 + z), fwhm, others)
        mb = _forced(pixels, b, b.rest * (1 + z), fwhm, others)
        if ma is None or mb is None:
            continue
        (fa_, sa), (fb_, sb) = ma, mb
        lo, hi = pair["ratio"]
        t_hi = (fa_ - hi * fb_) / np.hypot(sa, hi * sb)
        t_lo = (lo * fb_ - fa_) / np.hypot(lo * sb, sa) if lo > 0 else -np.inf
        if max(t_hi, t_lo) <= c["n_sigma"]:
            continue
        strong, weak = (a, b) if t_hi > t_lo else (b, a)  # `strong` demands more of `weak` than is there
        t = max(t_hi, t_lo)
        ev = (f"{pair['name']}: {a.name} {fa_:.3g} +- {sa:.2g}, {b.name} {fb_:.3g} +- {sb:.2g}; "
              f"{a.name}/{b.name} must lie in {lo}-{hi} ({pair['ref'].split(';')[0]}); off by {t:.1f} sigma")
        if _credible(weak):
            out[a.name] = out[b.name] = ("FLAG", "FA-DOUBLET-RATIO", ev)
        else:
            out[strong.name] = ("REMOVE", "FA-DOUBLET-RATIO", f"{strong.name} cannot stand without {weak.name}: {ev}")
        found_.append(ev)
    return out, found_


def audit(results: list[HypothesisResult], pixels, features) -> FeatureAudit:
    fa = FeatureAudit()
    for res in results:
        dbl = doublet_verdicts(res)
        ratios, bad = ratio_verdicts(res, pixels)
        ratios.update(gap_verdicts(res))
        if bad:
            fa.contradictions[res.idx] = bad
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
            if ln.name in ratios and (verdict is None or verdict[0] != "REMOVE") \
                    and (verdict is None or ratios[ln.name][0] == "REMOVE"):
                verdict = ratios[ln.name]
            if verdict is None and ln.name in dbl:
                verdict = dbl[ln.name]
            value, rule_id, ev = verdict if verdict else ("KEEP", "FA-KEEP",
                                                          f"{ln.name} at {ln.observed:.1f} Å passes every check")
            ln.audit, ln.audit_rule = value, rule_id
            fa.verdicts.append(FeatureVerdict(res.idx, ln.name, ln.observed, value, rule_id, ev))
    fa.spectrum_quality = quality_label(pixels.median_snr)
    return fa
