"""Smoothing of what the viewer draws: Gaussian in pixels, optionally inverse-variance weighted.

Masked pixels (mask True, ivar <= 0 or non-finite flux) carry no weight, so a bad pixel never
leaks into its neighbours; a pixel whose whole kernel is masked stays NaN.
"""
from __future__ import annotations

import numpy as np
from scipy.ndimage import convolve1d

SMOOTHING_MODES = ("none", "gaussian", "ivar")


def gaussian_kernel(sigma_px: float) -> np.ndarray:
    half = max(1, int(np.ceil(4.0 * sigma_px)))
    x = np.arange(-half, half + 1, dtype=float)
    k = np.exp(-0.5 * (x / sigma_px) ** 2)
    return k / k.sum()


def smooth_flux(flux, ivar=None, mask=None, *, mode: str = "gaussian", sigma_px: float = 2.0) -> np.ndarray:
    """Return the smoothed flux (same length; NaN where nothing good is in reach).

    mode "none" returns the flux with bad pixels set to NaN; "gaussian" weights good pixels
    equally; "ivar" weights each pixel by its inverse variance (what prospect calls ivar smoothing).
    """
    if mode not in SMOOTHING_MODES:
        raise ValueError(f"unknown smoothing mode {mode!r}; use one of {SMOOTHING_MODES}")
    flux = np.asarray(flux, dtype=float)
    good = np.isfinite(flux)
    if mask is not None:
        good &= ~np.asarray(mask, dtype=bool)
    if ivar is not None:
        ivar = np.asarray(ivar, dtype=float)
        good &= np.isfinite(ivar) & (ivar > 0)
    if mode == "none" or sigma_px <= 0:
        return np.where(good, flux, np.nan)
    if mode == "ivar" and ivar is not None:
        weight = np.where(good, ivar, 0.0)
    else:
        weight = good.astype(float)
    kernel = gaussian_kernel(float(sigma_px))
    num = convolve1d(np.where(good, flux, 0.0) * weight, kernel, mode="constant")
    den = convolve1d(weight, kernel, mode="constant")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[den <= 0] = np.nan
    return out
