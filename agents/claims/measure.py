"""Measurements with their own uncertainty, for the claim checker.

Values come from the repository's fixed vocabulary (agents.tools.measure: equivalent width, depth,
emission peak, band depth, half-depth width, S/N), so a number the rules policy quotes is recomputed
by the very same function. The uncertainty is the scatter of that function over Monte-Carlo
realisations of the pixel noise (sigma = 1/sqrt(ivar); without ivar, the robust pixel-to-pixel
scatter, as in agents.tools.measure.local_snr): one method for every measurement, derived values
included, that needs no hand-written error formula. Each measurement works on a slice of the
spectrum around its windows, and its draws are measured together (agents.claims.draws), which keeps
a claim check to a few milliseconds.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agents.claims.draws import measure_row_values
from agents.tools.measure import Arrays, measure, walked_widths

N_DRAWS = 24  # enough for a 15 % error on sigma, which is all a 3-sigma tolerance needs
C_KMS = 299792.458


@dataclass(frozen=True)
class Value:
    value: float | None
    sigma: float | None
    window: tuple[float, float] | None  # the wavelengths the measurement used (observed frame)


def _windows(params: dict) -> list[tuple[float, float]]:
    return [tuple(params[k]) for k in ("core", "blue", "red", "band", "side", "side2", "window", "far_blue", "far_red")
            if params.get(k) is not None]


def emission_fwhm(a: Arrays, *, core, blue, red, **_) -> float | None:
    """Full width at half maximum (Angstrom) of an emission line above a straight continuum
    through the side bands (the emission twin of agents.tools.measure.balmer_width)."""
    prof = _profile(a, core, blue, red)
    if prof is None:
        return None
    w, r = prof
    return _width_at_half_maximum(w, r)


def _width_at_half_maximum(w, r) -> float | None:
    """Width (Angstrom) of a normalised emission profile `r` (continuum 1) at half its peak above the
    continuum, walking out from the peak; None without a peak."""
    width = walked_widths(w, np.asarray(r)[None, :], 1.0, 0.0)[0]
    return None if np.isnan(width) else float(width)


def broad_fwhm(a: Arrays, *, core, blue, red, smooth: float = 25.0, **_) -> float | None:
    """FWHM (Angstrom) of a broad emission line: the normalised profile is first median-filtered over
    `smooth` Angstrom, which erases narrow lines on top of it (FWHM < ~600 km/s) but keeps the broad
    one (thousands of km/s), then measured at half its maximum."""
    from scipy.ndimage import median_filter

    prof = _profile(a, core, blue, red)
    if prof is None or prof[0].size < 7:
        return None
    w, r = prof
    k = max(3, int(smooth / float(np.median(np.diff(w)))) | 1)
    r = median_filter(r, size=min(k, (r.size - 1) | 1), mode="nearest")
    return _width_at_half_maximum(w, r)


def line_flux(a: Arrays, *, core, blue, red, **_) -> float | None:
    """Integrated flux above (positive) or below (negative) the side-band continuum in the core."""
    from agents.tools.measure import _continuum

    cont = _continuum(a, blue, red)
    idx = a.window(*core)
    if cont is None or idx.size < 3:
        return None
    return float(np.trapezoid(a.flux[idx] - cont(a.wave[idx]), a.wave[idx]))


def ew_over_far_continuum(a: Arrays, *, core, blue, red, far_blue, far_red=None, **_) -> float | None:
    """Equivalent width (absorption positive) of a narrow line sitting on a broad one: its flux against
    the local pseudo-continuum (side bands on the broad line's wings) divided by the continuum beneath
    the broad line (side bands beyond its wings; the blue one alone, as a flat level, where the red
    one leaves the spectrum), as AGN narrow-line EWs are quoted."""
    from agents.tools.measure import _continuum, _side_level

    local = _continuum(a, blue, red)
    if far_red is not None:
        far = _continuum(a, far_blue, far_red)
    else:
        level = _side_level(a, far_blue)
        far = None if level is None else (lambda w: np.full(np.shape(w), level[1]))
    idx = a.window(*core)
    if local is None or far is None or idx.size < 3:
        return None
    beneath = far(a.wave[idx])
    if np.any(beneath <= 0):
        return None
    return float(np.trapezoid((local(a.wave[idx]) - a.flux[idx]) / beneath, a.wave[idx]))


def centroid(a: Arrays, *, core, blue, red, sign: float = 1.0, **_) -> float | None:
    """Wavelength of the extreme of the 3-pixel running median of the normalised profile
    (sign +1: the emission peak, -1: the absorption minimum)."""
    prof = _profile(a, core, blue, red)
    if prof is None:
        return None
    w, r = prof
    return float(w[int(np.argmax(sign * (r - 1.0)))])


def _profile(a: Arrays, core, blue, red):
    from agents.tools.measure import _normalised

    prof = _normalised(a, core, blue, red)
    return None if prof is None else (prof[0], prof[2])


EXTRA = {"emission_fwhm": emission_fwhm, "broad_fwhm": broad_fwhm, "line_flux": line_flux, "centroid": centroid,
         "ew_over_far_continuum": ew_over_far_continuum}


def _nan_for_none(v: float | None) -> float:
    return np.nan if v is None else v


def _call(a: Arrays, kind: str, params: dict) -> float | None:
    if kind in EXTRA:
        v = EXTRA[kind](a, **params)
        return None if v is None or not np.isfinite(v) else float(v)
    return measure(a, kind, **params)


class Measurer:
    """Cached measurements with Monte-Carlo errors on one spectrum (arrays in the observed frame)."""

    def __init__(self, arrays: Arrays, n_draws: int = N_DRAWS):
        self.a = arrays
        self.n_draws = n_draws
        self.noise_source = "ivar" if arrays.ivar is not None else "scatter"
        self.sigma = self._noise()
        self._cache: dict = {}

    @classmethod
    def from_spectrum(cls, spectrum) -> Measurer:
        return cls(Arrays.from_spectrum(spectrum))

    def __reduce__(self):
        # sent back from a worker process with every result of a one-worker campaign
        # (agents.jobs.vet_and_measure_job): the arrays a survey stored as float32 go as float32, the
        # noise is not sent but computed again on arrival, the cached values stay behind; the same
        # numbers, in half the bytes of a LAMOST spectrum (one trip through a 64 KB pipe, not three)
        a = self.a
        return _measurer, (a.wave, _narrowed(a.flux), None if a.ivar is None else _narrowed(a.ivar), a.good,
                           self.n_draws)

    def _noise(self) -> np.ndarray:
        a = self.a
        if a.ivar is not None:
            with np.errstate(divide="ignore"):
                return np.where(a.ivar > 0, 1.0 / np.sqrt(np.where(a.ivar > 0, a.ivar, 1.0)), np.inf)
        # no errors supplied: robust local scatter of first differences (41-pixel running MAD)
        from scipy.ndimage import median_filter

        f = np.where(a.good, a.flux, np.nan)
        d = np.abs(np.diff(f, prepend=f[0]))
        d = np.where(np.isfinite(d), d, np.nanmedian(d) if np.isfinite(d).any() else 0.0)
        return 1.4826 * median_filter(d, size=41, mode="nearest") / np.sqrt(2.0) + 1e-30

    @property
    def coverage(self) -> tuple[float, float]:
        w = self.a.wave[self.a.good]
        return (float(w[0]), float(w[-1])) if w.size else (np.nan, np.nan)

    def run(self, kind: str, **params) -> Value:
        key = (kind, tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in params.items())))
        if key not in self._cache:
            self._cache[key] = self._run(kind, params)
        return self._cache[key]

    def _run(self, kind: str, params: dict) -> Value:
        wins = _windows(params)
        lo, hi = min(w[0] for w in wins), max(w[1] for w in wins)
        i0, i1 = np.searchsorted(self.a.wave, [lo - 1.0, hi + 1.0])
        sl = slice(i0, i1)
        sub = Arrays(self.a.wave[sl], self.a.flux[sl], None if self.a.ivar is None else self.a.ivar[sl],
                     self.a.good[sl])
        sig = np.where(np.isfinite(self.sigma[sl]), self.sigma[sl], 0.0)
        # a fixed seed per measurement: the same claim always gets the same verdict
        noise = _unit_noise(zlib.crc32(repr((kind, sorted(params.items()))).encode()), self.n_draws, sig.size)
        # the value and all its draws in one stack, row 0 the spectrum itself (agents.claims.draws:
        # each row the number one call on it gives; the generator fills the rows in the order the
        # one-draw-at-a-time loop drew them)
        fluxes = np.vstack([sub.flux, sub.flux[None, :] + noise * sig[None, :]])
        rows = measure_row_values(sub, fluxes, kind, params)
        if rows is None:  # a kind without a row form: one call per row
            rows = np.array([_nan_for_none(_call(Arrays(sub.wave, f, sub.ivar, sub.good), kind, params))
                             for f in fluxes])
        value = float(rows[0])
        if not np.isfinite(value):
            return Value(None, None, (lo, hi))
        draws = rows[1:][np.isfinite(rows[1:])]
        sigma = float(np.std(draws, ddof=1)) if draws.size >= self.n_draws // 2 else None
        return Value(value, sigma, (lo, hi))


def _narrowed(values: np.ndarray) -> np.ndarray:
    """`values` as float32 when that loses nothing (a survey's float32 data, widened on reading), else as
    they are."""
    narrow = values.astype(np.float32)
    return narrow if np.array_equal(narrow, values, equal_nan=True) else values


def _measurer(wave, flux, ivar, good, n_draws: int) -> Measurer:
    """Measurer.__reduce__'s inverse: the float64 arrays again, the noise computed from them."""
    wide = None if ivar is None else ivar.astype(np.float64, copy=False)
    return Measurer(Arrays(wave, flux.astype(np.float64, copy=False), wide, good), n_draws)


@lru_cache(maxsize=64)  # at most ~25 MB: 64 x 24 draws x 2,000 pixels
def _unit_noise(seed: int, rows: int, size: int) -> np.ndarray:
    """rows x size standard normal draws of the generator seeded with `seed` (read-only). The seed
    depends on the measurement and its windows only, so spectra measured in the same windows (a
    campaign of one task on stars at z ~ 0) draw the same numbers: made once, not once a spectrum."""
    noise = np.random.default_rng(seed).normal(size=(rows, size))
    noise.setflags(write=False)
    return noise


def line_params(centre: float, half: float, gap: float | None = None, side: float | None = None) -> dict:
    """Core +-half around an observed centre, with side bands beyond a gap (defaults scale with half)."""
    gap = half * 0.5 if gap is None else gap
    side = max(2.0 * half, 20.0) if side is None else side
    return {"core": (centre - half, centre + half), "blue": (centre - half - gap - side, centre - half - gap),
            "red": (centre + half + gap, centre + half + gap + side)}


def scaled(params: dict, factor: float) -> dict:
    """Rest-frame windows moved to the observed frame (lambda_obs = lambda_rest (1 + z))."""
    return {k: (v[0] * factor, v[1] * factor) for k, v in params.items()}
