"""Plain-table readers: CSV / whitespace ASCII, ECSV, the Pickles (1998) library, SpecReview FITS.

Column names are matched case-insensitively: wavelength (wavelength, wave, lambda, lam, wl;
loglam is log10), flux (flux, flam, nflam, f), inverse variance (ivar, invvar, inverse_variance)
or a 1-sigma error (error, err, sigma, flux_err, uncertainty, unc, sd, sdnflam, std, noise), and
an optional mask (mask, bad; non-zero = bad). A table without a header row is read as
wavelength, flux[, 1-sigma error]. Wavelengths are Angstrom unless the file says otherwise
(`# wavelength_unit: nm`, an ECSV unit). `# key: value` comment lines (what `write_csv` writes)
give the metadata back: survey, object_id, labels, flux_unit, wavelength_medium. A text column
`arm` (what `write_csv` writes for a multi-arm spectrum: each arm's own pixels) makes the rows
arms: each arm is put in ascending order and the arms merged as DESI's are (desi.merge_arms:
inverse-variance weighted where they overlap, simply joined where they do not), with meta arms and
arm_pixels; the SpecReview FITS table's SPECTRUM_<arm> tables give arms and arm_pixels back the same way.

When a file gives no uncertainty for some pixels, they get one constant noise estimate from the
flux itself, DER_SNR (Stoehr et al. 2008): sigma = 1.482602 / sqrt(6) * median|2 f_i - f_(i-2)
- f_(i+2)|; meta['ivar_estimated'] says how many pixels got it.

Pickles (1998) UVILIB files (`*.dat`, CDS fixed-width: lambda F7.1, then F9.6 fields that may
touch when a value reaches 100): columns wavelength, normalised flux, standard deviation of the
component average, then component spectra. nflam <= 0 marks pixels with no coverage (the start of
the M-giant files): they are masked. Wavelengths are AIR: the library is built from ground-based
optical spectra, and the Balmer-line centroids of the B3V-B9V composites measured here fall within
~1 A of the air wavelengths versus 1.2-3 A short of the vacuum ones (tests check this on b57v).
"""
from __future__ import annotations

import io
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from .arms import arm_runs
from .core import (
    HEADER_TEXT_MAX_CHARS,
    ascending,
    build_spectrum,
    check_flux_magnitude,
    clean_float,
    clean_id,
    clean_label,
    clean_z,
    header_text,
    parse_flux_unit,
    wavelengths_to_angstrom,
)
from .desi import merge_arms
from .errors import SpectrumReadError
from .sniff import ASCII_TABLE, ECSV, PICKLES_ASCII, SPECREVIEW_TABLE

WAVE_NAMES = ("wavelength", "wave", "lambda", "lam", "wl", "wavelength_air", "wavelength_vac")
LOGWAVE_NAMES = ("loglam", "log_wavelength", "log10_wavelength")
FLUX_NAMES = ("flux", "flam", "f_lambda", "nflam", "f")
IVAR_NAMES = ("ivar", "invvar", "inverse_variance", "inv_var")
ERR_NAMES = ("error", "err", "sigma", "flux_err", "flux_error", "uncertainty", "unc", "sd",
             "sdnflam", "std", "stddev", "noise", "e_flux")
MASK_NAMES = ("mask", "bad", "and_mask", "andmask")
ARM_NAMES = ("arm", "camera")

PICKLES_SURVEY = "Pickles 1998 stellar flux library"

_META_STR = ("survey", "object_id", "target", "pipeline_class", "pipeline_subclass",
             "wavelength_medium", "original_format", "labels_source", "flux_unit",
             "wavelength_unit")
_META_FLOAT = ("ra", "dec", "pipeline_z")


def der_snr_noise(flux: np.ndarray) -> float | None:
    """DER_SNR noise estimate (Stoehr et al. 2008) of the finite, non-zero flux; None if undefined."""
    f = flux[np.isfinite(flux) & (flux != 0)]
    if f.size < 5:
        return None
    noise = 1.482602 / math.sqrt(6.0) * float(np.median(np.abs(2.0 * f[2:-2] - f[:-4] - f[4:])))
    return noise if noise > 0 and math.isfinite(noise) else None


def _fill_ivar(flux: np.ndarray, ivar: np.ndarray, known: np.ndarray, meta: dict) -> np.ndarray:
    missing = ~known
    meta["ivar_estimated"] = int(missing.sum())
    if not missing.any():
        return ivar
    noise = der_snr_noise(flux)
    meta["uncertainty_source"] = ("DER_SNR estimate for pixels without one" if noise
                                  else "none (no uncertainty in file; unit weights)")
    return np.where(missing, 1.0 / noise**2 if noise else 1.0, ivar)


# ---------------------------------------------------------------- comment metadata

def _comment_meta(lines: list[str]) -> dict[str, str]:
    out = {}
    for ln in lines:
        m = re.match(r"^#\s*([A-Za-z_][\w\-]*)\s*[:=]\s*(.*?)\s*$", ln)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def _meta_from_mapping(raw: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in _META_STR:
        if key in raw and str(raw[key]).strip() not in ("", "None"):
            meta[key] = str(raw[key]).strip()
    for key in _META_FLOAT:
        if key in raw:
            meta[key] = clean_z(raw[key]) if key == "pipeline_z" else clean_float(raw[key])
    if "object_id" in meta:
        meta["object_id"] = clean_id(meta["object_id"])
    return meta


# ---------------------------------------------------------------- generic tables

def _pick(names: list[str], wanted: tuple[str, ...]) -> int | None:
    lowered = [n.strip().lower() for n in names]
    for w in wanted:
        if w in lowered:
            return lowered.index(w)
    return None


def _join_arms(path: str, arm: np.ndarray, wave, flux, ivar, bad):
    """Rows tagged by arm -> one spectrum: (wave, flux, ivar, bad, {arms, arm_pixels}); each arm's
    rows ascending, the arms merged by desi.merge_arms where they overlap, joined where they do not."""
    names = list(dict.fromkeys(arm.tolist()))
    bad = np.zeros(wave.size, bool) if bad is None else bad
    pieces = sorted(((name, *ascending(path, wave[arm == name], flux[arm == name], ivar[arm == name],
                                       bad[arm == name], arm=name)) for name in names), key=lambda p: p[1][0])
    if any(nxt[1][0] <= prev[1][-1] for prev, nxt in itertools.pairwise(pieces)):
        wave, flux, ivar, bad = merge_arms([p[1:] for p in pieces])
    else:
        wave, flux, ivar, bad = (np.concatenate([p[i] for p in pieces]) for i in range(1, 5))
    spans = [(p[0], float(p[1][0]), float(p[1][-1])) for p in pieces]
    return wave, flux, ivar, bad, {"arms": [p[0] for p in pieces], "arm_pixels": arm_runs(wave, spans)}


def _columns_to_spectrum(path: str, names: list[str] | None, data: np.ndarray, meta_raw: dict,
                         fmt: str, wave_unit: str | None = None, flux_unit_text: str | None = None,
                         arm: np.ndarray | None = None):
    ncol = data.shape[1]
    if ncol < 2:
        raise SpectrumReadError(path, "table has fewer than 2 columns (need wavelength and flux)")
    log_wave = False
    if names:
        iw = _pick(names, WAVE_NAMES)
        if iw is None:
            iw = _pick(names, LOGWAVE_NAMES)
            log_wave = iw is not None
        ifl = _pick(names, FLUX_NAMES)
        if iw is None or ifl is None:
            raise SpectrumReadError(path, f"no wavelength/flux columns among {names}")
        iiv, ierr, imask = _pick(names, IVAR_NAMES), _pick(names, ERR_NAMES), _pick(names, MASK_NAMES)
    else:
        iw, ifl, iiv, imask = 0, 1, None, None
        ierr = 2 if ncol >= 3 else None
    wave = data[:, iw].astype(np.float64)
    if log_wave:
        with np.errstate(over="ignore"):
            wave = 10.0 ** wave
    wave_unit = wave_unit or meta_raw.get("wavelength_unit")
    wave = wavelengths_to_angstrom(wave, wave_unit, path)
    flux = data[:, ifl].astype(np.float64)
    check_flux_magnitude(path, wave, flux)  # before DER_SNR squares it
    meta = _meta_from_mapping(meta_raw)
    if iiv is not None:
        ivar = data[:, iiv].astype(np.float64)
        known = np.ones(flux.size, bool)
    elif ierr is not None:
        err = data[:, ierr].astype(np.float64)
        known = np.isfinite(err) & (err > 0)
        check_error_magnitude(path, wave, np.where(known, err, 1.0), names[ierr] if names else "error")
        ivar = np.where(known, 1.0 / np.where(known, err, 1.0) ** 2, 0.0)
    else:
        ivar, known = np.zeros(flux.size), np.zeros(flux.size, bool)
    ivar = _fill_ivar(flux, ivar, known, meta)
    bad = (np.nan_to_num(data[:, imask]) != 0) if imask is not None else None
    if arm is not None and len(set(arm.tolist())) > 1:
        wave, flux, ivar, bad, arms_meta = _join_arms(path, arm, wave, flux, ivar, bad)
        meta.update(arms_meta)
    meta.setdefault("survey", "table")
    meta.setdefault("object_id", Path(path).name.split(".")[0])
    meta.setdefault("wavelength_medium", "unknown")
    meta.update({"format": fmt, "header": {k: str(v) for k, v in meta_raw.items()}})
    unit = parse_flux_unit(flux_unit_text or meta_raw.get("flux_unit"), path)
    meta.pop("flux_unit", None)
    meta.pop("wavelength_unit", None)
    return build_spectrum(path, wave, flux, ivar, meta, bad=bad, flux_unit=unit, wave_unit=wave_unit)


def check_error_magnitude(path: str, wave: np.ndarray, err: np.ndarray, field: str = "error") -> None:
    """A 1-sigma error so small that 1/error**2 overflows float64 is named, not silently masked."""
    tiny = np.isfinite(err) & (err > 0) & (err < 1.0 / math.sqrt(np.finfo(np.float64).max))
    if tiny.any():
        i = int(np.flatnonzero(tiny)[0])
        raise SpectrumReadError(path, f"{field} value {err[i]:.6g} at {wave[i]:.1f} A (pixel {i}) would overflow "
                                      f"when inverted to an inverse variance ({int(tiny.sum())} such pixels)")


def read_ascii(text: str, path: str, target=None):
    lines = text.splitlines()
    comments = [ln for ln in lines if ln.lstrip().startswith("#")]
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not body:
        raise SpectrumReadError(path, "table has no data rows (zero-length spectrum arrays)")
    delim = "," if "," in body[0] else ("\t" if "\t" in body[0] else None)
    first = [x.strip() for x in (body[0].split(delim) if delim else body[0].split())]
    names = None
    if any(not _is_number(x) for x in first):
        names, body = first, body[1:]
        if not body:
            raise SpectrumReadError(path, "table has a header row but no data rows "
                                          "(zero-length spectrum arrays)")
    widths = {len(ln.split(delim)) if delim else len(ln.split()) for ln in body}
    if len(widths) > 1:
        raise SpectrumReadError(path, f"mismatched row lengths: rows have {sorted(widths)} columns")
    arm = None
    iarm = _pick(names, ARM_NAMES) if names else None
    if iarm is not None and len(names) == widths.pop():  # the arm is text: taken out before the numbers
        rows = [ln.split(delim) if delim else ln.split() for ln in body]
        arm = np.array([r[iarm].strip() for r in rows])
        body = [(delim or " ").join(x for k, x in enumerate(r) if k != iarm) for r in rows]
        names = names[:iarm] + names[iarm + 1:]
    try:
        data = np.loadtxt(io.StringIO("\n".join(body)), delimiter=delim, ndmin=2, dtype=np.float64)
    except ValueError as exc:
        raise SpectrumReadError(path, f"non-numeric value in table ({str(exc)[:120]})") from None
    if names is not None and len(names) != data.shape[1]:
        raise SpectrumReadError(path, f"mismatched row lengths: header has {len(names)} names, "
                                      f"rows have {data.shape[1]} columns")
    return _columns_to_spectrum(path, names, data, _comment_meta(comments), ASCII_TABLE, arm=arm)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def read_ecsv(text: str, path: str, target=None):
    from astropy.table import Table
    try:
        table = Table.read(text, format="ascii.ecsv")
    except Exception as exc:  # astropy raises several types for bad ECSV headers
        raise SpectrumReadError(path, f"malformed ECSV table ({str(exc)[:120]})") from None
    if len(table) == 0:
        raise SpectrumReadError(path, "table has no data rows (zero-length spectrum arrays)")
    names = table.colnames
    data = np.column_stack([np.asarray(table[c], dtype=np.float64) for c in names])
    iw = _pick(names, WAVE_NAMES)
    ifl = _pick(names, FLUX_NAMES)
    wave_unit = str(table[names[iw]].unit) if iw is not None and table[names[iw]].unit else None
    flux_unit = str(table[names[ifl]].unit) if ifl is not None and table[names[ifl]].unit else None
    meta_raw = {str(k).lower(): v for k, v in table.meta.items() if not isinstance(v, (dict, list))}
    return _columns_to_spectrum(path, names, data, meta_raw, ECSV, wave_unit, flux_unit)


# ---------------------------------------------------------------- Pickles

_PICKLES_LAMBDA = re.compile(r"^\s*(\d+\.\d)")
_PICKLES_FIELD = re.compile(r"-?\d*\.\d{6}")
_PICKLES_NAME = re.compile(r"^([obafgkm])(\d{1,2})(i|ii|iii|iv|v)$", re.I)


def pickles_spectral_type(path: str) -> str | None:
    """'b12iii.dat' -> 'B1-2III', 'm10iii' -> 'M10III' (the library's own naming)."""
    m = _PICKLES_NAME.match(Path(path).name.split(".")[0])
    if not m:
        return None
    letter, digits, lum = m.group(1).upper(), m.group(2), m.group(3).upper()
    if len(digits) == 2 and digits != "10" and digits[0] < digits[1]:
        digits = f"{digits[0]}-{digits[1]}"
    return f"{letter}{digits}{lum}"


def read_pickles(text: str, path: str, target=None):
    waves, fluxes, sds = [], [], []
    for i, ln in enumerate(text.splitlines(), 1):
        if not ln.strip():
            continue
        m = _PICKLES_LAMBDA.match(ln)
        fields = _PICKLES_FIELD.findall(ln[m.end():]) if m else []
        if not m or not fields:
            raise SpectrumReadError(path, f"line {i} does not match the Pickles fixed-width layout")
        waves.append(float(m.group(1)))
        fluxes.append(float(fields[0]))
        sds.append(float(fields[1]) if len(fields) > 1 else 0.0)
    wave, flux, sd = np.array(waves), np.array(fluxes), np.array(sds)
    covered = flux > 0  # 0 (or -0.000001 rounding noise) marks wavelengths no component covers
    known = covered & (sd > 0)
    ivar = np.where(known, 1.0 / np.where(known, sd, 1.0) ** 2, 0.0)
    subtype = pickles_spectral_type(path)
    meta = {
        "survey": PICKLES_SURVEY,
        "object_id": Path(path).name.split(".")[0],
        "target": None, "ra": None, "dec": None,
        "pipeline_class": "STAR" if subtype else None,
        "pipeline_subclass": subtype,
        "pipeline_z": None,
        "labels_source": "library spectral type (file name)" if subtype else None,
        "format": PICKLES_ASCII,
        "wavelength_medium": "air",
        "header": {"catalogue": "J/PASP/110/863 (Pickles 1998), UVILIB",
                   "columns": "lambda, nflam, sdnflam, components"},
    }
    ivar = np.where(covered, _fill_ivar(flux, ivar, known | ~covered, meta), 0.0)
    return build_spectrum(path, wave, flux, ivar, meta, bad=~covered)


# ---------------------------------------------------------------- SpecReview FITS table

def read_specreview_fits(fits, path: str, target=None):
    header = fits[0].header
    table = fits["SPECTRUM"].table()
    if len(table) == 0:
        raise SpectrumReadError(path, "SPECTRUM table has no rows (zero-length spectrum arrays)")
    for need in ("WAVELENGTH", "FLUX", "IVAR"):
        if not table.has(need):
            raise SpectrumReadError(path, f"SPECTRUM table lacks the {need} column")
    source_header = None
    if "SRCHEAD" in fits:
        try:
            blob = fits["SRCHEAD"].image()
            if blob.size > 4 * HEADER_TEXT_MAX_CHARS:  # an export writes header_text's, bounded: not one of ours
                raise ValueError("source header too large")
            source_header = json.loads(blob.astype(np.uint8).tobytes().decode("utf-8"))["header"]
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
            source_header = None
    meta = {
        "survey": clean_label(header.get("SURVEY")) or "table",
        "object_id": clean_id(header.get("OBJID")) or Path(path).name.split(".")[0],
        "target": clean_id(header.get("TARGET")),
        "ra": clean_float(header.get("RA")),
        "dec": clean_float(header.get("DEC")),
        "pipeline_class": clean_label(header.get("PCLASS")),
        "pipeline_subclass": clean_label(header.get("PSUBCLS")),
        "pipeline_z": clean_z(header.get("PZ")),
        "labels_source": clean_label(header.get("PLABSRC")),
        "original_format": clean_label(header.get("ORIGFMT")),
        "format": SPECREVIEW_TABLE,
        "wavelength_medium": clean_label(header.get("WMEDIUM")) or "unknown",
        "header": source_header if isinstance(source_header, dict) else header_text(header),
    }
    wave = wavelengths_to_angstrom(table.col("WAVELENGTH"), table.unit("WAVELENGTH"), path)
    bad = table.col("MASK") != 0 if table.has("MASK") else None
    meta.update(_specreview_arms(fits, header, wave, path))
    return build_spectrum(path, wave, table.col("FLUX"), table.col("IVAR"), meta, bad=bad,
                          flux_unit=parse_flux_unit(table.unit("FLUX"), path),
                          wave_unit=table.unit("WAVELENGTH"))


def _specreview_arms(fits, header, wave: np.ndarray, path: str) -> dict:
    """arms and arm_pixels of an export with SPECTRUM_<arm> tables (header ARMS); {} without them."""
    names = [n.strip() for n in str(header.get("ARMS") or "").split(",") if n.strip()]
    spans = []
    for name in names:
        if f"SPECTRUM_{name}" not in fits:
            return {}
        arm_wave = fits[f"SPECTRUM_{name}"].table()
        if len(arm_wave) == 0 or not arm_wave.has("WAVELENGTH"):
            return {}
        w = wavelengths_to_angstrom(arm_wave.col("WAVELENGTH"), arm_wave.unit("WAVELENGTH"), path)
        spans.append((name, float(np.min(w)), float(np.max(w))))
    if len(spans) < 2:
        return {}
    spans.sort(key=lambda a: a[1])
    return {"arms": [a[0] for a in spans], "arm_pixels": arm_runs(np.sort(wave), spans)}


TEXT_READERS = {ASCII_TABLE: read_ascii, ECSV: read_ecsv, PICKLES_ASCII: read_pickles}
FITS_READERS = {SPECREVIEW_TABLE: read_specreview_fits}
