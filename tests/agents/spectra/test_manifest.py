"""Every row of shared/data/spectra/MANIFEST.csv reads, through read_spectrum and Spectrum.read.

Official labels (LAMOST header, SDSS SPECOBJ/SPALL, a DESI redrock file) must match the manifest.
Rows whose manifest labels were DERIVED here (Redrock run by whoever built the corpus), sky / empty
/ NODATA fibres and per-exposure DESI rows are checked for the documented behaviour instead: no
pipeline labels, and no good pixel for the empty fibres. MRS rows (label from the OBJTYPE header)
are checked against meta['objtype'].
"""
import math

import numpy as np
import pytest
from shared_data import manifest_rows, survey_matches
from specutils import Spectrum

from agents.spectra import read_spectrum

ROWS = manifest_rows()
OFFICIAL = ("LAMOST pipeline header", "SDSS SPECOBJ HDU", "SDSS SPALL HDU",
            "official DESI redrock file", "library spectral type")


def _row_id(row):
    return row["file"]


def _split(row):
    file, _, target = row["file"].partition("#")
    return file, (target or None)


def _check_common(spec, row):
    meta = spec.meta
    assert survey_matches(row["survey"], meta["survey"]), (row["survey"], meta["survey"])
    assert isinstance(meta["object_id"], str) and meta["object_id"]
    assert meta["wavelength_medium"] in ("vacuum", "air")
    wave = spec.spectral_axis.to_value("Angstrom")
    assert np.all(np.diff(wave) > 0)
    assert spec.mask.dtype == bool and spec.mask.shape == wave.shape
    assert type(spec.uncertainty).__name__ == "InverseVariance"
    assert isinstance(meta["snr"], float) and math.isfinite(meta["snr"])
    assert isinstance(meta["header"], dict)
    # Pixel counts: the manifest counts every arm pixel for DESI (overlaps twice) and, for the
    # Pickles library, the covered (flux > 0) pixels.
    if meta["format"].startswith("desi"):
        assert meta["n_arm_pixels"] == int(row["n_pix"])
    elif meta["format"] == "pickles-ascii":
        assert meta["n_good_pixels"] == int(row["n_pix"])
        assert wave[~spec.mask][0] == pytest.approx(float(row["wave_min"]), abs=0.05)
    else:
        assert wave.size == int(row["n_pix"])
        assert wave[0] == pytest.approx(float(row["wave_min"]), abs=0.1)
        assert wave[-1] == pytest.approx(float(row["wave_max"]), abs=0.1)


def _check_labels(spec, row):
    meta = spec.meta
    source = row["label_source"]
    if source.startswith(OFFICIAL):
        assert meta["pipeline_class"] == (row["class"] or None)
        expected_sub = row["subclass"].split(" (")[0] if source.startswith("library") else row["subclass"]
        assert (meta["pipeline_subclass"] or "") == expected_sub
        if row["z"]:
            assert meta["pipeline_z"] == pytest.approx(float(row["z"]), abs=2e-6, rel=1e-5)
        else:
            assert meta["pipeline_z"] is None
        assert meta["labels_source"]
    elif source == "header OBJTYPE":
        assert meta["pipeline_class"] is None and meta["pipeline_z"] is None
        assert meta["objtype"].upper() == row["class"]
    else:  # DERIVED labels and 'none (...)' rows: the files carry no survey label
        assert meta["pipeline_class"] is None
        assert meta["pipeline_subclass"] is None
        assert meta["pipeline_z"] is None
        assert meta["labels_source"] is None
    if source.startswith(("none (sky", "none (redrock ZWARN NODATA")):
        assert spec.mask.all() and meta["n_good_pixels"] == 0 and meta["snr"] == 0.0


@pytest.mark.skipif(not ROWS, reason="shared/data/spectra not found")
@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_manifest_row_reads_with_its_labels(row, shared_spectra):
    file, target = _split(row)
    spec = read_spectrum(shared_spectra / file, target=target)
    _check_common(spec, row)
    _check_labels(spec, row)
    if target is not None:
        assert spec.meta["target"] == target


@pytest.mark.skipif(not ROWS, reason="shared/data/spectra not found")
@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_manifest_row_reads_through_specutils(row, shared_spectra):
    file, target = _split(row)
    kwargs = {"target": target} if target is not None else {}
    spec = Spectrum.read(shared_spectra / file, **kwargs)
    direct = read_spectrum(shared_spectra / file, target=target)
    assert spec.meta["format"] == direct.meta["format"]
    assert spec.meta["object_id"] == direct.meta["object_id"]
    assert spec.meta["pipeline_class"] == direct.meta["pipeline_class"]
    np.testing.assert_array_equal(spec.flux.value, direct.flux.value)
    np.testing.assert_array_equal(spec.mask, direct.mask)
