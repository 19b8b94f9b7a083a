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

# Plausible spectroscopic wavelengths, after the file's own unit and any log10: 100 A (extreme UV,
# ~124 eV) to 1e6 A (100 micron, far infrared). Every UV / optical / IR spectrograph a reviewer
# meets lies inside (the corpus spans 1150 A, Pickles, to 25000 A; JWST MIRI ends at 28 micron), while a
# wrong unit lands orders of magnitude outside: a distance unit (pc, lyr) gives ~1e30 A, micron or
# nm numbers read as metres give 1e13 A, Angstrom numbers read as micron give 4e7 A.
WAVE_MIN_AA = 100.0
WAVE_MAX_AA = 1.0e6

# Largest |flux| accepted. float64 ends at 1.8e308, and the tools square fluxes and sum the squares
# over up to ~1e5 pixels (variances, chi-square, DER_SNR ivar): beyond ~1e150 those overflow. No
# calibrated unit comes near it (1e-17 erg/s/cm2/A, Jy, counts), so a larger value is a broken file.
FLUX_ABS_MAX = 1.0e150

# Fewest pixels with finite flux that vetting and verification will judge. The continuum fit
# (agents/tools/continuum.py) needs MAX_DEGREE + 2 = 12 pixels for any fit and falls back to all
# pixels below 20 outside the features; a line measurement needs >= 3 pixels in its window plus
# continuum sidebands (agents/tools/measure.py); the CWT keeps a feature only over >= 4
# consecutive widths of 1-80 px. Below 20 pixels no verdict from these tools means anything.
MIN_FINITE_PIXELS = 20

# Counts-like flux units (raw or per second): accepted besides flux densities and dimensionless.
_COUNT_UNITS = (u.ct, u.electron, u.adu, u.photon)


class _UnitProblem(ValueError):
    """Why a flux unit string was refused (the reader names the file)."""


@lru_cache(maxsize=64)
def _flux_unit(text: str) -> u.UnitBase:
    text = _UNIT_ALIASES.get(text.lower(), text)
    try:
        unit = u.Unit(text)
    except (ValueError, TypeError):
        raise _UnitProblem(f"flux unit {text!r} is not a unit astropy knows (expected a spectral flux "
                           "density such as 'erg / (s cm2 Angstrom)' or 'Jy', or counts)") from None
    if unit.physical_type == "dimensionless":
        return unit
    try:  # any flux density: per wavelength, per frequency, photon flux densities
        unit.to(u.erg / u.s / u.cm**2 / u.AA, equivalencies=u.spectral_density(5000 * u.AA))
        return unit
    except u.UnitConversionError:
        pass
    if any(unit.is_equivalent(c) or unit.is_equivalent(c / u.s) for c in _COUNT_UNITS):
        return unit
    raise _UnitProblem(f"flux unit {text!r} is not a spectral flux density or counts "
                       f"(it is a {unit.physical_type})")


def parse_flux_unit(text: str | None, path: str | None = None) -> u.UnitBase:
    """A flux unit from a header string: dimensionless when absent (relative fluxes, e.g. LAMOST).

    A string that is not a unit, or a unit that is neither a spectral flux density nor counts,
    raises SpectrumReadError naming ``path`` and the unit (never silently dimensionless)."""
    if text is None:
        return u.dimensionless_unscaled
    text = str(text).strip()
    if not text:
        return u.dimensionless_unscaled
    try:
        return _flux_unit(text)
    except _UnitProblem as exc:
        raise SpectrumReadError(path or "spectrum", str(exc)) from None


def wavelengths_to_angstrom(values: np.ndarray, unit_text: str | None, path: str) -> np.ndarray:
    """Spectral-axis values in the file's unit -> Angstrom. Lengths scale; frequencies (Hz),
    energies (eV) and wavenumbers convert through astropy's spectral equivalency (a descending
    result is turned around by build_spectrum). Anything else raises SpectrumReadError."""
    values = np.asarray(values, dtype=np.float64)
    if not unit_text or not str(unit_text).strip():
        return values
    text = str(unit_text).strip()
    try:
        unit = u.Unit(text)
    except (ValueError, TypeError):
        raise SpectrumReadError(path, f"wavelength unit {text!r} is not a unit astropy knows") from None
    if unit.is_equivalent(u.AA):
        return values * float(unit.to(u.AA))
    try:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return (values * unit).to_value(u.AA, equivalencies=u.spectral())
    except u.UnitConversionError:
        raise SpectrumReadError(path, f"wavelength unit {text!r} is not a wavelength, frequency or energy "
                                      f"(it is a {unit.physical_type})") from None


def check_flux_magnitude(path: str, wave: np.ndarray, values: np.ndarray, field: str = "flux",
                         limit: float = FLUX_ABS_MAX) -> None:
    """Raise SpectrumReadError naming the field, the value and where it is when a finite value is
    beyond ``limit`` (its squares would overflow float64)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        big = np.isfinite(values) & (np.abs(values) > limit)
    if big.any():
        i = int(np.flatnonzero(big)[0])
        where = f"{float(wave[i]):.1f} A" if np.size(wave) == values.size and np.isfinite(wave[i]) else "?"
        raise SpectrumReadError(path, f"{field} value {values[i]:.6g} at {where} (pixel {i}) would overflow: "
                                      f"|{field}| must stay below {limit:.0e} for its squares to fit in "
                                      f"float64 ({int(big.sum())} such pixels)")


def require_judgeable(spectrum, purpose: str = "vetting") -> None:
    """Refuse (SpectrumReadError naming the file) a spectrum with fewer than MIN_FINITE_PIXELS
    pixels of finite flux: the agents' tools cannot judge it, so no answer is better than a
    confident one."""
    flux = np.asarray(getattr(spectrum.flux, "value", spectrum.flux), dtype=np.float64)
    n = int(np.isfinite(flux).sum())
    if n < MIN_FINITE_PIXELS:
        meta = spectrum.meta or {}
        name = meta.get("source_path") or meta.get("object_id") or "spectrum"
        plural = "pixel" if n == 1 else "pixels"
        raise SpectrumReadError(name, f"only {n} {plural} with finite flux; {purpose} needs at least "
                                      f"{MIN_FINITE_PIXELS} (continuum fit, line windows and the CWT "
                                      "cannot judge fewer)")


# The header as shown (the FITS header card of the metadata, the store's copy): at most this many
# characters of values. A survey header is 10-40 kB of card images; a reader's cap (fitsraw) bounds
# the cards, this bounds what every page that shows them carries.
HEADER_TEXT_MAX_CHARS = 64_000
HEADER_SHORTENED_KEY = "(shortened)"


def header_text(header) -> dict[str, str]:
    """The raw header as {KEY: value text}, for display only.

    Takes a fitsraw.RawHeader (its card images) or an astropy Header. Repeated keys (COMMENT,
    HISTORY) are joined with newlines; string values lose their quotes; comments are dropped. Past
    HEADER_TEXT_MAX_CHARS of values, repeated cards are left out (every key keeps its first: a reader
    caps the cards, fitsraw.MAX_HEADER_CARDS), and HEADER_SHORTENED_KEY says how many.
    """
    raw = getattr(header, "text", None)
    if raw is None:
        try:
            raw = header.tostring(sep="", endcard=False, padding=False)
        except Exception:  # an unparsable card must not cost the spectrum
            return {}
    parts: dict[str, list[str]] = {}  # joined once at the end: joining per card is quadratic in a key's cards
    size, left_out = 0, 0
    for start in range(0, len(raw), 80):
        card = raw[start:start + 80]
        key = card[:8].strip()
        if not key or key == "END":
            continue
        if key in parts and size > HEADER_TEXT_MAX_CHARS:  # a key's first card is always kept (PLATEID, MJD...)
            left_out += 1
            continue
        if card[8:10] == "= ":
            value = parse_value(card[10:])
            value = "" if value is None else ("T" if value is True else "F" if value is False
                                              else str(value) if isinstance(value, str)
                                              else card[10:].split("/", 1)[0].strip())
        else:
            value = card[8:].strip()
        parts.setdefault(key, []).append(value)
        size += len(value) + 1
    out = {key: "\n".join(values) for key, values in parts.items()}
    if left_out:
        out[HEADER_SHORTENED_KEY] = f"{left_out:,} repeated cards not shown (the header is {len(raw) // 80:,} cards)"
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


def ascending(path: str | Path, wave: np.ndarray, *arrays: np.ndarray | None, arm: str | None = None):
    """The one rule for wavelength order: returns (wave, *arrays) with wave strictly increasing.

    A descending but monotonic axis (a reversed table, a LAMOST COEFF1 < 0, a DESI or LAMOST MRS
    arm written red to blue) is legitimate: it is turned around, and every array with it along
    its last axis (1-D per-pixel arrays, or DESI's n_spec x n_pix images); None entries stay
    None. Anything else (NaN, repeated or shuffled wavelengths) raises SpectrumReadError naming
    the file and, for a multi-arm file, the ``arm``.
    """
    wave = np.asarray(wave)
    where = f" in the {arm} arm" if arm else ""
    if not np.isfinite(wave).all():
        raise SpectrumReadError(path, f"wavelength has NaN or infinite values{where}")
    if wave.size < 2:
        return (wave, *arrays)
    step = np.diff(wave)
    if (step > 0).all():
        return (wave, *arrays)
    if (step < 0).all():
        return (wave[::-1].copy(),
                *(None if a is None else np.asarray(a)[..., ::-1].copy() for a in arrays))
    raise SpectrumReadError(path, f"wavelength is not monotonic{where} "
                                  "(neither strictly increasing nor strictly decreasing)")


def build_spectrum(
    path: str,
    wave: np.ndarray,
    flux: np.ndarray,
    ivar: np.ndarray | None,
    meta: dict[str, Any],
    *,
    bad: np.ndarray | None = None,
    flux_unit: u.UnitBase = u.dimensionless_unscaled,
    wave_unit: str | None = None,
) -> Spectrum:
    """Validate arrays, derive mask and S/N, and wrap them in a `specutils.Spectrum`.

    ``bad`` is the reader's own per-pixel verdict (survey mask bits set); it is OR-ed with
    ivar <= 0 and non-finite flux. ``ivar`` None means the file gives no uncertainty (the caller
    then passes an estimate; see tables.py). ``wave_unit``: the file's own wavelength unit, named
    when the wavelengths are implausible. Raises SpectrumReadError for any array problem, for
    wavelengths outside WAVE_MIN_AA-WAVE_MAX_AA and for |flux| beyond FLUX_ABS_MAX.
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
    wave, flux, ivar, bad = ascending(path, wave, flux, ivar, bad)
    if wave[0] <= 0:
        raise SpectrumReadError(path, "wavelength has zero or negative values")
    if wave[0] < WAVE_MIN_AA or wave[-1] > WAVE_MAX_AA:
        source = f" (wavelength unit {wave_unit!r})" if wave_unit else ""
        raise SpectrumReadError(path, f"wavelengths {wave[0]:.4g}-{wave[-1]:.4g} A{source} lie outside the "
                                      f"plausible spectroscopic range {WAVE_MIN_AA:.0f}-{WAVE_MAX_AA:.0e} A "
                                      "(100 A extreme UV to 100 micron far IR); is the wavelength unit right?")
    finite_flux = np.isfinite(flux)
    if not finite_flux.any():
        raise SpectrumReadError(path, "flux is all NaN or infinite")
    check_flux_magnitude(path, wave, flux)
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
