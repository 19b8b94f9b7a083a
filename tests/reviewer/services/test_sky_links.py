"""Links out to each survey's public page, built from the right header keys of real files; header
values are untrusted: only validated numbers and coordinates reach a URL."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from agents.spectra import read_spectrum
from reviewer.services.ingest import spectrum_record
from reviewer.services.sky import mjd_to_date, obs_mjd, survey_ids, survey_links

LAMOST = "lamost_junhui_ccf/spec-55859-F5907_sp03-090.fits.gz"
LAMOST_MRS = "lamost_laspec/med-58268-HIP95119KP01_sp12-076.fits.gz"
SDSS = "sdss_gelato/spec-0269-51581-0003.fits"
DESI = "desi_specutils/coadd-sv3-dark-26065.fits"
DESI_TARGET = "39627866878511337"


def record(base: Path, name: str, target: str | None = None) -> tuple[dict, dict]:
    spec = read_spectrum(base / name, target=target)
    return spectrum_record(spec, base / name, "0" * 64, target), spec.meta


def links(rec: dict) -> dict[str, str]:
    return {label.split()[0]: url for label, url in survey_links(rec)}


def test_lamost_links_by_obsid_and_release(shared_spectra):
    rec, meta = record(shared_spectra, LAMOST)
    header = meta["header"]
    assert rec["survey_ids"] == {"obsid": int(header["OBSID"]), "data_release": 8}  # OBSID, DATA_V
    assert links(rec)["LAMOST"] == f"https://www.lamost.org/dr8/v2.0/spectrum/view?obsid={header['OBSID']}"
    assert rec["obs_mjd"] == float(header["MJD"]) and mjd_to_date(rec["obs_mjd"]) == header["DATE-OBS"][:10]
    mrs, _ = record(shared_spectra, LAMOST_MRS)
    assert links(mrs)["LAMOST"].startswith("https://www.lamost.org/dr7/v2.0/medspectrum/view?obsid=666212076")


def test_sdss_links_by_specobjid_else_plate_mjd_fiber(shared_spectra):
    rec, meta = record(shared_spectra, SDSS)
    header = meta["header"]
    specobjid = int(meta["specobjid"])  # the SPECOBJ row's SPECOBJID
    assert specobjid >> 50 == int(header["PLATEID"]) == 269  # the id encodes the plate: the same spectrum
    url = urlsplit(links(rec)["SDSS"])
    assert url.netloc == "skyserver.sdss.org" and parse_qs(url.query) == {"sId": [str(specobjid)]}
    assert rec["obs_mjd"] == float(header["MJD"])
    without = survey_ids({**meta, "specobjid": None})
    rec_pmf = {**rec, "survey_ids": without}
    assert parse_qs(urlsplit(links(rec_pmf)["SDSS"]).query) == {
        "plate": [header["PLATEID"]], "mjd": [header["MJD"]], "fiber": [header["FIBERID"]]}


def test_desi_links_by_fibermap_targetid(shared_spectra):
    rec, meta = record(shared_spectra, DESI, DESI_TARGET)
    assert meta["fibermap"]["TARGETID"] == DESI_TARGET
    assert rec["survey_ids"] == {"targetid": int(DESI_TARGET)}
    assert links(rec)["DESI"] == f"https://www.legacysurvey.org/viewer/desi-spectrum/edr/targetid{DESI_TARGET}"
    sky, _ = record(shared_spectra, DESI, "-2713437")  # a sky fibre: no object page
    assert "DESI" not in links(sky)
    main = {**rec, "header": {**rec["header"], "SURVEY": "main"}}
    assert "/desi-spectrum/dr1/targetid" in links(main)["DESI"]


def test_a_specobjid_read_as_negative_is_the_unsigned_one():
    big = (9000 << 50) | 12345  # a plate past 8192: the signed column holds it negative
    meta = {"survey": "SDSS-III BOSS", "specobjid": str(big - 2 ** 64), "header": {}}
    assert survey_ids(meta) == {"specobjid": big}
    assert links({"survey": "SDSS", "survey_ids": survey_ids(meta)})["SDSS"].endswith(f"sId={big}")


def test_legacy_survey_viewer_at_the_coordinates(shared_spectra):
    rec, meta = record(shared_spectra, DESI, DESI_TARGET)
    query = parse_qs(urlsplit(links(rec)["Legacy"]).query)
    assert float(query["ra"][0]) == pytest.approx(float(meta["fibermap"]["TARGET_RA"]), abs=1e-6)
    assert float(query["dec"][0]) == pytest.approx(float(meta["fibermap"]["TARGET_DEC"]), abs=1e-6)


@pytest.mark.parametrize("obsid", ["1 onclick=alert(1)", "12&x=<b>", "javascript:1", "1e5", "-5", "0", "9" * 30])
def test_hostile_header_values_make_no_link(obsid):
    rec = {"survey": "LAMOST-LRS DR7", "header": {"OBSID": obsid, "DATA_V": "LAMOST DR7"}, "ra": "1); x", "dec": 5}
    assert survey_links(rec) == []


def test_old_rows_link_from_their_stored_header():
    rec = {"survey": "SDSS", "header": {"PLATEID": "269", "MJD": "51581", "FIBERID": "3"}, "ra": 10.0, "dec": -1.0}
    assert links(rec)["SDSS"].endswith("summary?plate=269&mjd=51581&fiber=3")
    desi_rows = {"survey": "DESI", "target": "7", "object_id": "test_coadd#7", "header": {}}
    assert survey_links(desi_rows) == []  # a row number, not a TARGETID
    assert obs_mjd({"header": {"DATE-OBS": "2011-10-27T12:56:00"}}) == pytest.approx(55861.539, abs=1e-3)
