"""An answer only where the data can decide (issue 50, item 5). Real corpus stars answered YES as
observed, degraded to S/N 0.5, 1 and 2 per pixel (fixed-seed Gaussian noise, ivar replaced:
tests/degrade.py), are refused as too noisy for the task or answered YES, never a NO the noise made;
pure noise is never called high-quality; a white dwarf question that the windows present already
answer NO is answered, not refused for a window the spectrum lacks."""
from __future__ import annotations

import numpy as np
import pytest
from astropy.nddata import InverseVariance
from degrade import degrade
from specutils import Spectrum

import kb
from agents.spectra import read_spectrum
from agents.tools.judgeable import assess, quality_label
from agents.tools.measure import Arrays
from agents.trajectory import UNJUDGEABLE
from agents.verify import verify_spectrum
from agents.vet import vet_spectrum

A2_STAR = "lamost_astrospectro/spec-55862-B6212_sp01-010.fits.gz"  # LAMOST A2IV, task a: YES
DA_WHITE_DWARF = "sdss_wdtools/sample_spectrum.fits"  # SDSS BOSS DA (WDhotter), task wd: YES
K7_NO_HDELTA = "lamost_learninglamost/spec-55862-B6212_sp06-128.fits"  # LAMOST K7, H-delta masked
SEEDS = (0, 1, 2)


def _read(shared_spectra, relative):
    path = shared_spectra / relative
    if not path.is_file():
        pytest.skip(f"{relative} missing from the shared corpus")
    return read_spectrum(path)


@pytest.fixture(scope="module")
def observed(shared_spectra):
    return {"a": _read(shared_spectra, A2_STAR), "wd": _read(shared_spectra, DA_WHITE_DWARF)}


@pytest.fixture(scope="module")
def pure_noise(shared_spectra):
    """The A2 star's pixels and errors with its flux replaced by noise of those errors: no signal at all."""
    star = _read(shared_spectra, A2_STAR)
    ivar = star.uncertainty.array
    sigma = np.where(ivar > 0, 1.0 / np.sqrt(np.where(ivar > 0, ivar, 1.0)), 0.0)
    flux = np.random.default_rng(0).normal(size=ivar.size) * sigma
    return Spectrum(spectral_axis=star.spectral_axis, flux=flux * star.flux.unit, mask=star.mask,
                    uncertainty=InverseVariance(ivar, unit=star.flux.unit ** -2), meta=dict(star.meta))


def test_pure_noise_is_never_called_high_quality(pure_noise):
    traj = verify_spectrum(pure_noise)
    report = traj.outcome.get("report") or next(s.text for s in traj.steps if s.kind == "answer")
    assert "median S/N 0.7" in report  # measured: |noise| / sigma has median 0.67
    assert "spectrum quality noise-dominated" in report and "high-quality" not in report
    judged = assess(Arrays.from_spectrum(pure_noise), kb.task("a"))
    assert judged.as_data()["quality"] == "noise-dominated"


def test_the_quality_rule():
    assert [quality_label(s) for s in (None, float("nan"), -0.3, 0.67, 1.99, 2.0, 4.99, 5.0, 80.0)] == [
        "noise-dominated", "noise-dominated", "noise-dominated", "noise-dominated", "noise-dominated", "marginal",
        "marginal", "high-quality", "high-quality"]


def test_the_stars_are_answered_yes_as_observed(observed):
    for task_id, star in observed.items():
        assert vet_spectrum(star, task_id).outcome["prediction"] == "YES", task_id


@pytest.mark.parametrize("task_id", ["a", "wd"])
@pytest.mark.parametrize("snr", [0.5, 1.0, 2.0])
def test_a_degraded_star_is_refused_or_answered_yes_never_no(observed, task_id, snr):
    task = kb.task(task_id)
    for seed in SEEDS:
        noisy = degrade(observed[task_id], snr, seed)
        judged = assess(Arrays.from_spectrum(noisy), task)
        assert judged.snr is not None and judged.snr < 1.5 * snr + 0.3  # the pipeline measures the new noise
        out = vet_spectrum(noisy, task_id).outcome
        if out["status"] == UNJUDGEABLE:
            assert out.get("prediction") is None and out["judgeable"]["judgeable"] is False
            if snr >= 1.0:  # above the no-signal floor: refused because the task's features drown
                assert f"S/N too low to decide {task['name']}" in out["reason"], out["reason"]
        else:
            assert out["prediction"] == "YES", (seed, out.get("margin"))


def test_a_white_dwarf_question_the_windows_present_decide_is_answered_no(shared_spectra):
    """A LAMOST K7 star whose H-delta pixels are masked: the mean of three Balmer lines cannot be formed,
    but the two present, H-gamma and H-beta, hold no absorption (their mean many sigma below the 12 A a
    DA's lines each exceed): the answer is NO, not a refusal for the missing H-delta."""
    k7 = _read(shared_spectra, K7_NO_HDELTA)
    traj = vet_spectrum(k7, "wd")
    assert traj.outcome["status"] == "answered" and traj.outcome["prediction"] == "NO"
    judged = traj.outcome["judgeable"]
    assert judged["missing"] == ["H-delta equivalent width"] and judged["judgeable"] is True
    assert "lines present (H-gamma equivalent width, H-beta equivalent width)" in judged["decided_no"]
