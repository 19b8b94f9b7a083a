"""A second method for a quoted measurement (issue 50, item 7): the number an agent quotes under a kb
measurement's name ("H-beta equivalent width = 8.53") is judged by another estimator than the one
that made it, never by re-running agents.tools.measure (that would check the agent's arithmetic, not
the spectrum). Nothing here calls agents.tools.measure or agents.claims.draws.

The estimators, after the Lick index definitions (Worthey et al. 1994; Trager et al. 1998):
- continuum: a least-squares straight line through every good pixel of both side bands (the agent: a
  line through the two bands' medians);
- equivalent width: the pixel-by-pixel integral of 1 - F/C over the core, each pixel weighted by the
  part of its width inside the core, bad pixels interpolated, not measured when more than a quarter of
  the core is masked (the agent: a trapezoid over the good pixel centres);
- line depth / emission peak: the vertex of a parabola through the three pixels at the extreme of the
  3-pixel running mean of F/C (the agent: the extreme of the running median);
- band depth: 1 - the clipped mean flux of the band over that of the side band (the agent: medians);
- width at half depth: the half-depth crossings interpolated between pixels on the 5-pixel running mean
  (the agent: the first pixel past half depth on a 5-pixel running median), uncertain by a pixel and by
  how much it changes on the 3-pixel mean;
- continuum ratio: the ratio of 2.5-sigma-clipped mean fluxes (the agent: of medians), uncertain by the
  difference the clip makes;
- a ratio of two measurements is undefined (unverifiable) when its denominator is consistent with zero;
- S/N per pixel: the median flux over the median stated noise (the agent: the median of flux x sqrt(ivar));
  without stated errors DER_SNR (Stoehr et al. 2008), from the flux alone.

Each value comes with two errors: `noise`, the scatter of the same estimator over Monte-Carlo draws of
the pixel noise (its own generator), and `structure`, the continuum's placement error from what the side
bands hold beyond noise (lines, a curved continuum: the residual scatter about the fitted line, less the
noise, propagated through the fit), which any two continuum definitions differ by. A width also carries
the pixel size: a crossing read off a sampled profile is uncertain by about a pixel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_DRAWS = 32
SEED = 20261207
MIN_PIXELS = 3
CLIP = 2.5
CLIP_FIT = 3.0
MAX_MASKED = 0.25  # a core more than a quarter masked is not measured
PIXELS_PER_RESOLUTION = 3.0  # SDSS, LAMOST and DESI sample a resolution element with 2-3 pixels
DERSNR_SCALE = 1.482602 / np.sqrt(6.0)


@dataclass(frozen=True)
class Second:
    value: float | None
    noise: float  # 1-sigma from the pixel noise
    structure: float  # 1-sigma from the continuum's placement (beyond noise), or a sampling term
    window: tuple[float, float] | None
    method: str  # the estimator, for the reason and the record

    @property
    def sigma(self) -> float:
        return float(np.hypot(self.noise, self.structure))


class _Slice:
    """The spectrum around a measurement's windows, with `rows` fluxes: row 0 the spectrum, then noise draws."""

    def __init__(self, wave, flux, sigma, good, lo: float, hi: float, seed: int, stated: bool = True):
        self.stated = stated  # sigma is the survey's (ivar), not estimated from the flux
        i0, i1 = np.searchsorted(wave, [lo - 1.0, hi + 1.0])
        self.wave = np.asarray(wave[i0:i1], dtype=float)
        self.good = np.asarray(good[i0:i1], bool) & np.isfinite(sigma[i0:i1])
        sig = np.where(self.good, sigma[i0:i1], 0.0)
        self.sig = sig
        rng = np.random.default_rng(seed)
        draws = rng.standard_normal((N_DRAWS, self.wave.size)) * sig[None, :]
        self.rows = np.vstack([flux[i0:i1][None, :], flux[i0:i1][None, :] + draws])

    def idx(self, band) -> np.ndarray:
        return np.flatnonzero(self.good & (self.wave >= band[0]) & (self.wave <= band[1]))


def _fit_line(s: _Slice, blue, red):
    """Least-squares line through the side bands' good pixels, pixels beyond CLIP_FIT sigma of the fit left
    out (a cosmic ray or a sky residual), for every row: (a, b, x0, the line's structure sigma at w) or None."""
    ib, ir = s.idx(blue), s.idx(red)
    if ib.size < MIN_PIXELS or ir.size < MIN_PIXELS:
        return None
    idx = every = np.concatenate([ib, ir])
    for _ in range(5):
        x = s.wave[idx]
        x0 = float(x.mean())
        dx = x - x0
        sxx = float(np.sum(dx * dx))
        if sxx <= 0:
            return None
        y0 = s.rows[0, idx]
        b0 = float(y0 @ dx) / sxx
        res = y0 - (y0.mean() + b0 * dx)
        scale = 1.4826 * float(np.median(np.abs(res)))
        keep = np.abs(res) <= CLIP_FIT * max(scale, float(np.median(s.sig[idx])))
        if keep.all() or keep.sum() < 2 * MIN_PIXELS:
            break
        idx = idx[keep]
    x = s.wave[idx]
    x0 = float(x.mean())
    dx = x - x0
    sxx = float(np.sum(dx * dx))
    y = s.rows[:, idx]
    a = y.mean(axis=1)
    b = (y @ dx) / sxx
    # the structure from every side-band pixel, those the fit left out too: what they hold is why two
    # continuum definitions differ
    res = s.rows[0, every] - (a[0] + b[0] * (s.wave[every] - x0))
    n = idx.size
    var_res = float(np.sum(res * res)) / max(every.size - 2, 1)
    var_noise = float(np.mean(s.sig[every] ** 2))
    # what the side bands hold beyond noise (lines, curvature) is correlated over a resolution element,
    # about PIXELS_PER_RESOLUTION pixels at the surveys' sampling: that many fewer independent points
    var_struct = max(0.0, var_res - var_noise) * PIXELS_PER_RESOLUTION

    def struct_sigma(w):
        return np.sqrt(var_struct * (1.0 / n + (np.asarray(w) - x0) ** 2 / sxx))

    return a, b, x0, struct_sigma


def _core_weights(s: _Slice, core) -> tuple[np.ndarray, np.ndarray] | None:
    """Indices of every pixel overlapping the core and the part of each pixel's width inside it."""
    w = s.wave
    if w.size < 2:
        return None
    edges = np.concatenate([[w[0] - 0.5 * (w[1] - w[0])], 0.5 * (w[1:] + w[:-1]), [w[-1] + 0.5 * (w[-1] - w[-2])]])
    inside = np.clip(np.minimum(edges[1:], core[1]) - np.maximum(edges[:-1], core[0]), 0.0, None)
    idx = np.flatnonzero(inside > 0)
    if np.count_nonzero(s.good[idx]) < MIN_PIXELS:
        return None
    if inside[idx][~s.good[idx]].sum() > MAX_MASKED * inside[idx].sum():
        return None  # the line may sit under the mask: neither filling nor skipping it measures the line
    return idx, inside[idx]


def _filled(s: _Slice, idx: np.ndarray) -> np.ndarray:
    """rows x idx fluxes, bad pixels interpolated from the good ones."""
    ok = s.good[idx]
    if ok.all():
        return s.rows[:, idx]
    x, xg = s.wave[idx], s.wave[idx][ok]
    return np.vstack([np.interp(x, xg, r[idx][ok]) for r in s.rows])


@dataclass(frozen=True)
class _Profile:
    w: np.ndarray  # core wavelengths
    r: np.ndarray  # F / C, one row per draw (row 0 the spectrum)
    weight: np.ndarray  # the part of each pixel's width inside the core
    c0: np.ndarray  # the continuum of row 0
    sc: np.ndarray  # the continuum's structure sigma
    f0: np.ndarray  # the flux of row 0


def _ratio(s: _Slice, core, blue, red) -> _Profile | None:
    """The core's profile normalised by the least-squares side-band continuum, or None."""
    fit = _fit_line(s, blue, red)
    cw = _core_weights(s, core)
    if fit is None or cw is None:
        return None
    a, b, x0, struct = fit
    idx, weight = cw
    w = s.wave[idx]
    cont = a[:, None] + b[:, None] * (w - x0)[None, :]
    if np.any(cont[0] <= 0):
        return None
    f = _filled(s, idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(cont > 0, f / cont, np.nan)
    return _Profile(w, r, weight, cont[0], struct(w), f[0])


def _result(values: np.ndarray, structure: float, window, method: str) -> Second:
    v = float(values[0])
    if not np.isfinite(v):
        return Second(None, 0.0, 0.0, window, method)
    draws = values[1:][np.isfinite(values[1:])]
    noise = float(np.std(draws, ddof=1)) if draws.size >= N_DRAWS // 2 else 0.0
    return Second(v, noise, float(structure), window, method)


def _running_mean5(r: np.ndarray) -> np.ndarray:
    p = np.concatenate([r[:, :1], r[:, :1], r, r[:, -1:], r[:, -1:]], axis=1)
    return (p[:, :-4] + p[:, 1:-3] + p[:, 2:-2] + p[:, 3:-1] + p[:, 4:]) / 5.0


def _running_mean3(r: np.ndarray) -> np.ndarray:
    p = np.concatenate([r[:, :1], r, r[:, -1:]], axis=1)
    return (p[:, :-2] + p[:, 1:-1] + p[:, 2:]) / 3.0


def equivalent_width(s: _Slice, *, core, blue, red, sign: float = 1.0, **_):
    p = _ratio(s, core, blue, red)
    if p is None:
        return None
    ew = sign * np.sum((1.0 - p.r) * p.weight[None, :], axis=1)
    # a level error dC at each pixel moves 1 - F/C by F dC / C^2
    structure = abs(float(np.sum(p.weight * p.f0 / p.c0 ** 2 * p.sc)))
    # a sampled profile's integral over a window is uncertain by half of each pixel that straddles an edge
    # (coarse sampling: a library spectrum's 5 A pixels against a 20 A core)
    width = np.diff(p.w).mean() if p.w.size > 1 else 0.0
    edges = 0.5 * width * np.abs(1.0 - p.r[0, [0, -1]])
    structure = float(np.sqrt(structure ** 2 + np.sum(edges ** 2)))
    return ew, structure, "least-squares side-band continuum, pixel-integrated EW"


def emission_ew(s: _Slice, **p):
    return equivalent_width(s, sign=-1.0, **p)


def line_depth(s: _Slice, *, core, blue, red, sign: float = -1.0, **_):
    """The extreme of F/C in the core: located on the 3-pixel running mean, valued at the vertex of the
    parabola through the three pixels around it (a line a few pixels wide keeps its depth). How much the
    value depends on that choice (vertex against the running mean) is an error of its own: the line's
    sampling."""
    p = _ratio(s, core, blue, red)
    if p is None:
        return None
    inside = (p.w >= core[0]) & (p.w <= core[1])  # pixel centres in the core, not pixels that overlap it
    r = np.where(inside[None, :], p.r, np.nan)
    sm = _running_mean3(r)
    vals = np.empty(r.shape[0])
    at0 = 0
    for k in range(r.shape[0]):
        if not np.isfinite(sm[k]).any():
            vals[k] = np.nan
            continue
        at = int(np.nanargmin(sm[k]) if sign < 0 else np.nanargmax(sm[k]))
        at = min(max(at, 1), r.shape[1] - 2)
        y = r[k, at - 1:at + 2]
        if not np.isfinite(y).all():
            vals[k] = sm[k, at]
        else:
            curv = y[0] - 2.0 * y[1] + y[2]
            shift = 0.0 if curv == 0 else float(np.clip(0.5 * (y[0] - y[2]) / curv, -1.0, 1.0))
            vals[k] = y[1] - 0.25 * (y[0] - y[2]) * shift
        if k == 0:
            at0 = at
    sampling = abs(vals[0] - sm[0, at0]) if np.isfinite(sm[0, at0]) else 0.0
    vals = 1.0 - vals if sign < 0 else vals - 1.0
    structure = float(np.hypot(p.f0[at0] / p.c0[at0] ** 2 * p.sc[at0], sampling))
    return vals, structure, "least-squares side-band continuum, parabola vertex at the extreme"


def emission_peak(s: _Slice, **p):
    return line_depth(s, sign=1.0, **p)


def _crossings(w: np.ndarray, r: np.ndarray) -> float:
    """Width at half depth of the deepest point of one normalised profile, the crossings interpolated."""
    if not np.isfinite(r).any():
        return np.nan
    at = int(np.nanargmin(r))
    depth = 1.0 - r[at]
    if depth < 0.05:
        return np.nan
    half = 1.0 - depth / 2.0
    lo = at
    while lo > 0 and r[lo] < half:
        lo -= 1
    hi = at
    while hi < r.size - 1 and r[hi] < half:
        hi += 1

    def cross(i, j):  # between pixel i (above half) and j (below)
        if r[i] < half or r[i] == r[j]:
            return w[i]
        return w[i] + (half - r[i]) * (w[j] - w[i]) / (r[j] - r[i])

    return float(cross(hi, hi - 1) - cross(lo, lo + 1)) if hi > at and lo < at else float(w[hi] - w[lo])


def balmer_width(s: _Slice, *, core, blue, red, **_):
    p = _ratio(s, core, blue, red)
    if p is None:
        return None
    inside = (p.w >= core[0]) & (p.w <= core[1])
    w = p.w[inside]
    sm = _running_mean5(p.r[:, inside])
    vals = np.array([_crossings(w, row) for row in sm])
    pixel = float(np.median(np.diff(w))) if w.size > 1 else 0.0
    # a shallow line's width depends on the smoothing scale: the 3-pixel mean's width against the 5-pixel's
    finer = _crossings(w, _running_mean3(p.r[:1, inside])[0])
    scale = abs(finer - vals[0]) if np.isfinite(finer) and np.isfinite(vals[0]) else 0.0
    return vals, float(np.hypot(pixel, scale)), \
        "least-squares side-band continuum, interpolated half-depth crossings of the 5-pixel running mean"


def _clipped_means(f: np.ndarray) -> tuple[np.ndarray, float]:
    """2.5-sigma-clipped mean of each row (the clip from row 0), and row 0's error of it: the scatter over
    the window (correlated over a resolution element) and the difference the clip makes."""
    keep = np.ones(f.shape[1], bool)
    for _ in range(5):
        x = f[0, keep]
        m, sd = x.mean(), x.std()
        new = np.abs(f[0] - m) <= CLIP * sd if sd > 0 else keep
        if new.sum() < MIN_PIXELS or np.array_equal(new, keep):
            break
        keep = new
    x = f[:, keep]
    k = int(keep.sum())
    sampling = float(x[0].std(ddof=1) * np.sqrt(PIXELS_PER_RESOLUTION / k)) if k > 1 else 0.0
    # how much the level rests on the pixels the clip set aside (a line in the window): an error of its own
    leverage = abs(float(f[0].mean()) - float(x[0].mean()))
    return x.mean(axis=1), float(np.hypot(sampling, leverage))


def band_depth(s: _Slice, *, band, side, side2=None, **_):
    ib = s.idx(band)
    iss = [s.idx(side)] + ([s.idx(side2)] if side2 is not None else [])
    if ib.size < MIN_PIXELS or any(i.size < MIN_PIXELS for i in iss):
        return None
    mb, eb = _clipped_means(s.rows[:, ib])
    sides = [_clipped_means(s.rows[:, i]) for i in iss]
    level = np.mean([m for m, _ in sides], axis=0)
    lev_err = float(np.sqrt(np.sum([e ** 2 for _, e in sides]))) / len(sides)
    if level[0] <= 0:
        return None
    vals = 1.0 - mb / level
    ratio = mb[0] / level[0]
    structure = abs(ratio) * float(np.hypot(eb / (abs(mb[0]) or 1e-30), lev_err / level[0]))
    return vals, structure, "ratio of 2.5-sigma-clipped mean band and side-band fluxes"


def continuum_slope(s: _Slice, *, blue, red, **_):
    ib, ir = s.idx(blue), s.idx(red)
    if ib.size < MIN_PIXELS or ir.size < MIN_PIXELS:
        return None
    mb, eb = _clipped_means(s.rows[:, ib])
    mr, er = _clipped_means(s.rows[:, ir])
    if mr[0] <= 0:
        return None
    vals = mb / mr
    v = float(vals[0])
    structure = abs(v) * float(np.hypot(eb / (abs(mb[0]) or 1e-30), er / mr[0]))
    return vals, structure, "ratio of 2.5-sigma-clipped mean fluxes"


def local_snr(s: _Slice, *, window, **_):
    """Median flux over the median stated noise in the window (the agent: the median of flux x sqrt(ivar)); without
    stated errors, DER_SNR (Stoehr et al. 2008) from the flux alone."""
    idx = s.idx(window)
    if idx.size < 5:
        return None
    f = s.rows[0, idx]
    if s.stated:
        snr = f / s.sig[idx]
        value = float(np.median(f)) / float(np.median(s.sig[idx]))
        return np.array([value]), float(1.2533 * snr.std(ddof=1) * np.sqrt(PIXELS_PER_RESOLUTION / idx.size)), \
            "median flux over the median stated noise"
    noise = DERSNR_SCALE * float(np.median(np.abs(2.0 * f[2:-2] - f[:-4] - f[4:])))
    if noise <= 0:
        return None
    return np.array([float(np.median(f)) / noise]), 0.0, "DER_SNR (flux alone, Stoehr et al. 2008)"


ESTIMATORS = {"equivalent_width": equivalent_width, "emission_ew": emission_ew, "line_depth": line_depth,
              "emission_peak": emission_peak, "band_depth": band_depth, "balmer_width": balmer_width,
              "continuum_slope": continuum_slope, "local_snr": local_snr}
WINDOW_KEYS = ("core", "blue", "red", "band", "side", "side2", "window")


def measure_second(wave, flux, sigma, good, kind: str, stated: bool = True, **params) -> Second:
    """The second method's value of a kb measurement `kind` with its windows (observed frame); `sigma`
    the per-pixel noise (`stated`: the survey's, from ivar)."""
    wins = [tuple(params[k]) for k in WINDOW_KEYS if params.get(k) is not None]
    lo, hi = min(w[0] for w in wins), max(w[1] for w in wins)
    if kind not in ESTIMATORS:
        return Second(None, 0.0, 0.0, (lo, hi), f"no second method for {kind}")
    s = _Slice(wave, flux, sigma, good, lo, hi, SEED + round(lo) * 7 + round(hi), stated)
    got = ESTIMATORS[kind](s, **params)
    if got is None:
        return Second(None, 0.0, 0.0, (lo, hi), kind)
    values, structure, method = got
    return _result(np.asarray(values, dtype=float), structure, (lo, hi), method)


def combine(how: str, parts: list[Second]) -> Second:
    """A derived measurement (kb `derived`: mean_of, ratio_of, max_of, min_of) of second-method values,
    both errors propagated."""
    wins = [p.window for p in parts if p.window]
    win = (min(w[0] for w in wins), max(w[1] for w in wins)) if wins else None
    if any(p.value is None for p in parts):
        return Second(None, 0.0, 0.0, win, how)
    vals = [p.value for p in parts]
    if how == "ratio_of":
        num, den = parts
        if abs(den.value) <= 3.0 * den.sigma:  # a denominator consistent with zero: the ratio is undefined
            return Second(None, 0.0, 0.0, win, "ratio over a denominator consistent with zero")
        r = num.value / den.value

        def rel(attr):
            return abs(r) * float(np.hypot(getattr(num, attr) / (abs(num.value) or 1e-30),
                                           getattr(den, attr) / abs(den.value)))

        return Second(r, rel("noise"), rel("structure"), win, f"ratio of values by {num.method}")
    if how == "mean_of":
        k = len(parts)
        return Second(float(np.mean(vals)), float(np.sqrt(sum(p.noise ** 2 for p in parts))) / k,
                      float(np.sqrt(sum(p.structure ** 2 for p in parts))) / k, win, f"mean of values by {parts[0].method}")
    i = int(np.argmax(vals) if how == "max_of" else np.argmin(vals))
    return parts[i]
