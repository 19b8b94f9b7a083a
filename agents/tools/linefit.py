"""Gaussian line fits used as a fallback when the CWT finds nothing at a predicted line (FORMA 2.9:
fit_peak / fit_doublet). Gaussian plus a linear continuum, scipy least squares."""
from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

C_KMS = 299792.458


def _window(wave, flux, centre, half):
    sel = (wave >= centre - half) & (wave <= centre + half)
    return wave[sel], flux[sel]


def _robust_rms(r: np.ndarray) -> float:
    return float(1.4826 * np.median(np.abs(r - np.median(r)))) or float(np.std(r)) or 1e-30


def fit_peak(wave, flux, center_guess: float, width_3sigma: float, line_type: str = "emission",
             window_half: float = 200.0) -> dict:
    """One Gaussian + line at center_guess (centre free within +-50 A, sigma0 = width_3sigma/3).

    Returns center(+err), amplitude(+err), sigma, fwhm, fwhm_km_s, delta_chi2_per_n (linear-only
    chi2 minus Gaussian chi2, per point, in units of the linear residual's robust RMS), local_rms
    (1.4826 MAD of the Gaussian fit's residual), local_snr = |amp|/local_rms, flags.
    """
    w, f = _window(np.asarray(wave, float), np.asarray(flux, float), center_guess, window_half)
    if w.size < 10:
        return {"ok": False, "flags": ["too_few_points"], "n": int(w.size)}
    x = w - center_guess
    lin = np.polyfit(x, f, 1)
    r_lin = f - np.polyval(lin, x)
    rms = _robust_rms(r_lin)
    sign = 1.0 if line_type == "emission" else -1.0
    sigma0 = max(width_3sigma / 3.0, 1e-3)
    near = np.abs(x) <= max(sigma0 * 2, 3 * np.median(np.diff(w)))
    amp0 = (sign * max(sign * r_lin[near].max() if sign > 0 else sign * r_lin[near].min(), rms)
            if near.any() else sign * rms)

    def model(p):
        a, mu, sig, c0, c1 = p
        return a * np.exp(-0.5 * ((x - mu) / sig) ** 2) + c0 + c1 * x

    p0 = [amp0, 0.0, sigma0, lin[1], lin[0]]
    step = float(np.median(np.diff(w)))
    lo = [-np.inf if sign < 0 else 0.0, -50.0, max(step / 2, 0.1), -np.inf, -np.inf]
    hi = [0.0 if sign < 0 else np.inf, 50.0, max(3 * width_3sigma, 2 * step), np.inf, np.inf]
    p0[0] = float(np.clip(p0[0], lo[0] + 1e-30 if sign > 0 else -np.inf, hi[0] - 1e-30 if sign < 0 else np.inf))
    p0[2] = float(np.clip(p0[2], lo[2] * 1.01, hi[2] * 0.99))
    try:
        res = least_squares(lambda p: (model(p) - f) / rms, p0, bounds=(lo, hi), max_nfev=200)
    except ValueError as exc:
        return {"ok": False, "flags": [f"fit_failed: {exc}"], "n": int(w.size)}
    a, mu, sig, _, _ = res.x
    chi2_g = float(np.sum(res.fun ** 2))
    chi2_l = float(np.sum((r_lin / rms) ** 2))
    try:
        cov = np.linalg.pinv(res.jac.T @ res.jac) * max(chi2_g / max(w.size - 5, 1), 1.0)
        err = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:
        err = np.full(5, np.nan)
    centre = center_guess + mu
    fwhm = 2.3548 * sig
    # noise = robust scatter of the Gaussian fit's residual (the line itself must not inflate it)
    noise = _robust_rms(f - model(res.x))
    flags = []
    if abs(mu) > 49.0:
        flags.append("center_at_bound")
    return {
        "ok": True, "center": float(centre), "center_err": float(err[1]), "amplitude": float(a),
        "amplitude_err": float(err[0]), "sigma": float(sig), "fwhm": float(fwhm),
        "fwhm_km_s": float(fwhm / centre * C_KMS), "delta_chi2_per_n": (chi2_l - chi2_g) / w.size,
        "local_rms": noise, "local_snr": abs(float(a)) / noise, "n": int(w.size), "flags": flags,
        # detection significance sqrt(delta chi2) with the fit's noise: a broad line spreads its
        # signal over many pixels, so its peak S/N understates it
        "significance": float(np.sqrt(max(np.sum((f - np.polyval(lin, x)) ** 2)
                                          - np.sum((f - model(res.x)) ** 2), 0.0)) / noise),
    }


def fit_doublet(wave, flux, center_guess_1: float, center_guess_2: float, line_type: str = "emission",
                width_3sigma: float = 25.0, window_half: float = 300.0, separation_rest: float | None = None,
                separation_tolerance: float = 5.0, amp_ratio_expected: tuple[float, float] | None = None,
                z: float = 0.0) -> dict:
    """Two Gaussians with a shared width; checks the separation and |amp2|/|amp1| ratio."""
    mid = 0.5 * (center_guess_1 + center_guess_2)
    w, f = _window(np.asarray(wave, float), np.asarray(flux, float), mid, window_half)
    if w.size < 20:
        return {"ok": False, "flags": ["too_few_points"], "n": int(w.size)}
    x = w - mid
    lin = np.polyfit(x, f, 1)
    r_lin = f - np.polyval(lin, x)
    rms = _robust_rms(r_lin)
    sign = 1.0 if line_type == "emission" else -1.0
    d1, d2 = center_guess_1 - mid, center_guess_2 - mid

    def model(p):
        a1, a2, m1, m2, sig, c0, c1 = p
        g = a1 * np.exp(-0.5 * ((x - m1) / sig) ** 2) + a2 * np.exp(-0.5 * ((x - m2) / sig) ** 2)
        return g + c0 + c1 * x

    s0 = max(width_3sigma / 3.0, 0.5)
    step = float(np.median(np.diff(w)))
    p0 = [sign * rms * 3, sign * rms * 3, d1, d2, s0, lin[1], lin[0]]
    lo = [0.0 if sign > 0 else -np.inf] * 2 + [d1 - 20, d2 - 20, max(step / 2, 0.1), -np.inf, -np.inf]
    hi = [np.inf if sign > 0 else 0.0] * 2 + [d1 + 20, d2 + 20, 3 * width_3sigma, np.inf, np.inf]
    p0[4] = float(np.clip(p0[4], lo[4] * 1.01, hi[4] * 0.99))
    try:
        res = least_squares(lambda p: (model(p) - f) / rms, p0, bounds=(lo, hi), max_nfev=300)
    except ValueError as exc:
        return {"ok": False, "flags": [f"fit_failed: {exc}"], "n": int(w.size)}
    a1, a2, m1, m2, sig, _, _ = res.x
    chi2_g = float(np.sum(res.fun ** 2))
    chi2_l = float(np.sum((r_lin / rms) ** 2))
    sep = float(m2 - m1)
    out = {
        "ok": True, "n": int(w.size), "delta_chi2_per_n": (chi2_l - chi2_g) / w.size, "local_rms": rms,
        "component_1": {"center": float(mid + m1), "amplitude": float(a1), "local_snr": abs(a1) / rms},
        "component_2": {"center": float(mid + m2), "amplitude": float(a2), "local_snr": abs(a2) / rms},
        "sigma": float(sig), "separation": sep, "flags": [],
    }
    if separation_rest is not None:
        expect = separation_rest * (1 + z)
        out["separation_check"] = {"expected": expect, "ok": abs(sep - expect) < separation_tolerance}
    ratio = abs(a2) / abs(a1) if a1 else np.inf
    out["amp_ratio"] = float(ratio)
    if amp_ratio_expected is not None:
        lo_r, hi_r = amp_ratio_expected
        out["amp_ratio_check"] = {"expected": list(amp_ratio_expected), "ok": lo_r <= ratio <= hi_r}
    return out


def fit_centroid(wave, flux, ivar, centre: float, fwhm_A: float, line_type: str = "emission",
                 step: float | None = None) -> dict | None:
    """The centre of one line and its 1-sigma error: a Gaussian on a constant, weighted by ivar, over
    +-(FWHM + 2 px) about `centre` (near enough to leave a neighbour of a blend out), the centre
    bounded to +-FWHM/2. The error comes from the fit's covariance, scaled up by sqrt(reduced chi2)
    when the residuals exceed the noise. None when there are too few pixels or the fit fails."""
    wave = np.asarray(wave, float)
    if step is None:
        i = int(np.clip(np.searchsorted(wave, centre), 1, wave.size - 1))
        step = float(wave[i] - wave[i - 1])
    half = max(fwhm_A, 3 * step) + 2 * step
    lo_i, hi_i = np.searchsorted(wave, centre - half), np.searchsorted(wave, centre + half)
    if hi_i - lo_i < 6:
        return None
    w = wave[lo_i:hi_i] - centre
    f = np.asarray(flux[lo_i:hi_i], float)
    sd = 1.0 / np.sqrt(np.clip(np.asarray(ivar[lo_i:hi_i], float), 1e-30, None))
    sign = 1.0 if line_type == "emission" else -1.0
    c0 = float(np.median(np.r_[f[:2], f[-2:]]))
    a0 = sign * max(sign * (f[np.argmin(np.abs(w))] - c0), 1e-6 * (abs(c0) + 1e-30))
    s0 = max(fwhm_A / 2.3548, step / 2)
    bound = max(fwhm_A / 2, step)
    lo = [0.0 if sign > 0 else -np.inf, -bound, step / 3, -np.inf]
    hi = [np.inf if sign > 0 else 0.0, bound, max(2 * s0, step), np.inf]
    p0 = [a0, 0.0, float(np.clip(s0, lo[2] * 1.01, hi[2] * 0.99)), c0]

    def resid(p):
        return (p[0] * np.exp(-0.5 * ((w - p[1]) / p[2]) ** 2) + p[3] - f) / sd

    def jac(p):
        u = (w - p[1]) / p[2]
        e = np.exp(-0.5 * u ** 2)
        return np.column_stack([e, p[0] * e * u / p[2], p[0] * e * u ** 2 / p[2], np.ones_like(w)]) / sd[:, None]

    try:
        res = least_squares(resid, p0, jac=jac, bounds=(lo, hi), max_nfev=60)
        cov = np.linalg.pinv(res.jac.T @ res.jac)
    except (ValueError, np.linalg.LinAlgError):
        return None
    dof = max(w.size - 4, 1)
    rchi2 = float(np.sum(res.fun ** 2)) / dof
    err = float(np.sqrt(max(cov[1, 1], 0.0) * max(rchi2, 1.0)))
    if not np.isfinite(err) or res.x[0] == 0:
        return None
    return {"center": centre + float(res.x[1]), "center_err": err, "sigma": float(res.x[2]),
            "at_bound": abs(float(res.x[1])) >= 0.99 * bound, "rchi2": rchi2}


def _side_continuum(w, f, iv, core, side):
    """A weighted straight line through the sideband pixels `side` (one 3-sigma clip), evaluated on
    `core`, and the sidebands' reduced chi2 about it; None with < 4 sideband pixels."""
    if side.sum() < 4:
        return None
    ws, fs, ivs = w[side], f[side], iv[side]
    keep = np.ones(ws.size, dtype=bool)
    for _ in range(2):
        if keep.sum() < 4:
            return None
        p = np.polyfit(ws[keep] - w[core].mean(), fs[keep], 1, w=np.sqrt(ivs[keep]))
        r = (fs - np.polyval(p, ws - w[core].mean())) * np.sqrt(ivs)
        keep = np.abs(r) <= 3 * max(_robust_rms(r[keep]), 1.0)
    rchi2 = float(np.sum(r[keep] ** 2) / max(keep.sum() - 2, 1))
    return np.polyval(p, w[core] - w[core].mean()), rchi2


def forced_flux(wave, flux, ivar, centre: float, fwhm_A: float, exclude=(), line_type: str = "emission") -> dict | None:
    """The flux of a Gaussian of fixed centre and FWHM (optimal extraction) on a straight continuum
    from the sidebands, with its 1-sigma error (scaled by the sidebands' sqrt(reduced chi2) when the
    data scatter beyond their ivar). `exclude`: (centre, fwhm_A) of other lines kept out of the
    sidebands. An independent measurement of a line, found or not (issue 50, item 4). None without
    >= 3 core pixels or 4 sideband pixels."""
    w, f, iv = (np.asarray(a, float) for a in (wave, flux, ivar))
    core = np.abs(w - centre) <= 1.5 * fwhm_A
    half_side = 1.5 * fwhm_A + max(20.0, 2 * fwhm_A)
    side = (np.abs(w - centre) > 1.5 * fwhm_A) & (np.abs(w - centre) <= half_side) & (iv > 0)
    for c, fw in exclude:
        side &= np.abs(w - c) > 1.5 * fw
    if core.sum() < 3:
        return None
    cont = _side_continuum(w, f, iv, core, side)
    if cont is None:
        return None
    level, rchi2 = cont
    sig = fwhm_A / 2.3548
    g = np.exp(-0.5 * ((w[core] - centre) / sig) ** 2)
    den = float(np.sum(g ** 2 * iv[core]))
    if den <= 0:
        return None
    amp = float(np.sum((f[core] - level) * g * iv[core]) / den)
    norm = sig * np.sqrt(2 * np.pi)
    err = np.sqrt(1 / den * max(rchi2, 1.0)) * norm
    sign = 1.0 if line_type == "emission" else -1.0
    return {"flux": sign * amp * norm, "flux_err": float(err), "n_core": int(core.sum())}


def fit_broad_component(wave, flux, ivar, centre: float, narrow=(), fwhm_grid_kms=(1500, 3000, 6000),
                        offset_grid_kms=(0,), window_kms: float = 9000.0) -> dict | None:
    """Is there a broad line under the narrow ones at `centre`? Linear least squares on a grid:
    continuum (straight line) + the narrow lines `narrow` [(centre, fwhm_A)] at fixed places and
    widths, with and without one broad Gaussian (FWHM and offset from the grids). Returns the best
    broad component (fwhm_kms, center, flux) and delta_chi2 = chi2(narrow only) - chi2(with broad),
    divided by the broad fit's reduced chi2 when above 1. None with < 20 pixels in the window."""
    w, f, iv = (np.asarray(a, float) for a in (wave, flux, ivar))
    half = centre * window_kms / C_KMS
    sel = (np.abs(w - centre) <= half) & (iv > 0)
    if sel.sum() < 20:
        return None
    x, y, sd = w[sel] - centre, f[sel], np.sqrt(iv[sel])
    base = [np.ones_like(x), x / half]
    base += [np.exp(-0.5 * ((x - (c - centre)) / (fw / 2.3548)) ** 2) for c, fw in narrow
             if abs(c - centre) <= half]

    def chi2(cols):
        a = np.column_stack(cols) * sd[:, None]
        coef, *_ = np.linalg.lstsq(a, y * sd, rcond=None)
        return float(np.sum((a @ coef - y * sd) ** 2)), coef

    chi0, _ = chi2(base)
    best = None
    for fk in fwhm_grid_kms:
        s = centre * fk / C_KMS / 2.3548
        for dv in offset_grid_kms:
            mu = centre * dv / C_KMS
            g = np.exp(-0.5 * ((x - mu) / s) ** 2)
            c1, coef = chi2([*base, g])
            if coef[-1] > 0 and (best is None or c1 < best[0]):
                best = (c1, fk, mu, coef[-1] * s * np.sqrt(2 * np.pi))
    if best is None:
        return {"delta_chi2": 0.0, "fwhm_kms": None, "center": None, "flux": None}
    dof = max(x.size - len(base) - 1, 1)
    return {"delta_chi2": (chi0 - best[0]) / max(best[0] / dof, 1.0), "fwhm_kms": float(best[1]),
            "center": centre + float(best[2]), "flux": float(best[3])}
