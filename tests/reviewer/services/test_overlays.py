"""An overlay is scaled to the spectrum on screen by the median flux where both have data."""
import astropy.units as u
import numpy as np
import pytest
from specutils import Spectrum

from reviewer.services.overlays import normalised_overlay


def spectrum(lo, hi, level, n=2000, bad=None):
    wave = np.linspace(lo, hi, n)
    flux = np.full(n, float(level)) + 0.1 * np.sin(wave / 50.0)
    mask = np.zeros(n, bool) if bad is None else bad(wave)
    return Spectrum(spectral_axis=wave * u.AA, flux=flux * u.dimensionless_unscaled, mask=mask)


def test_scaled_by_the_median_over_the_common_range():
    wave, flux = normalised_overlay(spectrum(3700, 9100, 1000.0), spectrum(3800, 9200, 4.0))
    assert wave[0] == 3800 and np.median(flux) == pytest.approx(1000.0, rel=1e-3)


def test_masked_pixels_are_gaps_and_no_common_range_is_none():
    _, flux = normalised_overlay(spectrum(3700, 9100, 10.0), spectrum(3700, 9100, 10.0, bad=lambda w: w > 8000))
    assert np.isnan(flux[-1]) and np.isfinite(flux[0])
    assert normalised_overlay(spectrum(3700, 5000, 10.0), spectrum(6000, 9000, 10.0)) is None
    assert normalised_overlay(spectrum(3700, 9100, 10.0), spectrum(3700, 9100, -3.0)) is None  # no positive level
