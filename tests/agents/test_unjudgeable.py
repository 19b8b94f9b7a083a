"""A spectrum too poor to judge is refused, not answered (issue 20, item 2): the one rule of
agents/tools/judgeable.py gives the vet agent (every backend) and the verify agent an "unjudgeable"
outcome with its reason, recorded as a trajectory, never a NO. Real files: an SDSS spectrum whose every
pixel is NODATA (ivar 0), a DESI sky fibre (FIBERMAP OBJTYPE SKY, no valid pixel in the coadd), a
LAMOST MRS spectrum that does not reach the lines of task `a`; and, as the judgeable control, a LAMOST
A star (bundled demo) and the same star with its signal drowned."""
from __future__ import annotations

import json

import pytest
from astropy.nddata import InverseVariance
from specutils import Spectrum

import kb
from agents.spectra import read_spectrum
from agents.tools.judgeable import MIN_USABLE_PIXELS, MIN_WINDOW_SNR, assess
from agents.tools.measure import Arrays
from agents.trajectory import UNJUDGEABLE
from agents.verify import verify_spectrum
from agents.vet import vet_spectrum

ALL_MASKED_SDSS = "sdss_gelato/spec-0269-51581-0003.fits"  # ZWARNING 6, SN_MEDIAN_ALL 0: every pixel NODATA
DESI_SKY = ("desi_specutils/coadd-sv3-dark-26065.fits", "616088619186127404")  # OBJTYPE SKY
LAMOST_MRS = "lamost_laspec/med-58268-HIP95119KP01_sp12-076.fits.gz"  # 4950-5350 and 6300-6800 A only
A_STAR = "spec-55862-B6212_sp01-001.fits.gz"  # LAMOST A1IV, bundled with the demo


def _real(shared_spectra, relative, target=None):
    path = shared_spectra / relative
    if not path.is_file():
        pytest.skip(f"{relative} missing from the shared corpus")
    return read_spectrum(path, target)


@pytest.fixture(scope="module")
def sdss_all_masked(shared_spectra):
    return _real(shared_spectra, ALL_MASKED_SDSS)


@pytest.fixture(scope="module")
def desi_sky(shared_spectra):
    spec = _real(shared_spectra, *DESI_SKY)
    assert spec.meta["objtype"] == "SKY"  # the fibre was placed on blank sky
    return spec


@pytest.fixture(scope="module")
def a_star(demo_dir):
    return read_spectrum(demo_dir / A_STAR)


def _refused(traj, *words):
    """An unjudgeable trajectory: status, a reason naming `words`, no answer anywhere, no NaN."""
    out = traj.outcome
    assert out["status"] == UNJUDGEABLE, out
    assert all(w in out["reason"] for w in words), out["reason"]
    assert out.get("prediction") is None and "answer" not in out and "type" not in out
    assert out["judgeable"]["judgeable"] is False
    final = [s for s in traj.steps if s.kind == "answer"]
    assert len(final) == 1 and final[0].answer == {"status": UNJUDGEABLE, "reason": out["reason"]}
    assert not any("boxed" in s.text for s in traj.steps if s.kind in ("think", "answer"))
    text = traj.to_json()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)  # plain JSON


def test_the_rule_on_the_all_masked_sdss_file(sdss_all_masked):
    judged = assess(Arrays.from_spectrum(sdss_all_masked), kb.task("a"))
    assert not judged.judgeable and judged.usable_pixels == 0 and judged.pixels == 3872
    assert "0 usable pixels of 3872" in judged.reason and str(MIN_USABLE_PIXELS) in judged.reason


@pytest.mark.parametrize("task_id", sorted(kb.tasks()))
def test_vetting_refuses_the_all_masked_sdss_spectrum_for_every_task(sdss_all_masked, task_id):
    traj = vet_spectrum(sdss_all_masked, task_id)
    _refused(traj, "0 usable pixels")
    assert traj.outcome["tool_calls"] == 0 and traj.agent.backend == "rules"
    assert [s.kind for s in traj.steps] == ["prompt", "think", "answer"]  # the overview, the reason, the refusal


def test_vetting_and_verification_refuse_a_desi_sky_fibre(desi_sky):
    _refused(vet_spectrum(desi_sky, "a"), "0 usable pixels")
    verified = verify_spectrum(desi_sky)
    _refused(verified, "0 usable pixels")
    assert verified.task == "verify" and verified.agent.name == "verify"
    assert verified.outcome.get("z") is None and verified.outcome.get("redshift") is None
    # readers of FORMA briefs (specreview verify --json, the evaluations) see no class and a human to look
    assert verified.outcome["brief"] == {"type": "UNKNOWN", "feature_score": 0, "redshift": None, "redshift_rms": None,
                                         "lines": "", "credibility": "LOW", "human_review": "Yes",
                                         "verdict": "UNJUDGEABLE"}


def test_verification_refuses_the_all_masked_sdss_spectrum(sdss_all_masked):
    _refused(verify_spectrum(sdss_all_masked), "0 usable pixels")


def test_an_llm_is_not_asked_about_an_unjudgeable_spectrum(openai_server, desi_sky):
    from agents.llm import LLMConfig

    cfg = LLMConfig(base_url=openai_server.base_url, model="spec-o3-test", api_key="sk-test", timeout=2.0,
                    max_retries=0, backoff=0.01, total_timeout=10.0)
    traj = vet_spectrum(desi_sky, "a", backend="openai", llm_config=cfg)
    _refused(traj, "0 usable pixels")
    assert traj.agent.backend == "openai" and openai_server.requests == []


def test_a_spectrum_that_misses_the_tasks_lines_is_refused_for_that_task(shared_spectra):
    mrs = _real(shared_spectra, LAMOST_MRS)
    traj = vet_spectrum(mrs, "a")
    _refused(traj, "does not cover", "H-delta equivalent width")
    judged = traj.outcome["judgeable"]  # the blue arm starts at 4950 A: no Balmer line; S/N near 5000 A is there
    assert judged["missing"] == ["H-delta equivalent width", "H-gamma equivalent width", "H-beta equivalent width"]
    assert judged["coverage"] == 0.0  # none of the three lines (its S/N is no longer a requirement: issue 50)
    assert verify_spectrum(mrs).outcome.get("status") != UNJUDGEABLE  # enough pixels for a redshift search


def test_a_drowned_signal_is_refused_and_the_real_one_answered(a_star):
    task = kb.task("a")
    clear = assess(Arrays.from_spectrum(a_star), task)
    assert clear.judgeable and clear.coverage == 1.0 and clear.snr > 10 * MIN_WINDOW_SNR
    assert vet_spectrum(a_star, "a").outcome["status"] == "answered"
    # the same star with errors 100 times larger: S/N per pixel ~0.3 in every window
    unc = a_star.uncertainty
    drowned = Spectrum(spectral_axis=a_star.spectral_axis, flux=a_star.flux, mask=a_star.mask,
                       uncertainty=InverseVariance(unc.array * 1e-4, unit=unc.unit), meta=dict(a_star.meta))
    traj = vet_spectrum(drowned, "a")
    _refused(traj, "median S/N per pixel")
    assert traj.outcome["judgeable"]["snr"] < MIN_WINDOW_SNR


def test_a_red_star_faint_in_the_blue_is_still_judged(shared_spectra):
    """The S/N floor asks for signal in the task's best window, not in all of them: a K7 star is faint
    where an A star's lines are (S/N ~1 there) but bright at H-alpha, and it is plainly no A star."""
    k7 = _real(shared_spectra, "lamost_astrospectro/spec-55863-GAC_105N29_B1_sp01-005.fits.gz")
    judged = assess(Arrays.from_spectrum(k7), kb.task("a"))
    assert judged.judgeable and judged.snr > 5
    assert vet_spectrum(k7, "a").outcome["prediction"] == "NO"
