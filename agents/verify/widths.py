"""Line-width consistency for QSO hypotheses (issue 50, item 4): the CWT reads a narrow core on a broad
base as one narrow line (a QSO's H-alpha at 348 km/s), so the permitted lines of a QSO hypothesis
(kb/forma/audits.yaml broad_fit: H-alpha, H-beta, Mg II, C IV) are fitted with a broad Gaussian
under the narrow lines of the window. A significant broad component is recorded on the line
(broad_fwhm_kms, broad_delta_chi2) and counts as the class's broad-line evidence (QSO-NO-BROAD)."""
from __future__ import annotations

import kb
from agents.tools.linefit import fit_broad_component

C_KMS = 299792.458


def cfg() -> dict:
    return kb.load("forma/audits")["broad_fit"]


def fit_broad_lines(pixels, res) -> None:
    """Fit a broad component under each credible permitted line of a QSO hypothesis that was read
    narrower than a QSO's broad lines; record a significant one on the line."""
    if res.spectype != "QSO":
        return
    c = cfg()
    limit = kb.load("forma/rules")["widths"]["qso_fatal_below_kms"]
    z = res.systemic_z if res.systemic_z is not None else res.hypothesis.z
    for ln in res.lines:
        if ln.name not in c["lines"] or ln.status != "LIKELY" or (ln.fwhm_kms or 0) >= limit:
            continue
        centre = ln.rest * (1 + z)
        narrow = [((o.observed or o.predicted), (o.observed or o.predicted) * (o.fwhm_kms or c["narrow_default_kms"])
                   / C_KMS) for o in res.lines if o.kind == "emission" and (o.fwhm_kms or 0) < limit
                  and o.status in ("LIKELY", "MARGINAL")]
        fit = fit_broad_component(pixels.wave, pixels.flux, pixels.ivar, centre, narrow, c["fwhm_grid_kms"],
                                  c["offset_grid_kms"], c["window_kms"])
        if fit and fit["fwhm_kms"] and fit["delta_chi2"] >= c["min_delta_chi2"] and fit["fwhm_kms"] >= limit:
            ln.broad_fwhm_kms = round(fit["fwhm_kms"], 1)
            ln.broad_delta_chi2 = round(fit["delta_chi2"], 1)
