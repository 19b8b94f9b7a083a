"""Template redshift scan against the Redrock PCA templates (STAR / GALAXY / QSO), in numpy.

The spectrum and every template are put on one grid uniform in ln(lambda) (step 1e-4 dex, the
SDSS/LAMOST pixel), whose pixel index is global (index = ln(lambda)/STEP), so a redshift is an
integer pixel shift k = ln(1+z)/STEP. For a linear model flux = sum_i c_i T_i(shifted) + sum_p d_p
P_p (P = low-order Legendre polynomials in the observed frame that absorb flux-calibration
errors), the normal equations at every shift are cross-correlations, computed for all shifts at
once with FFTs; chi2(k) = sum w f^2 - b(k)^T A(k)^-1 b(k). Minima are refined by a parabola.

Templates are read with astropy once per directory and cached. Lookup: explicit directory ->
$RR_TEMPLATE_DIR -> $SPECREVIEW_TEMPLATE_DIR. Without templates the hypothesis engine falls back
to line matching alone.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from astropy.io import fits

from agents.settings import TEMPLATE_DIR

LN_STEP = 1e-4 * np.log(10.0)
FIT_RANGE = (3600.0, 9800.0)  # observed range used for template fits (Redrock clips SDSS here)
LEGENDRE_TERMS = 0  # Redrock fits PCA templates alone; polynomials let QSO/galaxy bases mimic stars
# redshift ranges per class (Redrock defaults; STAR +-600 km/s)
Z_RANGES = {"GALAXY": (-0.005, 1.7), "QSO": (0.05, 6.0), "STAR": (-0.002, 0.002)}
TEMPLATE_ENV_VARS = ("RR_TEMPLATE_DIR", TEMPLATE_DIR.name)  # Redrock's own variable first (agents/settings.py)


@dataclass
class Template:
    spectype: str
    subtype: str
    start: int  # global ln-grid index of the first pixel (rest frame)
    basis: np.ndarray  # (n_basis, n_pix) on the global ln grid
    z_range: tuple[float, float]
    source: str

    @property
    def name(self) -> str:
        return f"{self.spectype}:{self.subtype}" if self.subtype else self.spectype


@dataclass
class ZCandidate:
    z: float
    spectype: str
    subtype: str
    chi2: float
    npix: int
    coeff: list[float]

    def as_dict(self) -> dict:
        return {"z": round(self.z, 6), "class": self.spectype, "subtype": self.subtype,
                "chi2": round(self.chi2, 2), "npix": self.npix}


def template_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    cands = [explicit] if explicit else [os.environ.get(v) for v in TEMPLATE_ENV_VARS]
    for c in cands:
        if c and Path(c).is_dir() and any(Path(c).glob("rrtemplate-*.fits")):
            return Path(c)
    return None


def _rebin_to_ln_grid(wave: np.ndarray, flux: np.ndarray) -> tuple[int, np.ndarray]:
    """Flux-conserving average of a finely sampled template onto the global ln grid."""
    lnw = np.log(wave)
    start = int(np.ceil(lnw[0] / LN_STEP)) + 1
    stop = int(np.floor(lnw[-1] / LN_STEP)) - 1
    edges = (np.arange(start, stop + 1) - 0.5) * LN_STEP
    # integrate with the cumulative trapezoid, then difference at the bin edges
    out = np.empty((flux.shape[0], stop - start))
    for i, f in enumerate(flux):
        cum = np.r_[0.0, np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(lnw))]
        at = np.interp(edges, lnw, cum)
        out[i] = np.diff(at) / LN_STEP
    return start, out


def _read_template(path: Path) -> Template:
    with fits.open(path, memmap=False) as hdul:
        hdr = hdul[0].header if hdul[0].data is not None else hdul[1].header
        data = hdul[0].data if hdul[0].data is not None else hdul["BASIS_VECTORS"].data
        basis = np.atleast_2d(np.asarray(data, dtype=float))
        crval, cdelt = float(hdr["CRVAL1"]), float(hdr["CDELT1"])
        n = basis.shape[1]
        if hdr.get("LOGLAM"):
            wave = 10 ** (crval + cdelt * np.arange(n))
        else:
            wave = crval + cdelt * np.arange(n)
        spectype = str(hdr["RRTYPE"]).strip().upper()
        subtype = str(hdr.get("RRSUBTYP", "") or "").strip()
        zr = Z_RANGES.get(spectype, (-0.005, 1.7))
        if "REDSHIFTS" in hdul:  # new-style templates carry their own redshift grid
            zgrid = np.asarray(hdul["REDSHIFTS"].data, dtype=float).ravel()
            zr = (float(zgrid.min()), float(zgrid.max()))
    start, rebinned = _rebin_to_ln_grid(wave, basis)
    return Template(spectype, subtype, start, rebinned, zr, path.name)


BUNDLED = Path(__file__).resolve().parents[2] / "kb" / "templates" / "redrock-derived-v1.npz"


def save_bundle(templates: tuple[Template, ...], path: str | os.PathLike) -> None:
    """Write templates as they are used here (rebinned to the global ln grid, float32): what the
    bundled `kb/templates/redrock-derived-v1.npz` is made of."""
    arrays = {}
    for i, t in enumerate(templates):
        arrays[f"basis_{i}"] = t.basis.astype(np.float32)
        arrays[f"meta_{i}"] = np.array([t.spectype, t.subtype, str(t.start), repr(t.z_range), t.source])
    np.savez_compressed(path, **arrays)


@lru_cache(maxsize=2)
def load_bundle(path: str = str(BUNDLED)) -> tuple[Template, ...]:
    """The derived templates shipped with SpecReview, so the built-in engine works with no set-up."""
    out = []
    with np.load(path) as data:
        for i in range(sum(1 for k in data.files if k.startswith("basis_"))):
            spectype, subtype, start, z_range, source = (str(v) for v in data[f"meta_{i}"])
            lo, hi = (float(v) for v in z_range.strip("()").split(","))
            out.append(Template(spectype, subtype, int(start), data[f"basis_{i}"].astype(float), (lo, hi), source))
    return tuple(out)


def resolve_templates(explicit: str | os.PathLike | None = None) -> tuple[Template, ...]:
    """Templates from `explicit`, else $RR_TEMPLATE_DIR / $SPECREVIEW_TEMPLATE_DIR, else the bundle."""
    d = template_dir(explicit)
    if d is not None:
        return load_templates(str(d))
    return load_bundle() if BUNDLED.is_file() else ()


@lru_cache(maxsize=4)
def load_templates(directory: str) -> tuple[Template, ...]:
    """All `rrtemplate-*.fits` of a directory (templates-default.txt honoured when present)."""
    d = Path(directory)
    listing = d / "templates-default.txt"
    if listing.is_file():
        names = [ln.strip() for ln in listing.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        paths = [d / n for n in names if (d / n).is_file()]
    else:
        paths = sorted(d.glob("rrtemplate-*.fits"))
    return tuple(_read_template(p) for p in paths)


@dataclass
class LnSpectrum:
    """A spectrum rebinned onto the global ln grid (observed frame)."""

    start: int
    flux: np.ndarray
    ivar: np.ndarray  # 0 where no data

    @property
    def loglam(self) -> np.ndarray:
        return (self.start + np.arange(self.flux.size)) * LN_STEP


def to_ln_grid(wave: np.ndarray, flux: np.ndarray, ivar: np.ndarray,
               fit_range: tuple[float, float] = FIT_RANGE) -> LnSpectrum:
    """Inverse-variance weighted binning of good pixels onto the ln grid within fit_range."""
    sel = (wave >= fit_range[0]) & (wave <= fit_range[1]) & (ivar > 0) & np.isfinite(flux)
    w, f, iv = wave[sel], flux[sel], ivar[sel]
    if w.size < 10:
        return LnSpectrum(0, np.zeros(0), np.zeros(0))
    idx = np.rint(np.log(w) / LN_STEP).astype(int)
    start = idx.min()
    n = idx.max() - start + 1
    wsum = np.bincount(idx - start, weights=iv, minlength=n)
    fsum = np.bincount(idx - start, weights=f * iv, minlength=n)
    out = np.zeros(n)
    ok = wsum > 0
    out[ok] = fsum[ok] / wsum[ok]
    # robust ivar rescale: keep relative weights but cap single-pixel dominance (bad ivar in some files)
    cap = 25.0 * np.median(wsum[ok])
    return LnSpectrum(start, out, np.minimum(wsum, cap))


def _legendre(n: int, terms: int) -> np.ndarray:
    x = np.linspace(-1, 1, n)
    return np.polynomial.legendre.legvander(x, terms - 1).T  # (terms, n)


def _fft_len(n: int) -> int:
    return 1 << int(np.ceil(np.log2(n)))


_BY_ID: dict[int, Template] = {}


@lru_cache(maxsize=64)
def _template_ffts(tmpl_id: int, nfft: int) -> dict:
    """rFFTs of the reversed basis vectors and their pairwise products, cached per template."""
    T = _BY_ID[tmpl_id].basis
    out = {}
    for i in range(T.shape[0]):
        out[(i,)] = np.fft.rfft(T[i][::-1], nfft)
        for j in range(i, T.shape[0]):
            out[(i, j)] = np.fft.rfft((T[i] * T[j])[::-1], nfft)
    return out


def _xcorr(obs_fft, tmpl_fft, nfft: int, L: int, o_lo: int, ns: int) -> np.ndarray:
    """c[s] = sum_j obs[j] * T[o_lo + s + j] for s in [0, ns), by one inverse rFFT:
    conv(obs, T reversed)[p] = sum_j obs[j] T[L - 1 - p + j], so c[s] = conv[L - 1 - o_lo - s]."""
    conv = np.fft.irfft(obs_fft * tmpl_fft, nfft)
    return conv[L - 1 - o_lo - np.arange(ns)]


def scan_template(spec: LnSpectrum, tmpl: Template, *, legendre_terms: int = LEGENDRE_TERMS,
                  z_range: tuple[float, float] | None = None):
    """chi2 on the redshift grid for one template; returns (z array, chi2 array, coeffs) or None."""
    n = spec.flux.size
    zlo, zhi = z_range or tmpl.z_range
    # shift k: observed global index g <-> rest index g - k; template must cover the spectrum
    k_min_cover = spec.start + n - 1 - (tmpl.start + tmpl.basis.shape[1] - 1)
    k_max_cover = spec.start - tmpl.start
    k_lo = max(int(np.floor(np.log1p(zlo) / LN_STEP)), k_min_cover)
    k_hi = min(int(np.ceil(np.log1p(zhi) / LN_STEP)), k_max_cover)
    if k_hi < k_lo or n < 10:
        return None
    # rest index window needed: offsets o = spec.start - k - tmpl.start, over k in [k_lo, k_hi]
    o_lo = spec.start - k_hi - tmpl.start
    o_hi = spec.start - k_lo - tmpl.start
    T = tmpl.basis
    L = T.shape[1]
    nfft = _fft_len(L + n)
    _BY_ID.setdefault(id(tmpl), tmpl)
    tf = _template_ffts(id(tmpl), nfft)
    w, f = spec.ivar, spec.flux
    P = _legendre(n, legendre_terms) if legendre_terms else np.zeros((0, n))
    nb, npoly = T.shape[0], P.shape[0]
    m = nb + npoly
    ns = o_hi - o_lo + 1
    A = np.empty((ns, m, m))
    b = np.empty((ns, m))
    wf = w * f
    w_fft, wf_fft = np.fft.rfft(w, nfft), np.fft.rfft(wf, nfft)
    wp_fft = [np.fft.rfft(w * P[p], nfft) for p in range(npoly)]
    for i in range(nb):
        b[:, i] = _xcorr(wf_fft, tf[(i,)], nfft, L, o_lo, ns)
        for j in range(i, nb):
            A[:, i, j] = A[:, j, i] = _xcorr(w_fft, tf[(i, j)], nfft, L, o_lo, ns)
        for p in range(npoly):
            A[:, i, nb + p] = A[:, nb + p, i] = _xcorr(wp_fft[p], tf[(i,)], nfft, L, o_lo, ns)
    for p in range(npoly):
        b[:, nb + p] = np.dot(wf, P[p])
        for q in range(p, npoly):
            A[:, nb + p, nb + q] = A[:, nb + q, nb + p] = np.dot(w * P[p], P[q])
    # tiny ridge keeps degenerate shifts (template zero over the data) solvable
    A += np.eye(m) * 1e-9 * np.trace(A, axis1=1, axis2=2)[:, None, None] / m
    coeff = np.linalg.solve(A, b[..., None])[..., 0]
    chi2 = float(np.dot(wf, f)) - np.einsum("si,si->s", b, coeff)
    # shift index s corresponds to offset o = o_lo + s, i.e. k = spec.start - tmpl.start - o
    k = spec.start - tmpl.start - (o_lo + np.arange(ns))
    order = np.argsort(k)
    z = np.expm1(k[order] * LN_STEP)
    return z, chi2[order], coeff[order]


def _local_minima(chi2: np.ndarray, n_min: int, min_sep: int) -> list[int]:
    interior = np.flatnonzero((chi2[1:-1] <= chi2[:-2]) & (chi2[1:-1] <= chi2[2:])) + 1
    cands = [*interior, 0, chi2.size - 1]
    cands.sort(key=lambda i: chi2[i])
    picked: list[int] = []
    for i in cands:
        if all(abs(i - j) >= min_sep for j in picked):
            picked.append(i)
        if len(picked) >= n_min:
            break
    return picked


def _refine(z: np.ndarray, chi2: np.ndarray, i: int) -> tuple[float, float]:
    if 0 < i < z.size - 1:
        y0, y1, y2 = chi2[i - 1], chi2[i], chi2[i + 1]
        den = y0 - 2 * y1 + y2
        if den > 0:
            off = 0.5 * (y0 - y2) / den
            lnz = np.log1p(z[i]) + off * LN_STEP
            return float(np.expm1(lnz)), float(y1 - 0.25 * (y0 - y2) * off)
    return float(z[i]), float(chi2[i])


def template_candidates(wave, flux, ivar, templates, *, n_per_template: int = 3,
                        legendre_terms: int = LEGENDRE_TERMS) -> list[ZCandidate]:
    """Best chi2 minima of every template, sorted by chi2 (smallest first)."""
    spec = to_ln_grid(np.asarray(wave, float), np.asarray(flux, float), np.asarray(ivar, float))
    npix = int((spec.ivar > 0).sum())
    out: list[ZCandidate] = []
    for tmpl in templates:
        res = scan_template(spec, tmpl, legendre_terms=legendre_terms)
        if res is None:
            continue
        z, chi2, coeff = res
        # minima at least 1000 km/s apart (stars: the single best)
        sep = max(1, round(1000 / 299792.458 / LN_STEP))
        nmin = 1 if tmpl.spectype == "STAR" else n_per_template
        for i in _local_minima(chi2, nmin, sep):
            zr, c2 = _refine(z, chi2, i)
            out.append(ZCandidate(zr, tmpl.spectype, tmpl.subtype, c2, npix, [float(c) for c in coeff[i]]))
    out.sort(key=lambda c: c.chi2)
    return out


@dataclass
class Refined:
    """A template z refined around a scan minimum: `z`, its statistical 1-sigma `z_err` (chi2 + 1
    scaled by the reduced chi2), the pixels and Legendre terms used, and the rest-frame range fitted."""

    z: float
    z_err: float | None
    chi2: float
    npix: int
    legendre_terms: int
    rest_range: tuple[float, float]

    def as_dict(self) -> dict:
        return {"z": round(float(self.z), 6), "z_err": None if self.z_err is None else round(float(self.z_err), 6),
                "chi2": round(float(self.chi2), 1), "npix": self.npix, "legendre_terms": self.legendre_terms,
                "rest_range": [round(float(v), 1) for v in self.rest_range]}


def _chi2_at(lnw, f, iv, tmpl: Template, lnz: np.ndarray, P: np.ndarray, chunk: int = 64) -> np.ndarray:
    """chi2 of (template basis + polynomials P) fitted at each ln(1+z), the basis linearly
    interpolated at the observed pixels' rest wavelengths."""
    nb, npoly = tmpl.basis.shape[0], P.shape[0]
    m = nb + npoly
    wf = iv * f
    ff = float(np.dot(wf, f))
    PP = (P * iv) @ P.T
    Pf = P @ wf
    out = np.empty(lnz.size)
    for s0 in range(0, lnz.size, chunk):
        lz = lnz[s0:s0 + chunk]
        idx = (lnw[None, :] - lz[:, None]) / LN_STEP - tmpl.start
        i0 = np.floor(idx).astype(int)
        fr = idx - i0
        X = tmpl.basis[:, i0] * (1 - fr) + tmpl.basis[:, i0 + 1] * fr  # (nb, s, n)
        X = np.moveaxis(X, 0, 1)  # (s, nb, n)
        Xw = X * iv
        A = np.empty((lz.size, m, m))
        A[:, :nb, :nb] = Xw @ np.swapaxes(X, 1, 2)
        if npoly:
            XP = Xw @ P.T
            A[:, :nb, nb:] = XP
            A[:, nb:, :nb] = np.swapaxes(XP, 1, 2)
            A[:, nb:, nb:] = PP
        b = np.empty((lz.size, m))
        b[:, :nb] = X @ wf
        b[:, nb:] = Pf
        A += np.eye(m) * 1e-9 * np.trace(A, axis1=1, axis2=2)[:, None, None] / m
        c = np.linalg.solve(A, b[..., None])[..., 0]
        out[s0:s0 + chunk] = ff - np.einsum("si,si->s", b, c)
    return out


FINE_STEP, FINE_HALF = 0.25, 8  # the fine scan: +-2 pixels in quarter pixels, one parabola through all
MAX_WALK = 4  # the fine scan recentred at most this often (coarse=False: a walk from z0)


def refine_z(wave, flux, ivar, tmpl: Template, z0: float, *, half_kms: float = 3000.0,
             legendre_terms: int = 4, rest_min: float | None = None, coarse: bool = True) -> Refined | None:
    """The template's chi2 minimum near z0: a 1-pixel scan over +-half_kms (FFT, the pixels rebinned
    to the ln grid; with coarse=False none: z0 is the scan's minimum already), then a quarter-pixel
    scan over +-2 pixels about its minimum with the pixels as observed (the basis interpolated at
    their rest wavelengths), recentred while its minimum sits at an end (within +-half_kms), and a
    parabola through it.
    Legendre terms (observed frame) absorb flux-calibration and continuum-shape mismatch so the z
    rests on the spectral features; `rest_min` leaves out rest wavelengths below it (a QSO's
    Ly-alpha forest, absorbed differently in every sightline). The error is the parabola's chi2 + 1
    width scaled by the reduced chi2 (None when the minimum is at the window's edge). None when too
    few pixels."""
    wave, flux, ivar = (np.asarray(a, float) for a in (wave, flux, ivar))
    lnw = np.log(np.clip(wave, 1.0, None))
    dl = np.log1p(half_kms / 299792.458) + 2 * LN_STEP
    lo_rest = (tmpl.start + 1) * LN_STEP
    hi_rest = (tmpl.start + tmpl.basis.shape[1] - 2) * LN_STEP
    if rest_min is not None:
        lo_rest = max(lo_rest, float(np.log(rest_min)))
    lz0 = float(np.log1p(z0))
    sel = (ivar > 0) & np.isfinite(flux) & (lnw - lz0 - dl > lo_rest) & (lnw - lz0 + dl < hi_rest)
    n = int(sel.sum())
    nb = tmpl.basis.shape[0]
    if n < 10 * (nb + legendre_terms) or n < 50:
        return None
    w, f, iv = lnw[sel], flux[sel], ivar[sel]
    iv = np.minimum(iv, 25.0 * np.median(iv))  # as to_ln_grid: no single pixel dominates
    xw = 2 * (w - w[0]) / max(w[-1] - w[0], 1e-12) - 1
    P = np.polynomial.legendre.legvander(xw, legendre_terms - 1).T if legendre_terms else np.zeros((0, n))
    half = np.log1p(half_kms / 299792.458)
    edge = False
    centre = lz0
    if coarse:  # the FFT scan of these pixels (one pixel steps) over the window
        spec = to_ln_grid(wave[sel], flux[sel], ivar[sel], (0.0, np.inf))
        scan = scan_template(spec, tmpl, legendre_terms=legendre_terms,
                             z_range=(float(np.expm1(lz0 - half)), float(np.expm1(lz0 + half))))
        if scan is None or scan[0].size < 3:
            return None
        zs, c2, _ = scan
        i = int(np.argmin(c2))
        centre, edge = float(np.log1p(zs[i])), not 0 < i < zs.size - 1
    steps = np.arange(-FINE_HALF, FINE_HALF + 1) * FINE_STEP * LN_STEP
    for _ in range(MAX_WALK):  # the fine scan, recentred while its minimum sits at an end
        fine = centre + steps
        c2f = _chi2_at(w, f, iv, tmpl, fine, P)
        j = int(np.argmin(c2f))
        if 0 < j < fine.size - 1:
            break
        if abs(fine[j] - lz0) > half:
            edge = True
            break
        centre = float(fine[j])
    else:
        edge = True
    x = (fine - fine[j]) / LN_STEP
    a2, a1, _ = np.polyfit(x, c2f, 2)
    dof = max(n - nb - legendre_terms, 1)
    red = max(float(c2f[j]) / dof, 1.0)
    rest_range = (float(np.exp(w[0] - fine[j])), float(np.exp(w[-1] - fine[j])))
    if a2 <= 0 or edge:  # no minimum inside the window
        z = float(np.expm1(fine[j]))
        return Refined(z, None, float(c2f[j]), n, legendre_terms, rest_range)
    off = float(np.clip(-a1 / (2 * a2), -1.0, 1.0))
    lz = fine[j] + off * LN_STEP
    z = float(np.expm1(lz))
    sig_ln = float(np.sqrt(red / a2)) * LN_STEP
    return Refined(z, sig_ln * (1 + z), float(c2f[j]), n, legendre_terms, rest_range)


if __name__ == "__main__":  # python -m agents.tools.templates REDROCK_TEMPLATE_DIR OUT.npz
    import sys

    save_bundle(load_templates(sys.argv[1]), sys.argv[2])
