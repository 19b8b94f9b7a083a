"""Step 2: test one redshift hypothesis against the spectrum, line by line (FORMA 2.4, issue 50).

Line identification is an assignment: every line the class predicts inside the coverage may take a
CWT feature of its sign near its predicted wavelength, each feature explaining at most one line
(least total (offset / tolerance)^2, key lines preferred; a doublet whose spacing misses its fixed
rest spacing keeps one member). A line is LIKELY within its tolerance (n_sigma x the pixel, the
centring and the line's width / S/N, plus the velocity such a line may sit off systemic; widths
consistent) and MARGINAL out to 80 A; a key line with no feature gets a Gaussian fit (LIKELY with
delta chi2/n > 0, local S/N > 10 (a broad line's, or a passive galaxy's trough's, integrated
significance), within the tolerance, not on a feature another line explains), else NOT_FOUND, or
MASKED when the window has no good data. LIKELY CWT lines are re-centred by a Gaussian fit. The
systemic z is a joint fit of every credible line and, where it is the more precise, of the
hypothesis's refined template z (`_systemic`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

import kb
from agents.tools.linefit import fit_centroid, fit_peak
from agents.verify.widths import fit_broad_lines

C_KMS = 299792.458


def rules() -> dict:
    return kb.load("forma/rules")


def line_table() -> list[dict]:
    return kb.load("forma/lines")["lines"]


def class_lines(spectype: str) -> list[dict]:
    """The lines a hypothesis of this class predicts (rest wavelengths, vacuum Å), in table order."""
    return [ln for ln in line_table() if spectype in ln["classes"]]


@dataclass
class LineResult:
    name: str
    rest: float
    kind: str
    width: str | None
    group: str
    key: bool
    predicted: float
    status: str = "NOT_FOUND"  # LIKELY / MARGINAL / NOT_FOUND / MASKED
    source: str = ""  # CWT / fit_peak
    observed: float | None = None
    observed_err: float | None = None
    amplitude: float | None = None
    fwhm_kms: float | None = None
    snr: float | None = None
    ridge_length: int | None = None
    audit: str = ""  # KEEP / FLAG / REMOVE after the feature auditor
    audit_rule: str = ""
    broad_fwhm_kms: float | None = None  # a broad component fitted under the line (agents/verify/widths.py)
    broad_delta_chi2: float | None = None

    @property
    def implied_z(self) -> float | None:
        return None if self.observed is None else self.observed / self.rest - 1

    def as_row(self) -> dict:
        r = {k: v for k, v in self.__dict__.items()}
        r["implied_z"] = None if self.implied_z is None else round(self.implied_z, 6)
        for k in ("observed", "observed_err", "amplitude", "fwhm_kms", "snr", "predicted"):
            if r[k] is not None:
                r[k] = round(float(r[k]), 3)
        return r


@dataclass
class HypothesisResult:
    idx: int
    hypothesis: object  # agents.tools.hypotheses.Hypothesis
    lines: list[LineResult] = field(default_factory=list)
    systemic_z: float | None = None
    systemic_z_err: float | None = None
    anchor: str | None = None
    z_scatter: float | None = None
    fatal: list[str] = field(default_factory=list)  # class-rule violations (rule ids with evidence)
    concerns: list[str] = field(default_factory=list)
    dn4000: float | None = None

    @property
    def spectype(self) -> str:
        return self.hypothesis.spectype

    def credible(self) -> list[LineResult]:
        """LIKELY lines the feature auditor did not remove."""
        return [ln for ln in self.lines if ln.status == "LIKELY" and ln.audit != "REMOVE"]

    def count(self, status: str) -> int:
        return sum(1 for ln in self.lines if ln.status == status)

    @property
    def verdict(self) -> str:
        key = [ln for ln in self.credible() if ln.key]
        return "SUPPORTED" if len(key) >= 2 and not self.fatal else "NOT SUPPORTED"

    def summary(self) -> dict:
        h = self.hypothesis
        return {"idx": self.idx, "z": round(h.z, 5), "class": h.spectype, "source": h.source,
                "score": round(h.score, 2), "verdict": self.verdict,
                "n_likely": self.count("LIKELY"), "n_marginal": self.count("MARGINAL"),
                "n_not_found": self.count("NOT_FOUND"), "n_masked": self.count("MASKED"),
                "anchor": self.anchor, "systemic_z": None if self.systemic_z is None else round(self.systemic_z, 6),
                "z_scatter": None if self.z_scatter is None else round(self.z_scatter, 5),
                "dn4000": None if self.dn4000 is None else round(self.dn4000, 3),
                "fatal": self.fatal, "concerns": self.concerns}


def _covered(pixels, lam: float, half: float) -> str:
    """'ok', 'masked' (inside the coverage but no good data), or 'outside'."""
    if lam < pixels.wave_min_all or lam > pixels.wave_max_all:
        return "outside"
    w = pixels.wave
    i = np.searchsorted(w, lam)
    if i == 0 or i == w.size:
        return "masked"
    n_near = np.searchsorted(w, lam + half) - np.searchsorted(w, lam - half)
    step = float(np.median(np.diff(w))) if w.size > 1 else 1.0
    return "ok" if n_near >= 0.5 * (2 * half / step) else "masked"


def width_consistent(expected: str | None, kind: str, fwhm_kms: float) -> bool:
    r = rules()["widths"]
    if kind == "absorption" or expected in (None, "both"):
        return True
    if expected == "broad":
        return fwhm_kms >= r["narrow_max_kms"]  # CWT widths of broad lines often read low
    return fwhm_kms < r["broad_min_kms"]


def _anchor_rank(group: str) -> int:
    for rank, names in enumerate(rules()["anchor_priority"]):
        if group in names:
            return rank
    return 99


def dn4000(pixels, z: float) -> float | None:
    """mean F(4000-4100) / mean F(3850-3950), rest frame, >= 3 px each."""
    w = pixels.wave / (1 + z)
    red = (w >= 4000) & (w <= 4100)
    blue = (w >= 3850) & (w <= 3950)
    if red.sum() < 3 or blue.sum() < 3:
        return None
    b = float(np.mean(pixels.flux[blue]))
    return float(np.mean(pixels.flux[red]) / b) if b > 0 else None


def pixel_step(pixels, lam: float) -> float:
    """The pixel size (A) at `lam`: the median spacing of the good pixels about it."""
    w = pixels.wave
    if w.size < 2:
        return 1.0
    i = int(np.clip(np.searchsorted(w, lam), 2, max(w.size - 2, 2)))
    d = np.diff(w[max(i - 3, 0):i + 3])
    return float(np.median(d)) if d.size else 1.0


def _allowance_kind(ln: dict, fwhm_kms: float | None) -> str:
    if ln["kind"] == "absorption":
        return "absorption"
    width = ln.get("width")
    if width == "both":
        return "broad" if (fwhm_kms or 0) >= rules()["widths"]["narrow_max_kms"] else "narrow"
    return "broad" if width == "broad" else "narrow"


def line_tolerance(pixels, ln: dict, pred: float, fwhm_A: float | None = None, fwhm_kms: float | None = None,
                   snr: float | None = None) -> float:
    """How far (A) a line may sit from its predicted place and still be LIKELY: n_sigma times the
    quadrature of one pixel (the hypothesis z), one pixel (the centring) and the line's own centroid
    error (FWHM / 2.35 / S/N), plus the velocity such a line may sit off the systemic z."""
    m = rules()["matching"]
    step = pixel_step(pixels, pred)
    width_term = (fwhm_A or 0.0) / 2.3548 / max(snr or 1.0, 1.0)
    sigma = float(np.sqrt(2 * step ** 2 + width_term ** 2))
    v = m["velocity_allowance_kms"][_allowance_kind(ln, fwhm_kms)]
    return m["n_sigma"] * sigma + pred * v / C_KMS


def _centroid(pixels, f) -> tuple[float, float]:
    """A CWT feature's centre refined by a Gaussian fit (cached on the pixels: hypotheses share
    features), else its pixel with an error of half a pixel."""
    cache = pixels.__dict__.setdefault("_centroid_cache", {})
    key = (f.kind, round(float(f.wavelength), 4))
    if key not in cache:
        step = pixel_step(pixels, f.wavelength)
        fit = fit_centroid(pixels.wave, pixels.flux, pixels.ivar, f.wavelength, f.fwhm_A, f.kind, step=step)
        if fit is None or fit["at_bound"]:
            cache[key] = (float(f.wavelength), 0.5 * step)
        else:
            cache[key] = (fit["center"], max(fit["center_err"], 0.05 * step))
    return cache[key]


def _assign(pixels, features, entries: list, z: float) -> dict[int, tuple]:
    """Line identification as an assignment: each detected feature explains at most one line.

    entries: [(LineResult, line dict)]. A (line, feature) pair is a candidate when the feature has
    the line's sign, lies within the acceptable offset and implies a z within the hypothesis window;
    its cost is (offset / tolerance)^2 (+1 for a width the line cannot have), halved for key lines
    (Balmer and the other strong lines win a feature two lines could explain). The assignment of
    least total cost that explains the most lines is solved exactly; then each doublet whose two
    members' spacing misses its fixed rest spacing (x (1+z)) keeps only its better-placed member.
    Returns {entry index: (feature, offset, tolerance, width_ok)}."""
    m = rules()["matching"]
    zlo, zhi = z - m["hypothesis_window_dz"], z + m["hypothesis_window_dz"]
    cands = {}
    for li, (lr, ln) in enumerate(entries):
        for fi, f in enumerate(features):
            if f.kind != ln["kind"]:
                continue
            off = abs(f.wavelength - lr.predicted)
            if off > m["acceptable_offset_A"] or not zlo <= f.wavelength / ln["rest"] - 1 <= zhi:
                continue
            tol = line_tolerance(pixels, ln, lr.predicted, f.fwhm_A, f.fwhm_kms, f.snr)
            ok_width = width_consistent(ln.get("width"), ln["kind"], f.fwhm_kms)
            cost = (off / tol) ** 2 + (0.0 if ok_width else 1.0)
            if ln["key"]:
                cost *= m["key_line_cost_factor"]
            cands[(li, fi)] = (cost, off, tol, ok_width)
    if not cands:
        return {}
    lis = sorted({k[0] for k in cands})
    fis = sorted({k[1] for k in cands})
    big = 1e3 + max(c[0] for c in cands.values())
    cost = np.full((len(lis), len(fis) + len(lis)), 1e9)
    for (li, fi), c in cands.items():
        cost[lis.index(li), fis.index(fi)] = c[0]
    cost[np.arange(len(lis)), len(fis) + np.arange(len(lis))] = big  # the line left unexplained
    rows, cols = linear_sum_assignment(cost)
    out = {}
    for r_, c_ in zip(rows, cols, strict=True):
        if c_ < len(fis):
            li, fi = lis[r_], fis[c_]
            out[li] = (features[fi], *cands[li, fi][1:])
    names = {lr.name: i for i, (lr, _) in enumerate(entries)}
    for d in kb.load("forma/lines").get("doublets", []):
        ia, ib = names.get(d["a"]), names.get(d["b"])
        if ia not in out or ib not in out:
            continue
        fa, fb = out[ia][0], out[ib][0]
        step = pixel_step(pixels, fb.wavelength)
        expect = d["sep_rest"] * (1 + z)
        tol = m["n_sigma"] * float(np.sqrt(2 * (2 * step ** 2)))
        if abs((fb.wavelength - fa.wavelength) - expect) > tol:
            worse = ia if out[ia][1] / out[ia][2] >= out[ib][1] / out[ib][2] else ib
            del out[worse]
    return out


def analyse(pixels, features, hypothesis, idx: int = 0, *, use_fits: bool = True) -> HypothesisResult:
    z = hypothesis.z
    cls = hypothesis.spectype
    res = HypothesisResult(idx, hypothesis)
    entries = []
    for ln in class_lines(cls):
        pred = ln["rest"] * (1 + z)
        cov = _covered(pixels, pred, 10.0)
        if cov == "outside":
            continue
        lr = LineResult(ln["name"], ln["rest"], ln["kind"], ln.get("width"), ln["group"], bool(ln["key"]), pred)
        res.lines.append(lr)
        if cov == "masked":
            lr.status = "MASKED"
            continue
        entries.append((lr, ln))
    assigned = _assign(pixels, features, entries, z)
    used = [a[0] for a in assigned.values()]  # features that already explain a line
    # a passive galaxy: no emission line, and a template fit at this z no better minimum rules out
    d = getattr(hypothesis, "delta_chi2", None)
    passive = (cls == "GALAXY" and not any(f.kind == "emission" for f in used) and d is not None
               and d <= rules()["credibility"]["high_rival_delta_chi2"])
    fits = []  # centres of the lines found by a fit
    for li, (lr, ln) in enumerate(entries):
        if li in assigned:
            f, off, tol, ok_width = assigned[li]
            lr.status = "LIKELY" if off <= tol and ok_width else "MARGINAL"
            lr.source, lr.observed, lr.observed_err = "CWT", f.wavelength, f.wavelength_err
            if lr.status == "LIKELY":
                lr.observed, lr.observed_err = _centroid(pixels, f)
            lr.amplitude, lr.fwhm_kms, lr.snr, lr.ridge_length = f.amplitude, f.fwhm_kms, f.snr, f.ridge_length
        elif use_fits and ln["key"]:
            _fit_fallback(pixels, lr, rules(), qso=cls == "QSO", line=ln, used=used, fits=fits, passive=passive)
    _systemic(res)
    res.dn4000 = dn4000(pixels, z)
    fit_broad_lines(pixels, res)  # a QSO's broad base under a narrow core (issue 50, item 4)
    return res


def _explained_elsewhere(centre: float, fwhm_A: float, step: float, used, fits) -> bool:
    """A fitted centre on a feature that already explains another line (or on another fit's line)."""
    for f in used:
        if abs(centre - f.wavelength) <= max(2 * step, 0.5 * min(f.fwhm_A, fwhm_A)):
            return True
    return any(abs(centre - c) <= max(2 * step, 0.5 * min(w, fwhm_A)) for c, w in fits)


def _fit_fallback(pixels, lr: LineResult, r: dict, qso: bool = False, line: dict | None = None,
                  used=(), fits=None, passive: bool = False) -> None:
    w3 = r["fit"]["width_3sigma_A"]
    if lr.kind == "absorption":
        width = w3["wide_absorption"] if lr.group in ("Ca K", "Ca H", "Mg II") else w3["absorption"]
    else:
        width = w3.get(lr.width or "both", w3["both"])
        if qso and lr.width == "both":  # permitted lines of a QSO are broad
            width = w3["broad"]
    fit = fit_peak(pixels.wave, pixels.flux, lr.predicted, width, line_type=lr.kind, window_half=150.0)
    if not fit.get("ok") or fit["delta_chi2_per_n"] <= 0:
        return
    step = pixel_step(pixels, fit["center"])
    if _explained_elsewhere(fit["center"], fit["fwhm"], step, used, fits or []):
        return  # one feature, one line
    off = abs(fit["center"] - lr.predicted)
    snr = fit["local_snr"]
    if lr.kind == "emission" and (lr.width == "broad" or qso):
        snr = max(snr, fit["significance"])  # broad: the integrated significance (sqrt delta chi2)
    elif lr.kind == "absorption" and passive:  # a passive galaxy's troughs, a fraction of the continuum
        snr = max(snr, fit["significance"])  # deep over many pixels: the same
    ln = line or {"kind": lr.kind, "width": lr.width}
    tol = line_tolerance(pixels, ln, lr.predicted, fit["fwhm"], fit["fwhm_km_s"], snr)
    within = off <= tol and off <= 2 * max(fit["sigma"], fit["center_err"] or 0) + tol / 2
    if snr > r["fit"]["likely_local_snr"] and within and "center_at_bound" not in fit["flags"]:
        lr.status = "LIKELY"
    elif snr > r["fit"]["marginal_local_snr"] and off < r["matching"]["acceptable_offset_A"]:
        lr.status = "MARGINAL"
    else:
        return
    if fits is not None:
        fits.append((fit["center"], fit["fwhm"]))
    lr.source, lr.observed, lr.observed_err = "fit_peak", fit["center"], fit["center_err"]
    lr.amplitude, lr.fwhm_kms, lr.snr = fit["amplitude"], fit["fwhm_km_s"], snr


def line_sys_kms(ln: LineResult) -> float:
    """The scatter (km/s) of this kind of line about the systemic velocity."""
    fs = rules()["redshift_fit"]
    if ln.group in fs["group_sys_kms"]:
        return float(fs["group_sys_kms"][ln.group])
    return float(fs["sys_kms"][_allowance_kind({"kind": ln.kind, "width": ln.width}, ln.fwhm_kms)])


def _is_broad(ln: LineResult) -> bool:
    return ln.kind == "emission" and _allowance_kind({"kind": ln.kind, "width": ln.width}, ln.fwhm_kms) == "broad"


def template_z_err(hypothesis) -> float:
    """The 1-sigma of a template z: its statistical error when refined (else one template pixel)
    (+) the template's scatter about the catalogue z (kb/forma/rules.yaml
    redshift_fit.template_sys_kms, by template then class)."""
    from agents.tools.templates import LN_STEP
    sys_kms = rules()["redshift_fit"]["template_sys_kms"]
    tmpl = (getattr(hypothesis, "refined", None) or {}).get("template") or (
        f"{hypothesis.spectype}:{hypothesis.subtype}" if hypothesis.subtype else hypothesis.spectype)
    v = sys_kms.get(tmpl, sys_kms.get(hypothesis.spectype, 100.0))
    stat = getattr(hypothesis, "z_err", None)
    stat = stat / (1 + hypothesis.z) if stat else LN_STEP
    return float((1 + hypothesis.z) * np.hypot(stat, v / C_KMS))


BROAD_CONCERN = "broad lines offset"


def _systemic(res: HypothesisResult) -> None:
    """The systemic z from a joint fit of every credible line and the template: an inverse-variance
    mean of the per-line z (centroid errors (+) the line kind's scatter about systemic; C IV and C III]
    corrected for their mean blueshift, redshift_fit.shift_kms) and of the hypothesis's refined
    template z (template_z_err) where it is more precise than every line, dropping the worst while
    it lies > clip_sigma from the mean (3+ measurements), its error scaled by sqrt(chi2/dof) when
    they disagree beyond their errors, a class floor added in quadrature. Other high-ionisation
    lines (never_anchor) enter only through the template. With no credible line the template z
    stands alone. `anchor` names the
    top-priority low-ionisation line group (anchor_priority) among the lines used, None when the z
    rests on C IV, C III] and the template alone."""
    res.concerns = [c for c in res.concerns if not c.startswith(BROAD_CONCERN)]
    likely = [ln for ln in res.credible() if ln.observed is not None]
    if not likely:
        res.systemic_z, res.systemic_z_err, res.anchor, res.z_scatter = None, None, None, None
        return
    zs_all = np.array([ln.implied_z for ln in likely])
    res.z_scatter = float(np.std(zs_all)) if zs_all.size > 1 else 0.0
    never = set(rules()["never_anchor"])
    lines = [ln for ln in likely if ln.group not in never]
    if not lines:
        res.systemic_z, res.systemic_z_err, res.anchor = None, None, None
        return
    fs = rules()["redshift_fit"]
    shift = fs.get("shift_kms", {})
    zs = np.array([ln.implied_z - shift.get(ln.group, 0.0) / C_KMS * (1 + ln.implied_z) for ln in lines])
    sig = np.array([np.hypot((ln.observed_err if ln.observed_err and np.isfinite(ln.observed_err) else 1.0) / ln.rest,
                             line_sys_kms(ln) / C_KMS * (1 + z)) for ln, z in zip(lines, zs, strict=True)])
    h = res.hypothesis
    # the refined template z fits these same lines (and the continuum): not independent of them, it
    # enters only where it is more precise than every credible line (absorption, broad, C IV)
    if getattr(h, "refined", None) is not None and (t_err := template_z_err(h)) < sig.min():
        lines = [*lines, None]
        zs, sig = np.append(zs, h.z), np.append(sig, t_err)
    keep = np.ones(zs.size, dtype=bool)
    while True:
        w = 1 / sig[keep] ** 2
        zbar = float(np.sum(w * zs[keep]) / w.sum())
        r = (zs - zbar) / sig
        if keep.sum() <= 2:
            break
        worst = int(np.argmax(np.where(keep, np.abs(r), -1)))
        if abs(r[worst]) <= fs["clip_sigma"]:
            break
        keep[worst] = False
    n = int(keep.sum())
    err = float(np.sqrt(1 / np.sum(1 / sig[keep] ** 2)))
    if n > 1:
        err *= float(np.sqrt(max(1.0, np.sum(r[keep] ** 2) / (n - 1))))
    res.systemic_z = zbar
    res.systemic_z_err = float(np.hypot(err, fs["floor_kms"].get(res.spectype, 20) / C_KMS * (1 + zbar)))
    used = [ln for ln, k in zip(lines, keep, strict=True) if k and ln is not None and _anchor_rank(ln.group) < 99]
    ranked = sorted(used, key=lambda ln: (_anchor_rank(ln.group), -(ln.snr or 0)))
    res.anchor = ", ".join(sorted({ln.name for ln in ranked if ln.group == ranked[0].group})) if ranked else None
    lines = [ln for ln in lines if ln is not None]
    broad = [ln for ln in lines if _is_broad(ln)]
    narrow = [ln for ln in lines if not _is_broad(ln) and ln.kind == "emission"]
    if broad and narrow:
        dv = C_KMS * (np.mean([ln.implied_z for ln in broad]) - np.mean([ln.implied_z for ln in narrow])) / (1 + zbar)
        if abs(dv) >= fs["broad_narrow_concern_kms"]:
            res.concerns.append(f"{BROAD_CONCERN} {dv:+.0f} km/s from the narrow lines "
                                f"({', '.join(ln.name for ln in broad)}): the z is the narrow lines'")
