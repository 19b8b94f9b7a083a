"""Descending wavelength axes inside multi-arm files (DESI B/R/Z arms, LAMOST MRS COADD_B/COADD_R).

A descending but monotonic arm is the same spectrum written the other way round: it must read
exactly like the original (flux, ivar and mask turned around with it). A truly non-monotonic arm
is refused with a SpectrumReadError naming the file and the arm. Files are real ones from the
shared corpus, edited with astropy.io.fits.
"""
import numpy as np
import pytest
from astropy.io import fits

from agents.spectra import SpectrumReadError, list_targets, read_spectrum


def _rewrite(src, out, edit=None):
    with fits.open(src) as hdul:
        hdul.readall()
        if edit is not None:
            edit(hdul)
        hdul.writeto(out)
    return out


def _reverse_desi_arm(arm):
    def edit(hdul):
        hdul[f"{arm}_WAVELENGTH"].data = hdul[f"{arm}_WAVELENGTH"].data[::-1].copy()
        for ext in ("FLUX", "IVAR", "MASK"):
            hdul[f"{arm}_{ext}"].data = hdul[f"{arm}_{ext}"].data[:, ::-1].copy()
    return edit


def _shuffle_desi_arm(arm):
    def edit(hdul):
        wave = hdul[f"{arm}_WAVELENGTH"].data.copy()
        wave[[10, 11]] = wave[[11, 10]]
        hdul[f"{arm}_WAVELENGTH"].data = wave
    return edit


def _reverse_mrs_arm(ext):
    def edit(hdul):
        hdul[ext].data = hdul[ext].data[::-1].copy()
    return edit


def _shuffle_mrs_arm(ext):
    def edit(hdul):
        data = hdul[ext].data.copy()
        loglam = data["LOGLAM"].copy()
        loglam[[10, 11]] = loglam[[11, 10]]
        data["LOGLAM"] = loglam
        hdul[ext].data = data
    return edit


def _assert_same_spectrum(a, b):
    np.testing.assert_array_equal(a.spectral_axis.value, b.spectral_axis.value)
    np.testing.assert_array_equal(a.flux.value, b.flux.value)
    np.testing.assert_array_equal(a.uncertainty.array, b.uncertainty.array)
    np.testing.assert_array_equal(a.mask, b.mask)
    assert a.mask.any() == b.mask.any()
    drop = {"source_path"}
    assert {k: v for k, v in a.meta.items() if k not in drop} == \
           {k: v for k, v in b.meta.items() if k not in drop}


@pytest.mark.parametrize("key", ["DESI_COADD", "DESI_MULTI", "DESI_SPECTRA"])
@pytest.mark.parametrize("arm", ["B", "R", "Z"])
def test_desi_descending_arm_reads_like_the_original(key, arm, real, tmp_path):
    # same file names as the original (a DESI name is coadd-*/spectra-*): one folder each
    src = real(key)
    (tmp_path / "orig").mkdir()
    (tmp_path / "flip").mkdir()
    orig = _rewrite(src, tmp_path / "orig" / src.name)
    flipped = _rewrite(src, tmp_path / "flip" / src.name, _reverse_desi_arm(arm))
    targets = list_targets(orig)
    assert list_targets(flipped) == targets
    for target in targets[:2]:
        _assert_same_spectrum(read_spectrum(flipped, target=target), read_spectrum(orig, target=target))


def test_desi_non_monotonic_arm_is_refused_naming_file_and_arm(real, tmp_path):
    path = _rewrite(real("DESI_COADD"), tmp_path / "coadd-shuffled.fits", _shuffle_desi_arm("R"))
    with pytest.raises(SpectrumReadError, match=r"wavelength is not monotonic in the R arm") as info:
        read_spectrum(path)
    assert str(info.value).startswith("coadd-shuffled.fits: ")


@pytest.mark.parametrize("ext", ["COADD_B", "COADD_R"])
def test_lamost_mrs_descending_arm_reads_like_the_original(ext, real, tmp_path):
    src = real("LAMOST_MRS")
    orig = _rewrite(src, tmp_path / "med-orig.fits")
    flipped = _rewrite(src, tmp_path / "med-flipped.fits", _reverse_mrs_arm(ext))
    _assert_same_spectrum(read_spectrum(flipped), read_spectrum(orig))


def test_lamost_mrs_both_arms_descending(real, tmp_path):
    src = real("LAMOST_MRS")
    orig = _rewrite(src, tmp_path / "med-orig.fits")

    def both(hdul):
        _reverse_mrs_arm("COADD_B")(hdul)
        _reverse_mrs_arm("COADD_R")(hdul)
    flipped = _rewrite(src, tmp_path / "med-flipped.fits", both)
    _assert_same_spectrum(read_spectrum(flipped), read_spectrum(orig))


def test_lamost_mrs_non_monotonic_arm_is_refused_naming_file_and_arm(real, tmp_path):
    path = _rewrite(real("LAMOST_MRS"), tmp_path / "med-shuffled.fits", _shuffle_mrs_arm("COADD_R"))
    with pytest.raises(SpectrumReadError, match=r"wavelength is not monotonic in the COADD_R arm") as info:
        read_spectrum(path)
    assert str(info.value).startswith("med-shuffled.fits: ")
