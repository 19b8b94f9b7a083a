"""Real spectra degraded to a chosen S/N per pixel (issue 50, item 5): Gaussian noise of a fixed seed
is added and the inverse variance replaced by the new noise, so the pipeline measures the S/N it is
given, as it would on a fainter exposure of the same star."""
from __future__ import annotations

import numpy as np
from astropy.nddata import InverseVariance
from scipy.ndimage import median_filter
from specutils import Spectrum

from agents.tools.measure import Arrays

LEVEL_PIXELS = 101  # the flux level the S/N refers to: a running median over ~100 A (lines and continuum)


def degrade(spectrum, snr: float, seed: int = 0) -> Spectrum:
    """`spectrum` with noise added until each good pixel's S/N (local flux level / sigma) is `snr`
    (pixels already noisier keep their noise); ivar = 1 / the new variance; the mask unchanged."""
    a = Arrays.from_spectrum(spectrum)
    wave = spectrum.spectral_axis
    order = np.argsort(wave.value, kind="stable")
    if not np.array_equal(order, np.arange(order.size)):
        raise ValueError("expected a spectrum sorted by wavelength")
    good = a.good
    level = np.zeros_like(a.flux)
    level[good] = np.abs(median_filter(a.flux[good], size=LEVEL_PIXELS, mode="nearest"))
    old_var = np.zeros_like(a.flux)
    if a.ivar is not None:
        old_var[good] = 1.0 / a.ivar[good]
    target_var = (level / snr) ** 2
    extra = np.sqrt(np.clip(target_var - old_var, 0.0, None))
    rng = np.random.default_rng(seed)
    flux = a.flux + np.where(good, extra * rng.normal(size=a.flux.size), 0.0)
    new_var = np.maximum(target_var, old_var)
    ivar = np.where(good & (new_var > 0), 1.0 / np.where(new_var > 0, new_var, 1.0), 0.0)
    unit = spectrum.flux.unit
    return Spectrum(spectral_axis=wave, flux=flux * unit, mask=None if spectrum.mask is None else spectrum.mask,
                    uncertainty=InverseVariance(ivar, unit=unit ** -2), meta=dict(spectrum.meta))
