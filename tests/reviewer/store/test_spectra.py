"""Spectrum rows: add, get, list with search and filters, file lookups."""
import pytest


def record(n: int, **over):
    base = {
        "spectrum_id": f"id{n:04d}", "source_path": f"/data/lamost/spec-{n}.fits", "target": None,
        "survey": "LAMOST", "object_id": str(1000 + n), "ra": 10.5 + n, "dec": -5.25,
        "pipeline_class": "STAR", "pipeline_subclass": "G2", "pipeline_z": 0.0001, "snr": 30.0 + n,
        "n_pix": 3909, "wave_min": 3690.0, "wave_max": 9100.0, "format": "lamost-lrs-image",
        "wavelength_medium": "vacuum", "file_sha256": f"sha{n}", "header": {"OBSID": str(1000 + n), "COMMENT": "a\nb"},
    }
    base.update(over)
    return base


@pytest.fixture
def filled(store):
    store.spectra.add_spectrum(record(1))
    store.spectra.add_spectrum(record(2, survey="SDSS", pipeline_class="GALAXY", pipeline_subclass=None,
                                      source_path="/data/sdss/spec-0266-51602-0001.fits", object_id="1237648720693755918"))
    store.spectra.add_spectrum(record(3, survey="DESI", pipeline_class="QSO", target="39633345008634465",
                                      source_path="/data/desi/coadd-4-80613.fits", file_sha256="shaD"))
    store.spectra.add_spectrum(record(4, survey="DESI", pipeline_class="GALAXY", target="39633345008634466",
                                      source_path="/data/desi/coadd-4-80613.fits", file_sha256="shaD"))
    return store


def test_get_spectrum_round_trip(filled):
    row = filled.spectra.get_spectrum("id0002")
    assert row["object_id"] == "1237648720693755918"  # int64 id kept exactly, as text
    assert row["file_name"] == "spec-0266-51602-0001.fits"
    assert row["header"] == {"OBSID": "1002", "COMMENT": "a\nb"}
    assert row["ingested_at"].tzinfo is not None
    assert filled.spectra.get_spectrum("nope") is None


def test_search_is_case_insensitive_over_id_survey_class_file(filled):
    assert [r["spectrum_id"] for r in filled.spectra.list_spectra(search="sdss")] == ["id0002"]
    assert [r["spectrum_id"] for r in filled.spectra.list_spectra(search="galaxy")] == ["id0004", "id0002"]
    assert [r["spectrum_id"] for r in filled.spectra.list_spectra(search="755918")] == ["id0002"]
    assert [r["spectrum_id"] for r in filled.spectra.list_spectra(search="COADD-4")] == ["id0003", "id0004"]
    assert filled.spectra.list_spectra(search="%") == []  # not a wildcard
    assert "header" not in filled.spectra.list_spectra()[0]


def test_filters_count_and_paging(filled):
    assert filled.spectra.count_spectra() == 4
    assert filled.spectra.count_spectra(survey="desi") == 2
    assert filled.spectra.count_spectra(klass="galaxy") == 2
    assert filled.spectra.count_spectra(search="desi", klass="QSO") == 1
    page1 = filled.spectra.list_spectra(limit=3)
    page2 = filled.spectra.list_spectra(limit=3, offset=3)
    assert len(page1) == 3 and len(page2) == 1
    assert {r["spectrum_id"] for r in page1 + page2} == {"id0001", "id0002", "id0003", "id0004"}
    assert filled.spectra.spectrum_facets() == {"survey": ["DESI", "LAMOST", "SDSS"], "pipeline_class": ["GALAXY", "QSO", "STAR"]}


def test_file_lookups_and_idempotence(filled):
    assert filled.spectra.has_spectrum_file("shaD", "39633345008634465")
    assert not filled.spectra.has_spectrum_file("shaD", "1")
    assert filled.spectra.has_spectrum_file("sha1") and filled.spectra.has_spectrum_file("sha1", None)
    assert filled.spectra.targets_for_file("shaD") == {"39633345008634465", "39633345008634466"}
    filled.spectra.add_spectrum(record(1, survey="CHANGED"))
    assert filled.spectra.get_spectrum("id0001")["survey"] == "LAMOST"
    assert filled.spectra.count_spectra() == 4


def test_bad_records_are_refused(store):
    with pytest.raises(ValueError, match="file_sha256"):
        store.spectra.add_spectrum({"spectrum_id": "x", "source_path": "a.fits"})
    with pytest.raises(ValueError, match="unknown"):
        store.spectra.add_spectrum(record(1, colour="blue"))
