"""Another spectrum of the same object drawn over the one on screen: normalised to it.

Epochs and surveys differ in flux calibration (LAMOST is relative, SDSS and DESI absolute, a second
epoch may have lost light at the fibre), so an overlay is scaled by the ratio of the two spectra's
median flux over the wavelengths both cover: its shape is compared, not its level.
"""
from __future__ import annotations

import numpy as np

MAX_OVERLAY_POINTS = 8000  # per overlay sent to the browser (every survey here has fewer pixels)


def _arrays(spec) -> tuple[np.ndarray, np.ndarray]:
    wave = np.asarray(spec.spectral_axis.to_value("Angstrom"), dtype=float)
    flux = np.asarray(spec.flux.value, dtype=float).copy()
    if spec.mask is not None:
        flux[np.asarray(spec.mask, bool)] = np.nan
    return wave, flux


def _median_between(wave, flux, lo, hi) -> float | None:
    inside = (wave >= lo) & (wave <= hi) & np.isfinite(flux)
    return float(np.median(flux[inside])) if inside.sum() >= 20 else None


def normalised_overlay(reference, other) -> tuple[np.ndarray, np.ndarray] | None:
    """(observed wavelength, flux scaled to `reference`) of `other`; None when the two share too few
    usable pixels (fewer than 20 each) or a median is not positive."""
    ref_wave, ref_flux = _arrays(reference)
    wave, flux = _arrays(other)
    if ref_wave.size == 0 or wave.size == 0:
        return None
    lo, hi = max(ref_wave[0], wave[0]), min(ref_wave[-1], wave[-1])
    ref_level, level = _median_between(ref_wave, ref_flux, lo, hi), _median_between(wave, flux, lo, hi)
    if not ref_level or not level or ref_level <= 0 or level <= 0:
        return None
    step = max(1, int(np.ceil(wave.size / MAX_OVERLAY_POINTS)))
    return wave[::step], flux[::step] * (ref_level / level)
