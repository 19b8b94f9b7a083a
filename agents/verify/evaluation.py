"""Agreement of verify briefs with survey pipeline labels, per credibility tier (FORMA 2.13), in velocity
(issue 50, item 6).

Labels are used here only, never by the pipeline. A manifest row counts as labelled when its
label comes from the survey's own pipeline (LAMOST header, SDSS SPECOBJ/SPALL, an official DESI
redrock file): class STAR / GALAXY / QSO and a numeric z. Rows whose label is DERIVED (a redrock
re-run), absent, or a library spectral type without a redshift are not labelled.

A redshift is judged by its velocity offset from the catalogue, dv = c (z - z_cat) / (1 + z_cat):
- a galaxy or QSO answer is right when its class is and |dv| <= DV_TOLERANCE_KMS of its class. Galaxies:
  300 km/s, ten times the catalogues' own errors (SDSS 10-30 km/s; DESI visual inspection 10-40 km/s)
  and about one resolution element of a R ~ 2000 spectrograph (150 km/s) twice over, so an answer is wrong
  when it has mis-centred or mis-assigned a line, not when it differs in the last digit. QSOs: 500 km/s,
  because a QSO's catalogue z rests on broad lines whose peaks are shifted from the systemic z by a few
  hundred km/s (Hewett & Wild 2010), so neither z is better than that;
- a star keeps its own rule, |dz| <= STAR_DZ_MAX: its z is a radial velocity, which verify does not
  claim to measure, and the class is what is judged;
- catastrophic: |dv| > CATASTROPHIC_KMS (1,000 km/s, DESI's definition of a redshift failure);
- coverage of the stated errors: the fraction of answers with |dv| <= their stated 1-sigma (the brief's
  `redshift_rms` in velocity); honest errors cover about 68 %.
Summaries give, per class and per survey, |dv| median and 90th percentile, the bias (median signed dv),
the coverage and the catastrophic rate.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from astropy.constants import c as _c

TIERS = ("HIGH", "MEDIUM", "LOW")
C_KMS = _c.to_value("km/s")
DV_TOLERANCE_KMS = {"GALAXY": 300.0, "QSO": 500.0}
STAR_DZ_MAX = 0.01  # the rule every class had before velocities: kept for stars
CATASTROPHIC_KMS = 1000.0


def is_labelled(row: dict) -> bool:
    source = (row.get("label_source") or "").strip()
    if not source or source.lower().startswith(("derived", "none")):
        return False
    if (row.get("class") or "").upper() not in ("STAR", "GALAXY", "QSO"):
        return False
    try:
        float(row.get("z"))
    except (TypeError, ValueError):
        return False
    return True


def split_file(entry: str) -> tuple[str, str | None]:
    """Manifest `file` column: `path#TARGET` for multi-spectrum files."""
    path, _, target = entry.partition("#")
    return path, (target or None)


def velocity_offset(z: float, z_cat: float) -> float:
    """dv = c (z - z_cat) / (1 + z_cat), km/s: the velocity of z in the catalogue's rest frame."""
    return C_KMS * (z - z_cat) / (1.0 + z_cat)


def survey_family(survey: str | None) -> str:
    """"LAMOST-LRS DR8" -> "LAMOST-LRS", "SDSS DR16 (BOSS)" -> "SDSS": the survey, not its release."""
    return (re.split(r"[\s(]", (survey or "").strip(), maxsplit=1)[0] or "unknown")


@dataclass
class Row:
    source: str
    label_class: str
    label_z: float
    type: str
    redshift: float | None
    credibility: str
    redshift_rms: float | None = None  # the stated 1-sigma, in z
    survey: str = ""
    tolerance_kms: dict = field(default_factory=lambda: dict(DV_TOLERANCE_KMS))

    @property
    def class_ok(self) -> bool:
        return self.type == self.label_class

    @property
    def dv_kms(self) -> float | None:
        return None if self.redshift is None else velocity_offset(self.redshift, self.label_z)

    @property
    def sigma_kms(self) -> float | None:
        return None if self.redshift_rms is None else C_KMS * self.redshift_rms / (1.0 + self.label_z)

    @property
    def z_ok(self) -> bool:
        if self.redshift is None:
            return False
        if self.label_class in self.tolerance_kms:
            return abs(self.dv_kms) <= self.tolerance_kms[self.label_class]
        return abs(self.redshift - self.label_z) <= STAR_DZ_MAX

    @property
    def agrees(self) -> bool:
        return self.class_ok and self.z_ok


def summarise(rows: list[Row]) -> dict:
    """Per tier and per gate (>= tier): n, coverage, class agreement, full agreement; per class and per
    survey: the same, and the velocity statistics (`velocity_stats`)."""
    n = len(rows)
    out = {"n": n, "tolerance_kms": dict(rows[0].tolerance_kms if rows else DV_TOLERANCE_KMS),
           "star_dz_max": STAR_DZ_MAX, "catastrophic_kms": CATASTROPHIC_KMS,
           "tiers": {}, "gates": {}, "per_class": {}, "per_survey": {}}
    for t in TIERS:
        sel = [r for r in rows if r.credibility == t]
        out["tiers"][t] = _stats(sel, n)
    for i, t in enumerate(TIERS):
        sel = [r for r in rows if r.credibility in TIERS[: i + 1]]
        out["gates"][t] = _stats(sel, n)
    groups = (("per_class", lambda r: r.label_class), ("per_survey", lambda r: survey_family(r.survey)))
    for key, of in groups:
        for name in sorted({of(r) for r in rows}):
            sel = [r for r in rows if of(r) == name]
            gate = [r for r in sel if r.credibility in ("HIGH", "MEDIUM")]
            out[key][name] = {"all": _stats(sel, len(sel)), "medium_or_high": _stats(gate, len(sel)),
                              "velocity": velocity_stats(sel), "velocity_medium_or_high": velocity_stats(gate)}
    return out


def velocity_stats(sel: list[Row]) -> dict:
    """Over the rows answered with a z: |dv| median and p90, bias (median signed dv), the coverage of
    the stated 1-sigma (rows that state one) and the catastrophic rate (|dv| > CATASTROPHIC_KMS)."""
    dv = np.array([r.dv_kms for r in sel if r.redshift is not None], dtype=float)
    stated = [(abs(r.dv_kms), r.sigma_kms) for r in sel if r.redshift is not None and r.sigma_kms]
    k = int(dv.size)
    return {"n": len(sel), "answered": k,
            "median_abs_dv_kms": _round(np.median(np.abs(dv))) if k else None,
            "p90_abs_dv_kms": _round(np.percentile(np.abs(dv), 90)) if k else None,
            "bias_kms": _round(np.median(dv)) if k else None,
            "coverage": sum(a <= s for a, s in stated) / len(stated) if stated else None,
            "with_sigma": len(stated),
            "catastrophic": float(np.mean(np.abs(dv) > CATASTROPHIC_KMS)) if k else None}


def _round(x) -> float:
    return round(float(x), 1)


def _stats(sel: list[Row], total: int) -> dict:
    k = len(sel)
    return {"n": k, "coverage": k / total if total else 0.0,
            "class_agreement": sum(r.class_ok for r in sel) / k if k else None,
            "agreement": sum(r.agrees for r in sel) / k if k else None}


def format_summary(s: dict) -> str:
    def pct(x):
        return "   -  " if x is None else f"{100 * x:5.1f}%"

    def kms(x):
        return "     -" if x is None else f"{x:6.0f}"

    tol = ", ".join(f"{c} |dv|<={v:g} km/s" for c, v in s["tolerance_kms"].items())
    lines = [f"{s['n']} labelled spectra; right z: {tol}, STAR |dz|<={s['star_dz_max']:g}",
             "tier     n   class   right z"]
    for t in TIERS:
        st = s["tiers"][t]
        lines.append(f"{t:<6} {st['n']:4d}  {pct(st['class_agreement'])}  {pct(st['agreement'])}")
    lines.append("gate        n  coverage  agreement")
    for t in TIERS:
        st = s["gates"][t]
        lines.append(f">= {t:<6} {st['n']:4d}  {pct(st['coverage'])}   {pct(st['agreement'])}")
    lines.append("class    n   all-agree  >=MEDIUM n  coverage  agreement")
    for cls, st in s["per_class"].items():
        a, g = st["all"], st["medium_or_high"]
        lines.append(f"{cls:<7}{a['n']:4d}   {pct(a['agreement'])}   "
                     f"{g['n']:6d}   {pct(g['coverage'])}  {pct(g['agreement'])}")
    head = (f"{'':<11}    n  with z  |dv| median    p90   bias (km/s)  1-sigma covers  "
            f"catastrophic (>{s['catastrophic_kms']:g} km/s)")
    for key, title in (("per_class", "per class"), ("per_survey", "per survey")):
        lines.append(f"{title}: {head.strip()}")
        for name, st in s[key].items():
            v = st["velocity"]
            lines.append(f"{name:<11} {v['n']:4d}  {v['answered']:6d}  {kms(v['median_abs_dv_kms'])}     "
                         f"{kms(v['p90_abs_dv_kms'])} {kms(v['bias_kms'])}        {pct(v['coverage'])} "
                         f"({v['with_sigma']})   {pct(v['catastrophic'])}")
    return "\n".join(lines)
