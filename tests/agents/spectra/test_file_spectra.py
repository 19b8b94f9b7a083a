"""FileSpectra: every spectrum of a file from one read of it, the same spectra and errors as
list_targets and read_spectrum give one target at a time."""
import numpy as np
import pytest

import agents.spectra.read as read_mod
from agents.spectra import FileSpectra, SpectrumReadError, list_targets, read_spectrum


def _same(a, b):
    return (np.array_equal(a.spectral_axis.value, b.spectral_axis.value)
            and np.array_equal(a.flux.value, b.flux.value, equal_nan=True) and a.flux.unit == b.flux.unit
            and a.meta.get("target") == b.meta.get("target") and a.meta.get("object_id") == b.meta.get("object_id"))


@pytest.mark.parametrize("key", ["DESI_MULTI", "DESI_SPECTRA", "DESI_NOIDS", "LAMOST_GZ", "SDSS_BOSS", "PICKLES_B57V"])
def test_the_spectra_of_a_file_read_once_are_those_read_one_target_at_a_time(real, key, monkeypatch):
    path = real(key)
    targets = list_targets(path) or [None]
    expected = [read_spectrum(path, t) for t in targets]
    loads = []
    original = read_mod.load_fits
    monkeypatch.setattr(read_mod, "load_fits", lambda *a: loads.append(a) or original(*a))
    spectra = FileSpectra(path)
    got = [spectra.read(t) for t in spectra.targets]
    assert spectra.targets == targets
    assert all(_same(g, e) for g, e in zip(got, expected, strict=True))
    assert len(loads) <= 1  # one parse for every target (none for a text table)


def test_a_bad_file_or_target_is_refused_naming_the_file(real, tmp_path):
    junk = tmp_path / "junk.fits"
    junk.write_bytes(b"SIMPLE  =                    T" + b"\x00" * 50)
    with pytest.raises(SpectrumReadError, match=r"junk\.fits"):
        FileSpectra(junk).read(None)
    single = FileSpectra(real("LAMOST_GZ"))
    with pytest.raises(SpectrumReadError, match="target 'x' not in file"):
        single.read("x")
    with pytest.raises(SpectrumReadError, match="coadd-5-169"):
        FileSpectra(real("DESI_MULTI")).read("12345")
