"""A template model of a spectrum at a given class and redshift, for drawing over the data (what
prospect and Marz show): each template of that class (Redrock PCA bases, or SpecReview's bundled
derivation of them) shifted to z and fitted to the data by weighted linear least squares, sampled at
the data's own wavelengths.

Which template: those whose redshift range holds z come first (Redrock's QSO-LOZ, rest 1330-9630 Å,
up to z 1.6; QSO-HIZ, rest 444-4497 Å, from z 1.4), then the one covering the most good pixels, then
the best chi2; so a QSO at z 0.2 is drawn with LOZ through H-alpha, not with HIZ stopping short of
H-beta. Pixels the chosen template leaves uncovered are filled by the next template of the class that
covers them, fitted on its own pixels (LOZ and HIZ in combination). A star's subtype (WD, M, "STAR:K")
names the stellar templates.
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


STAR_SUBTYPES = ("A", "B", "CV", "F", "G", "K", "M", "WD")


def spectype_of(object_class: str) -> str:
    """The template class of an object class: 'STAR', 'star', 'WD', 'STAR:M', 'STAR M' -> 'STAR'."""
    cls = str(object_class or "").strip().upper()
    head = cls.replace(":", " ").split()[0] if cls.replace(":", " ").split() else ""
    return "STAR" if head == "STAR" or cls in STAR_SUBTYPES else head


def _fit(t, wave, flux, ivar, z):
    """(model NaN outside the template's coverage, covered, number of good covered pixels, reduced chi2)."""
    rest = np.exp((t.start + np.arange(t.basis.shape[1])) * tpl.LN_STEP)
    observed = rest * (1.0 + z)
    covered = (wave >= observed[0]) & (wave <= observed[-1])
    good = covered & (ivar > 0) & np.isfinite(flux)
    if good.sum() < 50:
        return None
    basis = np.array([np.interp(wave, observed, b, left=np.nan, right=np.nan) for b in t.basis])
    sw = np.sqrt(ivar[good])
    coeff, *_ = np.linalg.lstsq((basis[:, good] * sw).T, flux[good] * sw, rcond=None)
    model = coeff @ np.nan_to_num(basis)
    model[~covered] = np.nan
    chi2 = float(np.sum(ivar[good] * (flux[good] - model[good]) ** 2)) / max(int(good.sum()) - len(coeff), 1)
    return model, covered, int(good.sum()), chi2


def template_model(wave, flux, ivar, spectype: str, z: float, templates=None) -> TemplateModel | None:
    """The template model of `spectype` at `z` (None: no template of that class covers enough of the
    spectrum, or too few good pixels); the template as the module says. `ivar` may be None (equal
    weights)."""
    wave, flux = np.asarray(wave, float), np.asarray(flux, float)
    ivar = np.ones_like(flux) if ivar is None else np.asarray(ivar, float)
    templates = tpl.resolve_templates() if templates is None else templates
    cls = spectype_of(spectype)
    fits = []
    for t in templates:
        if t.spectype != cls:
            continue
        fit = _fit(t, wave, flux, ivar, z)
        if fit is not None:
            in_range = t.z_range[0] - 0.01 <= z <= t.z_range[1] + 0.01
            fits.append(((not in_range, -fit[2], fit[3]), t, fit))
    if not fits:
        return None
    fits.sort(key=lambda f: f[0])
    _, best, (model, covered, _, chi2) = fits[0]
    model, covered = model.copy(), covered.copy()
    for _, _, (other, other_covered, _, _) in fits[1:]:
        fill = other_covered & ~covered
        if fill.any():
            model[fill] = other[fill]
            covered |= fill
    return TemplateModel(model, best.spectype, best.subtype, float(z), chi2)
