"""A corpus of broken files, generated from real ones: each fails with SpectrumReadError whose
message names the file and says what is wrong (never a bare astropy/numpy exception)."""
import gzip
import shutil

import numpy as np
import pytest
from astropy.io import fits

from agents.spectra import SpectrumReadError, list_targets, read_spectrum

DESI_COADD, DESI_MULTI, LAMOST_DR7, LAMOST_GZ, SDSS_LEGACY = (
    "DESI_COADD", "DESI_MULTI", "LAMOST_DR7", "LAMOST_GZ", "SDSS_LEGACY")


def _copy(real, tmp_path, rel, name):
    out = tmp_path / name
    shutil.copyfile(real(rel), out)
    return out


def _edit_fits(real, tmp_path, rel, name, edit):
    out = tmp_path / name
    with fits.open(real(rel)) as hdul:
        hdul.readall()
        edit(hdul)
        hdul.writeto(out)
    return out


def _write(tmp_path, name, content):
    out = tmp_path / name
    out.write_bytes(content if isinstance(content, bytes) else content.encode())
    return out


def empty(real, tmp_path):
    return _write(tmp_path, "empty.fits", b""), None


def binary_junk(real, tmp_path):
    return _write(tmp_path, "junk.fits", bytes(np.random.default_rng(1).integers(0, 256, 5000,
                                                                                  dtype=np.uint8))), None


def text_junk(real, tmp_path):
    return _write(tmp_path, "notes.txt", "this is not a spectrum\n"), None


def truncated_data(real, tmp_path):
    raw = real(LAMOST_DR7).read_bytes()
    return _write(tmp_path, "cut-data.fits", raw[:len(raw) // 2]), None


def truncated_header(real, tmp_path):
    return _write(tmp_path, "cut-header.fits", real(LAMOST_DR7).read_bytes()[:1000]), None


def truncated_gzip(real, tmp_path):
    raw = real(LAMOST_GZ).read_bytes()
    return _write(tmp_path, "cut.fits.gz", raw[:len(raw) // 2]), None


def gzip_of_junk(real, tmp_path):
    return _write(tmp_path, "junk.fits.gz", gzip.compress(b"\x00\x01 not fits" * 100)), None


def missing_hdu(real, tmp_path):
    def edit(hdul):
        del hdul["R_IVAR"]
    return _edit_fits(real, tmp_path, DESI_COADD, "coadd-no-rivar.fits", edit), None


def missing_column(real, tmp_path):
    def edit(hdul):
        cols = [c for c in hdul["COADD"].columns if c.name != "ivar"]
        hdul["COADD"] = fits.BinTableHDU.from_columns(cols, name="COADD")
    return _edit_fits(real, tmp_path, SDSS_LEGACY, "spec-no-ivar.fits", edit), None


def unknown_layout(real, tmp_path):
    out = tmp_path / "image.fits"
    fits.PrimaryHDU(np.zeros((10, 10), np.float32)).writeto(out)
    return out, None


def all_nan_flux(real, tmp_path):
    def edit(hdul):
        hdul[0].data[0] = np.nan
    return _edit_fits(real, tmp_path, LAMOST_DR7, "nan-flux.fits", edit), None


def non_monotonic(real, tmp_path):
    rows = "wavelength,flux\n4000,1\n4002,2\n4001,3\n4003,4\n"
    return _write(tmp_path, "shuffled.csv", rows), None


def zero_length(real, tmp_path):
    def edit(hdul):
        cols = [fits.Column(name=c.name, format=c.format, array=np.zeros(0, c.dtype))
                for c in hdul["COADD"].columns]
        hdul["COADD"] = fits.BinTableHDU.from_columns(cols, name="COADD")
    return _edit_fits(real, tmp_path, SDSS_LEGACY, "spec-empty-coadd.fits", edit), None


def mismatched_rows(real, tmp_path):
    return _write(tmp_path, "ragged.csv", "wavelength,flux,ivar\n4000,1,1\n4001,2\n4002,3,1\n"), None


def mismatched_arm(real, tmp_path):
    def edit(hdul):
        hdul["B_IVAR"].data = hdul["B_IVAR"].data[:, :100]
    return _edit_fits(real, tmp_path, DESI_COADD, "coadd-short-ivar.fits", edit), None


def target_missing(real, tmp_path):
    return _copy(real, tmp_path, DESI_MULTI, "coadd-5-169.fits"), "12345"


def target_needed(real, tmp_path):
    return _copy(real, tmp_path, DESI_MULTI, "coadd-5-169.fits"), None


def target_on_single(real, tmp_path):
    return _copy(real, tmp_path, LAMOST_DR7, "lamost.fits"), "42"


def no_wavelength_solution(real, tmp_path):
    def edit(hdul):
        del hdul[0].header["COEFF0"]
    return _edit_fits(real, tmp_path, LAMOST_DR7, "no-coeff.fits", edit), None


def negative_wavelength(real, tmp_path):
    return _write(tmp_path, "negative.csv", "wavelength,flux\n-1,1\n0,1\n1,1\n"), None


def non_numeric_cell(real, tmp_path):
    return _write(tmp_path, "text-cell.csv", "wavelength,flux\n4000,1\n4001,abc\n"), None


def missing_file(real, tmp_path):
    return tmp_path / "nowhere.fits", None


def corrupt_naxis(real, tmp_path):
    raw = bytearray(real(LAMOST_DR7).read_bytes())
    i = raw.index(b"NAXIS1  =")
    raw[i:i + 80] = b"NAXIS1  = 'many'".ljust(80)
    return _write(tmp_path, "bad-naxis.fits", bytes(raw)), None


CASES = [
    (empty, r"empty file"),
    (binary_junk, r"not FITS and not a text table"),
    (text_junk, r"header row but no data rows"),
    (truncated_data, r"truncated FITS file"),
    (truncated_header, r"truncated FITS file \(header"),
    (truncated_gzip, r"truncated gzip"),
    (gzip_of_junk, r"not FITS and not a text table"),
    (missing_hdu, r"missing HDU R_IVAR"),
    (missing_column, r"lacks the ivar column"),
    (unknown_layout, r"unknown FITS layout"),
    (all_nan_flux, r"flux is all NaN"),
    (non_monotonic, r"wavelength is not monotonic"),
    (zero_length, r"zero-length spectrum arrays"),
    (mismatched_rows, r"mismatched row lengths"),
    (mismatched_arm, r"array lengths differ in the B arm"),
    (target_missing, r"target 12345 not in file"),
    (target_needed, r"holds 5 spectra: pass target=.*list_targets"),
    (target_on_single, r"target '42' not in file: a lamost-lrs-image file holds one spectrum"),
    (no_wavelength_solution, r"lacks the COEFF0/COEFF1"),
    (negative_wavelength, r"zero or negative"),
    (non_numeric_cell, r"non-numeric value"),
    (missing_file, r"file not found"),
    (corrupt_naxis, r"corrupt FITS header"),
]


@pytest.mark.parametrize("build, problem", CASES, ids=[c[0].__name__ for c in CASES])
def test_broken_file_raises_named_error(build, problem, real, tmp_path):
    path, target = build(real, tmp_path)
    with pytest.raises(SpectrumReadError, match=problem) as info:
        read_spectrum(path, target=target)
    err = info.value
    assert str(err).startswith(path.name + ": ")
    assert err.path == str(path) and err.problem
    assert isinstance(err, ValueError)


def test_each_broken_file_gets_its_own_diagnosis(real, tmp_path):
    """The messages tell the cases apart: a reviewer can act on each (not one catch-all 'cannot read')."""
    messages = []
    for build, _ in CASES:
        folder = tmp_path / build.__name__
        folder.mkdir()
        path, target = build(real, folder)
        with pytest.raises(SpectrumReadError) as info:
            read_spectrum(path, target=target)
        messages.append(info.value.problem)
    # cases expecting different problems get different messages (junk gzipped is still junk)
    assert len(set(messages)) == len({problem for _, problem in CASES})


@pytest.mark.parametrize("build", [empty, binary_junk, truncated_data, truncated_gzip, missing_file],
                         ids=lambda f: f.__name__)
def test_list_targets_raises_the_same_error(build, real, tmp_path):
    path, _ = build(real, tmp_path)
    with pytest.raises(SpectrumReadError, match=path.name):
        list_targets(path)


def test_all_ivar_zero_reads_fully_masked(real, tmp_path):
    """Documented: no good pixel is not an error; the spectrum is fully masked with S/N 0."""
    def edit(hdul):
        hdul[0].data[1] = 0.0
    path = _edit_fits(real, tmp_path, LAMOST_DR7, "no-ivar.fits", edit)
    spec = read_spectrum(path)
    assert spec.mask.all()
    assert spec.meta["n_good_pixels"] == 0 and spec.meta["snr"] == 0.0
