"""A template model of a spectrum at a given class and redshift, for drawing over the data (what
prospect and Marz show): each template of that class (Redrock PCA bases, or SpecReview's bundled
derivation of them) shifted to z and fitted to the data by weighted linear least squares; the
best fit by chi2 is the model, sampled at the data's own wavelengths.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.tools import templates as tpl


@dataclass(frozen=True)
class TemplateModel:
    flux: np.ndarray  # on the data's wavelengths; NaN outside the template's coverage
    spectype: str
    subtype: str
    z: float
    reduced_chi2: float


def template_model(wave, flux, ivar, spectype: str, z: float, templates=None) -> TemplateModel | None:
    """The best-fitting template model of `spectype` at `z` (None: no template of that class covers
    enough of the spectrum, or too few good pixels). `ivar` may be None (equal weights)."""
    wave, flux = np.asarray(wave, float), np.asarray(flux, float)
    ivar = np.ones_like(flux) if ivar is None else np.asarray(ivar, float)
    templates = tpl.resolve_templates() if templates is None else templates
    best = None
    for t in templates:
        if t.spectype != str(spectype).upper():
            continue
        rest = np.exp((t.start + np.arange(t.basis.shape[1])) * tpl.LN_STEP)
        observed = rest * (1.0 + z)
        covered = (wave >= observed[0]) & (wave <= observed[-1])
        good = covered & (ivar > 0) & np.isfinite(flux)
        if good.sum() < 50:
            continue
        basis = np.array([np.interp(wave, observed, b, left=np.nan, right=np.nan) for b in t.basis])
        sw = np.sqrt(ivar[good])
        coeff, *_ = np.linalg.lstsq((basis[:, good] * sw).T, flux[good] * sw, rcond=None)
        model = coeff @ np.nan_to_num(basis)
        model[~covered] = np.nan
        chi2 = float(np.sum(ivar[good] * (flux[good] - model[good]) ** 2)) / max(int(good.sum()) - len(coeff), 1)
        if best is None or chi2 < best.reduced_chi2:
            best = TemplateModel(model, t.spectype, t.subtype, float(z), chi2)
    return best
