"""DESI arm merge: inverse-variance weighting in overlaps, masks kept, units, targets."""
import astropy.units as u
import numpy as np
import pytest
from astropy.io import fits
from specutils import Spectrum, SpectrumList

from agents.spectra import list_targets, merge_arms, read_spectrum


def _arm(start, n, flux, ivar, bad=None):
    wave = start + 0.8 * np.arange(n)
    return (wave, np.full(n, float(flux)), np.full(n, float(ivar)),
            np.zeros(n, bool) if bad is None else bad)


def test_overlap_is_inverse_variance_weighted():
    blue = _arm(5000.0, 11, flux=1.0, ivar=1.0)        # 5000.0 .. 5008.0
    red = _arm(5006.4, 6, flux=4.0, ivar=3.0)          # 5006.4 .. 5010.4, 3 shared pixels
    wave, flux, ivar, bad = merge_arms([red, blue])    # order of arms must not matter
    assert np.all(np.diff(wave) > 0) and wave.size == 11 + 3
    shared = (wave >= 5006.4 - 1e-9) & (wave <= 5008.0 + 1e-9)
    assert shared.sum() == 3
    np.testing.assert_allclose(flux[shared], (1 * 1 + 4 * 3) / 4)
    np.testing.assert_allclose(ivar[shared], 4.0)
    np.testing.assert_allclose(flux[wave < 5006], 1.0)
    np.testing.assert_allclose(flux[wave > 5008.5], 4.0)
    assert not bad.any()


def test_masked_pixel_in_one_arm_takes_the_other():
    bad_red = np.zeros(6, bool)
    bad_red[0] = True                                  # red's first pixel (5006.4) is bad
    wave, flux, ivar, bad = merge_arms([_arm(5000.0, 11, 1.0, 1.0), _arm(5006.4, 6, 4.0, 3.0, bad_red)])
    i = np.argmin(np.abs(wave - 5006.4))
    assert flux[i] == pytest.approx(1.0) and ivar[i] == pytest.approx(1.0) and not bad[i]


def test_pixel_bad_in_every_arm_is_masked():
    _wave, flux, ivar, bad = merge_arms([_arm(5000.0, 5, 2.0, 0.0), _arm(5000.0, 5, 6.0, 0.0)])
    assert bad.all() and (ivar == 0).all()
    np.testing.assert_allclose(flux, 4.0)              # plain mean where no weight exists


def test_real_coadd_overlap_matches_hand_computation(real):
    path = real("DESI_COADD")
    spec = read_spectrum(path)
    with fits.open(path) as h:
        bw, bf, bi = h["B_WAVELENGTH"].data, h["B_FLUX"].data[0], h["B_IVAR"].data[0]
        rw, rf, ri = h["R_WAVELENGTH"].data, h["R_FLUX"].data[0], h["R_IVAR"].data[0]
    wave = spec.spectral_axis.to_value(u.AA)
    assert wave[0] == bw[0] and wave[-1] == pytest.approx(9824.0)
    assert np.all(np.diff(wave) > 0)
    target = 5780.0                                    # inside the B/R overlap (5760-5800 A)
    jb, jr = np.argmin(np.abs(bw - target)), np.argmin(np.abs(rw - target))
    k = np.argmin(np.abs(wave - target))
    expected = (bf[jb] * bi[jb] + rf[jr] * ri[jr]) / (bi[jb] + ri[jr])
    assert spec.flux.value[k] == pytest.approx(expected, rel=1e-6)
    assert spec.uncertainty.array[k] == pytest.approx(bi[jb] + ri[jr], rel=1e-6)
    assert spec.flux.unit == u.Unit("1e-17 erg / (s cm2 Angstrom)")
    assert spec.uncertainty.unit == spec.flux.unit ** -2


def test_mask_bits_become_bad_pixels(real):
    path = real("DESI_MULTI")
    tid = "39633300968442591"
    spec = read_spectrum(path, target=tid)
    with fits.open(path) as h:
        row = list(h["FIBERMAP"].data["TARGETID"]).index(int(tid))
        zmask, zivar = h["Z_MASK"].data[row], h["Z_IVAR"].data[row]
    expect_bad = int(((zmask != 0) | (zivar <= 0))[-200:].sum())
    assert int(spec.mask[-200:].sum()) == expect_bad   # the Z-only tail, beyond the R overlap


def test_targets_listed_and_selected(real):
    path = real("DESI_MULTI")
    ids = list_targets(path)
    assert ids[0] == "-1695072" and len(ids) == 5 and all(isinstance(i, str) for i in ids)
    for tid in ids:
        spec = read_spectrum(path, target=tid)
        assert spec.meta["object_id"] == tid and spec.meta["target"] == tid
    with fits.open(path) as h:
        ra = h["FIBERMAP"].data["TARGET_RA"][1]
    assert read_spectrum(path, target=int(ids[1])).meta["ra"] == pytest.approx(ra)


def test_file_without_ids_is_addressed_by_row(real):
    path = real("DESI_NOIDS")
    ids = list_targets(path)
    assert ids == [str(i) for i in range(25)]
    spec = read_spectrum(path, target=3)
    assert spec.meta["object_id"] == "test_coadd#3" and spec.meta["pipeline_class"] is None
    with fits.open(path) as h:
        assert spec.flux.value[0] == pytest.approx(h["B_FLUX"].data[3][0])


def test_redrock_labels_and_specutils_list(real):
    path = real("DESI_COADD")
    spec = read_spectrum(path)
    assert spec.meta["labels_source"].startswith("redrock file redrock-4-80613")
    assert spec.meta["pipeline_zwarn"] == 0
    many = SpectrumList.read(real("DESI_MULTI"), format="desi-coadd")
    assert [s.meta["target"] for s in many] == list_targets(real("DESI_MULTI"))
    one = Spectrum.read(real("DESI_MULTI"), format="desi-coadd", target="39633300968442591")
    assert one.meta["n_good_pixels"] > 7000
