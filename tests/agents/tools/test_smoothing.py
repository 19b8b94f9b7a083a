import numpy as np
import pytest

from agents.tools.smoothing import gaussian_kernel, smooth_flux


def test_kernel_normalised_and_symmetric():
    k = gaussian_kernel(2.0)
    assert k.sum() == pytest.approx(1.0)
    assert np.allclose(k, k[::-1])


def test_gaussian_preserves_a_constant_and_ignores_masked_pixels():
    flux = np.full(200, 5.0)
    flux[100] = 1e6  # a cosmic ray, masked
    mask = np.zeros(200, bool)
    mask[100] = True
    out = smooth_flux(flux, mask=mask, mode="gaussian", sigma_px=3)
    assert np.allclose(out, 5.0)


def test_ivar_weighting_pulls_towards_the_precise_pixels():
    flux = np.r_[np.full(50, 1.0), np.full(50, 3.0)]
    ivar = np.r_[np.full(50, 100.0), np.full(50, 1.0)]
    plain = smooth_flux(flux, ivar, mode="gaussian", sigma_px=5)[50]
    weighted = smooth_flux(flux, ivar, mode="ivar", sigma_px=5)[50]
    assert weighted < plain  # the low-noise side dominates


def test_none_mode_blanks_bad_pixels_only():
    flux = np.arange(10.0)
    ivar = np.ones(10)
    ivar[3] = 0
    out = smooth_flux(flux, ivar, mode="none")
    assert np.isnan(out[3]) and np.allclose(np.delete(out, 3), np.delete(flux, 3))


def test_fully_masked_neighbourhood_stays_nan():
    flux = np.ones(100)
    mask = np.zeros(100, bool)
    mask[40:60] = True
    out = smooth_flux(flux, mask=mask, mode="gaussian", sigma_px=1)
    assert np.isnan(out[50]) and np.isfinite(out[10])


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="unknown smoothing mode"):
        smooth_flux(np.ones(3), mode="boxcar")
