"""Format details: LAMOST layouts and labels, SDSS units and ids, Pickles, plain tables."""
import io

import astropy.units as u
import numpy as np
import pytest
from astropy.io import fits
from scipy.optimize import curve_fit
from specutils import Spectrum

from agents.spectra import SpectrumReadError, blank_pipeline_labels, file_format, read_spectrum


def test_lamost_image_wavelengths_and_mask(real):
    path = real("LAMOST_DR7")
    spec = read_spectrum(path)
    with fits.open(path) as h:
        data, hdr = h[0].data, h[0].header
    wave = spec.spectral_axis.to_value(u.AA)
    np.testing.assert_allclose(wave, 10 ** (hdr["COEFF0"] + hdr["COEFF1"] * np.arange(data.shape[1])))
    np.testing.assert_allclose(wave, data[2], rtol=1e-6)   # DR5+ also store it (float32) in row 2
    np.testing.assert_array_equal(spec.mask, (data[1] <= 0) | (data[3] != 0))
    meta = spec.meta
    assert meta["object_id"] == str(hdr["OBSID"]) and meta["wavelength_medium"] == "vacuum"
    assert meta["survey"] == "LAMOST-LRS DR7" and meta["header"]["CLASS"] == "STAR"
    assert spec.flux.unit == u.dimensionless_unscaled


def test_lamost_without_obsid_gets_spectrum_name(real):
    meta = read_spectrum(real("LAMOST_DR1")).meta
    assert meta["object_id"] == "spec-55862-B6212_sp06-005" and meta["survey"] == "LAMOST-LRS"


def test_lamost_unknown_class_has_no_redshift(real):
    meta = read_spectrum(real("LAMOST_UNKNOWN")).meta
    assert meta["pipeline_class"] == "Unknown" and meta["pipeline_z"] is None


def test_lamost_table_layout_reads_like_the_image(real, tmp_path):
    """No DR8+ table-layout file is in the corpus: build one from a real image-layout file
    (HDU 1 'COADD', one row, array columns) and check both read the same."""
    src = real("LAMOST_DR7")
    with fits.open(src) as h:
        hdr, data = h[0].header.copy(), h[0].data
    n = data.shape[1]
    cols = [fits.Column(name=name, format=f"{n}{fmt}", array=arr[None, :])
            for name, fmt, arr in [("FLUX", "E", data[0]), ("IVAR", "E", data[1]),
                                   ("WAVELENGTH", "D", 10 ** (hdr["COEFF0"] + hdr["COEFF1"] * np.arange(n))),
                                   ("ANDMASK", "J", data[3].astype(np.int32)),
                                   ("ORMASK", "J", data[4].astype(np.int32))]]
    for key in ("NAXIS1", "NAXIS2"):
        hdr.remove(key, ignore_missing=True)
    out = tmp_path / "spec-table.fits"
    fits.HDUList([fits.PrimaryHDU(header=hdr), fits.BinTableHDU.from_columns(cols, name="COADD")]).writeto(out)
    table, image = read_spectrum(out), read_spectrum(src)
    assert table.meta["format"] == "lamost-lrs-table" and file_format(out) == "lamost-lrs-table"
    np.testing.assert_allclose(table.flux.value, image.flux.value)
    np.testing.assert_array_equal(table.mask, image.mask)
    assert table.meta["pipeline_subclass"] == image.meta["pipeline_subclass"]


def test_lamost_mrs_merges_blue_and_red(real):
    path = real("LAMOST_MRS")
    spec = read_spectrum(path)
    with fits.open(path) as h:
        nb, nr = len(h["COADD_B"].data), len(h["COADD_R"].data)
    wave = spec.spectral_axis.to_value(u.AA)
    assert wave.size == nb + nr and np.all(np.diff(wave) > 0)
    assert wave[nb - 1] < 5400 < 6200 < wave[nb]
    assert spec.meta["objtype"] == "Star" and spec.meta["pipeline_class"] is None


def test_sdss_units_ids_and_survey(real):
    legacy = read_spectrum(real("SDSS_LEGACY"))
    assert legacy.flux.unit == u.Unit("1e-17 erg / (s cm2 Angstrom)")
    assert legacy.meta["object_id"] == "0295-51585-0596" and legacy.meta["survey"] == "SDSS"
    boss = read_spectrum(real("SDSS_BOSS"))
    assert boss.meta["survey"] == "SDSS-III BOSS" and boss.meta["object_id"] == "4455-55539-0692"
    with fits.open(real("SDSS_LEGACY")) as h:
        coadd = h["COADD"].data
        specobjid = str(h["SPECOBJ"].data["SPECOBJID"][0]).strip()
    assert legacy.meta["specobjid"] == specobjid and specobjid.isdigit()
    no_data_bits = (1 << 18) | (1 << 22) | (1 << 23) | (1 << 24)   # FULLREJECT NOSKY BRIGHTSKY NODATA
    np.testing.assert_array_equal(legacy.mask, (coadd["and_mask"] & no_data_bits != 0) | (coadd["ivar"] <= 0))
    good = ~legacy.mask
    expected = np.median(coadd["flux"][good] * np.sqrt(coadd["ivar"][good]))
    assert legacy.meta["snr"] == pytest.approx(expected, rel=1e-6)


def test_specutils_format_label_is_enforced(real):
    assert Spectrum.read(real("SDSS_LEGACY"), format="sdss-spec").meta["format"] == "sdss-spec"
    with pytest.raises(SpectrumReadError, match="is not a lamost-lrs-image file"):
        Spectrum.read(real("SDSS_LEGACY"), format="lamost-lrs-image")


def test_pickles_is_air_measured_on_balmer_lines(real):
    """The documented medium: B5-7V Balmer centroids sit at air, not vacuum, wavelengths."""
    spec = read_spectrum(real("PICKLES_B57V"))
    assert spec.meta["wavelength_medium"] == "air"
    wave, flux = spec.spectral_axis.to_value(u.AA), spec.flux.value
    model = lambda x, a, mu, s, c0, c1: c0 + c1 * (x - mu) - a * np.exp(-0.5 * ((x - mu) / s) ** 2)  # noqa: E731
    offsets_air, offsets_vac = [], []
    for air, vac in [(6562.80, 6564.61), (4861.32, 4862.68), (4340.46, 4341.68)]:
        sel = np.abs(wave - air) < 60
        p, _ = curve_fit(model, wave[sel], flux[sel], p0=[np.ptp(flux[sel]), air, 10, flux[sel].max(), 0])
        offsets_air.append(p[1] - air)
        offsets_vac.append(p[1] - vac)
    assert abs(np.mean(offsets_air)) < abs(np.mean(offsets_vac))
    assert abs(np.mean(offsets_air)) < 0.8


def test_pickles_meta_and_coverage(real):
    spec = read_spectrum(real("PICKLES_M10III"))
    meta = spec.meta
    assert (meta["pipeline_class"], meta["pipeline_subclass"]) == ("STAR", "M10III")
    assert meta["survey"] == "Pickles 1998 stellar flux library"
    assert spec.mask[spec.spectral_axis.to_value(u.AA) < 2000].all()   # no coverage there
    assert meta["ivar_estimated"] > 0                                   # file has no sd column


@pytest.mark.parametrize("text, n, has_err", [
    ("wavelength,flux,ivar\n4000,1,4\n4001,2,4\n4002,3,0\n", 3, False),
    ("# flux_unit: erg / (s cm2 Angstrom)\nwave flux err\n4000 1 0.5\n4001 2 0.5\n4002 3 0.5\n", 3, True),
    ("4002 3 0.5\n4001 2 0.5\n4000 1 0.5\n", 3, True),                   # headerless, descending
])
def test_plain_tables(text, n, has_err, tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(text)
    spec = read_spectrum(path)
    wave = spec.spectral_axis.to_value(u.AA)
    assert wave.tolist() == [4000.0, 4001.0, 4002.0] and spec.flux.value.tolist() == [1.0, 2.0, 3.0]
    if has_err:
        np.testing.assert_allclose(spec.uncertainty.array, 4.0)
    else:
        assert spec.mask.tolist() == [False, False, True]
    assert spec.meta["wavelength_medium"] == "unknown" and spec.meta["format"] == "ascii-table"


def test_ecsv_with_units(tmp_path):
    from astropy.table import Table
    t = Table({"wavelength": [400.0, 400.1, 400.2] * u.nm, "flux": [1.0, 2.0, 3.0] * u.Jy,
               "ivar": [1.0, 1.0, 1.0]})
    out = io.StringIO()
    t.write(out, format="ascii.ecsv")
    path = tmp_path / "t.ecsv"
    path.write_text(out.getvalue())
    spec = read_spectrum(path)
    np.testing.assert_allclose(spec.spectral_axis.to_value(u.AA), [4000.0, 4001.0, 4002.0])
    assert spec.flux.unit == u.Jy and spec.meta["format"] == "ecsv-table"


def test_blank_pipeline_labels_hides_answers(real):
    spec = read_spectrum(real("LAMOST_DR7"))
    blank = blank_pipeline_labels(spec)
    assert spec.meta["pipeline_class"] == "STAR"                       # original untouched
    assert blank.meta["pipeline_class"] is None and blank.meta["pipeline_z"] is None
    assert blank.meta["pipeline_subclass"] is None and blank.meta["labels_source"] is None
    for key in ("CLASS", "SUBCLASS", "Z", "Z_ERR", "OBJTYPE"):
        assert key in spec.meta["header"] and key not in blank.meta["header"]
    assert blank.meta["object_id"] == spec.meta["object_id"]
    np.testing.assert_array_equal(blank.flux.value, spec.flux.value)
    desi = blank_pipeline_labels(read_spectrum(real("DESI_COADD")))
    assert desi.meta["pipeline_zwarn"] is None
    assert not any(k.endswith("_TARGET") for k in desi.meta["fibermap"])
