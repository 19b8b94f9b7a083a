"""Judge claims against the spectrum: supported, contradicted or unverifiable, with the measured
value, the tolerance and the window.

Tolerances come from the measurement's own noise (Monte-Carlo sigma, agents.claims.measure):
3 sigma, plus half a unit of the quoted number's last digit, plus, where the agent's number cannot
have come from our exact method (an eyeballed equivalent width or width: its own continuum and
limits), a relative allowance for the method (METHOD_REL; more when the text hedges: "~", "about").
A number quoted under a kb measurement's own name is recomputed with that measurement's windows and
gets no method allowance. Presence needs a significant line (SIG_DETECT); a claimed line is
contradicted only where the flux is flat to a precision that would have shown a visible line
(VISIBLE_EW), or where the opposite is strong; absence is contradicted only by a strong line
(SIG_STRONG and a visible depth or height), never by a marginal one. Where the noise is too large
to tell, the verdict is unverifiable.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from agents.claims import lexicon
from agents.claims.line_state import (
    HALF_WIDTH,
    SIG_DETECT,
    SIG_STRONG,
    VISIBLE_DEPTH,
    VISIBLE_EW,
    line_state,
)
from agents.claims.line_state import Unverifiable as _Unverifiable
from agents.claims.measure import C_KMS, Measurer, Value, line_params, scaled
from agents.claims.types import (
    COMPARISON,
    FEATURE,
    MEASURE,
    QUANTITY,
    Claim,
    ClaimResult,
)

METHOD_REL = 0.25
HEDGE_REL = 0.15
SNR_FACTOR = 2.0  # per pixel vs per resolution element vs per Angstrom differ by up to ~2
MISPLACED_A = 20.0  # a named line quoted this far from where it sits (air/vacuum and stellar RV are < 12 A)
BROAD_HALF = 100.0  # Angstrom, rest: +-6000 km/s at H-beta, the wings of a 5000 km/s-wide broad line
BROAD_SMOOTH = 25.0  # Angstrom, rest: a median over 1500 km/s at H-beta removes the narrow lines on a broad one


@dataclass
class Context:
    measurer: Measurer
    z: float | None = None  # redshift used to place named lines (None: unknown)
    z_source: str = "unknown"
    view: tuple[float, float] | None = None  # zoom in force, observed frame
    task: str | None = None
    rest_plot: bool = False  # the tool plotted the rest frame (Spec-o3 tool with a redshift)
    object_class: str | None = None  # the pipeline class (STAR / GALAXY / QSO), when the caller knows it


def _rounding(claim: Claim) -> float:
    return 0.5 * 10.0 ** (-claim.decimals)


def _result(claim, verdict, ctx, measured=None, tol=None, window=None, reason="", **details) -> ClaimResult:
    return ClaimResult(claim, verdict, None if measured is None else round(float(measured), 4),
                       None if tol is None else round(float(tol), 4),
                       None if window is None else [round(float(window[0]), 1), round(float(window[1]), 1)],
                       None if ctx.view is None else [round(float(ctx.view[0]), 1), round(float(ctx.view[1]), 1)],
                       reason, details=details)


def check_claim(claim: Claim, ctx: Context) -> ClaimResult:
    try:
        if claim.kind == MEASURE:
            return _check_measure(claim, ctx)
        if claim.kind == FEATURE:
            return _check_feature(claim, ctx)
        if claim.kind == COMPARISON:
            return _check_comparison(claim, ctx)
        if claim.kind == QUANTITY:
            return _check_quantity(claim, ctx)
    except _Unverifiable as exc:
        return _result(claim, "unverifiable", ctx, reason=str(exc))
    return _result(claim, "unverifiable", ctx, reason=f"no checker for claims of kind {claim.kind!r}")


# -- the rules policy's own wording: "<kb measurement name> = value" ---------------------------------
def _kb_value(name: str, ctx: Context) -> Value:
    """The kb measurement `name` by the very function the rules agent quoted it from (agents.tools.measure,
    through the Measurer): what the claim checker used before a second method (issue 50, item 7); kept to
    compare the two (bench/bench_claims_second.py), never to judge a claim."""
    specs = lexicon.kb_measures().get(name) or []
    if not specs:
        raise _Unverifiable(f"unknown measurement {name!r}")
    tid, spec = next(((t, s) for t, s in specs if t == ctx.task), specs[0])
    for how in ("mean_of", "ratio_of", "max_of", "min_of"):
        if how in spec:
            parts = [_kb_value(_name_of(tid, i), ctx) for i in spec[how]]
            return _derive(how, parts)
    params = {k: v for k, v in spec.items() if k not in ("id", "kind", "name", "unit")}
    return ctx.measurer.run(spec["kind"], **params)


def _name_of(task_id: str, measure_id: str) -> str:
    import kb

    task = kb.task(task_id)
    for spec in [s for w in task["windows"] for s in w.get("measures", [])] + task.get("derived", []):
        if spec["id"] == measure_id:
            return spec.get("name", spec["id"])
    raise _Unverifiable(f"task {task_id} has no measurement {measure_id}")


def _derive(how: str, parts: list[Value]) -> Value:
    vals = [p.value for p in parts]
    sig = [p.sigma or 0.0 for p in parts]
    wins = [p.window for p in parts if p.window]
    win = (min(w[0] for w in wins), max(w[1] for w in wins)) if wins else None
    if any(v is None for v in vals):
        return Value(None, None, win)
    if how == "ratio_of":
        num, den = vals
        if den == 0:
            return Value(None, None, win)
        r = num / den
        return Value(r, abs(r) * float(np.hypot(sig[0] / (num or 1e-30), sig[1] / den)), win)
    if how == "mean_of":
        return Value(float(np.mean(vals)), float(np.sqrt(np.sum(np.square(sig)))) / len(vals), win)
    i = int(np.argmax(vals) if how == "max_of" else np.argmin(vals))
    return Value(vals[i], sig[i], win)


def _second_value(name: str, ctx: Context):
    """The kb measurement `name` by the second method (agents.claims.second), never by the function that
    made the agent's number (agents.tools.measure)."""
    from agents.claims.second import combine, measure_second

    tid, spec = _spec_of(name, ctx)
    for how in ("mean_of", "ratio_of", "max_of", "min_of"):
        if how in spec:
            return combine(how, [_second_value(_name_of(tid, i), ctx) for i in spec[how]])
    params = {k: v for k, v in spec.items() if k not in ("id", "kind", "name", "unit")}
    a = ctx.measurer.a
    return measure_second(a.wave, a.flux, ctx.measurer.sigma, a.good, spec["kind"],
                          stated=ctx.measurer.noise_source == "ivar", **params)


def _spec_of(name: str, ctx: Context) -> tuple[str, dict]:
    specs = lexicon.kb_measures().get(name) or []
    if not specs:
        raise _Unverifiable(f"unknown measurement {name!r}")
    return next(((t, s) for t, s in specs if t == ctx.task), specs[0])


def _check_measure(claim: Claim, ctx: Context) -> ClaimResult:
    """A number quoted under a kb measurement's name, judged by a second method (agents.claims.second:
    another continuum and another estimator) within 3 sigma of its noise and of the continuum's
    placement, plus the quoted rounding; an S/N of a spectrum without stated errors (DER_SNR against the
    agent's pixel-to-pixel scatter: two estimates of the noise itself) within SNR_FACTOR."""
    v = _second_value(claim.quantity, ctx)
    kind = _spec_of(claim.quantity, ctx)[1].get("kind")
    if v.value is None:
        return _result(claim, "unverifiable", ctx, window=v.window, reason=f"not measurable on this spectrum ({v.method})",
                       method=v.method, second_method=True)
    if kind == "local_snr" and not v.sigma:  # DER_SNR against the agent's scatter: noise estimated two ways
        ok = v.value / SNR_FACTOR <= claim.value <= v.value * SNR_FACTOR if v.value > 0 else False
        return _result(claim, "supported" if ok else "contradicted", ctx, v.value, v.value * (SNR_FACTOR - 1),
                       v.window, f"{claim.quantity} measures {v.value:.3g} by {v.method} (a factor {SNR_FACTOR:g} allowed)",
                       method=v.method, second_method=True)
    tol = _rounding(claim) + 3.0 * v.sigma
    ok = abs(claim.value - v.value) <= tol
    return _result(claim, "supported" if ok else "contradicted", ctx, v.value, tol, v.window,
                   f"{claim.quantity} measures {v.value:.3g} +- {v.sigma:.2g} by a second method ({v.method})",
                   sigma=v.sigma, noise=v.noise, structure=v.structure, method=v.method, second_method=True)


# -- placing a line ---------------------------------------------------------------------------------
def _frame_of(claim: Claim, ctx: Context) -> str:
    if claim.frame:
        return claim.frame
    return "rest" if ctx.rest_plot else "observed"


def _place(claim: Claim, name: str | None, ctx: Context) -> tuple[float, dict]:
    """Observed centre and measurement windows of a line; raises _Unverifiable when it cannot be placed."""
    z = ctx.z
    if claim.wavelength is not None:
        frame = _frame_of(claim, ctx)
        if frame == "rest" and z is None:
            raise _Unverifiable("a rest-frame position with no known redshift")
        centre = claim.wavelength * (1 + z) if frame == "rest" else claim.wavelength
        if name is not None and z is not None:
            expect = lexicon.rest_wave(name) * (1 + z)
            if abs(centre - expect) > MISPLACED_A * (1 + z):
                raise _Misplaced(centre, expect)
    elif name is not None:
        if z is None:
            raise _Unverifiable(f"{name}: no redshift known to place the line")
        centre = lexicon.rest_wave(name) * (1 + z)
    else:
        raise _Unverifiable("no line or position given")
    lo, hi = ctx.measurer.coverage
    if name is not None and name in lexicon.line_windows() and z is not None and claim.wavelength is None:
        params = scaled(lexicon.line_windows()[name], 1 + z)
    else:
        width = lexicon.kb_lines().get(name, {}).get("width") if name else None
        params = line_params(centre, HALF_WIDTH[width] * (1 + (z or 0.0)))
    if params["blue"][0] < lo or params["red"][1] > hi:
        raise _Unverifiable(f"{centre:.0f} A is outside the spectrum or too close to its edge")
    return centre, params


class _Misplaced(_Unverifiable):
    def __init__(self, centre: float, expect: float):
        super().__init__(f"the line sits at {expect:.0f} A (observed), not at {centre:.0f} A")
        self.centre, self.expect = centre, expect


def _judge_line(claim: Claim, st: dict) -> tuple[str, str]:
    kind = claim.line_kind if claim.line_kind in ("emission", "absorption") else None
    ew = f"EW {st['ew']:.2f} +- {st['ew_sigma']:.2f} A (absorption positive)"
    # the most a line can be, at 3 sigma: under VISIBLE_EW nobody would see it, let alone call it strong
    invisible = abs(st["ew"]) + 3.0 * st["ew_sigma"] < VISIBLE_EW
    if claim.polarity > 0:
        seen = st[kind] if kind else (st["absorption"] or st["emission"])
        other = {"emission": "absorption", "absorption": "emission"}.get(kind)
        if claim.strength == "strong" and invisible:
            return "contradicted", f"no visible line, let alone a strong one: {ew}"
        if seen and other and st[f"strong_{other}"] and not st[f"strong_{kind}"]:
            # the line's net sense is the other one, strongly: a dip beside an emission peak (or a
            # bump in a trough) is not the feature the claim names
            return "contradicted", f"strong {other}, not {kind}: {ew}"
        if seen:
            return "supported", ew
        if st["flat"]:
            return "contradicted", f"the flux is flat here: {ew}"
        if other and (st[f"strong_{other}"] or st[other]):  # the line is there, in the other sense
            return "contradicted", f"{'strong ' if st[f'strong_{other}'] else ''}{other}, not {kind}: {ew}"
        return "unverifiable", f"too noisy to tell: {ew}"
    kinds = [kind] if kind else ["absorption", "emission"]
    strong = [k for k in kinds if st[f"strong_{k}"]]
    if strong:
        return "contradicted", f"strong {strong[0]} is there: {ew}"
    if not any(st[k] for k in kinds):
        return "supported", ew
    if invisible:
        return "supported", f"at most a line too weak to see: {ew}"
    return "unverifiable", f"a weak line is present: {ew}"


def _check_feature(claim: Claim, ctx: Context) -> ClaimResult:
    if claim.line_kind == "band" or (claim.lines and claim.lines[0] in ("TiO", "ZrO", "C2")):
        return _check_band(claim, ctx)
    names = claim.lines or [None]
    verdicts, window, reasons = [], None, []
    for name in names:
        try:
            centre, params = _place(claim, name, ctx)
        except _Misplaced as exc:
            return _result(claim, "contradicted", ctx, exc.centre, MISPLACED_A, (exc.expect - 30, exc.expect + 30),
                           str(exc))
        except _Unverifiable as exc:
            verdicts.append("unverifiable")
            reasons.append(str(exc))
            continue
        st = line_state(ctx, centre, params)
        v, why = _judge_line(claim, st)
        verdicts.append(v)
        reasons.append(f"{name or f'{centre:.0f} A'}: {why}")
        window = window or (params["blue"][0], params["red"][1])
    verdict = _combine(verdicts, claim.polarity)
    return _result(claim, verdict, ctx, window=window, reason="; ".join(reasons))


def _combine(verdicts: list[str], polarity: int) -> str:
    """A group ("Balmer lines") present if any member is; absent only if every member is."""
    if polarity > 0:
        if "supported" in verdicts:
            return "supported"
        return "contradicted" if verdicts and all(v == "contradicted" for v in verdicts) else "unverifiable"
    if "contradicted" in verdicts:
        return "contradicted"
    return "supported" if verdicts and all(v == "supported" for v in verdicts) else "unverifiable"


def _check_band(claim: Claim, ctx: Context) -> ClaimResult:
    values = []
    for name in lexicon.band_specs(claim.lines[0]):
        _tid, spec = lexicon.kb_measures()[name][0]
        params = {k: v for k, v in spec.items() if k not in ("id", "kind", "name", "unit")}
        v = ctx.measurer.run("band_depth", **params)
        if v.value is not None and v.sigma:
            values.append(v)
    if not values:
        return _result(claim, "unverifiable", ctx, reason="band not covered")
    best = max(values, key=lambda v: v.value)
    window = (min(v.window[0] for v in values), max(v.window[1] for v in values))
    detected = any(v.value >= 0.05 and v.value >= SIG_DETECT * v.sigma for v in values)
    strong = any(v.value >= VISIBLE_DEPTH and v.value >= SIG_STRONG * v.sigma for v in values)
    none_possible = all(v.value + 3 * v.sigma < VISIBLE_DEPTH for v in values)
    if claim.polarity > 0:
        verdict = "supported" if detected else "contradicted" if none_possible else "unverifiable"
    else:
        verdict = "contradicted" if strong else "supported" if not detected else "unverifiable"
    return _result(claim, verdict, ctx, best.value, 3 * best.sigma, window,
                   f"deepest {claim.lines[0]} band depth {best.value:.3f} +- {best.sigma:.3f}")


# -- comparisons and numbers ------------------------------------------------------------------------
def _strength(claim: Claim, name: str, ctx: Context, qty: str, kind: str | None) -> tuple[Value, str]:
    probe = replace(claim, wavelength=None, lines=[name])
    _centre, params = _place(probe, name, ctx)
    ew = ctx.measurer.run("equivalent_width", **params)
    if kind is None:
        kind = "emission" if ew.value is not None and ew.value < 0 else "absorption"
    if qty == "depth":
        return ctx.measurer.run("line_depth" if kind == "absorption" else "emission_peak", **params), kind
    width_spec = lexicon.kb_measures().get(f"{name} full width at half depth")
    if qty == "fwhm" and kind == "absorption" and width_spec:
        # the kb width windows reach the far wings of pressure-broadened lines (white dwarfs)
        spec = width_spec[0][1]
        wide = scaled({k: spec[k] for k in ("core", "blue", "red")}, 1 + (ctx.z or 0.0))
        return ctx.measurer.run("balmer_width", **wide), kind
    if qty == "fwhm" and kind == "emission" and claim.strength == "broad":
        # a broad line (QSO Balmer, Mg II, C III], C IV: FWHM 2000-10000 km/s) needs a window that holds
        # its wings and side bands beyond them: core +-BROAD_HALF (rest), not the narrow-line windows
        centre = lexicon.rest_wave(name) * (1 + (ctx.z or 0.0))
        wide = line_params(centre, BROAD_HALF * (1 + (ctx.z or 0.0)), side=40.0 * (1 + (ctx.z or 0.0)))
        lo, hi = ctx.measurer.coverage
        if wide["blue"][0] >= lo and wide["red"][1] <= hi:
            return ctx.measurer.run("broad_fwhm", smooth=BROAD_SMOOTH * (1 + (ctx.z or 0.0)), **wide), kind
    if qty == "fwhm":
        return ctx.measurer.run("balmer_width" if kind == "absorption" else "emission_fwhm", **params), kind
    if ew.value is None:
        return ew, kind
    sign = 1.0 if kind == "absorption" else -1.0
    return Value(sign * ew.value, ew.sigma, ew.window), kind


def _check_comparison(claim: Claim, ctx: Context) -> ClaimResult:
    kind = claim.line_kind if claim.line_kind in ("emission", "absorption") else None
    a, kind = _strength(claim, claim.lines[0], ctx, claim.quantity, kind)
    b, _ = _strength(claim, claim.lines[1], ctx, claim.quantity, kind)
    if a.value is None or b.value is None or not a.sigma or not b.sigma:
        raise _Unverifiable("one of the two lines is not measurable")
    d = (a.value - b.value) * (1 if claim.relation == ">" else -1)
    tol = 3.0 * float(np.hypot(a.sigma, b.sigma)) + 0.1 * max(abs(a.value), abs(b.value))
    verdict = "supported" if d > 0 else "contradicted" if d < -tol else "unverifiable"
    window = (min(a.window[0], b.window[0]), max(a.window[1], b.window[1]))
    return _result(claim, verdict, ctx, a.value - b.value, tol, window,
                   f"{claim.quantity} ({kind}): {claim.lines[0]} {a.value:.3g} vs {claim.lines[1]} {b.value:.3g}")


def _compare_number(claim: Claim, ctx: Context, v: Value, value: float, rel: float, why: str) -> ClaimResult:
    if v.value is None or v.sigma is None:
        return _result(claim, "unverifiable", ctx, window=v.window, reason="not measurable: " + why)
    rel = rel + (HEDGE_REL if claim.hedged else 0.0)
    tol = float(np.hypot(3.0 * v.sigma, rel * abs(v.value))) + _rounding(claim) + abs(claim.spread or 0.0)
    if claim.relation == "<":
        ok = v.value - tol <= value
    elif claim.relation == ">":
        ok = v.value + tol >= value
    else:
        ok = abs(v.value - value) <= tol
    return _result(claim, "supported" if ok else "contradicted", ctx, v.value, tol, v.window,
                   f"{why}: measured {v.value:.3g} +- {v.sigma:.2g}", sigma=v.sigma)


def _check_quantity(claim: Claim, ctx: Context) -> ClaimResult:
    q = claim.quantity
    if q == "z":
        from agents.claims.redshift import check_redshift

        return check_redshift(claim, ctx, _result)
    if q == "snr":
        return _check_snr(claim, ctx)
    if q == "velocity":
        raise _Unverifiable("velocity claims are not measured")
    if q == "ratio":
        return _check_ratio(claim, ctx)
    if not claim.lines:
        raise _Unverifiable(f"a {q} with no line named")
    if len(claim.lines) > 1:
        raise _Unverifiable(f"a {q} of a group of lines")
    name = claim.lines[0]
    value = claim.value
    kind = claim.line_kind if claim.line_kind in ("emission", "absorption") else None
    if q == "ew" and value < 0:  # the astronomers' sign convention: negative EW = emission
        kind, value = "emission", -value
    v, kind = _strength(claim, name, ctx, "strength" if q == "ew" else q, kind)
    if claim.unit and "km" in claim.unit and q == "fwhm" and v.value is not None:
        centre = 0.5 * (v.window[0] + v.window[1])
        v = Value(v.value / centre * C_KMS, (v.sigma or 0) / centre * C_KMS, v.window)
    if claim.unit and claim.unit.strip().startswith(("%", "per")):
        value = value / 100.0
    if q == "ew" and kind and v.value is not None and v.value < 0 and claim.value > 0:
        return _result(claim, "contradicted", ctx, v.value, None, v.window,
                       f"{name} is in {'emission' if kind == 'absorption' else 'absorption'}, not {kind}")
    if q == "ew" and v.value is not None and v.sigma:
        # two definitions in use give two EWs: a broad-winged line integrated over its core or its
        # wings too; a narrow line on a broad one against the broad line or the continuum beneath it
        other, label = _inner_ew(name, ctx, kind), "in the central core"
        if other is None:
            other, label = _ew_over_far_continuum(claim, name, ctx, kind), "over the continuum beneath the broad line"
        if other is not None:
            res = _compare_number(claim, ctx, v, value, METHOD_REL, f"{name} {q} ({kind}, its window)")
            res_in = _compare_number(claim, ctx, other, value, METHOD_REL, f"{name} {q} ({kind}, {label})")
            between = claim.relation == "=" and min(v.value, other.value) <= value <= max(v.value, other.value)
            if res.verdict == "supported" or res_in.verdict == "supported" or between:
                best = res if res.verdict == "supported" or res_in.verdict != "supported" else res_in
                return replace(best, verdict="supported",
                               reason=f"{res.reason}; {res_in.reason.split(': ', 1)[-1]} {label}")
            return replace(res, reason=f"{res.reason}; {res_in.reason.split(': ', 1)[-1]} {label}")
    return _compare_number(claim, ctx, v, value, METHOD_REL, f"{name} {q} ({kind})")


INNER_HALF = 15.0  # Angstrom, rest: a 30 A central band, as narrow-band line indices use (Lick H-beta: 29 A)


def _ew_over_far_continuum(claim: Claim, name: str, ctx: Context, kind: str | None) -> Value | None:
    """A narrow emission line's EW against the continuum beneath a broad line it may sit on (side
    bands beyond +-BROAD_HALF, rest; the blue one alone at the red end of a spectrum); None when the
    blue one leaves the spectrum. With no broad line under it the two EWs agree and nothing changes."""
    if kind != "emission" or ctx.z is None:
        return None
    centre, params = _place(replace(claim, wavelength=None, lines=[name]), name, ctx)
    if params["core"][1] - params["core"][0] > (2 * INNER_HALF + 5) * (1 + ctx.z):  # narrow lines only
        return None
    far = line_params(centre, BROAD_HALF * (1 + ctx.z), side=40.0 * (1 + ctx.z))
    lo, hi = ctx.measurer.coverage
    if far["blue"][0] < lo:
        return None
    params = {**params, "far_blue": far["blue"], "far_red": far["red"] if far["red"][1] <= hi else None}
    ew = ctx.measurer.run("ew_over_far_continuum", **params)
    if ew.value is None or not ew.sigma:
        return None
    return Value(-ew.value, ew.sigma, ew.window)


def _inner_ew(name: str, ctx: Context, kind: str | None) -> Value | None:
    """The EW over the central +-INNER_HALF of a line whose window is wider (Balmer lines with
    pressure-broadened wings): with the full-window EW it brackets what an agent can quote."""
    windows = lexicon.line_windows().get(name)
    if windows is None or ctx.z is None:
        return None
    core = windows["core"]
    if core[1] - core[0] <= 2 * INNER_HALF + 5:
        return None
    centre = lexicon.rest_wave(name)
    params = scaled({"core": (centre - INNER_HALF, centre + INNER_HALF), "blue": windows["blue"],
                     "red": windows["red"]}, 1 + ctx.z)
    ew = ctx.measurer.run("equivalent_width", **params)
    if ew.value is None or not ew.sigma:
        return None
    sign = 1.0 if (kind or ("emission" if ew.value < 0 else "absorption")) == "absorption" else -1.0
    return Value(sign * ew.value, ew.sigma, ew.window)


def _check_snr(claim: Claim, ctx: Context) -> ClaimResult:
    import re

    near = re.search(r"(\d{4})\s*(?:Å|A\b)", claim.text)
    if near:
        c = float(near.group(1))
        win = (c - 50.0, c + 50.0)
    elif re.search(r"\b(?:median|overall|global)\s+(?:S/N|SNR|signal)", claim.text, re.IGNORECASE):
        win = ctx.measurer.coverage  # a statistic of the whole spectrum, not of the zoom in force
    else:
        win = ctx.view or ctx.measurer.coverage
    v = ctx.measurer.run("local_snr", window=tuple(win))
    if v.value is None or v.value <= 0:
        raise _Unverifiable("S/N not measurable in the window")
    ratio = claim.value / v.value
    ok = {"<": claim.value >= v.value / SNR_FACTOR, ">": claim.value <= v.value * SNR_FACTOR}.get(
        claim.relation, 1 / SNR_FACTOR <= ratio <= SNR_FACTOR)
    return _result(claim, "supported" if ok else "contradicted", ctx, v.value, v.value * (SNR_FACTOR - 1), win,
                   f"median S/N per pixel {v.value:.1f} in {win[0]:.0f}-{win[1]:.0f} A "
                   f"(a factor {SNR_FACTOR:g} allowed)")


def _check_ratio(claim: Claim, ctx: Context) -> ClaimResult:
    values = []
    for name in claim.lines[:2]:
        probe = replace(claim, wavelength=None, lines=[name])
        _, params = _place(probe, name, ctx)
        values.append(ctx.measurer.run("line_flux", **params))
    a, b = values
    if a.value is None or b.value is None or not b.sigma or abs(b.value) < SIG_DETECT * b.sigma:
        raise _Unverifiable(f"{claim.lines[1]} is not detected, so the ratio is undefined")
    r = a.value / b.value
    sig = abs(r) * float(np.hypot((a.sigma or 0) / (abs(a.value) or 1e-30), b.sigma / abs(b.value)))
    window = (min(a.window[0], b.window[0]), max(a.window[1], b.window[1]))
    return _compare_number(claim, ctx, Value(r, sig, window), claim.value, METHOD_REL,
                           f"{claim.lines[0]} / {claim.lines[1]} flux ratio")
