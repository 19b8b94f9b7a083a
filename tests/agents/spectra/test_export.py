"""CSV and FITS exports read back through read_spectrum with the same arrays and metadata."""
import io

import numpy as np
import pytest

from agents.spectra import read_spectrum, write_csv, write_fits


def _same(a, b):
    np.testing.assert_allclose(a.spectral_axis.value, b.spectral_axis.value, rtol=1e-12)
    np.testing.assert_allclose(a.flux.value, b.flux.value, rtol=1e-7)
    np.testing.assert_allclose(a.uncertainty.array, b.uncertainty.array, rtol=1e-7)
    np.testing.assert_array_equal(a.mask, b.mask)
    assert a.flux.unit == b.flux.unit
    for key in ("survey", "object_id", "pipeline_class", "pipeline_subclass", "wavelength_medium",
                "ra", "dec"):
        assert a.meta[key] == b.meta[key], key
    assert a.meta["pipeline_z"] == pytest.approx(b.meta["pipeline_z"])


@pytest.mark.parametrize("key", ["LAMOST_DR7", "SDSS_LEGACY", "DESI_COADD"])
def test_csv_round_trip(key, real, tmp_path):
    spec = read_spectrum(real(key))
    path = tmp_path / "out.csv"
    write_csv(spec, path)
    back = read_spectrum(path)
    _same(spec, back)
    assert back.meta["format"] == "ascii-table"
    assert path.read_text().splitlines()[0].startswith("# SpecReview")


@pytest.mark.parametrize("key", ["LAMOST_DR7", "SDSS_BOSS", "DESI_COADD", "PICKLES_B57V"])
def test_fits_round_trip(key, real, tmp_path):
    spec = read_spectrum(real(key))
    path = tmp_path / "out.fits"
    write_fits(spec, path)
    back = read_spectrum(path)
    _same(spec, back)
    assert back.meta["format"] == "specreview-table"
    assert back.meta["original_format"] == spec.meta["format"]
    assert back.meta["header"] == spec.meta["header"]


def test_exports_to_buffers(real):
    spec = read_spectrum(real("LAMOST_GZ"))
    text, binary, fitsbuf = io.StringIO(), io.BytesIO(), io.BytesIO()
    write_csv(spec, text)
    write_csv(spec, binary)
    assert text.getvalue().encode() == binary.getvalue()
    write_fits(spec, fitsbuf)
    _same(spec, read_spectrum(io.BytesIO(fitsbuf.getvalue())))
    _same(spec, read_spectrum(io.BytesIO(binary.getvalue())))
