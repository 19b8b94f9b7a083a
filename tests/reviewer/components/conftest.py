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


@pytest.fixture
def desi_galaxy(demo_store, wait_for_background_renders):
    """The test's own copy of the demo database, with the review state on the DESI galaxy's verify item
    and a SpectrumPlot bound to it (the z tab, the View tab and the VI form tests start there; some
    save labels, so no two tests share one)."""
    from reviewer.components.spectrum_plot import SpectrumPlot
    from reviewer.review_state import ReviewState

    tid = next(r["trajectory_id"] for r in demo_store.queue.queue_items(task="verify", limit=100)
               if r["survey"] and "DESI" in r["survey"].upper() and r["pipeline_class"] == "GALAXY")
    state = ReviewState(demo_store, reviewer="ann")
    assert state.open_item(trajectory_id=tid)
    yield state, SpectrumPlot(state=state)
    wait_for_background_renders()
