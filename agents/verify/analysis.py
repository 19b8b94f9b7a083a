"""Step 2: test one redshift hypothesis against the spectrum, line by line (FORMA 2.4).

For every line the class predicts inside the coverage: a CWT feature of the right sign near the
predicted wavelength (offset < 20 A LIKELY, 20-80 A MARGINAL, widths consistent), else a Gaussian fit
(LIKELY with delta chi2/n > 0, local S/N > 10 and a centre within 2 sigma), else NOT_FOUND, or MASKED
when the window has no good data. The systemic z comes from the lowest-ionisation LIKELY line.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import kb
from agents.tools.linefit import fit_peak

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


def analyse(pixels, features, hypothesis, idx: int = 0, *, use_fits: bool = True) -> HypothesisResult:
    r = rules()
    m = r["matching"]
    z = hypothesis.z
    cls = hypothesis.spectype
    res = HypothesisResult(idx, hypothesis)
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
        zlo, zhi = z - m["hypothesis_window_dz"], z + m["hypothesis_window_dz"]
        near = [f for f in features if f.kind == ln["kind"]
                and abs(f.wavelength - pred) <= m["acceptable_offset_A"]
                and zlo <= f.wavelength / ln["rest"] - 1 <= zhi]
        if near:
            f = min(near, key=lambda f: abs(f.wavelength - pred) / max(f.snr, 1.0) ** 0.25)
            off = abs(f.wavelength - pred)
            ok_width = width_consistent(ln.get("width"), ln["kind"], f.fwhm_kms)
            lr.status = "LIKELY" if off < m["excellent_offset_A"] and ok_width else "MARGINAL"
            lr.source, lr.observed, lr.observed_err = "CWT", f.wavelength, f.wavelength_err
            lr.amplitude, lr.fwhm_kms, lr.snr, lr.ridge_length = f.amplitude, f.fwhm_kms, f.snr, f.ridge_length
            continue
        if use_fits and ln["key"]:
            _fit_fallback(pixels, lr, r, qso=cls == "QSO")
    _systemic(res)
    res.dn4000 = dn4000(pixels, z)
    return res


def _fit_fallback(pixels, lr: LineResult, r: dict, qso: bool = False) -> None:
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
    off = abs(fit["center"] - lr.predicted)
    within = off < r["matching"]["excellent_offset_A"] and off <= 2 * max(fit["sigma"], fit["center_err"] or 0)
    snr = fit["local_snr"]
    if lr.kind == "emission" and (lr.width == "broad" or qso):
        snr = max(snr, fit["significance"])  # broad: the integrated significance (sqrt delta chi2)
    if snr > r["fit"]["likely_local_snr"] and within and "center_at_bound" not in fit["flags"]:
        lr.status = "LIKELY"
    elif snr > r["fit"]["marginal_local_snr"] and off < r["matching"]["acceptable_offset_A"]:
        lr.status = "MARGINAL"
    else:
        return
    lr.source, lr.observed, lr.observed_err = "fit_peak", fit["center"], fit["center_err"]
    lr.amplitude, lr.fwhm_kms, lr.snr = fit["amplitude"], fit["fwhm_km_s"], snr


def _systemic(res: HypothesisResult) -> None:
    """z from the lowest-ionisation LIKELY line group (ivar-weighted mean within the group)."""
    likely = [ln for ln in res.credible() if ln.observed is not None]
    if not likely:
        res.systemic_z, res.anchor, res.z_scatter = None, None, None
        return
    zs = np.array([ln.implied_z for ln in likely])
    res.z_scatter = float(np.std(zs)) if zs.size > 1 else 0.0
    never = set(rules()["never_anchor"])
    ranked = sorted((ln for ln in likely if ln.group not in never),
                    key=lambda ln: (_anchor_rank(ln.group), -(ln.snr or 0)))
    if not ranked:
        res.systemic_z, res.anchor = None, None
        return
    top_rank = _anchor_rank(ranked[0].group)
    group = [ln for ln in ranked if _anchor_rank(ln.group) == top_rank and ln.group == ranked[0].group]
    wts = np.array([max(ln.snr or 1.0, 1.0) for ln in group])
    zg = np.array([ln.implied_z for ln in group])
    res.systemic_z = float(np.sum(wts * zg) / wts.sum())
    errs = [((ln.observed_err or 1.0) / ln.rest) for ln in group]
    res.systemic_z_err = float(np.sqrt(np.sum(np.square(errs))) / len(errs))
    res.anchor = ", ".join(sorted({ln.name for ln in group}))
