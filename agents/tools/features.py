"""Visual interpreter, part 1: good pixels and continuous-wavelet feature detection (FORMA 2.2).

Emission peaks and absorption troughs are found as ridges of the Mexican-hat wavelet transform of
the flux minus a running median, across 24 log-spaced widths of 1-80 pixels. A ridge is kept when
its maxima stand >= `snr_threshold` times the local noise (a +-50 px sliding MAD of the transform at
that width) over >= `min_ridge_length` consecutive widths. Everything here works on plain numpy
arrays so the tools stay fast and testable without a file.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pywt
from scipy.ndimage import median_filter

C_KMS = 299792.458
# DESI arm overlaps (FORMA ARM_WAVELENGTH_RANGE B 3600-5800, R 5760-7620, Z 7520-9824): the
# interleaved pixels of two arms would look like a step change in pixel spacing to the CWT.
DESI_ARM_OVERLAPS = ((5760.0, 5800.0), (7520.0, 7620.0))

CWT_N_SCALES = 24
CWT_MIN_WIDTH = 1.0
CWT_MAX_WIDTH = 80.0
CWT_SNR_THRESH = 5.0
CWT_MIN_RIDGE_LENGTH = 4
RIDGE_MAX_DRIFT_PX = 10
NOISE_HALF_WINDOW_PX = 50


@dataclass
class Pixels:
    """The good pixels of one spectrum, ascending in wavelength."""

    wave: np.ndarray
    flux: np.ndarray
    ivar: np.ndarray
    wave_min_all: float  # full coverage including bad pixels (edges are about the instrument)
    wave_max_all: float
    masked_ranges: list[tuple[float, float]] = field(default_factory=list)

    @property
    def snr(self) -> np.ndarray:
        """Per-pixel S/N = |flux| * sqrt(ivar)."""
        return np.abs(self.flux) * np.sqrt(self.ivar)

    @property
    def median_snr(self) -> float:
        return float(np.median(self.snr)) if self.wave.size else 0.0


@dataclass
class Feature:
    kind: str  # "emission" or "absorption"
    wavelength: float
    wavelength_err: float
    fwhm_A: float
    fwhm_kms: float
    amplitude: float  # residual flux at the centre (negative for troughs)
    amplitude_err: float
    snr: float  # the ridge maximum of |CWT| / noise
    ridge_length: int
    width_class: str  # narrow / intermediate / broad
    pixel: int = 0

    def as_dict(self) -> dict:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def width_class(fwhm_kms: float) -> str:
    if fwhm_kms < 1000:
        return "narrow"
    if fwhm_kms < 2000:
        return "intermediate"
    return "broad"


def _masked_ranges(wave: np.ndarray, bad: np.ndarray, min_px: int = 3) -> list[tuple[float, float]]:
    """Contiguous runs of >= min_px bad pixels, as wavelength ranges."""
    out = []
    if not bad.any():
        return out
    edges = np.flatnonzero(np.diff(np.r_[0, bad.astype(np.int8), 0]))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if stop - start >= min_px:
            out.append((float(wave[start]), float(wave[stop - 1])))
    return out


def pixels_from_arrays(wave, flux, ivar=None, mask=None, *, arm_overlaps=()) -> Pixels:
    """Good = finite, mask False and ivar > 0; sorted; duplicate wavelengths averaged (ivar-weighted)."""
    wave = np.asarray(wave, dtype=float)
    flux = np.asarray(flux, dtype=float)
    ivar = np.ones_like(flux) if ivar is None else np.asarray(ivar, dtype=float)
    bad = ~np.isfinite(flux) | ~np.isfinite(ivar) | (ivar <= 0) | ~np.isfinite(wave)
    if mask is not None:
        bad |= np.asarray(mask, dtype=bool)
    order = np.argsort(wave, kind="stable")
    wave, flux, ivar, bad = wave[order], flux[order], ivar[order], bad[order]
    for lo, hi in arm_overlaps:
        bad |= (wave >= lo) & (wave <= hi)
    finite_w = wave[np.isfinite(wave)]
    wmin, wmax = (float(finite_w[0]), float(finite_w[-1])) if finite_w.size else (0.0, 0.0)
    masked = _masked_ranges(wave, bad)
    good = ~bad
    w, f, iv = wave[good], flux[good], ivar[good]
    if w.size and np.any(np.diff(w) == 0):
        uniq, inv = np.unique(w, return_inverse=True)
        wsum = np.bincount(inv, weights=iv)
        f = np.bincount(inv, weights=f * iv) / wsum
        iv, w = wsum, uniq
    return Pixels(w, f, iv, wmin, wmax, masked)


def good_pixels(spectrum) -> Pixels:
    """Good pixels of a `specutils.Spectrum` from `agents.spectra.read_spectrum`."""
    wave = spectrum.spectral_axis.to_value("Angstrom")
    flux = np.asarray(spectrum.flux.value, dtype=float)
    ivar = None
    if spectrum.uncertainty is not None:
        ivar = np.asarray(_as_ivar(spectrum.uncertainty), dtype=float)
    mask = None if spectrum.mask is None else np.asarray(spectrum.mask, dtype=bool)
    fmt = str((spectrum.meta or {}).get("format", "")).lower()
    overlaps = DESI_ARM_OVERLAPS if "desi" in fmt and _has_interleaved_arms(wave) else ()
    return pixels_from_arrays(wave, flux, ivar, mask, arm_overlaps=overlaps)


def _as_ivar(unc) -> np.ndarray:
    from astropy.nddata import InverseVariance
    if isinstance(unc, InverseVariance):
        return unc.array
    return unc.represent_as(InverseVariance).array


def _has_interleaved_arms(wave: np.ndarray) -> bool:
    """True when two arms' pixels interleave (a merged DESI coadd keeps both arms in the overlap)."""
    w = np.sort(np.asarray(wave, dtype=float))
    step = np.diff(w)
    return step.size > 10 and np.any(step < 0.6 * np.median(step))


def _sliding_mad(x: np.ndarray, half: int, stride: int = 8) -> np.ndarray:
    """+-half px running MAD x 1.4826, evaluated every `stride` px and interpolated (speed)."""
    n = x.size
    centres = np.arange(0, n, stride)
    if centres[-1] != n - 1:
        centres = np.r_[centres, n - 1]
    # a windowed view: rows = centres, cols = window (edge-padded)
    pad = np.pad(x, half, mode="reflect") if n > half else np.pad(x, half, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(pad, 2 * half + 1)[centres]
    med = np.median(windows, axis=1, keepdims=True)
    mad = 1.4826 * np.median(np.abs(windows - med), axis=1)
    return np.interp(np.arange(n), centres, mad)


def cwt_transform(flux: np.ndarray, widths: np.ndarray | None = None):
    """Residual (flux - running median) and its Mexican-hat CWT, shape (n_widths, n)."""
    n = flux.size
    filt = max(51, n // 20)
    filt += 1 - filt % 2
    residual = flux - median_filter(flux, size=min(filt, n), mode="nearest")
    if widths is None:
        widths = np.geomspace(CWT_MIN_WIDTH, CWT_MAX_WIDTH, CWT_N_SCALES)
    # reflect-pad by three of the widest wavelets so the ends do not ring like features
    pad = min(int(3 * widths[-1]), n - 1)
    padded = np.pad(residual, pad, mode="reflect")
    coef, _ = pywt.cwt(padded, widths, "mexh", method="fft")
    return residual, coef[:, pad:pad + n], widths


def _ridges(snr: np.ndarray, sign: int, threshold: float) -> list[list[tuple[int, int]]]:
    """Link per-width extrema of sign*snr above threshold into ridges [(scale_idx, pixel), ...]."""
    s = sign * snr
    ridges: list[list[tuple[int, int]]] = []
    open_ridges: list[list[tuple[int, int]]] = []
    for i in range(s.shape[0]):
        row = s[i]
        peak = (row[1:-1] > row[:-2]) & (row[1:-1] >= row[2:]) & (row[1:-1] >= threshold)
        positions = np.flatnonzero(peak) + 1
        next_open = []
        used = set()
        for p in positions:
            best, best_d = None, RIDGE_MAX_DRIFT_PX + 1
            for j, r in enumerate(open_ridges):
                d = abs(r[-1][1] - p)
                if j not in used and d < best_d:
                    best, best_d = j, d
            if best is not None:
                used.add(best)
                open_ridges[best].append((i, int(p)))
                next_open.append(open_ridges[best])
            else:
                next_open.append([(i, int(p))])
        ridges += [r for j, r in enumerate(open_ridges) if j not in used]
        open_ridges = next_open
    return ridges + open_ridges


def detect_features(pix: Pixels, *, snr_threshold: float = CWT_SNR_THRESH,
                    min_ridge_length: int = CWT_MIN_RIDGE_LENGTH) -> list[Feature]:
    """CWT emission peaks and absorption troughs, strongest first."""
    wave, flux = pix.wave, pix.flux
    n = wave.size
    if n < 20:
        return []
    residual, coef, widths = cwt_transform(flux)
    noise = np.empty_like(coef)
    for i in range(coef.shape[0]):
        # FORMA's +-50 px window, widened to +-5 wavelet widths: at large widths a 101 px window
        # holds the feature's own response and the MAD would count the line as noise
        half = min(max(NOISE_HALF_WINDOW_PX, int(5 * widths[i])), max(3, n // 2 - 1))
        mad = _sliding_mad(coef[i], half, stride=max(8, half // 6))
        floor = 0.1 * np.median(mad) if np.median(mad) > 0 else 1e-30
        noise[i] = np.maximum(mad, floor if floor > 0 else 1e-30)
    snr = coef / noise
    step = np.gradient(wave)
    smooth = np.convolve(residual, np.ones(3) / 3, mode="same")
    found: list[Feature] = []
    for sign, kind in ((1, "emission"), (-1, "absorption")):
        for ridge in _ridges(snr, sign, snr_threshold):
            if len(ridge) < min_ridge_length:
                continue
            scales = np.array([widths[i] for i, _ in ridge])
            pxs = np.array([p for _, p in ridge])
            vals = np.array([sign * snr[i, p] for i, p in ridge])
            centre = int(np.median(pxs))
            fwhm_px = max(2.355 * float(np.median(scales)), 2.0)
            fwhm_A = fwhm_px * float(step[centre])
            amp = float(smooth[centre])
            if sign * amp <= 0:  # the running median can sit above a broad peak's wing
                amp = float(residual[centre])
            found.append(Feature(
                kind=kind, wavelength=float(wave[centre]), wavelength_err=float(step[centre]),
                fwhm_A=fwhm_A, fwhm_kms=fwhm_A / float(wave[centre]) * C_KMS,
                amplitude=amp, amplitude_err=0.15 * abs(amp), snr=float(vals.max()),
                ridge_length=len(ridge), width_class=width_class(fwhm_A / float(wave[centre]) * C_KMS),
                pixel=centre,
            ))
    return _dedupe(found)


def _dedupe(features: list[Feature]) -> list[Feature]:
    """One feature per blend, and no wavelet side lobes.

    Of same-kind features closer than half the wider FWHM keep the stronger. The Mexican hat has
    negative lobes of ~0.45 of its peak at ~1 FWHM either side, so a trough beside a much stronger
    peak (or a peak beside a much deeper trough) within 1.5 FWHM is the lobe, not a line.
    """
    kept: list[Feature] = []
    for f in sorted(features, key=lambda f: -f.snr * f.ridge_length):
        same = any(g.kind == f.kind and abs(g.wavelength - f.wavelength) <= 0.5 * max(g.fwhm_A, f.fwhm_A)
                   for g in kept)
        lobe = any(g.kind != f.kind and abs(g.wavelength - f.wavelength) <= 1.5 * g.fwhm_A
                   and f.snr < 0.6 * g.snr for g in kept)
        if not same and not lobe:
            kept.append(f)
    return sorted(kept, key=lambda f: -f.snr)
