"""Hypothesis engine: template scan on real spectra, line matching without templates."""
import numpy as np
import pytest
from shared_data import shared_data_dir

from agents.tools import templates as tpl
from agents.tools.features import Feature, detect_features, good_pixels
from agents.tools.hypotheses import generate_hypotheses


@pytest.fixture(scope="module")
def template_dir():
    base = shared_data_dir()
    if base is None:
        pytest.skip("shared data not found")
    return str(base / "redrock-templates")


def _read(shared_spectra, rel, target=None):
    from agents.spectra import blank_pipeline_labels, read_spectrum
    return blank_pipeline_labels(read_spectrum(shared_spectra / rel, target))


def test_templates_load_on_one_log_grid(template_dir):
    ts = tpl.load_templates(template_dir)
    assert {t.spectype for t in ts} == {"STAR", "GALAXY", "QSO"}
    assert all(t.basis.ndim == 2 and np.isfinite(t.basis).all() for t in ts)
    assert tpl.load_templates(template_dir) is ts  # cached


@pytest.mark.parametrize("rel,cls,z", [
    ("sdss_gelato/spec-0295-51585-0596.fits", "GALAXY", 0.137877),
    ("sdss_bossbrain/spec-3586-55181-0500.fits", "STAR", -0.000101),
    ("sdss_pyqsofit/spec-0332-52367-0639.fits", "QSO", 0.10061),
])
def test_template_scan_finds_the_pipeline_answer(shared_spectra, template_dir, rel, cls, z):
    px = good_pixels(_read(shared_spectra, rel))
    hyps = generate_hypotheses(px, detect_features(px), template_dir=template_dir)
    assert any(h.spectype == cls and abs(h.z - z) < 0.003 for h in hyps[:3])
    assert {"STAR", "GALAXY", "QSO"} <= {h.spectype for h in hyps}  # every class keeps a rival
    assert hyps[0].score == pytest.approx(100.0)


def _flat_pixels(n=4000, snr=20.0):
    from agents.tools.features import pixels_from_arrays
    w = np.geomspace(3800.0, 9200.0, n)
    sigma = 10.0 / snr
    return pixels_from_arrays(w, 10.0 + np.random.default_rng(0).normal(0, sigma, n), np.full(n, 1 / sigma**2))


def test_line_matching_alone_without_templates(monkeypatch, tmp_path):
    for var in tpl.TEMPLATE_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tpl, "BUNDLED", tmp_path / "no-bundle.npz")  # no templates at all
    z = 0.25
    feats = [Feature("emission", r * (1 + z), 1.0, 5.0, 300.0, 5.0, 0.5, 30.0, 8, "narrow")
             for r in (3728.5, 4862.7, 5008.2, 6564.6)]
    hyps = generate_hypotheses(_flat_pixels(), feats, template_dir=None)
    assert hyps and hyps[0].source == "lines" and abs(hyps[0].z - z) < 0.001 and hyps[0].spectype == "GALAXY"


def test_bundled_templates_are_the_redrock_templates_rebinned(template_dir):
    bundle = tpl.load_bundle()
    source = tpl.load_templates(template_dir)
    assert [(t.spectype, t.subtype, t.start, t.z_range) for t in bundle] == \
        [(t.spectype, t.subtype, t.start, t.z_range) for t in source]
    for b, s in zip(bundle, source, strict=True):
        assert np.allclose(b.basis, s.basis, rtol=1e-6, atol=1e-6 * np.abs(s.basis).max())


def test_bundled_templates_are_used_when_no_folder_is_configured(monkeypatch):
    for var in tpl.TEMPLATE_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    assert tpl.resolve_templates(None) == tpl.load_bundle()
