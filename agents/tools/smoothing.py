"""Smoothing of what the viewer draws: Gaussian in pixels, optionally inverse-variance weighted.

The width is in pixels, one for all (`sigma_px` a number) or one per pixel (an array: a width in
Angstrom divided by the local dispersion, `sigma_in_pixels`, as prospect offers both units; on a
log-linear grid such as LAMOST's a pixel spans ~2.4x more Angstrom in the red than in the blue).

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


def sigma_in_pixels(wave, sigma_aa: float) -> np.ndarray:
    """A Gaussian sigma in Angstrom as one in pixels at each pixel: sigma_aa / (local dispersion)."""
    disp = np.abs(np.gradient(np.asarray(wave, dtype=float)))
    return sigma_aa / np.where(disp > 0, disp, np.inf)


def _varying(values: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Convolution of `values` with a Gaussian whose sigma (pixels) is the output pixel's own, cut at
    ceil(4 sigma) and zero beyond the ends, as `gaussian_kernel` with convolve1d(mode="constant")."""
    sigma = np.clip(sigma, 1e-3, None)
    halves = np.maximum(1, np.ceil(4.0 * sigma - 1e-6)).astype(int)  # 4 x 2.0000001 px is 8, as for 2 px
    half = int(halves.max())
    padded = np.pad(values, half)
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    x = np.arange(-half, half + 1, dtype=float)
    kernel = np.exp(-0.5 * (x[None, :] / sigma[:, None]) ** 2) * (np.abs(x[None, :]) <= halves[:, None])
    kernel /= kernel.sum(axis=1, keepdims=True)
    return np.einsum("ij,ij->i", windows, kernel)


def smooth_flux(flux, ivar=None, mask=None, *, mode: str = "gaussian", sigma_px=2.0) -> np.ndarray:
    """Return the smoothed flux (same length; NaN where nothing good is in reach). `sigma_px`: a
    number, or one width per pixel (`sigma_in_pixels`).

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
    varying = np.ndim(sigma_px) > 0
    if varying and np.size(sigma_px) and np.ptp(sigma_px) <= 1e-6 * np.max(sigma_px):
        sigma_px, varying = float(np.mean(sigma_px)), False  # one width (a linear grid: DESI): the fast path
    if mode == "none" or (not varying and sigma_px <= 0):
        return np.where(good, flux, np.nan)
    if mode == "ivar" and ivar is not None:
        weight = np.where(good, ivar, 0.0)
    else:
        weight = good.astype(float)
    if varying:
        sigma = np.asarray(sigma_px, dtype=float)
        num = _varying(np.where(good, flux, 0.0) * weight, sigma)
        den = _varying(weight, sigma)
    else:
        kernel = gaussian_kernel(float(sigma_px))
        num = convolve1d(np.where(good, flux, 0.0) * weight, kernel, mode="constant")
        den = convolve1d(weight, kernel, mode="constant")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[den <= 0] = np.nan
    return out
