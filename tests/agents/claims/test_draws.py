"""The claim checker's noise draws measured all at once (agents.claims.draws) give, bit for bit, the
numbers one call per draw gives, on real spectra of every survey and every measurement the checker
makes for several tasks; and the generator draws the same noise in one call as in one per draw."""
import re

import numpy as np
import pytest

from agents.claims import check_trajectory
from agents.claims import measure as measure_mod
from agents.claims.draws import ROWS, measure_row_values
from agents.tools.measure import Arrays


def _one_row_at_a_time(a: Arrays, fluxes, kind, params):
    return [measure_mod._call(Arrays(a.wave, row, a.ivar, a.good), kind, params) for row in fluxes]


def _at_once(a: Arrays, fluxes, kind, params):
    values = measure_row_values(a, fluxes, kind, params)
    return None if values is None else [None if np.isnan(v) else float(v) for v in values]


def test_the_generator_draws_the_same_noise_at_once():
    one = np.random.default_rng(7)
    rows = [one.normal(size=13) for _ in range(24)]
    assert np.array_equal(np.random.default_rng(7).normal(size=(24, 13)), np.array(rows))


def test_spectra_measured_in_the_same_windows_share_their_noise_and_keep_their_numbers(spectra):
    """The draws of a seed are made once (measure._unit_noise): the generator's numbers, read-only, and
    every spectrum's values and sigmas as with draws made afresh for it."""
    from agents.claims.measure import Measurer, _unit_noise

    assert np.array_equal(_unit_noise(7, 24, 13), np.random.default_rng(7).normal(size=(24, 13)))
    assert _unit_noise(7, 24, 13) is _unit_noise(7, 24, 13) and not _unit_noise(7, 24, 13).flags.writeable
    params = {"core": (6540.0, 6585.0), "blue": (6480.0, 6530.0), "red": (6600.0, 6650.0)}
    shared = [Measurer.from_spectrum(s).run("equivalent_width", **params) for s in spectra]
    fresh = []
    for s in spectra:
        _unit_noise.cache_clear()
        fresh.append(Measurer.from_spectrum(s).run("equivalent_width", **params))
    assert shared == fresh and sum(v.sigma is not None for v in shared) >= 3


@pytest.fixture(scope="module")
def spectra(manifest, shared_spectra):
    from agents.spectra import read_spectrum

    picks = []
    for pattern in ("LAMOST-LRS", "SDSS", "Pickles", "DESI"):
        rows = [r for r in manifest if re.search(pattern, r["survey"])][:3]
        for r in rows:
            path, _, target = r["file"].partition("#")
            picks.append(read_spectrum(shared_spectra / path, target or None))
    return picks


def test_draws_at_once_equal_one_draw_at_a_time(spectra, monkeypatch):
    from agents.vet import vet_spectrum

    seen: dict[str, int] = {}

    def compared(a, fluxes, kind, params):
        got = measure_row_values(a, fluxes, kind, params)
        if got is not None:
            assert _at_once(a, fluxes, kind, params) == _one_row_at_a_time(a, fluxes, kind, params), (kind, params)
            seen[kind] = seen.get(kind, 0) + 1
        return got

    monkeypatch.setattr(measure_mod, "measure_row_values", compared)
    for spec in spectra:
        for task in ("a", "mg", "wd", "cv", "b"):
            check_trajectory(vet_spectrum(spec, task), spec)
    # band depths of the vet claims are judged by the second method (agents.claims.second), not by draws;
    # test_every_kind_with_and_without_ivar still compares their draws
    assert {"equivalent_width", "line_depth", "balmer_width"} <= set(seen)


@pytest.mark.parametrize("kind", sorted(ROWS))
def test_every_kind_with_and_without_ivar(spectra, kind):
    core, blue, red = (6540.0, 6585.0), (6480.0, 6530.0), (6600.0, 6650.0)
    params = {"core": core, "blue": blue, "red": red}
    if kind == "band_depth":
        params = {"band": (7055.0, 7150.0), "side": (7000.0, 7045.0), "side2": (6480.0, 6530.0)}
    elif kind == "continuum_slope":
        params = {"blue": blue, "red": red}
    elif kind == "local_snr":
        params = {"window": (6480.0, 6650.0)}
    elif kind == "centroid":
        params = dict(params, sign=-1.0)
    rng = np.random.default_rng(3)
    compared = 0
    for spec in spectra:
        a = Arrays.from_spectrum(spec)
        for ivar in (a.ivar, None):
            lo, hi = np.searchsorted(a.wave, [6400.0, 7200.0])
            sub = Arrays(a.wave[lo:hi], a.flux[lo:hi], None if ivar is None else ivar[lo:hi], a.good[lo:hi])
            scale = np.nanmedian(np.abs(sub.flux)) if sub.flux.size else 1.0
            fluxes = sub.flux[None, :] + rng.normal(size=(24, sub.flux.size)) * 0.05 * scale
            got = _at_once(sub, fluxes, kind, params)
            assert got == _one_row_at_a_time(sub, fluxes, kind, params)
            compared += any(v is not None for v in got)
    assert compared  # some spectrum covered the windows


def test_a_measurer_crosses_to_another_process_in_half_the_bytes_with_every_number_kept(spectra):
    """A one-worker campaign sends each job's Measurer back through a pipe (agents.jobs.vet_and_measure_job).
    Pickled, it carries as float32 the arrays a survey stored as float32 (exactly: they were widened on
    reading) and not its noise, recomputed on arrival; unpickled, every array, the noise and every
    measurement are the same as the sender's, for spectra with ivar and without (the scatter)."""
    import pickle

    from agents.claims.measure import Measurer

    params = {"core": (6540.0, 6585.0), "blue": (6480.0, 6530.0), "red": (6600.0, 6650.0)}
    sources, lamost = set(), 0
    measurers = [Measurer.from_spectrum(spec) for spec in spectra]
    a = measurers[0].a  # and one without ivar: its noise is the scatter of its flux
    measurers.append(Measurer(Arrays(a.wave, a.flux, None, a.good)))
    for spec, sent in zip([*spectra, None], measurers, strict=True):
        blob = pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL)
        got = pickle.loads(blob)
        for name in ("wave", "flux", "ivar", "good"):
            a, b = getattr(sent.a, name), getattr(got.a, name)
            assert (a is None) == (b is None), name
            assert a is None or (a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)), name
        assert np.array_equal(sent.sigma, got.sigma, equal_nan=True) and got.noise_source == sent.noise_source
        assert got.n_draws == sent.n_draws and got.run("equivalent_width", **params) == sent.run(
            "equivalent_width", **params)
        sources.add(sent.noise_source)
        if spec is not None and "LAMOST" in (spec.meta.get("survey") or ""):  # float32 flux and ivar, a float64 wavelength grid
            lamost += 1
            assert len(blob) < 0.55 * (4 * sent.a.wave.nbytes + sent.a.good.nbytes)
    assert sources == {"ivar", "scatter"} and lamost == 3
