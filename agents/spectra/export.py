"""Export a spectrum as CSV or as a small FITS table ("specreview-table"); both read back.

CSV: `# key: value` comment lines (survey, object_id, labels, units, medium), then a header row
`wavelength,flux,ivar,mask` (mask 1 = bad). FITS: primary header with SRFORMAT =
'specreview-table' and the metadata (SURVEY, OBJID, TARGET, RA, DEC, PCLASS, PSUBCLS, PZ,
PLABSRC, WMEDIUM, ORIGFMT), HDU SPECTRUM with WAVELENGTH [Angstrom], FLUX [flux unit], IVAR,
MASK (uint8), and HDU SRCHEAD holding the source file's header as JSON bytes.
Targets are paths or writable buffers (text or binary for CSV, binary for FITS).
"""
from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np
from astropy.io import fits
from specutils import Spectrum

from .sniff import SPECREVIEW_TABLE

_CSV_META = ("survey", "object_id", "target", "ra", "dec", "pipeline_class", "pipeline_subclass",
             "pipeline_z", "labels_source", "wavelength_medium")


def _arrays(spec: Spectrum):
    wave = spec.spectral_axis.to_value("Angstrom")
    flux = np.asarray(spec.flux.value, dtype=np.float64)
    ivar = (np.asarray(spec.uncertainty.array, dtype=np.float64) if spec.uncertainty is not None
            else np.zeros_like(flux))
    mask = (np.asarray(spec.mask, dtype=bool) if spec.mask is not None
            else np.zeros(flux.shape, bool))
    return wave, flux, ivar, mask


def _clean(value: Any) -> str:
    return " ".join(str(value).split())  # one line: no newline can break the comment block


def csv_text(spec: Spectrum) -> str:
    wave, flux, ivar, mask = _arrays(spec)
    meta = spec.meta or {}
    lines = ["# SpecReview spectrum export"]
    for key in _CSV_META:
        if meta.get(key) is not None:
            lines.append(f"# {key}: {_clean(meta[key])}")
    if meta.get("format"):
        lines.append(f"# original_format: {_clean(meta['format'])}")
    lines.append(f"# flux_unit: {spec.flux.unit.to_string()}")
    lines.append("# wavelength_unit: Angstrom")
    lines.append("wavelength,flux,ivar,mask")
    body = io.StringIO()
    np.savetxt(body, np.column_stack([wave, flux, ivar, mask.astype(np.float64)]), delimiter=",",
               fmt=("%.15g", "%.9g", "%.9g", "%d"))
    return "\n".join(lines) + "\n" + body.getvalue()


def write_csv(spec: Spectrum, target) -> None:
    """Write wavelength, flux, ivar, mask (+ metadata comments) as CSV to a path or buffer."""
    text = csv_text(spec)
    if isinstance(target, (str, os.PathLike)):
        with open(target, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        return
    if isinstance(target, io.TextIOBase):
        target.write(text)
    else:
        target.write(text.encode("utf-8"))


def fits_hdulist(spec: Spectrum) -> fits.HDUList:
    wave, flux, ivar, mask = _arrays(spec)
    meta = spec.meta or {}
    primary = fits.PrimaryHDU()
    h = primary.header
    h["SRFORMAT"] = (SPECREVIEW_TABLE, "SpecReview spectrum export")
    cards = {"SURVEY": "survey", "OBJID": "object_id", "TARGET": "target", "RA": "ra",
             "DEC": "dec", "PCLASS": "pipeline_class", "PSUBCLS": "pipeline_subclass",
             "PZ": "pipeline_z", "PLABSRC": "labels_source", "WMEDIUM": "wavelength_medium",
             "ORIGFMT": "format"}
    for card, key in cards.items():
        value = meta.get(key)
        if value is not None:
            h[card] = value if isinstance(value, (int, float)) else _clean(value)[:68]
    cols = [
        fits.Column(name="WAVELENGTH", format="D", unit="Angstrom", array=wave),
        fits.Column(name="FLUX", format="D", unit=spec.flux.unit.to_string() or None, array=flux),
        fits.Column(name="IVAR", format="D", array=ivar),
        fits.Column(name="MASK", format="B", array=mask.astype(np.uint8)),
    ]
    table = fits.BinTableHDU.from_columns(cols, name="SPECTRUM")
    source_header = json.dumps({"header": meta.get("header") or {}}).encode("utf-8")
    srchead = fits.ImageHDU(np.frombuffer(source_header, dtype=np.uint8), name="SRCHEAD")
    return fits.HDUList([primary, table, srchead])


def write_fits(spec: Spectrum, target) -> None:
    """Write the SpecReview FITS table to a path or a binary buffer (overwrites paths)."""
    hdul = fits_hdulist(spec)
    if isinstance(target, (str, os.PathLike)):
        hdul.writeto(target, overwrite=True)
    else:
        hdul.writeto(target)
