"""Factories for constructed verification cases (hypotheses, line results, pixels)."""
import numpy as np
import pytest
from shared_data import shared_data_dir


@pytest.fixture(scope="session")
def template_dir():
    base = shared_data_dir()
    if base is None or not (base / "redrock-templates").is_dir():
        pytest.skip("shared redrock-templates not found")
    return str(base / "redrock-templates")


@pytest.fixture
def make_pixels():
    from agents.tools.features import pixels_from_arrays

    def make(wmin=3800.0, wmax=9200.0, n=4000, snr=20.0, lines=(), seed=0):
        """Flat continuum 10 with Gaussian lines [(centre, fwhm_A, amplitude)] and noise 10/snr."""
        rng = np.random.default_rng(seed)
        w = np.geomspace(wmin, wmax, n)
        f = np.full(n, 10.0)
        for c, fwhm, amp in lines:
            f += amp * np.exp(-0.5 * ((w - c) / (fwhm / 2.3548)) ** 2)
        sigma = 10.0 / snr
        f += rng.normal(0, sigma, n)
        return pixels_from_arrays(w, f, np.full(n, 1 / sigma**2))
    return make


@pytest.fixture
def make_line():
    from agents.verify.analysis import LineResult

    def make(name, rest, kind="emission", width="narrow", group=None, status="LIKELY", z=0.1, observed=None,
             fwhm_kms=300.0, snr=20.0, amplitude=5.0, ridge=8, key=True):
        pred = rest * (1 + z)
        obs = pred if observed is None and status in ("LIKELY", "MARGINAL") else observed
        return LineResult(name, rest, kind, width, group or name, key, pred, status=status,
                          source="CWT" if obs else "", observed=obs, observed_err=1.0 if obs else None,
                          amplitude=amplitude if obs else None, fwhm_kms=fwhm_kms if obs else None,
                          snr=snr if obs else None, ridge_length=ridge if obs else None)
    return make


@pytest.fixture
def make_result():
    from agents.tools.hypotheses import Hypothesis
    from agents.verify.analysis import HypothesisResult, _systemic

    def make(spectype, z, lines, idx=0, delta_chi2=0.0):
        res = HypothesisResult(idx, Hypothesis(z, spectype, delta_chi2=delta_chi2, score=100 / (1 + delta_chi2)),
                               list(lines))
        _systemic(res)
        return res
    return make
