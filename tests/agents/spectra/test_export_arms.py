"""Exports of a multi-arm file keep the arms apart (issue 46, item 7): the CSV has an `arm` column with
each arm's own pixels (a DESI overlap once per arm), the FITS one table per arm; both read back to the
same merged spectrum with its arms. Checked against the DESI file itself, read with astropy."""
import csv
import io
import shutil

import numpy as np
import pytest
from astropy.io import fits

from agents.spectra import list_targets, read_spectrum, write_csv, write_fits


def csv_rows(spec) -> tuple[list[str], list[list[str]]]:
    text = io.StringIO()
    write_csv(spec, text)
    rows = list(csv.reader(ln for ln in text.getvalue().splitlines() if not ln.startswith("#")))
    return rows[0], rows[1:]


def source_arm(path, arm: str, row: int = 0):
    """The DESI file's own arm, as astropy reads it: wave, flux, bad (MASK != 0 or IVAR <= 0)."""
    with fits.open(path) as hdul:
        wave = np.asarray(hdul[f"{arm}_WAVELENGTH"].data, np.float64)
        flux = np.asarray(hdul[f"{arm}_FLUX"].data[row], np.float64)
        ivar = np.asarray(hdul[f"{arm}_IVAR"].data[row], np.float64)
        bad = (np.asarray(hdul[f"{arm}_MASK"].data[row]) != 0) | ~(ivar > 0)
    return wave, flux, bad


def test_desi_csv_has_an_arm_column_with_each_arms_own_pixels(real):
    path = real("DESI_COADD")
    spec = read_spectrum(path)
    names, rows = csv_rows(spec)
    assert names == ["wavelength", "flux", "ivar", "mask", "arm"]
    arm = np.array([r[4] for r in rows])
    assert list(dict.fromkeys(arm)) == ["B", "R", "Z"]
    table = np.array([[float(x) for x in r[:4]] for r in rows])
    for name in "BRZ":
        wave, flux, bad = source_arm(path, name)
        own = table[arm == name]
        np.testing.assert_allclose(own[:, 0], wave, rtol=1e-12)
        np.testing.assert_allclose(own[:, 1], flux, rtol=1e-7)
        np.testing.assert_array_equal(own[:, 3] != 0, bad)
    # the b/r overlap: each wavelength there twice, once per arm, each with its own flux
    b, r = table[arm == "B"], table[arm == "R"]
    overlap = b[:, 0] >= r[0, 0]
    assert overlap.sum() > 40
    at = np.clip(np.searchsorted(r[:, 0], b[overlap, 0] - 1e-3), 0, len(r) - 1)
    np.testing.assert_allclose(r[at, 0], b[overlap, 0], atol=1e-3)  # the arms share DESI's 0.8 A grid
    b_flux, r_flux = b[overlap, 1], r[at, 1]
    assert np.mean(np.abs(b_flux - r_flux) > 1e-6) > 0.9  # two measurements, not one merged value copied
    assert len(rows) > spec.meta["n_pixels"]  # the overlaps are counted once per arm


def test_desi_csv_reads_back_to_the_merged_spectrum_and_its_arms(real, tmp_path):
    spec = read_spectrum(real("DESI_COADD"))
    out = tmp_path / "desi.csv"
    write_csv(spec, out)
    back = read_spectrum(out)
    np.testing.assert_allclose(back.spectral_axis.value, spec.spectral_axis.value, rtol=1e-12)
    np.testing.assert_allclose(back.flux.value, spec.flux.value, rtol=1e-7)
    np.testing.assert_array_equal(back.mask, spec.mask)
    assert back.meta["arm_pixels"] == spec.meta["arm_pixels"]
    assert back.meta["arms"] == ["B", "R", "Z"]


def test_desi_fits_has_one_table_per_arm_that_astropy_reads_back(real, tmp_path):
    path = real("DESI_COADD")
    spec = read_spectrum(path)
    out = tmp_path / "desi.fits"
    write_fits(spec, out)
    with fits.open(out) as hdul:
        assert hdul[0].header["ARMS"] == "B,R,Z"
        assert len(hdul["SPECTRUM"].data) == spec.meta["n_pixels"]  # the merged table is still there
        for name in "BRZ":
            hdu = hdul[f"SPECTRUM_{name}"]
            assert hdu.header["ARM"] == name
            wave, flux, bad = source_arm(path, name)
            np.testing.assert_allclose(hdu.data["WAVELENGTH"], wave, rtol=1e-12)
            np.testing.assert_allclose(hdu.data["FLUX"], flux, rtol=1e-7)
            np.testing.assert_array_equal(hdu.data["MASK"] != 0, bad)
            assert hdu.columns["WAVELENGTH"].unit == "Angstrom"
    back = read_spectrum(out)
    np.testing.assert_allclose(back.flux.value, spec.flux.value, rtol=1e-7)
    assert back.meta["arm_pixels"] == spec.meta["arm_pixels"]
    assert back.meta["arms"] == ["B", "R", "Z"]


def test_desi_spectra_file_exports_each_arm_with_its_exposures_combined(real):
    path = real("DESI_SPECTRA")
    target = list_targets(path)[0]
    spec = read_spectrum(path, target=target)
    names, rows = csv_rows(spec)
    assert names[-1] == "arm" and {r[4] for r in rows} == {"B", "R", "Z"}
    text = io.StringIO()
    write_csv(spec, text)
    back = read_spectrum(io.BytesIO(text.getvalue().encode()))
    good = ~spec.mask
    np.testing.assert_allclose(back.flux.value[good], spec.flux.value[good], rtol=1e-6)
    np.testing.assert_array_equal(back.mask, spec.mask)


def test_a_moved_desi_file_still_exports_by_arm_as_the_viewer_colours_it(real, tmp_path):
    copy = tmp_path / "coadd.fits"
    shutil.copy(real("DESI_COADD"), copy)
    spec = read_spectrum(copy)
    copy.unlink()  # the arms cannot be read again: the merged pixels are split as the plot colours them
    names, rows = csv_rows(spec)
    assert names[-1] == "arm"
    assert len(rows) == spec.meta["n_pixels"]
    counts = {a: sum(r[4] == a for r in rows) for a in "BRZ"}
    assert [counts[a] for a in "BRZ"] == [stop - start for _, start, stop in spec.meta["arm_pixels"]]
    text = io.StringIO()
    write_csv(spec, text)
    back = read_spectrum(io.BytesIO(text.getvalue().encode()))
    np.testing.assert_allclose(back.flux.value, spec.flux.value, rtol=1e-7)
    assert back.meta["arm_pixels"] == spec.meta["arm_pixels"]


def test_lamost_mrs_exports_its_two_arms(real, tmp_path):
    spec = read_spectrum(real("LAMOST_MRS"))
    names, rows = csv_rows(spec)
    assert names[-1] == "arm" and list(dict.fromkeys(r[4] for r in rows)) == ["B", "R"]
    out = tmp_path / "mrs.fits"
    write_fits(spec, out)
    with fits.open(out) as hdul:
        assert [h.name for h in hdul if h.name.startswith("SPECTRUM_")] == ["SPECTRUM_B", "SPECTRUM_R"]
    back = read_spectrum(out)
    assert back.meta["arm_pixels"] == spec.meta["arm_pixels"]


@pytest.mark.parametrize("key", ["SDSS_LEGACY", "LAMOST_DR7"])
def test_single_arm_exports_have_no_arm_column(key, real, tmp_path):
    spec = read_spectrum(real(key))
    names, _ = csv_rows(spec)
    assert names == ["wavelength", "flux", "ivar", "mask"]
    out = tmp_path / "one.fits"
    write_fits(spec, out)
    with fits.open(out) as hdul:
        assert "ARMS" not in hdul[0].header
        assert not [h.name for h in hdul if h.name.startswith("SPECTRUM_")]
