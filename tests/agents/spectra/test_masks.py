"""Pixel masks read as each survey's data model defines them, checked on real files.

SDSS / BOSS (SPPIXMASK, https://www.sdss4.org/dr17/algorithms/bitmasks/#SPPIXMASK): bits 0-15
describe the fibre (or one spectrograph half of it) and never mask a pixel; a pixel is bad when
ivar <= 0 or its and_mask has FULLREJECT (18), NOSKY (22), BRIGHTSKY (23) or NODATA (24); the
other pixel bits (NEARBADPIXEL, PARTIALREJECT, ...) leave a pixel whose ivar the pipeline kept.
DESI (desidatamodel coadd / spectra files): MASK != 0 or IVAR <= 0 is bad in every arm.
LAMOST LRS and MRS (LAMOST DR data production descriptions): ANDMASK != 0 (bad in every exposure)
or IVAR <= 0 is bad; ORMASK alone (bad in some exposure) is not.
"""
import astropy.units as u
import numpy as np
import pytest
from astropy.io import fits

from agents.spectra import read_spectrum

SDSS_0332 = "sdss_pyqsofit/spec-0332-52367-0639.fits"          # QSO z = 0.1006, red half MANYBADCOLUMNS
SDSS_GELATO_AGN = "sdss_gelato/1237652899686318136.fits"      # AGN z = 0.0506, blue half MANYBADCOLUMNS
SDSS_NODATA = "sdss_gelato/spec-0269-51581-0003.fits"         # every pixel NODATA, ivar 0
BOSS_WD = "sdss_wdtools/sample_spectrum.fits"                 # SDSS-III BOSS
BOSS_COMMISSIONING = "sdss_bossbrain/spec-3586-55181-0500.fits"
SDSS_FILES = [SDSS_0332, SDSS_GELATO_AGN, SDSS_NODATA, BOSS_WD, BOSS_COMMISSIONING,
              "sdss_gelato/spec-0295-51585-0596.fits", "sdss_gelato/spec-0853-52374-0240.fits",
              "sdss_lime/sdss_dr18_0358-51818-0504.fits", "sdss_ppxf/NGC3522_SDSS_DR18.fits"]
LAMOST_MRS = "lamost_laspec/med-58408-TD230151N343645T01_sp01-015.fits"
LAMOST_LRS_ORMASK = "lamost_splat/spec-56769-HD184250N365730V_sp16-027.fits"

MANYBADCOLUMNS, NEARBADPIXEL, FULLREJECT, PARTIALREJECT, BRIGHTSKY = 4, 16, 18, 19, 23
SDSS_BAD_BITS = (1 << 18) | (1 << 22) | (1 << 23) | (1 << 24)


def _sdss(path):
    with fits.open(path) as h:
        c = h["COADD"].data
        return (10 ** c["loglam"].astype(float), c["ivar"].astype(float),
                c["and_mask"].astype(np.int64))


def _bit(mask, bit):
    return (mask >> bit) & 1 == 1


def _window(wave, centre, half=30.0):
    return np.abs(wave - centre) < half


# ---------------------------------------------------------------- SDSS / BOSS

@pytest.mark.parametrize("name", SDSS_FILES)
def test_sdss_mask_is_ivar_or_a_no_data_pixel_bit(real, name):
    path = real(name)
    _, ivar, andmask = _sdss(path)
    spec = read_spectrum(path)
    expected = (ivar <= 0) | (andmask & SDSS_BAD_BITS != 0)
    np.testing.assert_array_equal(spec.mask, expected)
    assert spec.meta["n_good_pixels"] == int((~expected).sum())


@pytest.mark.parametrize("name, z, lines", [
    (SDSS_0332, 0.10061, {"H-alpha": 6564.6, "[N II]": 6585.3, "[S II]": 6718.3}),
    (SDSS_GELATO_AGN, 0.050601, {"H-beta": 4862.7, "[O III]": 5008.2}),
])
def test_fibre_level_bits_keep_the_pixels_they_cover(real, name, z, lines):
    """MANYBADCOLUMNS covers 45-48 % of these spectra (one spectrograph half): a note about
    the fibre, not about the pixels, which keep their data; their lines are readable."""
    path = real(name)
    wave, ivar, andmask = _sdss(path)
    spec = read_spectrum(path)
    fibre_only = _bit(andmask, MANYBADCOLUMNS) & (ivar > 0) & (andmask & SDSS_BAD_BITS == 0)
    assert fibre_only.sum() > 0.4 * wave.size
    assert not spec.mask[fibre_only].any()
    for line, rest in lines.items():
        near = _window(wave, rest * (1 + z))
        assert near.sum() >= 20 and not spec.mask[near].any(), line
    assert spec.mask[ivar > 0].mean() < 0.01          # only BRIGHTSKY pixels remain masked
    flags = spec.meta["fiber_flags"]
    assert set(flags) == {"MANYBADCOLUMNS"}
    assert flags["MANYBADCOLUMNS"]["fraction"] == pytest.approx(_bit(andmask, MANYBADCOLUMNS).mean(), abs=1e-3)
    lo, hi = flags["MANYBADCOLUMNS"]["wavelength"]
    covered = wave[_bit(andmask, MANYBADCOLUMNS)]
    assert lo == pytest.approx(covered.min(), abs=0.01) and hi == pytest.approx(covered.max(), abs=0.01)


def test_a_spectrum_without_fibre_bits_has_no_fiber_flags(real):
    assert read_spectrum(real("sdss_gelato/spec-0295-51585-0596.fits")).meta["fiber_flags"] == {}


@pytest.mark.parametrize("name", [SDSS_0332, SDSS_GELATO_AGN, BOSS_WD, "sdss_gelato/spec-0853-52374-0240.fits"])
def test_brightsky_pixels_stay_masked(real, name):
    """BRIGHTSKY: sky so bright the object's flux there is not to be trusted (5577 A, OH bands)."""
    path = real(name)
    _, ivar, andmask = _sdss(path)
    sky = _bit(andmask, BRIGHTSKY) & (ivar > 0)
    assert sky.sum() >= 10
    assert read_spectrum(path).mask[sky].all()


def test_an_all_nodata_sdss_spectrum_stays_fully_masked(real):
    spec = read_spectrum(real(SDSS_NODATA))
    assert spec.mask.all() and spec.meta["n_good_pixels"] == 0 and spec.meta["snr"] == 0.0


def test_rejected_pixels_stay_masked_and_near_bad_pixels_are_kept(real):
    """0332 around 6400-6470 A: FULLREJECT pixels (no data) are masked; the NEARBADPIXEL
    pixels around them (a bad CCD pixel within 3 pixels of the trace) kept their ivar."""
    path = real(SDSS_0332)
    _, ivar, andmask = _sdss(path)
    spec = read_spectrum(path)
    rejected = _bit(andmask, FULLREJECT)
    assert rejected.any() and spec.mask[rejected].all()
    near = _bit(andmask, NEARBADPIXEL) & (ivar > 0) & (andmask & SDSS_BAD_BITS == 0)
    assert near.sum() > 100 and not spec.mask[near].any()


def test_boss_partially_rejected_pixels_are_kept(real):
    """BOSS commissioning spectrum: PARTIALREJECT in every exposure over 4450-5400 A. Some
    CCD pixels were rejected in extraction; the pixel still has a measured flux and ivar."""
    path = real(BOSS_COMMISSIONING)
    _, ivar, andmask = _sdss(path)
    spec = read_spectrum(path)
    partial = _bit(andmask, PARTIALREJECT) & (ivar > 0) & (andmask & SDSS_BAD_BITS == 0)
    assert partial.sum() > 300 and not spec.mask[partial].any()
    assert spec.meta["survey"] == "SDSS-III BOSS"


# ---------------------------------------------------------------- DESI

DESI_COADD = "desi_fastspecfit/coadd-4-80613-thru20210324.fits"


def test_desi_clean_coadd_keeps_every_pixel(real):
    spec = read_spectrum(real(DESI_COADD))
    assert not spec.mask.any() and spec.meta["n_good_pixels"] == spec.meta["n_pixels"]


def test_desi_mask_bits_and_zero_ivar_are_bad(real, tmp_path):
    """In the R-only stretch (between the B and Z overlaps) a MASK bit on a pixel with ivar > 0
    masks it (DESI's coadd gives such a pixel zero weight), as does ivar 0 with MASK 0."""
    src = real(DESI_COADD)
    with fits.open(src) as h:
        rwave = h["R_WAVELENGTH"].data.astype(float)
        flagged = np.flatnonzero(_window(rwave, 6500.0, 4.0))
        no_ivar = np.flatnonzero(_window(rwave, 6800.0, 4.0))
        assert (h["R_IVAR"].data[0, flagged] > 0).all()
        h["R_MASK"].data[0, flagged] = 1 << 5        # specmask BRIGHTSKY
        h["R_IVAR"].data[0, no_ivar] = 0.0
        out = tmp_path / "coadd-edited.fits"
        h.writeto(out)
    spec = read_spectrum(out)
    wave = spec.spectral_axis.to_value(u.AA)
    for idx in (flagged, no_ivar):
        assert spec.mask[np.isin(wave, rwave[idx])].sum() == idx.size
    assert spec.mask.sum() == flagged.size + no_ivar.size


def test_desi_bad_fibre_rows_are_masked(real):
    """coadd-5-169: rows whose ivar is 0 everywhere (MASK 0 in the coadd) are fully masked."""
    path = real("DESI_MULTI")
    with fits.open(path) as h:
        ids = [str(t) for t in h["FIBERMAP"].data["TARGETID"]]
        dead = [i for i in range(len(ids)) if (h["B_IVAR"].data[i] <= 0).all()]
    assert dead
    for i in dead:
        assert read_spectrum(path, target=ids[i]).mask.all()


# ---------------------------------------------------------------- LAMOST

def test_lamost_lrs_ormask_alone_keeps_the_pixel(real):
    """ORMASK: bad in at least one exposure; the coadd still has the others."""
    path = real(LAMOST_LRS_ORMASK)
    with fits.open(path) as h:
        data = h[0].data
    ivar, andmask, ormask = data[1], np.nan_to_num(data[3]), np.nan_to_num(data[4])
    or_only = (ormask != 0) & (andmask == 0) & (ivar > 0)
    assert or_only.sum() >= 30
    assert not read_spectrum(path).mask[or_only].any()


def test_lamost_lrs_andmask_is_bad_whatever_the_ivar(real, tmp_path):
    """ANDMASK: bad in every exposure. In the real files such pixels also have ivar 0, so set
    it on good pixels of a copy: ANDMASK masks them, ORMASK alone does not."""
    src = real("LAMOST_DR7")
    with fits.open(src) as h:
        data = h[0].data
        good = np.flatnonzero((data[1] > 0) & (data[3] == 0))
        and_px, or_px = good[1000:1010], good[2000:2010]
        data[3, and_px] = 1
        data[4, or_px] = 1
        out = tmp_path / "lrs-edited.fits"
        h.writeto(out)
        ivar, andmask = data[1].copy(), data[3].copy()
    spec = read_spectrum(out)
    assert spec.mask[and_px].all() and not spec.mask[or_px].any()
    np.testing.assert_array_equal(spec.mask, (ivar <= 0) | (andmask != 0))


def test_lamost_mrs_andmask_masks_and_ormask_keeps(real):
    """med-58408 COADD_B: 5 ANDMASK pixels that still have ivar > 0 are masked; ORMASK-only
    pixels with ivar > 0 (both arms) are kept."""
    path = real(LAMOST_MRS)
    spec = read_spectrum(path)
    wave = spec.spectral_axis.to_value(u.AA)
    n_and = n_or = 0
    with fits.open(path) as h:
        for ext in ("COADD_B", "COADD_R"):
            t = h[ext].data
            w = 10 ** t["LOGLAM"].ravel().astype(float)
            ivar, am, om = t["IVAR"].ravel(), t["ANDMASK"].ravel(), t["ORMASK"].ravel()
            at = np.searchsorted(wave, w)
            np.testing.assert_allclose(wave[at], w, rtol=1e-9)
            np.testing.assert_array_equal(spec.mask[at], (ivar <= 0) | (am != 0))
            n_and += int(((am != 0) & (ivar > 0)).sum())
            n_or += int(((om != 0) & (am == 0) & (ivar > 0)).sum())
    assert n_and >= 5 and n_or >= 50
