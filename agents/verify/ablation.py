"""Counterfactual ablation (FORMA App. B): re-run the pipeline on a modified copy of the spectrum
and report how the verdict and credibility changed.

- remove_range(pixels, a, b): the pixels in [a, b] A are dropped (as if masked), e.g. the
  strongest broad line;
- narrow_lines(pixels, results, target_kms): every broad emission line the best hypothesis found
  is replaced by a Gaussian of the same flux centre and peak height but `target_kms` FWHM, on the
  continuum interpolated under the line.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from agents.tools.features import Pixels
from agents.trajectory import HYPOTHESIS_TOOL
from agents.verify.graph import verify_pixels

C_KMS = 299792.458


def remove_range(pixels: Pixels, wave_min: float, wave_max: float, kind: str | None = None) -> Pixels:
    """Erase whatever is in [wave_min, wave_max]: the flux there becomes the straight line between
    the continuum levels of 20 A on either side (the window stays clean data, so a missing line reads
    as NOT_FOUND, not MASKED). The level is the sides' median, or for an emission line their 25th
    percentile (75th for an absorption line): the continuum beside a line is the envelope away from
    its neighbours and wings (a median took in H-alpha beside [N II] 6585 and left a ramp that read as
    [N II] flux)."""
    w = pixels.wave
    inside = (w >= wave_min) & (w <= wave_max)
    left = (w >= wave_min - 20) & (w < wave_min)
    right = (w > wave_max) & (w <= wave_max + 20)
    if not inside.any() or not left.any() or not right.any():
        return pixels
    q = {"emission": 25, "absorption": 75}.get(kind, 50)
    fl, fr = float(np.percentile(pixels.flux[left], q)), float(np.percentile(pixels.flux[right], q))
    flux = pixels.flux.copy()
    flux[inside] = np.interp(w[inside], [wave_min, wave_max], [fl, fr])
    return replace(pixels, flux=flux)


def _best_lines(traj) -> tuple[dict | None, list[dict]]:
    syn = next((s.data for s in traj.steps if s.kind == "verdict" and s.verdict and s.verdict.who == "synthesis"), None)
    if not syn or syn.get("best_hypothesis_idx") is None:
        return None, []
    idx = syn["best_hypothesis_idx"]
    for s in traj.steps:
        if s.kind == "tool_result" and s.tool_name == HYPOTHESIS_TOOL and s.data["summary"]["idx"] == idx:
            return s.data["summary"], s.data["lines"]
    return None, []


def broad_lines(traj, min_kms: float = 1500.0) -> list[dict]:
    """Broad emission lines (LIKELY/MARGINAL) of the chosen hypothesis, strongest first; a narrow
    core with a broad component under it counts at the broad width."""
    _, lines = _best_lines(traj)
    out = [dict(ln, fwhm_kms=_width(ln)) for ln in lines if ln["kind"] == "emission"
           and ln["status"] in ("LIKELY", "MARGINAL") and _width(ln) >= min_kms and ln["observed"]]
    return sorted(out, key=lambda ln: -abs((ln["amplitude"] or 0) * ln["fwhm_kms"]))  # by line flux


def _width(ln: dict) -> float:
    """A line's FWHM (km/s): its broad component's when one was fitted under it (agents/verify/widths.py)."""
    return max(ln["fwhm_kms"] or 0, ln.get("broad_fwhm_kms") or 0)


def narrow_lines(pixels: Pixels, lines: list[dict], target_kms: float = 900.0) -> Pixels:
    flux = pixels.flux.copy()
    w = pixels.wave
    for ln in lines:
        c, fwhm_A = ln["observed"], ln["fwhm_kms"] / C_KMS * ln["observed"]
        half = 1.5 * fwhm_A
        inside = (w >= c - half) & (w <= c + half)
        side = ((w >= c - half - 30) & (w < c - half)) | ((w > c + half) & (w <= c + half + 30))
        if inside.sum() < 3 or side.sum() < 4:
            continue
        cont = np.polyval(np.polyfit(w[side], flux[side], 1), w[inside])
        peak = float(np.max(flux[inside] - cont))
        sigma = target_kms / C_KMS * c / 2.3548
        flux[inside] = cont + peak * np.exp(-0.5 * ((w[inside] - c) / sigma) ** 2)
    return replace(pixels, flux=flux)


def compare(before, after) -> dict:
    b, a = before.outcome["brief"], after.outcome["brief"]
    levels = {"LOW": 0, "MEDIUM": 1, "HIGH": 2}
    return {
        "before": {k: b.get(k) for k in ("type", "redshift", "credibility", "verdict", "feature_score")},
        "after": {k: a.get(k) for k in ("type", "redshift", "credibility", "verdict", "feature_score")},
        "verdict_changed": b.get("verdict") != a.get("verdict") or b.get("type") != a.get("type"),
        "credibility_change": levels[a["credibility"]] - levels[b["credibility"]],
        "outcome": outcome(before, after),
    }


def ablate(pixels: Pixels, meta: dict | None = None, *, remove: tuple[float, float] | None = None,
           narrow_kms: float | None = None, **options) -> dict:
    """Run original and modified copies; returns {before, after, change, modification}."""
    before = verify_pixels(pixels, meta, **options)
    if remove is not None:
        modified, what = remove_range(pixels, *remove), f"removed {remove[0]:.0f}-{remove[1]:.0f} Å"
    elif narrow_kms is not None:
        lines = broad_lines(before)
        modified = narrow_lines(pixels, lines, narrow_kms)
        what = f"narrowed {', '.join(ln['name'] for ln in lines) or 'no broad line'} to {narrow_kms:.0f} km/s"
    else:
        raise ValueError("give remove=(a, b) or narrow_kms")
    after = verify_pixels(modified, meta, **options)
    return {"modification": what, "before": before, "after": after, "change": compare(before, after)}


def strong_lines(traj) -> list[dict]:
    """The strong lines of the answer, strongest first: lines of the chosen hypothesis the result
    auditor confirmed (credible, not removed) with S/N >= the robust threshold
    (kb/forma/rules.yaml matching.robust_snr)."""
    import kb
    _, lines = _best_lines(traj)
    ra = next((s.data for s in traj.steps if s.kind == "verdict" and s.verdict and s.verdict.who == "result_auditor"),
              None) or {}
    confirmed = {name for name, _ in ra.get("confirmed_lines", [])}
    strong = kb.load("forma/rules")["matching"]["robust_snr"]
    out = [ln for ln in lines if ln["name"] in confirmed and ln["observed"] and (ln["snr"] or 0) >= strong]
    return sorted(out, key=lambda ln: -(ln["snr"] or 0))


def _as_result(traj, rows: list[dict]):
    """The chosen hypothesis rebuilt from its recorded rows, its confirmed lines credible."""
    from dataclasses import fields

    from agents.tools.hypotheses import Hypothesis
    from agents.verify.analysis import HypothesisResult, LineResult
    summary, _ = _best_lines(traj)
    names = {f.name for f in fields(LineResult)}
    lines = [LineResult(**{k: v for k, v in r.items() if k in names}) for r in rows]
    for ln in lines:
        ln.audit = "KEEP" if ln.status == "LIKELY" else ""
    return HypothesisResult(summary["idx"], Hypothesis(summary["z"], summary["class"]), lines)


def carrying_lines(traj) -> list[dict]:
    """The strong lines (`strong_lines`) that carried the answer: without the line (leave one out)
    the joint z of the rest moves by more than the stated 1-sigma, the rest no longer support the
    hypothesis (fewer than two credible key lines: HypothesisResult.verdict), it was the answer's
    only broad line (a QSO's class), or it is the strongest line. A line the others already decide
    without it (same z, still supported) does not carry the answer."""
    import kb
    from agents.verify.analysis import _systemic
    strong = strong_lines(traj)
    if not strong:
        return []
    ra = next((s.data for s in traj.steps if s.kind == "verdict" and s.verdict and s.verdict.who == "result_auditor"),
              None) or {}
    confirmed = {name for name, _ in ra.get("confirmed_lines", [])}
    _, rows = _best_lines(traj)
    rows = [dict(r, status=r["status"] if r["name"] in confirmed else "NOT_FOUND") for r in rows]
    b = traj.outcome["brief"]
    z0, err0 = b["redshift"], b["redshift_rms"] or 0.0
    broad_min = kb.load("forma/rules")["widths"]["qso_fatal_below_kms"]

    def broad(r):
        return r["kind"] == "emission" and max(r["fwhm_kms"] or 0, r.get("broad_fwhm_kms") or 0) >= broad_min

    n_broad = sum(1 for r in rows if r["status"] == "LIKELY" and broad(r))
    out = []
    for ln in strong:
        rest = [dict(r, status="NOT_FOUND") if r["name"] == ln["name"] else r for r in rows]
        res = _as_result(traj, rest)
        _systemic(res)
        moved = res.systemic_z is None or abs(res.systemic_z - z0) > err0
        if ln is strong[0] or moved or res.verdict != "SUPPORTED" or (b["type"] == "QSO" and broad(ln)
                                                                      and n_broad <= 1):
            out.append(ln)
    return out


def _fwhm_A(ln: dict) -> float:
    return _width(ln) / C_KMS * ln["observed"]


def line_range(ln: dict, lines: list[dict] = ()) -> tuple[float, float]:
    """What to erase for one line: +-1.5 FWHM (its broad component's when it has one) about its
    centre, at least 3 A, kept one FWHM of a neighbour from each other line in `lines`."""
    c = ln["observed"]
    half = max(1.5 * _fwhm_A(ln), 3.0)
    for o in lines:
        if o is ln or not o.get("observed") or o["name"] == ln["name"]:
            continue
        room = abs(o["observed"] - c) - _fwhm_A(o)
        if room < half:
            half = max(room, _fwhm_A(ln), 3.0)
    return c - half, c + half


def outcome(before, after, z_sigma: float = 3.0) -> str:
    """How the answer fared once a line was erased: 'deferred' (credibility LOW or a human asked),
    'rejected' (another class, or a z more than z_sigma stated errors and 1,000 km/s away, without a
    human asked) or 'kept'."""
    b, a = before.outcome["brief"], after.outcome["brief"]
    if a["credibility"] == "LOW" or a["human_review"] == "Yes" or a["verdict"] != "CONFIRM":
        return "deferred"
    if a["type"] != b["type"] or a["redshift"] is None or b["redshift"] is None:
        return "rejected"
    dz = abs(a["redshift"] - b["redshift"])
    if dz > max(z_sigma * (b["redshift_rms"] or 0), 1000 / C_KMS * (1 + b["redshift"])):
        return "rejected"
    return "kept"


def deferred(before, after) -> bool:
    """The answer was rejected or deferred once a line was erased (`outcome` is not 'kept')."""
    return outcome(before, after) != "kept"


def strongest_broad_line_range(traj, pad_fwhm: float = 1.0) -> tuple[float, float] | None:
    lines = broad_lines(traj)
    if not lines:
        return None
    ln = lines[0]
    fwhm_A = ln["fwhm_kms"] / C_KMS * ln["observed"]
    return ln["observed"] - pad_fwhm * fwhm_A, ln["observed"] + pad_fwhm * fwhm_A
