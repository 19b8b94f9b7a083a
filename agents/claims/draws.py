"""The claim checker's Monte-Carlo noise draws, all at once: each measurement of the fixed vocabulary
(agents.tools.measure, and agents.claims.measure's extra kinds) over a stack of noisy fluxes, one row
per draw, in a few array operations instead of one Python call per draw.

Every function here returns, for each row, the very number its one-row twin returns (NaN where that
returns None): the same pixel windows, the same medians (a selection), sums over the same rows in the
same order; tests/agents/claims/test_draws.py checks them equal bit for bit over the shared corpus.
A kind without a twin here (`measure_row_values` returns None) is drawn one row at a time, as before.
"""
from __future__ import annotations

import numpy as np

from agents.tools.measure import MIN_HALF_DEPTH, MIN_PIXELS, Arrays, _median, running_median, walked_widths


def _medians(m: np.ndarray) -> np.ndarray:
    """agents.tools.measure._median of each row (finite values)."""
    n = m.shape[1]
    k = n // 2
    if n % 2:
        return np.partition(m, k, axis=1)[:, k]
    part = np.partition(m, (k - 1, k), axis=1)
    return (part[:, k - 1] + part[:, k]) / 2.0  # np.mean of the two, without its overhead: the same sum


def _side_level(a: Arrays, f: np.ndarray, band):
    idx = a.window(*band)
    if idx.size < MIN_PIXELS:
        return None
    return _median(a.wave[idx]), _medians(f[:, idx])


def _continuum(a: Arrays, f: np.ndarray, blue, red):
    b = _side_level(a, f, blue)
    r = _side_level(a, f, red)
    if b is None or r is None or r[0] == b[0]:
        return None
    slope = (r[1] - b[1]) / (r[0] - b[0])
    return lambda w: b[1][:, None] + slope[:, None] * (np.asarray(w) - b[0])[None, :]


def _normalised(a: Arrays, f: np.ndarray, core, blue, red, smooth: int = 3):
    """(wave, ratio, smoothed ratio, rows without a profile) or None for every row."""
    cont = _continuum(a, f, blue, red)
    idx = a.window(*core)
    if cont is None or idx.size < MIN_PIXELS:
        return None
    c = cont(a.wave[idx])
    bad = np.any(c <= 0, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = f[:, idx] / c
    ratio_s = running_median(ratio, smooth) if smooth > 1 and ratio.shape[1] >= smooth else ratio
    return a.wave[idx], ratio, ratio_s, bad


def _where(bad: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.where(bad, np.nan, values)


def line_depth(a, f, *, core, blue, red, **_):
    prof = _normalised(a, f, core, blue, red)
    return None if prof is None else _where(prof[3], 1.0 - np.min(prof[2], axis=1))


def _ew(a, f, core, blue, red):
    prof = _normalised(a, f, core, blue, red, smooth=1)
    if prof is None:
        return None
    w, ratio, _, bad = prof
    return _where(bad, np.trapezoid(1.0 - ratio, w, axis=1))


def equivalent_width(a, f, *, core, blue, red, **_):
    return _ew(a, f, core, blue, red)


def emission_ew(a, f, *, core, blue, red, **_):
    ew = _ew(a, f, core, blue, red)
    return None if ew is None else -ew


def emission_peak(a, f, *, core, blue, red, **_):
    prof = _normalised(a, f, core, blue, red)
    return None if prof is None else _where(prof[3], np.max(prof[2], axis=1) - 1.0)


def band_depth(a, f, *, band, side, side2=None, **_):
    idx = a.window(*band)
    ref = [_side_level(a, f, side)]
    if side2 is not None:
        ref.append(_side_level(a, f, side2))
    if idx.size < MIN_PIXELS or any(r is None for r in ref):
        return None
    level = np.mean(np.stack([r[1] for r in ref]), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where(level <= 0, 1.0 - np.median(f[:, idx], axis=1) / level)


def _walked_widths(prof, sign: float, least: float) -> np.ndarray:
    w, _, r, bad = prof
    return _where(bad, walked_widths(w, r, sign, least))


def balmer_width(a, f, *, core, blue, red, **_):
    prof = _normalised(a, f, core, blue, red, smooth=5)
    return None if prof is None else _walked_widths(prof, -1.0, MIN_HALF_DEPTH)


def continuum_slope(a, f, *, blue, red, **_):
    b = _side_level(a, f, blue)
    r = _side_level(a, f, red)
    if b is None or r is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where(r[1] <= 0, b[1] / r[1])


def local_snr(a, f, *, window, **_):
    idx = a.window(*window)
    if idx.size < MIN_PIXELS:
        return None
    x = f[:, idx]
    if a.ivar is not None:
        return np.median(x * np.sqrt(a.ivar[idx]), axis=1)
    diffs = np.diff(x, axis=1)
    noise = 1.4826 * np.median(np.abs(diffs - np.median(diffs, axis=1)[:, None]), axis=1) / np.sqrt(2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where(noise <= 0, np.median(x, axis=1) / noise)


def emission_fwhm(a, f, *, core, blue, red, **_):
    prof = _normalised(a, f, core, blue, red)
    return None if prof is None else _walked_widths(prof, 1.0, 0.0)


def broad_fwhm(a, f, *, core, blue, red, smooth: float = 25.0, **_):
    from scipy.ndimage import median_filter

    prof = _normalised(a, f, core, blue, red)
    if prof is None or prof[0].size < 7:
        return None
    w, ratio, r, bad = prof
    k = max(3, int(smooth / float(np.median(np.diff(w)))) | 1)
    r = median_filter(r, size=(1, min(k, (r.shape[1] - 1) | 1)), mode="nearest")
    return _walked_widths((w, ratio, r, bad), 1.0, 0.0)


def line_flux(a, f, *, core, blue, red, **_):
    cont = _continuum(a, f, blue, red)
    idx = a.window(*core)
    if cont is None or idx.size < MIN_PIXELS:
        return None
    return np.trapezoid(f[:, idx] - cont(a.wave[idx]), a.wave[idx], axis=1)


def centroid(a, f, *, core, blue, red, sign: float = 1.0, **_):
    prof = _normalised(a, f, core, blue, red)
    if prof is None:
        return None
    w, _, r, bad = prof
    return _where(bad, w[np.argmax(sign * (r - 1.0), axis=1)])


ROWS = {
    "line_depth": line_depth, "equivalent_width": equivalent_width, "emission_ew": emission_ew,
    "emission_peak": emission_peak, "band_depth": band_depth, "balmer_width": balmer_width,
    "continuum_slope": continuum_slope, "local_snr": local_snr, "emission_fwhm": emission_fwhm,
    "broad_fwhm": broad_fwhm, "line_flux": line_flux, "centroid": centroid,
}


def measure_row_values(a: Arrays, fluxes: np.ndarray, kind: str, params: dict) -> np.ndarray | None:
    """Measurement `kind` on each row of `fluxes` (fluxes on the wavelengths of `a`, with its mask and
    ivar): what calling the one-row measurement on each row gives, NaN where that gives None. None:
    `kind` has no row form."""
    fn = ROWS.get(kind)
    if fn is None:
        return None
    values = fn(a, fluxes, **params)
    if values is None:  # a window without pixels: no row has a value
        return np.full(fluxes.shape[0], np.nan)
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values), values, np.nan)
