import astropy.units as u
import numpy as np
import pytest
from astropy.nddata import InverseVariance
from specutils import Spectrum


@pytest.fixture
def synthetic_spectrum():
    """A simple stellar-like spectrum with an H-alpha absorption line, a masked pixel and a spike."""
    wave = np.linspace(3800.0, 9000.0, 3000)
    flux = 100.0 - 40.0 * np.exp(-0.5 * ((wave - 6564.6) / 4.0) ** 2)
    flux[1500] = 1e5  # a cosmic ray
    ivar = np.full_like(flux, 4.0)
    mask = np.zeros(flux.shape, bool)
    mask[1500] = True
    return Spectrum(spectral_axis=wave * u.AA, flux=flux * u.Unit("1e-17 erg / (s cm2 Angstrom)"),
                    uncertainty=InverseVariance(ivar), mask=mask,
                    meta={"source_path": "synthetic.fits", "object_id": "42"})
