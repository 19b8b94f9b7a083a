"""Shared pieces of every reader: array validation, masks, S/N, header text, label cleaning.

Each format module collects plain numpy arrays and a meta dict, then calls `build_spectrum`,
which enforces the spectrum contract (ascending Angstrom axis, InverseVariance, boolean mask,
string ids, the standard meta keys) in one place so that no format can drift from it.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import astropy.units as u
import numpy as np
from astropy.nddata import InverseVariance
from specutils import Spectrum

from .errors import SpectrumReadError
from .fitsraw import parse_value

# Keys every reader fills (documented in agents/spectra/__init__.py).
STANDARD_META_KEYS = (
    "survey", "object_id", "target", "ra", "dec", "pipeline_class", "pipeline_subclass",
    "pipeline_z", "snr", "source_path", "format", "wavelength_medium", "header",
)

_UNIT_ALIASES = {
    # SDSS writes this in BUNIT; astropy does not know "Ang".
    "1e-17 erg/cm^2/s/ang": "1e-17 erg / (s cm2 Angstrom)",
    "1e-17 erg/s/cm^2/ang": "1e-17 erg / (s cm2 Angstrom)",
    "1e-17 erg/s/cm2/angstrom": "1e-17 erg / (s cm2 Angstrom)",
}


@lru_cache(maxsize=64)
def parse_flux_unit(text: str | None) -> u.UnitBase:
    """A flux unit from a header string; dimensionless when absent or not understood."""
    if text is None:
        return u.dimensionless_unscaled
    text = str(text).strip()
    if not text:
        return u.dimensionless_unscaled
    text = _UNIT_ALIASES.get(text.lower(), text)
    try:
        return u.Unit(text)
    except (ValueError, TypeError):
        return u.dimensionless_unscaled


def header_text(header) -> dict[str, str]:
    """The raw header as {KEY: value text}, for display only.

    Takes a fitsraw.RawHeader (its card images) or an astropy Header. Repeated keys (COMMENT,
    HISTORY) are joined with newlines; string values lose their quotes; comments are dropped.
    """
    raw = getattr(header, "text", None)
    if raw is None:
        try:
            raw = header.tostring(sep="", endcard=False, padding=False)
        except Exception:  # an unparsable card must not cost the spectrum
            return {}
    out: dict[str, str] = {}
    for start in range(0, len(raw), 80):
        card = raw[start:start + 80]
        key = card[:8].strip()
        if not key or key == "END":
            continue
        if card[8:10] == "= ":
            value = parse_value(card[10:])
            value = "" if value is None else ("T" if value is True else "F" if value is False
                                              else str(value) if isinstance(value, str)
                                              else card[10:].split("/", 1)[0].strip())
        else:
            value = card[8:].strip()
        out[key] = out[key] + "\n" + value if key in out else value
    return out


def clean_label(value: Any) -> str | None:
    """A class/subclass label as a stripped string, or None when empty."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    text = str(value).strip()
    return text or None


def clean_z(value: Any) -> float | None:
    """A redshift as float, or None for missing, non-finite and LAMOST's -9999 placeholder."""
    if value is None:
        return None
    try:
        z = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(z) or z <= -9.0:
        return None
    return z


def clean_float(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def clean_id(value: Any) -> str | None:
    """An identifier as a string, never a float: 1.23e9-style or '123.0' text is impossible."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if math.isfinite(value) and float(value).is_integer():
            return str(int(value))
        return None
    text = str(value).strip()
    return text or None


def median_snr(flux: np.ndarray, ivar: np.ndarray, good: np.ndarray) -> float:
    """Median of flux * sqrt(ivar) over good pixels; 0.0 when there are none."""
    if not good.any():
        return 0.0
    return float(np.median(flux[good] * np.sqrt(ivar[good])))


def build_spectrum(
    path: str,
    wave: np.ndarray,
    flux: np.ndarray,
    ivar: np.ndarray | None,
    meta: dict[str, Any],
    *,
    bad: np.ndarray | None = None,
    flux_unit: u.UnitBase = u.dimensionless_unscaled,
) -> Spectrum:
    """Validate arrays, derive mask and S/N, and wrap them in a `specutils.Spectrum`.

    ``bad`` is the reader's own per-pixel verdict (survey mask bits set); it is OR-ed with
    ivar <= 0 and non-finite flux. ``ivar`` None means the file gives no uncertainty (the caller
    then passes an estimate; see tables.py). Raises SpectrumReadError for any array problem.
    """
    wave = np.asarray(wave, dtype=np.float64).ravel()
    flux = np.asarray(flux, dtype=np.float64).ravel()
    ivar = (np.ones_like(flux) if ivar is None else np.asarray(ivar, dtype=np.float64).ravel())
    n = wave.size
    if n == 0 or flux.size == 0:
        raise SpectrumReadError(path, "zero-length spectrum arrays (no pixels)")
    if not (flux.size == n and ivar.size == n and (bad is None or np.size(bad) == n)):
        sizes = f"wavelength {n}, flux {flux.size}, ivar {ivar.size}"
        if bad is not None:
            sizes += f", mask {np.size(bad)}"
        raise SpectrumReadError(path, f"array lengths differ ({sizes})")
    if not np.isfinite(wave).all():
        raise SpectrumReadError(path, "wavelength has NaN or infinite values")
    if n > 1:
        step = np.diff(wave)
        if (step < 0).all():
            # Descending but monotonic tables are legitimate: turn them around.
            wave, flux, ivar = wave[::-1].copy(), flux[::-1].copy(), ivar[::-1].copy()
            bad = None if bad is None else np.asarray(bad)[::-1].copy()
        elif not (step > 0).all():
            raise SpectrumReadError(path, "wavelength is not monotonic (not strictly increasing)")
    if wave[0] <= 0:
        raise SpectrumReadError(path, "wavelength has zero or negative values")
    finite_flux = np.isfinite(flux)
    if not finite_flux.any():
        raise SpectrumReadError(path, "flux is all NaN or infinite")
    ivar = np.where(np.isfinite(ivar) & finite_flux & (ivar > 0), ivar, 0.0)
    mask = ivar <= 0
    if bad is not None:
        mask |= np.asarray(bad, dtype=bool)
    good = ~mask
    meta = dict(meta)
    meta["source_path"] = str(path)
    meta["snr"] = median_snr(flux, ivar, good)
    meta["n_pixels"] = int(n)
    meta["n_good_pixels"] = int(good.sum())
    meta["flux_unit"] = flux_unit.to_string()
    for key in STANDARD_META_KEYS:
        meta.setdefault(key, None)
    return Spectrum(
        spectral_axis=wave * u.AA,
        flux=flux * flux_unit,
        uncertainty=InverseVariance(ivar / flux_unit**2 if flux_unit != u.dimensionless_unscaled
                                    else ivar),
        mask=mask,
        meta=meta,
    )


def display_name(path: Any) -> str:
    return Path(str(path)).name
