"""LAMOST readers: LRS primary-image layout, LRS binary-table layout, MRS B+R coadds.

LRS image (DR1-DR7): primary HDU 5 x N, rows flux, ivar, (wavelength in DR5+; another vector in
DR1), andmask, ormask; the wavelength grid comes from the log-linear COEFF0/COEFF1 keys, which
every release writes. LRS table (DR8+ "v2.0"): HDU 1 is a one-row binary table with array
columns FLUX, IVAR, WAVELENGTH, ANDMASK, ORMASK. MRS (`med-*.fits`): COADD_B and COADD_R tables
with one pixel per row (FLUX, IVAR, LOGLAM, ANDMASK, ORMASK); an arm written red to blue is turned
around (core.ascending), a non-monotonic one is refused naming it; the arms do not overlap, so they
are concatenated. LAMOST wavelengths are vacuum and heliocentric (VACUUM = T in every header).
LAMOST fluxes are relatively calibrated with no unit keyword: flux is dimensionless.

Masks (LAMOST FITS data model: https://www.lamost.org/public/dr/algorithms/ff, and the data
production descriptions of each release, e.g. http://dr6.lamost.org/v1.1/doc/lr-data-production-
description for LRS, http://dr7.lamost.org/v1/doc/mr-data-production-description for MRS): the
and mask marks a pixel bad in all of its exposures, the or mask bad in at least one; both are
per-pixel (no fibre-level notes as in SDSS). A pixel is bad when ANDMASK != 0 or IVAR <= 0;
ORMASK alone is not a mask, since the coadd still has the other exposures' measurement there.
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from .arms import arm_runs
from .core import ascending, build_spectrum, clean_float, clean_id, clean_label, clean_z, header_text
from .errors import SpectrumReadError
from .fitsraw import RawFits
from .sniff import LAMOST_LRS_IMAGE, LAMOST_LRS_TABLE, LAMOST_MRS


def survey_name(header, kind: str) -> str:
    """'LAMOST-LRS DR7' when the header names its release (DATA_V), else 'LAMOST-LRS'."""
    release = re.search(r"DR\s*(\d+)", str(header.get("DATA_V", "")).upper())
    return f"LAMOST-{kind} DR{release.group(1)}" if release else f"LAMOST-{kind}"


def spectrum_id(header, path: str) -> str:
    """OBSID when present; else the spec-LMJD-PLANID_spSS-FFF name rebuilt from header keys."""
    obsid = clean_id(header.get("OBSID"))
    if obsid:
        return obsid
    try:
        return (f"spec-{int(header['LMJD'])}-{str(header['PLANID']).strip()}"
                f"_sp{int(header['SPID']):02d}-{int(header['FIBERID']):03d}")
    except (KeyError, ValueError, TypeError):
        name = str(path).replace("\\", "/").rsplit("/", 1)[-1]
        return re.sub(r"\.fits?(\.gz)?$", "", name, flags=re.I)


def _first_float(header, *keys: str) -> float | None:
    return next((v for v in (clean_float(header.get(k)) for k in keys) if v is not None), None)


def _common_meta(header, path: str, kind: str, fmt: str) -> dict[str, Any]:
    medium = "air" if header.get("VACUUM") is False else "vacuum"
    return {
        "survey": survey_name(header, kind),
        "object_id": spectrum_id(header, path),
        "target": None,
        # the input catalogue's position; the fibre's pointing (RA_OBS) when a file lacks it
        "ra": _first_float(header, "RA", "RA_OBS"),
        "dec": _first_float(header, "DEC", "DEC_OBS"),
        "format": fmt,
        "wavelength_medium": medium,
        "header": header_text(header),
        "objtype": clean_label(header.get("OBJTYPE")),
        "designation": clean_label(header.get("DESIG")),
        "data_release": clean_label(header.get("DATA_V")),
    }


def _labels(header) -> dict[str, Any]:
    cls = clean_label(header.get("CLASS"))
    return {
        "pipeline_class": cls,
        "pipeline_subclass": clean_label(header.get("SUBCLASS")),
        "pipeline_z": clean_z(header.get("Z")),
        "pipeline_z_err": clean_z(header.get("Z_ERR")),
        "labels_source": "LAMOST pipeline header (CLASS/SUBCLASS/Z)" if cls else None,
    }


def read_lrs_image(fits: RawFits, path: str, target=None):
    header = fits[0].header
    data = fits[0].image()
    if data is None or data.ndim != 2 or data.shape[0] < 2:
        raise SpectrumReadError(path, f"LAMOST primary image has shape {getattr(data, 'shape', None)};"
                                      " expected 5 x N rows (flux, ivar, ..., andmask, ormask)")
    n = data.shape[1]
    try:
        c0, c1 = float(header["COEFF0"]), float(header["COEFF1"])
    except (KeyError, ValueError, TypeError):
        raise SpectrumReadError(path, "LAMOST header lacks the COEFF0/COEFF1 wavelength solution") from None
    if not (math.isfinite(c0) and math.isfinite(c1)):
        raise SpectrumReadError(path, f"no usable wavelength solution (COEFF0 = {c0}, COEFF1 = {c1})")
    if c1 == 0:
        raise SpectrumReadError(path, f"no wavelength step (COEFF1 = 0): every pixel would sit at "
                                      f"{10.0 ** c0:.6g} A" if c0 < 300 else "no wavelength step (COEFF1 = 0)")
    # COEFF1 < 0 is a descending log-linear grid: build_spectrum turns it (and every array) around.
    with np.errstate(over="ignore"):
        wave = 10.0 ** (c0 + c1 * np.arange(n))
    meta = _common_meta(header, path, "LRS", LAMOST_LRS_IMAGE)
    meta.update(_labels(header))
    bad = (np.nan_to_num(data[3]) != 0) if data.shape[0] >= 5 else None
    return build_spectrum(path, wave, data[0], data[1], meta, bad=bad)


def read_lrs_table(fits: RawFits, path: str, target=None):
    header = fits[0].header
    table = fits[1].table()
    if len(table) == 0:
        raise SpectrumReadError(path, "LAMOST COADD table has no rows (zero-length spectrum arrays)")
    for need in ("FLUX", "IVAR", "WAVELENGTH"):
        if not table.has(need):
            raise SpectrumReadError(path, f"LAMOST COADD table lacks the {need} column")
    bad = (table.col("ANDMASK")[0] != 0) if table.has("ANDMASK") else None
    meta = _common_meta(header, path, "LRS", LAMOST_LRS_TABLE)
    meta.update(_labels(header))
    return build_spectrum(path, table.col("WAVELENGTH")[0], table.col("FLUX")[0],
                          table.col("IVAR")[0], meta, bad=bad)


def read_mrs(fits: RawFits, path: str, target=None):
    header = fits[0].header
    arms, used = [], []
    for ext in ("COADD_B", "COADD_R"):
        if ext not in fits:
            continue
        table = fits[ext].table()
        if len(table) == 0:
            continue
        for need in ("FLUX", "IVAR", "LOGLAM"):
            if not table.has(need):
                raise SpectrumReadError(path, f"LAMOST MRS {ext} lacks the {need} column")
        wave = 10.0 ** table.col("LOGLAM").astype(np.float64).ravel()
        flux = table.col("FLUX").ravel()
        ivar = table.col("IVAR").ravel()
        bad = (table.col("ANDMASK").ravel() != 0 if table.has("ANDMASK")
               else np.zeros(wave.size, bool))
        if not (wave.size == flux.size == ivar.size == bad.size):
            raise SpectrumReadError(path, f"array lengths differ in {ext} (wavelength {wave.size}, "
                                          f"flux {flux.size}, ivar {ivar.size})")
        arms.append(ascending(path, wave, flux, ivar, bad, arm=ext))
        used.append(ext)
    if not arms:
        raise SpectrumReadError(path, "LAMOST MRS file has no COADD_B/COADD_R data")
    order = np.argsort([a[0][0] for a in arms])
    wave, flux, ivar, bad = (np.concatenate([arms[k][i] for k in order]) for i in range(4))
    meta = _common_meta(header, path, "MRS", LAMOST_MRS)
    # MRS coadds carry no CLASS/SUBCLASS/Z: the only type is the input catalogue's OBJTYPE.
    # the arms do not overlap: each is its own run of the concatenated pixels (arms.arm_ids)
    meta.update({"pipeline_class": None, "pipeline_subclass": None, "pipeline_z": None,
                 "labels_source": None, "arms": used,
                 "arm_pixels": arm_runs(wave, [(used[k][-1], arms[k][0][0], arms[k][0][-1]) for k in order])})
    return build_spectrum(path, wave, flux, ivar, meta, bad=bad)


READERS = {
    LAMOST_LRS_IMAGE: read_lrs_image,
    LAMOST_LRS_TABLE: read_lrs_table,
    LAMOST_MRS: read_mrs,
}
