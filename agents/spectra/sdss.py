"""SDSS legacy and BOSS `spec-PLATE-MJD-FIBER.fits` files (any file name).

COADD HDU: one row per pixel with loglam, flux, ivar, and_mask, or_mask (vacuum wavelengths,
flux in 1e-17 erg/s/cm2/A, stated in the primary BUNIT). Labels come from the SPECOBJ HDU
(DR8+ legacy files) or the SPALL HDU (BOSS-era files): CLASS, SUBCLASS, Z, ZWARNING.
A pixel is bad when ivar <= 0, flux is not finite, or its and_mask (set in every exposure) has a
pixel bit meaning no usable data (see BAD_PIXEL_BITS); fibre-level bits go to meta['fiber_flags'].
"""
from __future__ import annotations

import numpy as np

from .core import build_spectrum, clean_float, clean_id, clean_label, clean_z, header_text, parse_flux_unit
from .errors import SpectrumReadError
from .fitsraw import RawFits
from .sniff import SDSS_SPEC

DEFAULT_BUNIT = "1e-17 erg / (s cm2 Angstrom)"

# SPPIXMASK, the and_mask / or_mask bits (SDSS data model: https://www.sdss4.org/dr17/algorithms/
# bitmasks/#SPPIXMASK; quotes from https://www.sdss3.org/dr10/algorithms/bitmask_sppixmask.php).
# Bits 0-15 "indicate something about the spectrum as a whole, or at least about its red or blue
# half" and are set on every pixel of that half: MANYBADCOLUMNS ("more than 10% of pixels are bad
# columns") on a fibre says nothing about the other 90 %. They never mask; meta['fiber_flags']
# keeps them. Bits 16-31 are about the pixel. The data model: "the conditions that are considered
# very bad are already used to set ... the inverse variance to zero", which it notes for FULLREJECT,
# NOSKY and NODATA (kept here too, for files whose ivar does not show it), and "the most useful
# mask bit to look at is BRIGHTSKY": sky so bright relative to the object that its flux there is
# not to be trusted (SDSS's redshift fit, idlspec2d skymask, drops them too, grown by 2 px). The other
# pixel bits (NEARBADPIXEL, LOWFLAT, PARTIALREJECT, SCATTEREDLIGHT, CROSSTALK, COMBINEREJ,
# BADFLUXFACTOR, BADSKYCHI, REDMONSTER) mark pixels whose flux and ivar the pipeline kept.
# The or_mask (set in any one exposure) is not used: the other exposures still measure the pixel.
BAD_PIXEL_BITS = {"FULLREJECT": 18, "NOSKY": 22, "BRIGHTSKY": 23, "NODATA": 24}
_BAD_PIXEL_MASK = sum(1 << bit for bit in BAD_PIXEL_BITS.values())
FIBER_BITS = ("NOPLUG", "BADTRACE", "BADFLAT", "BADARC", "MANYBADCOLUMNS", "MANYREJECTED",
              "LARGESHIFT", "BADSKYFIBER", "NEARWHOPPER", "WHOPPER", "SMEARIMAGE", "SMEARHIGHSN",
              "SMEARMEDSN")  # bits 0-12; 13-15 unused


def fiber_flags(wave: np.ndarray, and_mask: np.ndarray) -> dict[str, dict]:
    """Fibre-level bits set in and_mask: {name: {"fraction": of pixels, "wavelength": [min, max]}}."""
    out = {}
    for bit, name in enumerate(FIBER_BITS):
        on = (and_mask >> bit) & 1 == 1
        if on.any():
            out[name] = {"fraction": round(float(on.mean()), 4),
                         "wavelength": [round(float(wave[on].min()), 2), round(float(wave[on].max()), 2)]}
    return out


class _LabelRow:
    """First row of SPECOBJ or SPALL: field(name) -> scalar or None."""

    def __init__(self, fits: RawFits):
        self.table, self.hdu = None, None
        for ext in ("SPECOBJ", "SPALL"):
            if ext in fits and fits[ext].kind == "table":
                table = fits[ext].table()
                if len(table):
                    self.table, self.hdu = table, ext
                    break

    def field(self, name: str):
        if self.table is None or not self.table.has(name):
            return None
        value = self.table.col(name)[0]
        return value.item() if hasattr(value, "item") and np.ndim(value) == 0 else value


def survey_name(row: _LabelRow) -> str:
    """'SDSS' for the original spectrograph; 'SDSS-III BOSS' / 'SDSS-IV eBOSS' for BOSS."""
    instrument = str(row.field("INSTRUMENT") or "").strip().upper()
    chunk = str(row.field("CHUNK") or "").strip().lower()
    survey = str(row.field("SURVEY") or "").strip().lower()
    run2d = str(row.field("RUN2D") or "").strip().lower()
    if survey == "eboss" or chunk.startswith("eboss"):
        return "SDSS-IV eBOSS"
    if instrument == "BOSS" or chunk.startswith("boss") or survey == "boss" or run2d.startswith("v5"):
        return "SDSS-III BOSS"
    return "SDSS"


def _first(*values):
    return next((v for v in values if v is not None), None)


def read_sdss(fits: RawFits, path: str, target=None):
    header = fits[0].header
    table = fits["COADD"].table()
    if len(table) == 0:
        raise SpectrumReadError(path, "COADD HDU has no rows (zero-length spectrum arrays)")
    for need in ("flux", "loglam", "ivar"):
        if not table.has(need):
            raise SpectrumReadError(path, f"COADD HDU lacks the {need} column")
    wave = 10.0 ** table.col("loglam").astype(np.float64)
    and_mask = (table.col("and_mask").astype(np.int64) if table.has("and_mask")
                else np.zeros(wave.size, np.int64))
    row = _LabelRow(fits)
    plate = _first(row.field("PLATE"), header.get("PLATEID"))
    mjd = _first(row.field("MJD"), header.get("MJD"))
    fiber = _first(row.field("FIBERID"), header.get("FIBERID"))
    try:
        object_id = f"{int(plate):04d}-{int(mjd)}-{int(fiber):04d}"
    except (TypeError, ValueError):
        object_id = clean_id(row.field("SPECOBJID")) or clean_id(header.get("NAME")) or path
    cls = clean_label(row.field("CLASS"))
    zwarn = row.field("ZWARNING")
    meta = {
        "survey": survey_name(row),
        "object_id": object_id,
        "target": None,
        "ra": clean_float(_first(row.field("PLUG_RA"), header.get("PLUG_RA"), header.get("RA"))),
        "dec": clean_float(_first(row.field("PLUG_DEC"), header.get("PLUG_DEC"), header.get("DEC"))),
        "pipeline_class": cls,
        "pipeline_subclass": clean_label(row.field("SUBCLASS")),
        "pipeline_z": clean_z(row.field("Z")),
        "pipeline_z_err": clean_z(row.field("Z_ERR")),
        "pipeline_zwarn": None if zwarn is None else int(zwarn),
        "labels_source": f"SDSS {row.hdu} HDU (CLASS/SUBCLASS/Z)" if cls else None,
        "specobjid": clean_id(row.field("SPECOBJID")),
        "objtype": clean_label(row.field("OBJTYPE")),
        "format": SDSS_SPEC,
        "wavelength_medium": "air" if header.get("VACUUM") is False else "vacuum",
        "header": header_text(header),
        "flux_unit_source": "header" if header.get("BUNIT") else "SDSS data model (no BUNIT in file)",
        "fiber_flags": fiber_flags(wave, and_mask),
    }
    unit = parse_flux_unit(header.get("BUNIT") or DEFAULT_BUNIT, path)
    return build_spectrum(path, wave, table.col("flux"), table.col("ivar"), meta,
                          bad=and_mask & _BAD_PIXEL_MASK != 0, flux_unit=unit)


READERS = {SDSS_SPEC: read_sdss}
