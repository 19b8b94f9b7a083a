"""Classification rules of the kb (FORMA 2.10): fatal contradictions between a class and the lines
found for it. Each returns rule-id strings with their evidence; an empty list means no objection."""
from __future__ import annotations

from agents.verify.analysis import HypothesisResult, line_table, rules

FORBIDDEN_GROUPS = {"[O II]", "[O III]", "[N II]", "[S II]", "[Ne V]"}
BROAD_QSO_GROUPS = {"Ly-alpha", "C IV", "C III]", "Mg II", "Balmer"}


def qso_needs_broad_line(res: HypothesisResult, features=()) -> list[str]:
    """QSO-NO-BROAD: a type-1 QSO shows at least one permitted emission line >= 1500 km/s."""
    if res.spectype != "QSO":
        return []
    limit = rules()["widths"]["qso_fatal_below_kms"]
    em = [ln for ln in res.credible() if ln.kind == "emission" and ln.group in BROAD_QSO_GROUPS]
    if any(max(ln.fwhm_kms or 0, ln.broad_fwhm_kms or 0) >= limit for ln in em):
        return []  # a broad component fitted under a narrow core counts (agents/verify/widths.py)
    widths = ", ".join(f"{ln.name} {ln.fwhm_kms:.0f} km/s" for ln in em) or "no permitted emission line found"
    return [f"QSO-NO-BROAD: no permitted line broader than {limit} km/s ({widths})"]


def galaxy_without_broad_lines(res: HypothesisResult, features=()) -> list[str]:
    """GAL-BROAD: a broad (>= 2000 km/s) Mg II / C IV / C III] / Ly-alpha / Balmer emission line means a QSO."""
    if res.spectype != "GALAXY":
        return []
    limit = rules()["widths"]["broad_min_kms"]
    broad = [ln for ln in res.credible() if ln.kind == "emission" and ln.group in BROAD_QSO_GROUPS
             and (ln.fwhm_kms or 0) >= limit and (ln.snr or 0) >= rules()["matching"]["robust_snr"]]
    return [f"GAL-BROAD: {ln.name} at {ln.observed:.1f} Å is {ln.fwhm_kms:.0f} km/s wide" for ln in broad]


def galaxy_not_at_stellar_velocity(res: HypothesisResult, features=()) -> list[str]:
    """GAL-STELLAR-Z: an absorption-only spectrum at |cz| < 1000 km/s is a Milky Way star; survey
    galaxies lie beyond the Local Group's velocities."""
    if res.spectype != "GALAXY":
        return []
    limit = rules()["credibility"]["stellar_max_abs_cz_kms"]
    cz = abs(res.hypothesis.z) * 299792.458
    emission = [ln for ln in res.credible() if ln.kind == "emission"]
    if cz < limit and not emission:
        return [f"GAL-STELLAR-Z: cz = {cz:.0f} km/s with no emission line"]
    return []


def star_without_nebular_lines(res: HypothesisResult, features=()) -> list[str]:
    """STAR-NEBULAR: two or more forbidden nebular lines ([O II], [O III], [N II], [S II]) in
    narrow emission at the star's redshift are not stellar."""
    if res.spectype != "STAR":
        return []
    m = rules()["matching"]
    hits = []
    for ln in line_table():
        if ln["kind"] != "emission" or ln["group"] not in FORBIDDEN_GROUPS:
            continue
        pred = ln["rest"] * (1 + res.hypothesis.z)
        if any(f.kind == "emission" and f.width_class == "narrow" and f.snr >= m["robust_snr"]
               and abs(f.wavelength - pred) < m["excellent_offset_A"] for f in features):
            hits.append(ln["name"])
    return [f"STAR-NEBULAR: {', '.join(hits)} in narrow emission"] if len(hits) >= 2 else []


CLASS_RULES = (qso_needs_broad_line, galaxy_without_broad_lines, galaxy_not_at_stellar_velocity,
               star_without_nebular_lines)


def apply_class_rules(res: HypothesisResult, features=()) -> list[str]:
    out: list[str] = []
    for rule in CLASS_RULES:
        out += rule(res, features)
    res.fatal = out
    return out
