"""DESI `coadd-*` and `spectra-*` files: B/R/Z arms merged into one spectrum per target.

Each arm has {ARM}_WAVELENGTH (1-D), {ARM}_FLUX / _IVAR / _MASK (n_spec x n_pix); an arm written
red to blue is turned around (core.ascending), a non-monotonic one is refused naming it. Targets are
the FIBERMAP rows (TARGETID); files without a FIBERMAP (test subsets) are addressed by row index.
`merge_arms` puts the arms on one ascending grid: the first (bluest) arm's pixels plus each later
arm's pixels beyond the grid so far. In an overlap, every arm is evaluated on the grid (exactly at
shared pixels: DESI arms share one 0.8 A grid) and combined by inverse-variance weighting over
the unmasked arms: flux = sum(w f) / sum(w), ivar = sum(w). A pixel is bad when no arm has a good
value there. In a per-exposure `spectra-*` file, a target with several rows (exposures) is
combined the same way.

Labels come from the redrock file beside the spectra (`redrock-<suffix>.fits` for
`coadd-<suffix>.fits` / `spectra-<suffix>.fits`, or the older `zbest-<suffix>.fits`), matched by
TARGETID: SPECTYPE, SUBTYPE, Z, ZWARN. Without one there are no pipeline labels. Empty, sky and
NODATA fibres read fine and come back fully masked (n_good_pixels 0, snr 0.0).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .arms import arm_runs
from .core import ascending, build_spectrum, clean_float, clean_label, clean_z, header_text, parse_flux_unit
from .errors import SpectrumReadError
from .fitsraw import RawFits
from .sniff import DESI_COADD, DESI_SPECTRA

ARMS = ("B", "R", "Z")
DEFAULT_BUNIT = "1e-17 erg / (s cm2 Angstrom)"


# ---------------------------------------------------------------- arm merge (pure numpy)

def merge_arms(arms: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]):
    """Merge (wave, flux, ivar, bad) arms onto one ascending grid; see the module docstring.

    Returns (wave, flux, ivar, bad). Masked pixels take part with zero weight; a grid pixel
    outside an arm's range gets nothing from that arm.
    """
    arms = sorted((a for a in arms if a[0].size), key=lambda a: a[0][0])
    if not arms:
        return (np.empty(0),) * 3 + (np.empty(0, bool),)
    grid = arms[0][0]
    for wave, *_ in arms[1:]:
        step = np.median(np.diff(wave)) if wave.size > 1 else 0.0
        grid = np.concatenate([grid, wave[wave > grid[-1] + 0.5 * step]])
    wsum = np.zeros(grid.size)
    fwsum = np.zeros(grid.size)
    fsum = np.zeros(grid.size)
    count = np.zeros(grid.size)
    for wave, flux, ivar, bad in arms:
        lo = np.searchsorted(grid, wave[0] - 1e-6, side="left")
        hi = np.searchsorted(grid, wave[-1] + 1e-6, side="right")
        sub = grid[lo:hi]
        weight = np.where(bad | ~np.isfinite(flux) | ~(ivar > 0), 0.0, ivar)
        f_sub = np.interp(sub, wave, np.nan_to_num(flux))
        w_sub = np.interp(sub, wave, weight)
        # Nearest-pixel badness: a grid pixel next to a bad arm pixel must not inherit its weight.
        nearest = np.clip(np.searchsorted(wave, sub), 0, wave.size - 1)
        left = np.clip(nearest - 1, 0, wave.size - 1)
        nearest = np.where(np.abs(wave[left] - sub) < np.abs(wave[nearest] - sub), left, nearest)
        w_sub = np.where(weight[nearest] > 0, w_sub, 0.0)
        wsum[lo:hi] += w_sub
        fwsum[lo:hi] += w_sub * f_sub
        fsum[lo:hi] += f_sub
        count[lo:hi] += 1
    good = wsum > 0
    flux = np.where(good, fwsum / np.where(good, wsum, 1.0), fsum / np.maximum(count, 1))
    return grid, flux, wsum, ~good


# ---------------------------------------------------------------- targets

def _fibermap(fits: RawFits):
    if "FIBERMAP" not in fits:
        return None
    table = fits["FIBERMAP"].table()
    return table if table.has("TARGETID") else None


def _n_rows(fits: RawFits, path: str) -> int:
    for arm in ARMS:
        name = f"{arm}_FLUX"
        if name in fits:
            shape = fits[name].shape
            return 1 if len(shape) == 1 else shape[0]
    raise SpectrumReadError(path, "DESI file has no B/R/Z _FLUX HDU")


def target_ids(fits: RawFits, path: str) -> list[str]:
    """TARGETIDs in first-seen order (a spectra-* file repeats them per exposure), or row indices."""
    fm = _fibermap(fits)
    if fm is None:
        return [str(i) for i in range(_n_rows(fits, path))]
    return list(dict.fromkeys(str(int(t)) for t in fm.col("TARGETID")))


def _rows_for(fits: RawFits, path: str, target) -> tuple[list[int], str]:
    ids = target_ids(fits, path)
    fm = _fibermap(fits)
    if target is None:
        if len(ids) == 1:
            target = ids[0]
        else:
            raise SpectrumReadError(
                path, f"holds {len(ids)} spectra: pass target= (a TARGETID"
                      f"{'' if fm is not None else ' or row index'}); list them with "
                      f"agents.spectra.list_targets(path), e.g. {', '.join(ids[:3])}")
    key = str(target).strip()
    if fm is not None:
        rows = [i for i, tid in enumerate(fm.col("TARGETID")) if str(int(tid)) == key]
        if not rows:
            raise SpectrumReadError(path, f"target {key} not in file ({len(ids)} targets; "
                                          "see list_targets(path))")
        return rows, key
    if key not in ids:
        raise SpectrumReadError(path, f"target {key} not in file (no TARGETIDs here: rows "
                                      f"0-{len(ids) - 1})")
    return [int(key)], key


# ---------------------------------------------------------------- redrock labels

def redrock_path(path: str) -> Path | None:
    p = Path(path)
    m = re.match(r"^(coadd|spectra)-(.+)$", p.name)
    if not m:
        return None
    for prefix in ("redrock", "zbest"):
        cand = p.with_name(f"{prefix}-{m.group(2)}")
        if cand.is_file():
            return cand
    return None


@lru_cache(maxsize=32)
def _redrock_table(path: str, mtime_ns: int) -> dict[str, dict[str, Any]]:
    fits = RawFits(Path(path).read_bytes(), path)
    t = fits["REDSHIFTS" if "REDSHIFTS" in fits else "ZBEST"].table()
    cols = {name: t.col(name) for name in ("TARGETID", "SPECTYPE", "SUBTYPE", "Z", "ZERR", "ZWARN",
                                           "DELTACHI2") if t.has(name)}
    out = {}
    for i, tid in enumerate(cols["TARGETID"]):
        get = lambda name, i=i: cols[name][i] if name in cols else None  # noqa: E731
        out[str(int(tid))] = {
            "pipeline_class": clean_label(get("SPECTYPE")),
            "pipeline_subclass": clean_label(get("SUBTYPE")),
            "pipeline_z": clean_z(get("Z")),
            "pipeline_z_err": clean_z(get("ZERR")),
            "pipeline_zwarn": None if get("ZWARN") is None else int(get("ZWARN")),
            "pipeline_deltachi2": clean_float(get("DELTACHI2")),
        }
    return out


def redrock_labels(path: str, target_id: str) -> dict[str, Any] | None:
    rr = redrock_path(path)
    if rr is None:
        return None
    try:
        table = _redrock_table(str(rr), os.stat(rr).st_mtime_ns)
    except Exception:  # a broken redrock file must not make the spectrum unreadable
        return None
    labels = table.get(target_id)
    if labels is None:
        return None
    return {**labels, "labels_source": f"redrock file {rr.name} (REDSHIFTS: SPECTYPE/SUBTYPE/Z)"}


# ---------------------------------------------------------------- reader

def _arm_data(fits: RawFits, path: str, arm: str, rows: list[int]):
    for ext in ("WAVELENGTH", "IVAR"):
        if f"{arm}_{ext}" not in fits:
            raise SpectrumReadError(path, f"missing HDU {arm}_{ext}")
    wave = fits[f"{arm}_WAVELENGTH"].image()
    flux_all = fits[f"{arm}_FLUX"].image()
    ivar_all = fits[f"{arm}_IVAR"].image()
    if wave is None or flux_all is None or wave.size == 0:
        raise SpectrumReadError(path, f"zero-length spectrum arrays in the {arm} arm")
    wave = wave.astype(np.float64).ravel()
    flux_all = np.atleast_2d(flux_all)
    ivar_all = np.atleast_2d(ivar_all) if ivar_all is not None else None
    mask_all = np.atleast_2d(fits[f"{arm}_MASK"].image()) if f"{arm}_MASK" in fits else None
    if ivar_all is None or flux_all.shape[1] != wave.size or ivar_all.shape != flux_all.shape or (
            mask_all is not None and mask_all.shape != flux_all.shape):
        raise SpectrumReadError(path, f"array lengths differ in the {arm} arm (wavelength "
                                      f"{wave.size}, flux {flux_all.shape}, ivar "
                                      f"{None if ivar_all is None else ivar_all.shape})")
    if max(rows) >= flux_all.shape[0]:
        raise SpectrumReadError(path, f"{arm}_FLUX has {flux_all.shape[0]} rows, fewer than the FIBERMAP")
    wave, flux_all, ivar_all, mask_all = ascending(path, wave, flux_all, ivar_all, mask_all, arm=arm)
    # {ARM}_MASK is DESI's per-pixel specmask (DESI data model, coadd and spectra files and
    # https://desidatamodel.readthedocs.io/en/latest/bitmasks.html): every bit is about the pixel
    # (SOMEBADPIX, ALLBADPIX, COSMIC, LOWFLAT, BADFIBERFLAT, BRIGHTSKY, BADSKY, BAD2DFIT, NODATA,
    # BADFIBER, ...) and 0 is good; desispec's own coaddition weights a pixel by ivar * (mask == 0).
    # So MASK != 0 is bad, and so is IVAR <= 0 whatever MASK says (coadds write MASK 0 with IVAR 0
    # for dropped fibres): merge_arms gives both zero weight.
    exposures = []
    for r in rows:
        bad = np.zeros(wave.size, bool) if mask_all is None else mask_all[r] != 0
        exposures.append((wave, flux_all[r].astype(np.float64), ivar_all[r].astype(np.float64), bad))
    return exposures, fits[f"{arm}_FLUX"].header.get("BUNIT")


def read_desi(fits: RawFits, path: str, target=None):
    arms_present = [a for a in ARMS if f"{a}_FLUX" in fits]
    rows, target_id = _rows_for(fits, path, target)
    pieces, units, spans = [], [], []
    for arm in arms_present:
        exposures, unit = _arm_data(fits, path, arm, rows)
        pieces += exposures
        units.append(unit)
        spans.append((arm, float(exposures[0][0][0]), float(exposures[0][0][-1])))
    wave, flux, ivar, bad = merge_arms(pieces)
    fm = _fibermap(fits)
    fmt = DESI_SPECTRA if fm is not None and fm.has("FIBERSTATUS") and not fm.has(
        "COADD_FIBERSTATUS") else DESI_COADD
    unit_text = next((x for x in units if x), None)
    meta: dict[str, Any] = {
        "survey": "DESI",
        "object_id": target_id if fm is not None else f"{Path(path).name.split('.')[0]}#{target_id}",
        "target": target_id,
        "ra": None, "dec": None,
        "pipeline_class": None, "pipeline_subclass": None, "pipeline_z": None,
        "labels_source": None,
        "format": fmt,
        "wavelength_medium": "vacuum",
        "header": header_text(fits[0].header),
        "arms": arms_present,
        "arm_pixels": arm_runs(wave, spans),  # which arm each merged pixel came from (arms.arm_ids)
        "n_arm_pixels": int(sum(p[0].size for p in pieces)) if len(rows) == 1 else None,
        "n_exposures": len(rows) if fmt == DESI_SPECTRA else None,
        "flux_unit_source": "header" if unit_text else "DESI data model (no BUNIT in file)",
        "desi_survey": clean_label(fits[0].header.get("SURVEY")),
        "desi_program": clean_label(fits[0].header.get("PROGRAM")),
    }
    if fm is not None:
        r = rows[0]
        scalar = lambda name: (fm.col(name)[r].item() if fm.has(name) else None)  # noqa: E731
        meta["ra"] = clean_float(scalar("TARGET_RA"))
        meta["dec"] = clean_float(scalar("TARGET_DEC"))
        meta["objtype"] = clean_label(scalar("OBJTYPE"))
        status = scalar("COADD_FIBERSTATUS") if fm.has("COADD_FIBERSTATUS") else scalar("FIBERSTATUS")
        meta["fiberstatus"] = None if status is None else int(status)
        meta["fibermap"] = {name: str(fm.col(name)[r]).strip() for name in fm.names
                            if _is_scalar_column(fm, name)}
        labels = redrock_labels(path, target_id)
        if labels:
            meta.update(labels)
    return build_spectrum(path, wave, flux, ivar, meta, bad=bad,
                          flux_unit=parse_flux_unit(unit_text or DEFAULT_BUNIT, path))


def read_desi_arms(fits: RawFits, path: str, target=None) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Each arm of one target on its own pixels, blue to red: [(arm, wave, flux, ivar, bad)], as
    `read_desi` takes them before the merge (a spectra-* file's exposures combined per arm by
    merge_arms). In the overlaps both arms keep their own pixels (what an export per arm writes)."""
    rows, _ = _rows_for(fits, path, target)
    out = []
    for arm in (a for a in ARMS if f"{a}_FLUX" in fits):
        exposures, _unit = _arm_data(fits, path, arm, rows)
        wave, flux, ivar, bad = exposures[0] if len(exposures) == 1 else merge_arms(exposures)
        out.append((arm, wave, flux, ivar, bad))
    return sorted(out, key=lambda a: a[1][0])


def _is_scalar_column(table, name: str) -> bool:
    try:
        return np.ndim(table.col(name)[0]) == 0
    except SpectrumReadError:
        return False


def list_targets_desi(fits: RawFits, path: str) -> list[str]:
    return target_ids(fits, path)


READERS = {DESI_COADD: read_desi, DESI_SPECTRA: read_desi}
