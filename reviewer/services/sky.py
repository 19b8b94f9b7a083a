"""Where and when a spectrum was taken, and links to its survey's public pages.

At ingest `survey_ids(meta)` keeps the survey's own ids of a spectrum (LAMOST OBSID; SDSS SPECOBJID
and PLATEID / MJD / FIBERID; DESI TARGETID from the FIBERMAP) and `obs_mjd(meta)` its date. Header
values are untrusted: an id is kept only when it is a plain whole number in its range, so a URL is
only ever built from digits and finite coordinates (and its query is urlencoded all the same).
`survey_links(record)` builds the links; the app only shows them, it never requests them.
"""
from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

_DIGITS = re.compile(r"[+-]?\d{1,20}")
_MAX_ID = 2 ** 63 - 1  # ids are 64-bit integers in the data models (SDSS SPECOBJID unsigned: see survey_ids)
MJD_RANGE = (40000.0, 100000.0)  # 1968 .. 2132: anything else is not an observation date
LAMOST_DEFAULT_DR = 10


def _int(value: Any, lo: int = 1, hi: int = _MAX_ID) -> int | None:
    """A whole number in [lo, hi] from a header value ("701001", 701001, "701001.0" are one), else None."""
    text = str(value).strip() if value is not None else ""
    if text.endswith(".0"):
        text = text[:-2]
    if not _DIGITS.fullmatch(text):
        return None
    number = int(text)
    return number if lo <= number <= hi else None


def _coord(value: Any, lo: float, hi: float) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and lo <= number <= hi else None


def survey_family(survey: str | None) -> str:
    text = str(survey or "").upper()
    for name in ("LAMOST", "SDSS", "DESI"):
        if text.startswith(name):
            return name
    return ""


def survey_ids(meta: dict[str, Any]) -> dict[str, int]:
    """The survey ids a spectrum's links are built from, validated (see the module doc); {} when none."""
    header = meta.get("header") or {}
    family = survey_family(meta.get("survey"))
    ids: dict[str, int | None] = {}
    if family == "LAMOST":
        ids["obsid"] = _int(header.get("OBSID"))
        ids["data_release"] = _int(re.sub(r"\D", "", str(header.get("DATA_V") or "")) or None, 1, 99)
    elif family == "SDSS":
        # an unsigned 64-bit number (plate << 50 | ...) kept in a signed column: plates from 8192 on
        # read negative, as SkyServer's own signed-to-unsigned conversion undoes
        specobjid = _int(meta.get("specobjid"), -(2 ** 63), 2 ** 64 - 1)
        ids["specobjid"] = None if not specobjid else specobjid % 2 ** 64
        ids["plate"] = _int(header.get("PLATEID"), 1, 99999)
        ids["mjd"] = _int(header.get("MJD"), *map(int, MJD_RANGE))
        ids["fiber"] = _int(header.get("FIBERID"), 1, 9999)
    elif family == "DESI":
        # from the FIBERMAP row; negative TARGETIDs are sky and unassigned fibres, no object's page
        ids["targetid"] = _int((meta.get("fibermap") or {}).get("TARGETID"))
    return {k: v for k, v in ids.items() if v is not None}


def obs_mjd(meta: dict[str, Any]) -> float | None:
    """The date of the observation as MJD: the header's MJD (LAMOST, SDSS), DESI's FIBERMAP MEAN_MJD /
    MJD, else the header's DATE-OBS; None when none is a plausible date."""
    header = meta.get("header") or {}
    fibermap = meta.get("fibermap") or {}
    for value in (header.get("MJD"), fibermap.get("MEAN_MJD"), fibermap.get("MJD"), header.get("MJD-OBS")):
        mjd = _coord(value, *MJD_RANGE)
        if mjd is not None:
            return mjd
    try:
        when = datetime.fromisoformat(str(header.get("DATE-OBS") or "").strip()[:19])
    except ValueError:
        return None
    return _coord((when - datetime(1858, 11, 17)).total_seconds() / 86400.0, *MJD_RANGE)


def mjd_to_date(mjd: float | None) -> str:
    """'2011-10-27' for MJD 55861; '' for none."""
    if mjd is None or not math.isfinite(mjd):
        return ""
    return datetime.fromordinal(datetime(1858, 11, 17).toordinal() + int(mjd)).date().isoformat()


def _stored_ids(record: dict[str, Any]) -> dict[str, int]:
    """The ids stored at ingest; for a row stored before there were any, read from its stored header."""
    ids = record.get("survey_ids")
    if isinstance(ids, dict) and ids:
        return {k: v for k, v in ((k, _int(v, 1, 2 ** 64 - 1)) for k, v in ids.items()) if v is not None}
    header = record.get("header") if isinstance(record.get("header"), dict) else {}
    # a DESI target is its TARGETID only when the file had a FIBERMAP (then it is also the object id;
    # else it is a row number)
    target = record.get("target") if record.get("target") == record.get("object_id") else None
    meta = {"survey": record.get("survey"), "header": header, "fibermap": {"TARGETID": target}}
    return survey_ids(meta)


def survey_links(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, https URL) of the public pages about this spectrum and its place in the sky."""
    ids = _stored_ids(record)
    family = survey_family(record.get("survey"))
    links: list[tuple[str, str]] = []
    if family == "LAMOST" and ids.get("obsid", 0) > 0:
        release = ids.get("data_release") or LAMOST_DEFAULT_DR
        page = "medspectrum" if "MRS" in str(record.get("survey")).upper() else "spectrum"
        links.append((f"LAMOST DR{release} obsid {ids['obsid']}",
                      f"https://www.lamost.org/dr{release}/v2.0/{page}/view?" + urlencode({"obsid": ids["obsid"]})))
    if family == "SDSS":
        explore = "https://skyserver.sdss.org/dr18/VisualTools/explore/summary?"
        if ids.get("specobjid", 0) > 0:
            links.append((f"SDSS SkyServer specobjid {ids['specobjid']}", explore + urlencode({"sId": ids["specobjid"]})))
        elif all(ids.get(k, 0) > 0 for k in ("plate", "mjd", "fiber")):
            query = {k: ids[k] for k in ("plate", "mjd", "fiber")}
            links.append((f"SDSS SkyServer {ids['plate']}-{ids['mjd']}-{ids['fiber']}", explore + urlencode(query)))
    if family == "DESI" and ids.get("targetid", 0) > 0:
        # main-survey targets are in DR1; survey validation (sv1-3), cmx and special ones in the EDR
        header = record.get("header") if isinstance(record.get("header"), dict) else {}
        release = "dr1" if str(header.get("SURVEY") or "").strip().lower() == "main" else "edr"
        links.append((f"DESI targetid {ids['targetid']}",
                      f"https://www.legacysurvey.org/viewer/desi-spectrum/{release}/targetid{ids['targetid']}"))
    ra, dec = _coord(record.get("ra"), 0.0, 360.0), _coord(record.get("dec"), -90.0, 90.0)
    if ra is not None and dec is not None:
        query = {"ra": f"{ra:.6f}", "dec": f"{dec:.6f}", "layer": "ls-dr10", "zoom": 16, "mark": f"{ra:.6f},{dec:.6f}"}
        links.append(("Legacy Survey viewer", "https://www.legacysurvey.org/viewer?" + urlencode(query)))
    return links
