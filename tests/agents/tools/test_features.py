import numpy as np

from agents.tools.features import detect_features, pixels_from_arrays, width_class


def _spectrum(lines, n=4000, snr=30.0, seed=1):
    rng = np.random.default_rng(seed)
    w = np.geomspace(3800, 9200, n)
    f = np.full(n, 10.0)
    for c, fwhm, amp in lines:
        f += amp * np.exp(-0.5 * ((w - c) / (fwhm / 2.3548)) ** 2)
    return w, f + rng.normal(0, 10 / snr, n), np.full(n, (snr / 10) ** 2)


def test_finds_emission_and_absorption_with_widths():
    # (the +-50 px noise window of FORMA's CWT swallows lines much wider than ~40 px; those are
    # left to the Gaussian fit fallback of the analysis)
    w, f, iv = _spectrum([(5000.0, 6.0, 8.0), (6563.0, 14.0, 6.0), (7000.0, 8.0, -6.0)])
    feats = detect_features(pixels_from_arrays(w, f, iv))
    em = min(feats, key=lambda x: abs(x.wavelength - 5000))
    broad = min(feats, key=lambda x: abs(x.wavelength - 6563))
    ab = min(feats, key=lambda x: abs(x.wavelength - 7000))
    assert em.kind == "emission" and abs(em.wavelength - 5000) < 3 and em.width_class == "narrow"
    assert broad.kind == "emission" and abs(broad.wavelength - 6563) < 10 and broad.fwhm_kms > em.fwhm_kms
    assert ab.kind == "absorption" and abs(ab.wavelength - 7000) < 3 and ab.amplitude < 0
    assert all(x.ridge_length >= 4 and x.snr >= 5 for x in feats)
    snrs = [x.snr for x in feats]
    assert snrs == sorted(snrs, reverse=True)  # strongest first
    assert {id(x) for x in feats[:3]} == {id(em), id(broad), id(ab)}  # the three real lines lead


def test_pure_noise_gives_few_features():
    w, f, iv = _spectrum([], seed=3)
    assert len(detect_features(pixels_from_arrays(w, f, iv))) <= 2


def test_good_pixels_drop_masked_and_average_duplicates():
    w = np.array([1.0, 2.0, 2.0, 3.0, 4.0])
    f = np.array([1.0, 2.0, 4.0, np.nan, 5.0])
    iv = np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    px = pixels_from_arrays(w, f, iv, mask=np.array([False, False, False, False, False]))
    assert list(px.wave) == [1.0, 2.0] and px.flux[1] == 3.0 and px.ivar[1] == 2.0


def test_width_classes():
    assert (width_class(500), width_class(1500), width_class(2500)) == ("narrow", "intermediate", "broad")
