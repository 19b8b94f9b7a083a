import numpy as np

from agents.tools.linefit import fit_doublet, fit_peak


def _spec(lines, noise=0.1, seed=0):
    w = np.linspace(4800, 5200, 800)
    f = 1.0 + 1e-4 * (w - 5000) + np.random.default_rng(seed).normal(0, noise, w.size)
    for c, s, a in lines:
        f += a * np.exp(-0.5 * ((w - c) / s) ** 2)
    return w, f


def test_fit_peak_recovers_line():
    w, f = _spec([(5003.0, 3.0, 2.0)])
    r = fit_peak(w, f, 5000.0, 25.0)
    assert r["ok"] and abs(r["center"] - 5003) < 0.5 and abs(r["sigma"] - 3) < 0.5
    assert r["delta_chi2_per_n"] > 0 and r["local_snr"] > 10


def test_fit_peak_on_noise_is_not_significant():
    w, f = _spec([], seed=2)
    assert fit_peak(w, f, 5000.0, 25.0)["local_snr"] < 5


def test_fit_peak_absorption_sign():
    w, f = _spec([(5000.0, 4.0, -0.8)])
    r = fit_peak(w, f, 5002.0, 20.0, line_type="absorption")
    assert r["amplitude"] < 0 and abs(r["center"] - 5000) < 1


def test_fit_doublet_checks_spacing_and_ratio():
    z = 0.0
    w, f = _spec([(4960.3, 2.0, 1.0), (5008.2, 2.0, 3.0)], noise=0.05)
    r = fit_doublet(w, f, 4960.3, 5008.2, separation_rest=47.9, amp_ratio_expected=(2.0, 4.0), z=z)
    assert r["separation_check"]["ok"] and r["amp_ratio_check"]["ok"]
    assert fit_peak(w[:5], f[:5], 4960, 20)["ok"] is False
