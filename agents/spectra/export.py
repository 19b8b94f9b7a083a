"""Export a spectrum as CSV or as a small FITS table ("specreview-table"); both read back.

CSV: `# key: value` comment lines (survey, object_id, labels, units, medium), then a header row
`wavelength,flux,ivar,mask` (mask 1 = bad). FITS: primary header with SRFORMAT =
'specreview-table' and the metadata (SURVEY, OBJID, TARGET, RA, DEC, PCLASS, PSUBCLS, PZ,
PLABSRC, WMEDIUM, ORIGFMT), HDU SPECTRUM with WAVELENGTH [Angstrom], FLUX [flux unit], IVAR,
MASK (uint8), and HDU SRCHEAD holding the source file's header as JSON bytes.
Targets are paths or writable buffers (text or binary for CSV, binary for FITS).

A multi-arm spectrum (DESI B/R/Z, LAMOST MRS B/R) is exported per arm (`arm_tables`): the CSV gets
an `arm` column, one row per pixel of each arm, blue to red, so that in an overlap (DESI b/r
~5660-5930 A, r/z ~7470-7720 A) each arm's own pixels stay apart, once per arm; the FITS keeps the
merged SPECTRUM table and adds one table per arm, SPECTRUM_<arm> (header ARM; primary ARMS lists
them). Reading either back merges the arms as the survey reader does (tables.py). A DESI file's
arms come from the source file again (desi.read_desi_arms): the merged spectrum no longer holds an
overlap's two arms. When that file is gone or no longer matches, the merged pixels are split as
the viewer colours them (arms.arm_ids: an overlap divided at its middle).
"""
from __future__ import annotations

import io
import json
import os
import re
from typing import Any

import numpy as np
from astropy.io import fits
from specutils import Spectrum

from .arms import arm_ids
from .desi import merge_arms, read_desi_arms
from .errors import SpectrumReadError
from .sniff import DESI_COADD, DESI_SPECTRA, SPECREVIEW_TABLE, load_fits

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


def _from_source_file(spec: Spectrum, wave: np.ndarray, flux: np.ndarray):
    """A DESI spectrum's arms read again from its file, or None when the file cannot give the same
    merged spectrum (moved, changed, not a path)."""
    meta = spec.meta or {}
    path = meta.get("source_path")
    if meta.get("format") not in (DESI_COADD, DESI_SPECTRA) or not path or not os.path.isfile(path):
        return None
    try:
        arms = read_desi_arms(load_fits(path, path), path, meta.get("target"))
    except (SpectrumReadError, OSError, ValueError):
        return None
    grid, merged, _, _ = merge_arms([a[1:] for a in arms])
    if grid.size != wave.size or not np.allclose(grid, wave, rtol=1e-12, atol=0) or not np.allclose(
            merged, np.nan_to_num(flux), rtol=1e-6, atol=0, equal_nan=True):
        return None
    return [(name, w, f, iv, np.asarray(bad, bool) | ~(iv > 0) | ~np.isfinite(f))
            for name, w, f, iv, bad in arms]


def arm_tables(spec: Spectrum) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None:
    """[(arm, wavelength A, flux, ivar, mask)] blue to red for a multi-arm spectrum; None for one arm.

    A DESI file's arms are read again from the file, each arm whole (the overlaps twice, once per
    arm); otherwise, and when the file cannot be read again, the merged pixels split by arm_ids."""
    found = arm_ids(spec)
    if found is None:
        return None
    wave, flux, ivar, mask = _arrays(spec)
    again = _from_source_file(spec, wave, flux)
    if again is not None:
        return again
    names, ids = found
    return [(name, wave[ids == k], flux[ids == k], ivar[ids == k], mask[ids == k])
            for k, name in enumerate(names) if (ids == k).any()]


def _arm_name(name: str) -> str:
    """An arm's name as a CSV value and a FITS EXTNAME part: ASCII letters, digits, _ (no % or comma)."""
    return re.sub(r"[^A-Za-z0-9_]", "", str(name))[:16] or "ARM"


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
    arms = arm_tables(spec)
    body = io.StringIO()
    if arms is None:
        lines.append("wavelength,flux,ivar,mask")
        np.savetxt(body, np.column_stack([wave, flux, ivar, mask.astype(np.float64)]), delimiter=",",
                   fmt=("%.15g", "%.9g", "%.9g", "%d"))
        return "\n".join(lines) + "\n" + body.getvalue()
    names = [_arm_name(a[0]) for a in arms]
    lines.append(f"# arms: {' '.join(names)} (each arm's own pixels, blue to red; an overlap appears once per arm)")
    lines.append("wavelength,flux,ivar,mask,arm")
    for name, (_, w, f, iv, m) in zip(names, arms, strict=True):
        # the arm name is a literal of the row format (letters, digits and _ only: no % in it)
        np.savetxt(body, np.column_stack([w, f, iv, np.asarray(m, bool).astype(np.float64)]),
                   fmt=f"%.15g,%.9g,%.9g,%d,{name}")
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
    per_arm = []
    for name, w, f, iv, m in arm_tables(spec) or ():
        hdu = fits.BinTableHDU.from_columns([
            fits.Column(name="WAVELENGTH", format="D", unit="Angstrom", array=np.asarray(w, np.float64)),
            fits.Column(name="FLUX", format="D", unit=spec.flux.unit.to_string() or None,
                        array=np.asarray(f, np.float64)),
            fits.Column(name="IVAR", format="D", array=np.asarray(iv, np.float64)),
            fits.Column(name="MASK", format="B", array=np.asarray(m, bool).astype(np.uint8)),
        ], name=f"SPECTRUM_{_arm_name(name)}")
        hdu.header["ARM"] = (_arm_name(name), "this arm's own pixels (overlaps kept)")
        per_arm.append(hdu)
    if per_arm:
        h["ARMS"] = (",".join(hdu.header["ARM"] for hdu in per_arm), "a SPECTRUM_<arm> table each")
    return fits.HDUList([primary, table, srchead, *per_arm])


def write_fits(spec: Spectrum, target) -> None:
    """Write the SpecReview FITS table to a path or a binary buffer (overwrites paths)."""
    hdul = fits_hdulist(spec)
    if isinstance(target, (str, os.PathLike)):
        hdul.writeto(target, overwrite=True)
    else:
        hdul.writeto(target)
