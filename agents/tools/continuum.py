"""Visual interpreter, part 2: the continuum (astropy Chebyshev, degree chosen automatically) and a
plain-language description of its shape (FORMA 2.2)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from astropy.modeling import fitting, models
from scipy.stats import skew

MAX_DEGREE = 10


@dataclass
class Continuum:
    degree: int
    model: np.ndarray  # continuum at every good pixel
    score: float
    description: str

    def as_dict(self) -> dict:
        return {"degree": self.degree, "score": round(self.score, 4), "description": self.description}


def _feature_mask(wave: np.ndarray, features) -> np.ndarray:
    """True where a pixel is free of features (+-3 sigma, sigma = FWHM/2.355)."""
    keep = np.ones(wave.size, dtype=bool)
    for f in features:
        half = 3 * f.fwhm_A / 2.355
        keep &= ~((wave >= f.wavelength - half) & (wave <= f.wavelength + half))
    return keep


def degree_score(residual: np.ndarray, scale: float, degree: int) -> float:
    """FORMA criterion 10*MAD + 5*(|skew| - 0.5)^2 + 0.2*deg on residuals trimmed at their 95th
    percentile; residuals are divided by the median |flux| so the MAD term is unit-free."""
    r = residual / scale
    r = r[np.abs(r) <= np.percentile(np.abs(r), 95)]
    if r.size < 5:
        return np.inf
    mad = float(np.median(np.abs(r - np.median(r))))
    sk = float(skew(r)) if np.std(r) > 0 else 0.0
    return 10 * mad + 5 * (abs(sk) - 0.5) ** 2 + 0.2 * degree


def fit_continuum(wave: np.ndarray, flux: np.ndarray, features=()) -> Continuum:
    if wave.size < MAX_DEGREE + 2:
        return Continuum(0, np.full(wave.size, float(np.median(flux)) if flux.size else 0.0), float("inf"),
                         "Too few good pixels to measure a continuum.")
    keep = _feature_mask(wave, features)
    if keep.sum() < 20:
        keep = np.ones(wave.size, dtype=bool)
    x = wave[keep]
    y = flux[keep]
    scale = float(np.median(np.abs(flux))) or 1.0
    fitter = fitting.LinearLSQFitter()
    best = None
    for deg in range(1, MAX_DEGREE + 1):
        # astropy Chebyshev1D on a domain mapped to [-1, 1] (well conditioned up to degree 10)
        model = models.Chebyshev1D(deg, domain=(float(wave[0]), float(wave[-1])))
        fitted = fitter(model, x, y)
        score = degree_score(y - fitted(x), scale, deg)
        if best is None or score < best[0]:
            best = (score, deg, fitted)
    score, deg, fitted = best
    cont = fitted(wave)
    return Continuum(deg, cont, float(score), describe(wave, cont))


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def describe(wave: np.ndarray, cont: np.ndarray, n_samples: int = 200) -> str:
    """Monotonic intervals of the continuum in one sentence (short wiggles < 5 % of the range merged)."""
    if wave.size < 2:
        return "No continuum could be measured."
    grid = np.linspace(wave[0], wave[-1], n_samples)
    val = np.interp(grid, wave, cont)
    sign = np.sign(np.diff(val))
    sign[sign == 0] = 1
    segments = []  # [start_idx, end_idx, sign]
    for i, s in enumerate(sign):
        if segments and segments[-1][2] == s:
            segments[-1][1] = i + 1
        else:
            segments.append([i, i + 1, s])
    min_len = max(1, int(0.05 * n_samples))
    merged: list[list] = []
    for seg in segments:
        if merged and (seg[1] - seg[0] < min_len or merged[-1][2] == seg[2]):
            merged[-1][1] = seg[1]
        else:
            merged.append(seg)
    parts = [f"The continuum has a value of {_fmt(val[0])} at {grid[0]:.0f} Å"]
    for a, b, s in merged:
        word = "increases" if s > 0 else "decreases"
        parts.append(f"monotonically {word} from {grid[a]:.0f} Å to {grid[b]:.0f} Å, "
                     f"reaching {_fmt(val[b])} at {grid[b]:.0f} Å")
    return ", ".join(parts[:1]) + ", " + "; ".join(parts[1:]) + "."
