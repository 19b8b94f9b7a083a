import numpy as np

from agents.tools.continuum import describe, fit_continuum


def test_degree_follows_curvature_and_description_names_turnover():
    w = np.linspace(4000, 9000, 3000)
    rng = np.random.default_rng(0)
    f = 10 - 1e-6 * (w - 6500) ** 2 + rng.normal(0, 0.05, w.size)
    c = fit_continuum(w, f)
    assert c.degree >= 2
    assert np.max(np.abs(c.model - (10 - 1e-6 * (w - 6500) ** 2))) < 0.2
    assert "increases" in c.description and "decreases" in c.description


def test_straight_continuum_is_low_degree_and_monotonic():
    w = np.linspace(4000, 9000, 2000)
    rng = np.random.default_rng(1)
    c = fit_continuum(w, 5 + 1e-4 * w + rng.normal(0, 0.02, w.size))
    assert c.degree <= 3
    assert "decreases" not in c.description


def test_too_few_pixels_is_reported():
    assert "Too few" in fit_continuum(np.arange(5.0), np.ones(5)).description
    assert describe(np.array([1.0]), np.array([1.0])).startswith("No continuum")
