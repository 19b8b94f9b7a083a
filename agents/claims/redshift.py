"""A redshift claim is checked by its lines (FORMA's line-by-line analysis, forma.txt 2.9), from two sides.

1. The spectrum's strongest significant features (found without any redshift: peaks and troughs of
   the flux against a running-median continuum, `strongest_features`) must be explained at the
   claimed z by a known line or band. When most of the strongest ones are not, the claim is
   contradicted, whatever other lines happen to fall on features by coincidence.
2. At the claimed z, the major kb lines the spectrum covers must show up where they should: two or
   more significant ones (and the strongest features explained): supported (the measured z is their
   mean); three or more covered and none there: contradicted; anything else: unverifiable.

Tolerances are physical: a line is placed within 5 A (rest) plus 0.2 % of its wavelength (a
star's radial velocity, |v| < 600 km/s, or a redshift quoted to 0.002), plus 0.5 % for broad lines
(QSO broad lines are shifted from the systemic z by up to ~1500 km/s).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

import kb
from agents.claims.line_state import HALF_WIDTH, Unverifiable, line_state
from agents.claims.measure import line_params

HALF_REST = 10.0  # Angstrom, rest frame: narrow enough for galaxy lines, wide enough for z errors of ~0.002

N_STRONGEST = 3  # the strongest features a redshift must explain (most of them)
FEATURE_SIG = 8.0  # integrated significance of a feature over ~10 A
FEATURE_AMP = 0.10  # 10 % above or below the continuum: a line an inspector sees at once
CONT_SPAN = 300.0  # Angstrom: running-median continuum, wider than any line but a QSO's broadest
MAX_WIDTH = 150.0  # Angstrom observed: wider residuals are continuum shape (breaks, bands), not lines
PLACE_A = 5.0  # Angstrom, rest: where an 8 A-smoothed profile puts a line's extreme
PLACE_REL = 0.002  # radial velocity / z precision
BROAD_REL = 0.005  # broad-line shifts
# observed-frame night-sky and telluric features: a feature there says nothing about the object's z
SKY = [(5570.0, 5585.0), (5885.0, 5900.0), (6295.0, 6306.0), (6360.0, 6368.0), (6860.0, 6930.0),
       (7585.0, 7700.0), (8130.0, 8350.0), (8950.0, 9300.0)]
# lines and bands strong enough to be among a spectrum's strongest that kb/lines.yaml does not list
# (rest, vacuum, Angstrom): QSO UV lines, [Ne III], [O I], Ca I, the Fe I / Mg H blend, Na I 8190
# the higher Balmer lines of A stars (H8-H11), and the metal-line blends that are among the deepest
# features of K and M stars (Fe I 4046, Cr I 4275 and 5207, Ca I 6163 and 6463, Ba II / Ca I 6497)
EXTRA_LINES = [1240.8, 1304.0, 1335.0, 1397.0, 3772.0, 3799.0, 3836.5, 3869.8, 3890.2, 4046.6, 4227.9, 4275.9,
               4384.0, 5207.5, 5270.0, 6163.4, 6302.0, 6463.5, 6498.5, 8190.0]
# broad blends and molecular bands, as (start, end) rest ranges with the sense of the feature they
# explain: the Fe II UV and optical complexes of QSOs (broad emission), TiO band heads and the bands'
# depression redward of them and CaH (absorption). Only a feature wider than BAND_WIDTH can be one.
BANDS = [(2200.0, 2650.0, 1), (4430.0, 4700.0, 1), (4950.0, 5100.0, -1), (5160.0, 5260.0, -1),
         (5445.0, 5600.0, -1), (5845.0, 5990.0, -1), (6150.0, 6300.0, -1), (6380.0, 6450.0, -1),
         (6650.0, 6800.0, -1), (7050.0, 7250.0, -1), (7590.0, 7800.0, -1), (8430.0, 8500.0, -1)]
BAND_WIDTH = 50.0  # Angstrom observed: narrower features are lines, not bands or blends
# bands narrow enough to explain a feature of any width: the CH G band over the Lick G4300 passband
# (Worthey et al. 1994), among the deepest features of F-K stars
NARROW_BANDS = [(4281.4, 4316.4, -1)]
STAR_Z_MAX = 0.003  # |v| < 900 km/s: every star of the Galaxy and its halo (hypervelocity stars included)
# Earth's atmosphere, observed frame (issue 50, item 7): at a claimed z ~ 0 an absorption band there is the
# atmosphere's, not evidence against the star's z. The telluric bands (O2 B 6867-6884 and A 7594-7621 with
# their wings, H2O 7160-7340, 8120-8350 and 8950-9800 A; Stevenson 1994, Hinkle et al. 2003) and, redward
# of OH_ZONE, the night-sky OH bands, whose lines a sky subtraction leaves behind as narrow dips or spikes
# (Osterbrock et al. 1996: 7750, 7794-7993, 8344-8465, 8761-8958 A ...; the verify feature auditor's OH
# zone starts at 7800 A, this one at the 7750 A group)
TELLURIC = [(6860.0, 6960.0), (7160.0, 7340.0), (7585.0, 7700.0), (8120.0, 8350.0), (8950.0, 9800.0)]
OH_ZONE = 7700.0
# Absorption blueward of a high-z object's own lines (issue 50, item 7): intervening H I absorbs blueward of
# Ly-alpha at the object's z (the Ly-alpha forest), and a QSO's outflows absorb blueward of its broad UV lines
# by up to ~0.1 c (broad absorption lines, Weymann et al. 1991: C IV, Si IV, N V, Al III). Such troughs are
# explained by the z, not evidence against it; they fall in the optical only beyond z ~ 1.3.
LY_ALPHA = 1215.67
BAL_LINES = (1240.8, 1397.0, 1549.0, 1857.0)  # N V, Si IV, C IV, Al III (rest, Angstrom)
BAL_REACH = 0.1  # v/c
N_CANDIDATES = 12  # features kept in the cache: the strongest N_STRONGEST once the atmosphere's are set aside
ENVELOPE_PCT = 80  # emission is measured above the running 80th percentile: in a forest of absorption
# lines (cool stars, the crowded blue end) the gaps between lines reach the envelope, not above it


@dataclass(frozen=True)
class Feature:
    wave: float  # observed, Angstrom
    sign: int  # +1 emission, -1 absorption
    amp: float  # relative height / depth of the smoothed residual
    width: float  # full width at half the amplitude, Angstrom observed


def strongest_features(measurer, n: int = N_STRONGEST) -> list[Feature]:
    """The n most prominent significant peaks / troughs of the spectrum (cached on the measurer)."""
    cached = getattr(measurer, "_strongest", None)
    if cached is not None and (len(cached) >= n or getattr(measurer, "_strongest_n", 0) >= n):
        return cached[:n]
    n_find = max(n, N_CANDIDATES)
    from scipy.ndimage import median_filter, percentile_filter, uniform_filter1d

    a = measurer.a
    good = a.good & np.isfinite(measurer.sigma)
    w, f, s = a.wave[good], a.flux[good], measurer.sigma[good]
    out: list[Feature] = []
    if w.size > 50:
        dl = float(np.median(np.diff(w)))
        k_cont = int(CONT_SPAN / dl) | 1
        k_line = max(3, int(8.0 / dl) | 1)
        size = min(k_cont, (w.size - 1) | 1)
        step = max(1, size // 60)  # the continuum on a coarse grid: a running statistic of ~60 points
        med = np.interp(np.arange(w.size), np.arange(0, w.size, step),
                        median_filter(f[::step], size=max(3, (size // step) | 1), mode="nearest"))
        env = np.interp(np.arange(w.size), np.arange(0, w.size, step),
                        percentile_filter(f[::step], ENVELOPE_PCT, size=max(3, (size // step) | 1), mode="nearest"))
        noise = np.sqrt(uniform_filter1d(s ** 2, k_line, mode="nearest") / k_line)
        raw = uniform_filter1d(f, k_line, mode="nearest")
        emis = np.clip(raw - env, 0.0, None)  # above the envelope
        absn = np.clip(raw - med, None, 0.0)  # below the median
        resid = np.where(emis > -absn, emis, absn)
        cont = np.where(emis > -absn, env, med)
        ok = cont > 0
        rs = np.where(ok, resid / np.where(ok, cont, 1.0), 0.0)
        signif = resid / noise
        usable = ok & (np.abs(signif) >= FEATURE_SIG) & (np.abs(rs) >= FEATURE_AMP)
        usable &= (w > w[0] + 20.0) & (w < w[-1] - 20.0)
        for lo, hi in SKY:
            usable &= ~((w >= lo) & (w <= hi))
        score = np.where(usable, np.abs(rs), 0.0)
        while len(out) < 2 * n_find and score.max() > 0:
            i = int(np.argmax(score))
            sign = 1 if rs[i] > 0 else -1
            half = 0.5 * abs(rs[i])
            j0, j1 = i, i
            while j0 > 0 and sign * rs[j0] > half:
                j0 -= 1
            while j1 < w.size - 1 and sign * rs[j1] > half:
                j1 += 1
            width = float(w[j1] - w[j0])
            score[(w >= w[j0] - max(30.0, width)) & (w <= w[j1] + max(30.0, width))] = 0.0
            if width <= MAX_WIDTH and (sign > 0 or abs(rs[i]) < 1.0):  # no absorption below zero flux
                out.append(Feature(float(w[i]), sign, float(abs(rs[i])), width))
    out = out[:n_find]
    measurer._strongest = out
    measurer._strongest_n = n_find
    return out[:n]


def atmospheric(feature: Feature) -> bool:
    """A feature where Earth's atmosphere puts one: a telluric band, or the OH zone's sky residuals."""
    return feature.wave >= OH_ZONE or any(lo <= feature.wave <= hi for lo, hi in TELLURIC)


def _rest_lines() -> list[float]:
    return sorted({float(ln["wave"]) for ln in kb.lines() if ln["kind"] != "sky"} | set(EXTRA_LINES))


def explained(feature: Feature, z: float, qso: bool = False) -> bool:
    """Whether a known line or band at redshift z falls on the feature. A QSO's z (from its broad
    lines, or a template dominated by them) may sit up to BROAD_REL from its narrow lines' z, so for a
    QSO every feature gets that allowance."""
    broad = feature.width > 40.0 or qso
    tol = PLACE_A * (1 + z) + PLACE_REL * feature.wave + (BROAD_REL * feature.wave if broad else 0.0)
    if feature.sign < 0 and (feature.wave <= LY_ALPHA * (1 + z) + tol or any(
            r * (1 + z) * (1 - BAL_REACH) <= feature.wave <= r * (1 + z) + tol for r in BAL_LINES)):
        return True  # the Ly-alpha forest, or a broad absorption trough
    if any(abs(feature.wave - r * (1 + z)) <= tol for r in _rest_lines()):
        return True
    bands = NARROW_BANDS + (BANDS if feature.width > BAND_WIDTH else [])
    return any(lo * (1 + z) - tol <= feature.wave <= hi * (1 + z) + tol for lo, hi, sign in bands if sign == feature.sign)


def check_redshift(claim, ctx, result):
    z = claim.value
    lo, hi = ctx.measurer.coverage
    top = strongest_features(ctx.measurer)
    if abs(z) <= STAR_Z_MAX:  # at rest the atmosphere's bands sit where a star's z would put lines: no evidence
        top = [f for f in strongest_features(ctx.measurer, N_CANDIDATES) if not atmospheric(f)][:N_STRONGEST]
    qso = (ctx.object_class or "").upper() == "QSO"
    unexplained = [f for f in top if not explained(f, z, qso)]
    if len(top) >= 2 and len(unexplained) >= 2 and 2 * len(unexplained) > len(top):
        names = ", ".join(f"{f.wave:.0f} A ({'emission' if f.sign > 0 else 'absorption'})" for f in unexplained)
        return result(claim, "contradicted", ctx, None, None, (lo, hi),
                      f"{len(unexplained)} of the {len(top)} strongest features are not explained at z={z:g}: "
                      f"{names}")
    if (ctx.object_class or "").upper() == "STAR" and abs(z) > STAR_Z_MAX:
        at_rest = _major_lines_found(ctx, 0.0)[1]
        if len(at_rest) >= 3:  # a star's lines sit at rest: a z beyond any star's velocity is not its z
            return result(claim, "contradicted", ctx, 0.0, STAR_Z_MAX, (lo, hi),
                          f"a star: its lines sit at rest ({', '.join(n for n, _ in at_rest)}), not at z={z:g}")
    covered, found, window = _major_lines_found(ctx, z)
    names = ", ".join(n for n, _ in found)
    strongest_ok = not top or top[0] not in unexplained
    if len(found) >= 2 and strongest_ok:
        zs = float(np.mean([zz for _, zz in found]))
        return result(claim, "supported", ctx, zs, 0.002 * (1 + z), window, f"lines found at z={z:g}: {names}")
    if covered >= 3 and not found and not (abs(z) <= STAR_Z_MAX and len(_detected_at_rest(ctx, z)) >= 2):
        # at a star's z, absorption lines detected (3 sigma) if not strong are there: a cool star's lines
        # at survey S/N are many and shallow
        return result(claim, "contradicted", ctx, None, None, (lo, hi),
                      f"none of the {covered} major lines covered at z={z:g} is there")
    return result(claim, "unverifiable", ctx, reason=f"{covered} major lines covered, found: {names or 'none'}"
                  + ("" if strongest_ok else f"; the strongest feature, at {top[0].wave:.0f} A, is not explained"))


def _detected_at_rest(ctx, z: float) -> list[str]:
    """The major absorption lines of kb detected (SIG_DETECT, agents.claims.line_state.line_state) at z."""
    lo, hi = ctx.measurer.coverage
    local = replace(ctx, z=z)
    out = []
    for ln in kb.lines():
        if ln["kind"] != "absorption" or not ln.get("major") or ln["name"] in out:
            continue
        centre = ln["wave"] * (1 + z)
        params = line_params(centre, HALF_REST * (1 + z))
        if params["blue"][0] < lo or params["red"][1] > hi:
            continue
        try:
            if line_state(local, centre, params)["absorption"]:
                out.append(ln["name"])
        except Unverifiable:
            continue
    return out


def _major_lines_found(ctx, z: float) -> tuple[int, list[tuple[str, float]], tuple[float, float] | None]:
    """(major kb lines covered at z, those strongly there with the z each gives, the first's window)."""
    lo, hi = ctx.measurer.coverage
    local = replace(ctx, z=z)
    covered, found, window = 0, [], None
    seen_rest = set()
    for ln in kb.lines():
        if ln["kind"] == "sky" or not ln.get("major") or ln["wave"] in seen_rest:
            continue
        seen_rest.add(ln["wave"])
        centre = ln["wave"] * (1 + z)
        half = HALF_WIDTH[ln.get("width")] if ln["kind"] == "emission" else HALF_REST
        params = line_params(centre, half * (1 + z))
        if params["blue"][0] < lo or params["red"][1] > hi:
            continue
        covered += 1
        try:
            st = line_state(local, centre, params)
        except Unverifiable:
            continue
        if st["strong_emission"] or st["strong_absorption"]:
            c = local.measurer.run("centroid", sign=1 if st["strong_emission"] else -1, **params).value
            found.append((ln["name"], c / ln["wave"] - 1))
            window = window or (params["blue"][0], params["red"][1])
    return covered, found, window
