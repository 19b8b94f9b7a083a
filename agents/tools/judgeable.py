"""Whether a spectrum can be judged at all: the one rule the vet and verify agents share.

A spectrum too poor to judge is refused, not answered: its trajectory ends with status "unjudgeable"
and the reason (agents.trajectory.UNJUDGEABLE), never with a NO, which would be as confident on a
spectrum without data as on a clear one. The rule reads the pixels the measurements use
(agents.tools.measure.Arrays.good: finite flux, ivar > 0 where the file gives errors, not masked by
the survey's own bits) and refuses when

1. fewer than MIN_USABLE_PIXELS pixels are usable over the whole spectrum (vet and verify);
2. (vet) a line or band the task's decision requires (its `require` criteria in kb/tasks, through
   their derived values) has fewer than MIN_WINDOW_PIXELS usable pixels in one of its windows (core,
   side bands): the data do not cover it, so its absence is unknown, not a NO;
3. (vet) the median S/N per pixel (measure.local_snr) of the task's best diagnostic window
   (`windows[].range`) is below MIN_WINDOW_SNR: no window holds any signal;
4. (vet, issue 50 item 5) a feature that decides the task (its `significance` entry in kb/tasks) would
   stand less than SIGNIFICANCE sigma from its threshold at the spectrum's measured noise, were the
   spectrum a typical member of the class: the noise could make a member fail, so a NO would be the
   noise's. The noise model is the propagated per-pixel noise of the measurement (`predicted_sigma`),
   from the file's inverse variance: a file without errors (a noiseless template) has no measured
   noise, and the pixel-to-pixel scatter of a cool star's blue end is its lines, not noise.

Rules 2-4 give way to a NO that the windows present already decide (`decided_no`): a requirement
measured and failed by SIGNIFICANCE sigma of its own noise (an equivalent width or a mean of them, a
line depth; a line width where a member's line would be traced, WIDTH_TRACE), or a task's NO-witness
(kb/tasks `significance.decides_no`: a measure outside the decision that excludes the class, such as
task a's H-alpha) failed the same way. The spectrum is then judged, and its answer is that NO (the rules
policy decides with the witness added to its requirements).

Verify has no task windows: the lines that give a redshift depend on the redshift sought, and an
emission-line galaxy or quasar can give one with a continuum at S/N ~0 (the FORMA audit rates such a
result's credibility), so only rule 1 applies to it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

import kb
from agents.spectra.core import MIN_FINITE_PIXELS
from agents.tools.measure import MIN_PIXELS, UNITS, Arrays, measure
from agents.trajectory import UNJUDGEABLE, Trajectory

# Rule 1: the floor of agents.spectra.core.MIN_FINITE_PIXELS, counted on usable pixels: the continuum
# fit needs 12 pixels for any fit, a line measurement >= 3 pixels plus two side bands, the CWT >= 4
# consecutive widths of 1-80 px; below 20 no verdict from these tools means anything.
MIN_USABLE_PIXELS = MIN_FINITE_PIXELS
# Rule 2: agents.tools.measure.MIN_PIXELS, below which a measurement is "not measurable".
MIN_WINDOW_PIXELS = MIN_PIXELS
# Rule 3: below S/N 1 per pixel the noise exceeds the signal, and the task measurements read noise: an
# equivalent width over a core of N pixels of width dl has sigma ~ dl * sqrt(N) / (S/N), ~7 A for
# H-delta's 55 A core at ~1 A per pixel (LAMOST, SDSS: 69 km/s pixels), as large as the A-star Balmer
# equivalent widths it must tell apart (8-20 A, kb/tasks/a.yaml, and its ~6 A threshold); a depth (1 -
# the lowest point of the normalised core) is set by the deepest of ~30 noise draws, ~1 or more
# whatever the star. The best window decides, not the mean of all: a red star is legitimately faint
# where an A star's lines are (a LAMOST K7 star: S/N ~1 over task a's blue windows, ~10 at H-alpha)
# and is plainly judged. Whether the signal is enough for a task's question stays that task's own
# `snr` requirement (3-10 in kb/tasks), answered NO below it.
MIN_WINDOW_SNR = 1.0

# Rule 4: 3 sigma, the one-sided chance 0.13 % that noise alone moves a measurement across a threshold.
SIGNIFICANCE = 3.0
# The noise of the medians the measurements take (agents.tools.measure): the median of N Gaussian pixels
# has sigma ~ sqrt(pi / 2) sigma / sqrt(N) (its asymptotic efficiency, 2/pi).
MEDIAN_NOISE = math.sqrt(math.pi / 2.0)
MEDIAN3_NOISE = 0.670  # line_depth's 3-pixel running median: the exact order statistic of three
MEDIAN5_NOISE = 0.536  # balmer_width's 5-pixel running median: the order statistic of five
# A width is walked pixel by pixel from the line's lowest point to its half depth, and one smoothed pixel
# of noise above the half level stops it: over the ~10 independent smoothed pixels of a 50-150 A line a
# 3-sigma tolerance per pixel leaves a ~1-in-50 chance of a stop, and degraded real white dwarfs (S/N 5-7
# per pixel, docs/benchmarks.md) lose half their width that way. The half depth of a member's line must
# stand WIDTH_TRACE sigma above the smoothed noise (one-sided 3e-7 per pixel) before a width counts.
WIDTH_TRACE = 5.0

_REGIONS = ("core", "blue", "red", "band", "side", "side2", "window")  # the windows a measure reads


@dataclass(frozen=True)
class Judgement:
    judgeable: bool
    reasons: tuple[str, ...]
    usable_pixels: int
    pixels: int
    coverage: float | None = None  # share of the decision's lines and bands the data cover (vet)
    missing: tuple[str, ...] = ()  # the ones they do not
    snr: float | None = None  # median S/N per pixel of the best diagnostic window (vet)
    snr_window: str | None = None
    significance: tuple[dict, ...] = ()  # rule 4: each decisive feature's predicted significance (vet)
    decided_no: str | None = None  # the requirement the windows present fail, when that decides NO
    decided_by: dict | None = None  # its leaf (a `require` leaf, or one of kb/tasks significance.decides_no)

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    def as_data(self) -> dict[str, Any]:
        return {"judgeable": self.judgeable, "reason": self.reason, "usable_pixels": self.usable_pixels,
                "pixels": self.pixels, "coverage": None if self.coverage is None else round(self.coverage, 3),
                "missing": list(self.missing), "snr": None if self.snr is None else round(self.snr, 2),
                "snr_window": self.snr_window, "significance": list(self.significance),
                "decided_no": self.decided_no, "quality": None if self.snr is None else quality_label(self.snr),
                "thresholds": {
                    "min_usable_pixels": MIN_USABLE_PIXELS, "min_window_pixels": MIN_WINDOW_PIXELS,
                    "min_window_snr": MIN_WINDOW_SNR, "significance": SIGNIFICANCE}}


def _measure_specs(task: dict) -> dict[str, dict]:
    return {m["id"]: m for w in task["windows"] for m in w.get("measures", [])}


def _parts(task: dict, measure_id: str) -> list[str]:
    """The base measurements a measure or derived value is made of."""
    derived = next((d for d in task.get("derived", []) if d["id"] == measure_id), None)
    if derived is None:
        return [measure_id]
    how = next(k for k in ("mean_of", "ratio_of", "max_of", "min_of") if k in derived)
    return [p for part in derived[how] for p in _parts(task, part)]


def _uncovered(crit: dict, task: dict, covered) -> list[str]:
    """The required base measurements of a criterion that the data do not cover (an `any` group is
    covered when one of its branches is)."""
    if "all" in crit:
        return [m for c in crit["all"] for m in _uncovered(c, task, covered)]
    if "any" in crit:
        branches = [_uncovered(c, task, covered) for c in crit["any"]]
        return [] if any(not b for b in branches) else [m for b in branches for m in b]
    return [m for m in _parts(task, crit["measure"]) if not covered(m)]


def assess(arrays: Arrays, task: dict | None = None, *, measured_noise: bool = True) -> Judgement:
    """The rule for one spectrum and a vet task (a kb/tasks entry), or for verification (task None).
    measured_noise False: the file's errors are an estimate, not a measurement (a reader's DER_SNR fill,
    `meta["ivar_estimated"]`, as for the noiseless Pickles templates): rule 4 has no noise to predict from."""
    usable, pixels = int(arrays.good.sum()), int(arrays.wave.size)
    if usable < MIN_USABLE_PIXELS:
        return Judgement(False, (f"{usable} usable pixels of {pixels} (the others masked or without inverse "
                                 f"variance); judging needs at least {MIN_USABLE_PIXELS}",), usable, pixels)
    if task is None:
        return Judgement(True, (), usable, pixels)
    specs = _measure_specs(task)

    def covered(measure_id: str) -> bool:
        spec = specs.get(measure_id)
        return spec is None or all(arrays.window(*spec[k]).size >= MIN_WINDOW_PIXELS for k in _REGIONS if k in spec)

    require = task["decision"].get("require", [])
    required = list(dict.fromkeys(m for c in require for m in _uncovered(c, task, lambda _: False)))  # all of them
    missing = list(dict.fromkeys(m for c in require for m in _uncovered(c, task, covered)))
    names = tuple(specs[m].get("name", m) for m in missing if m in specs)
    reasons = []
    if names:
        reasons.append(f"the spectrum does not cover {', '.join(names)} (fewer than {MIN_WINDOW_PIXELS} usable "
                       "pixels in a window the decision needs)")
    snrs = [(measure(arrays, "local_snr", window=w["range"]), w["label"]) for w in task["windows"]]
    snr, where = max(((s, label) for s, label in snrs if s is not None), default=(None, None))
    if snr is None or snr < MIN_WINDOW_SNR:
        said = "no window has usable pixels" if snr is None else f"{snr:.2f} in the best window ({where})"
        reasons.append(f"median S/N per pixel {said}; below {MIN_WINDOW_SNR:.0f} the noise exceeds the signal "
                       "in every diagnostic window")
    significance = tuple(_significance(arrays, task, specs)) if measured_noise else ()
    weak = [g for g in significance if g["significance"] < SIGNIFICANCE]
    if weak:
        reasons.append(f"S/N too low to decide {task['name']}: " + "; ".join(g["says"] for g in weak)
                       + f"; at least {SIGNIFICANCE:.0f} sigma needed")
    coverage = 1.0 - len(missing) / len(required) if required else 1.0
    decided = _decided_no(arrays, task, specs) if reasons else None
    if decided is not None:  # the windows present answer it: judged, and the answer is NO
        return Judgement(True, (), usable, pixels, coverage, names, snr, where, significance, *decided)
    return Judgement(not reasons, tuple(reasons), usable, pixels, coverage, names, snr, where, significance)


# -- rule 4: the predicted significance of the decisive features ---------------------------------
def _noise(arrays: Arrays, band) -> tuple[float, int] | None:
    """(median sigma per pixel, pixel count) over `band`: from the inverse variance, or where a file gives
    no errors from the pixel-to-pixel scatter (measure.local_snr's estimate)."""
    idx = arrays.window(*band)
    if idx.size < MIN_WINDOW_PIXELS:
        return None
    if arrays.ivar is not None:
        return float(np.median(1.0 / np.sqrt(arrays.ivar[idx]))), int(idx.size)
    d = np.diff(arrays.flux[idx])
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0)), int(idx.size)


def _line_noise(arrays: Arrays, spec: dict) -> dict | None:
    """The noise of a line measurement (core, blue and red side bands) in continuum units: per pixel over
    the core, and of the continuum the side-band medians set under it. None where a window lacks pixels;
    infinite where the side bands hold no positive continuum."""
    core, side = _noise(arrays, spec["core"]), [_noise(arrays, spec[k]) for k in ("blue", "red")]
    if core is None or None in side:
        return None
    level = float(np.mean([np.median(arrays.flux[arrays.window(*spec[k])]) for k in ("blue", "red")]))
    width = float(spec["core"][1] - spec["core"][0])
    if not level > 0:
        return {"pixel": math.inf, "continuum": math.inf, "pixels": core[1], "width": width}
    continuum = MEDIAN_NOISE * math.sqrt(sum(s * s / n for s, n in side)) / 2.0 / level
    return {"pixel": core[0] / level, "continuum": continuum, "pixels": core[1], "width": width}


def predicted_sigma(arrays: Arrays, task: dict, measure_id: str) -> float | None:
    """The 1-sigma noise of an equivalent width (or a mean or ratio of them) at this spectrum's measured
    noise: sigma_EW^2 = N (dl sigma / C)^2 over the core's N pixels of width dl, plus (core width x the
    relative error of the continuum the two side-band medians set). None: no model or not covered."""
    specs = _measure_specs(task)
    spec = specs.get(measure_id)
    if spec is not None:
        if spec["kind"] == "balmer_width":
            return _width_sigma(arrays, spec)
        if spec["kind"] != "equivalent_width":
            return None
        ln = _line_noise(arrays, spec)
        if ln is None:
            return None
        dl = ln["width"] / ln["pixels"]
        return math.hypot(dl * math.sqrt(ln["pixels"]) * ln["pixel"], ln["width"] * ln["continuum"])
    derived = next((d for d in task.get("derived", []) if d["id"] == measure_id), None)
    if derived is None:
        return None
    if "mean_of" in derived:
        parts = [predicted_sigma(arrays, task, p) for p in derived["mean_of"]]
        return None if None in parts else math.sqrt(sum(p * p for p in parts)) / len(parts)
    if "ratio_of" in derived:
        num, den = derived["ratio_of"]
        s_num, s_den = predicted_sigma(arrays, task, num), predicted_sigma(arrays, task, den)
        typical = task.get("significance", {}).get("typical", {})
        v_num, v_den = _typical(task, num, typical), _typical(task, den, typical)
        if None in (s_num, s_den, v_num, v_den) or v_den == 0:
            return None
        return math.hypot(s_num, v_num / v_den * s_den) / abs(v_den)
    return None


def _typical(task: dict, measure_id: str, typical: dict) -> float | None:
    """A typical member's value of a measure: given (kb/tasks `significance.typical`) or derived from them."""
    if measure_id in typical:
        value = typical[measure_id]
        return float(value["width"]) if isinstance(value, dict) else float(value)
    derived = next((d for d in task.get("derived", []) if d["id"] == measure_id), None)
    if derived is None:
        return None
    how = next(k for k in ("mean_of", "ratio_of", "max_of", "min_of") if k in derived)
    parts = [_typical(task, p, typical) for p in derived[how]]
    if None in parts or (how == "ratio_of" and parts[1] == 0):
        return None
    return {"mean_of": lambda v: sum(v) / len(v), "ratio_of": lambda v: v[0] / v[1], "max_of": max,
            "min_of": min}[how](parts)


def _leaves(crit: dict):
    if "all" in crit or "any" in crit:
        for c in crit.get("all", crit.get("any", [])):
            yield from _leaves(c)
    else:
        yield crit


def _threshold(task: dict, measure_id: str) -> dict | None:
    rule = task["decision"]
    return next((leaf for c in rule.get("require", []) + rule.get("veto", []) for leaf in _leaves(c)
                 if leaf["measure"] == measure_id), None)


def _traced(arrays: Arrays, spec: dict, depth: float) -> float | None:
    """How far a member's half-depth level (depth / 2 below the continuum) stands above the noise of the
    smoothed profile the width is walked on, in sigma (see WIDTH_TRACE). None where not covered."""
    ln = _line_noise(arrays, spec)
    if ln is None:
        return None
    noise = MEDIAN5_NOISE * math.hypot(ln["pixel"], ln["continuum"])
    return math.inf if noise == 0 else depth / 2.0 / noise


def _width_sigma(arrays: Arrays, spec: dict) -> float | None:
    """The noise of a line width (the walk from the line's lowest point to its half depth): no closed form
    (one noise spike above the half level stops the walk), so the claim checker's Monte-Carlo draws
    (agents.claims.measure.Measurer: fixed-seed noise of the pixels' own sigma, added to them) give its
    spread. The draws add a second dose of the spectrum's noise, so their spread is sqrt(2) the
    spectrum's own. Infinite where most draws find no half depth to walk to (the line is lost in the noise)."""
    from agents.claims.measure import Measurer  # the claims layer reads agents.tools.measure: import late

    if arrays.window(*spec["core"]).size < MIN_WINDOW_PIXELS:
        return None
    value = Measurer(arrays).run("balmer_width", **{k: tuple(spec[k]) for k in ("core", "blue", "red")})
    return math.inf if value.sigma is None else value.sigma / math.sqrt(2.0)


def _depth_sigma(arrays: Arrays, spec: dict) -> float | None:
    """The noise of a line depth (1 - the lowest 3-pixel running median of the normalised core): a smoothed
    pixel's noise and the continuum's. Noise deepens the lowest point, never fills it: a shallow depth
    measured is, if anything, deeper than the line's."""
    ln = _line_noise(arrays, spec)
    return None if ln is None else math.hypot(MEDIAN3_NOISE * ln["pixel"], ln["continuum"])


def _significance(arrays: Arrays, task: dict, specs: dict) -> list[dict]:
    entry = task.get("significance")
    if not entry or arrays.ivar is None:  # no errors in the file: no measured noise to predict from
        return []
    typical, out = entry.get("typical", {}), []
    for mid in entry["features"]:
        spec, leaf = specs.get(mid), _threshold(task, mid)
        name = spec.get("name", mid) if spec else next((d.get("name", mid) for d in task.get("derived", [])
                                                        if d["id"] == mid), mid)
        if spec is not None and spec["kind"] == "balmer_width":
            depth = typical[mid]["depth"]
            traced = _traced(arrays, spec, depth)
            if traced is not None and traced < WIDTH_TRACE:
                sig = traced * SIGNIFICANCE / WIDTH_TRACE  # on the scale the others are judged on
                out.append({"measure": mid, "significance": round(sig, 2), "says": (
                    f"the {name} of a {task['target']} (depth {depth:.2f}) would have its half depth "
                    f"{traced:.1f} sigma above the smoothed noise, where the walk to it needs {WIDTH_TRACE:.0f}")})
                continue
        sigma, value = predicted_sigma(arrays, task, mid), _typical(task, mid, typical)
        if sigma is None or value is None or leaf is None:
            continue
        threshold = float(leaf["value"])
        sig = math.inf if sigma == 0 else abs(value - threshold) / sigma
        says = (f"the {name} of a {task['target']} ({value:.2f}) would stand {sig:.1f} sigma from its "
                f"threshold {threshold:.2f} (sigma {sigma:.2f} at this noise)" if math.isfinite(sigma) else
                f"the {name} cannot be measured against a continuum here (no flux above zero in its side "
                "bands, or no draw of it finds the line)")
        # a noiseless file (a template) is capped, so the recorded data stay plain JSON
        out.append({"measure": mid, "significance": round(min(sig, 1e6), 2), "says": says})
    return out


def _value(arrays: Arrays, task: dict, specs: dict, mid: str) -> float | None:
    spec = specs.get(mid)
    if spec is not None:
        params = {k: v for k, v in spec.items() if k not in ("id", "kind", "name", "unit")}
        return measure(arrays, spec["kind"], **params)
    derived = next((d for d in task.get("derived", []) if d["id"] == mid), None)
    if derived is None or "mean_of" not in derived:
        return None
    parts = [_value(arrays, task, specs, p) for p in derived["mean_of"]]
    return None if None in parts else sum(parts) / len(parts)


def _present_mean(arrays: Arrays, task: dict, specs: dict, mid: str) -> tuple[float, float, str] | None:
    """A mean of lines (mean_of) over the ones the spectrum covers, with its noise, when some are missing:
    the class needs every one of them strong, so the lines present can fail it on their own."""
    derived = next((d for d in task.get("derived", []) if d["id"] == mid), None)
    if derived is None or "mean_of" not in derived:
        return None
    present = [(p, _value(arrays, task, specs, p), predicted_sigma(arrays, task, p)) for p in derived["mean_of"]]
    present = [(p, v, e) for p, v, e in present if v is not None and e is not None]
    if not present or len(present) == len(derived["mean_of"]):
        return None
    value = sum(v for _, v, _ in present) / len(present)
    sigma = math.sqrt(sum(e * e for _, _, e in present)) / len(present)
    return value, sigma, ", ".join(specs[p].get("name", p) for p, _, _ in present)


def _decided_no(arrays: Arrays, task: dict, specs: dict) -> tuple[str, dict] | None:
    """The first requirement (a leaf of the `require` list, or of an `all` group in it, then the task's
    `significance.decides_no` leaves) the windows present fail beyond doubt: (said with its numbers, the
    leaf); None when none does."""
    witnesses = task.get("significance", {}).get("decides_no", [])
    for crit in task["decision"].get("require", []) + witnesses:
        leaves = [crit] if "measure" in crit else crit.get("all", [])
        for leaf in leaves:
            if "measure" not in leaf or leaf["op"] not in (">=", ">"):
                continue
            mid, threshold = leaf["measure"], float(leaf["value"])
            value, partial = _value(arrays, task, specs, mid), _present_mean(arrays, task, specs, mid)
            if value is None and partial is not None:
                value, sigma, names = partial
                if threshold - value >= SIGNIFICANCE * sigma:
                    return (f"the lines present ({names}) average {value:.2f} Å, {(threshold - value) / sigma:.1f} "
                            f"sigma below the {threshold:.2f} a {task['target']} needs of each (sigma {sigma:.2f})",
                            leaf)
                continue
            if value is None or value >= threshold:
                continue
            spec = specs.get(mid)
            derived = None if spec else next((d for d in task.get("derived", []) if d["id"] == mid), None)
            if spec is None and derived is None:
                continue
            name = (spec or derived).get("name", mid)
            unit = spec.get("unit", UNITS.get(spec["kind"], "")) if spec else derived.get("unit", "")
            unit = f" {unit}" if unit else ""
            if spec is not None and spec["kind"] == "balmer_width":
                typical = task.get("significance", {}).get("typical", {}).get(mid)
                traced = _traced(arrays, spec, typical["depth"]) if isinstance(typical, dict) else None
                if traced is None or traced < WIDTH_TRACE:  # noise narrows a width: no NO from it
                    continue
            sigma = _depth_sigma(arrays, spec) if spec is not None and spec["kind"] == "line_depth" else \
                predicted_sigma(arrays, task, mid)
            if sigma is not None and threshold - value >= SIGNIFICANCE * sigma:
                return (f"{name} = {value:.2f}{unit}, {(threshold - value) / sigma:.1f} sigma below the {threshold:.2f} "
                        f"a {task['target']} needs (sigma {sigma:.2f} at this noise)", leaf)
    return None


def quality_label(snr: float | None) -> str:
    """The spectrum quality a measured median S/N per pixel earns (kb/quality.yaml): the one rule every
    report and judgement that names a quality uses."""
    labels = kb.load("quality")["labels"]
    if snr is None or snr != snr:  # unmeasured or NaN: no signal to speak of
        return labels[-1]["label"]
    # a negative median (flux below zero in most pixels: sky over-subtracted) is noise too
    return next((q["label"] for q in labels if snr >= q["min_snr"]), labels[-1]["label"])


def refuse(traj: Trajectory, judgement: Judgement, **outcome: Any) -> Trajectory:
    """End `traj` as a refusal: a reasoning step quoting the rule's numbers, an answer step that says
    unjudgeable and why (no YES / NO, no type, no z), and the outcome (extra keys from `outcome`)."""
    data = judgement.as_data()
    traj.add("think", text=f"I cannot judge this spectrum: {judgement.reason}.", data={"judgeable": data})
    traj.add("answer", text=f"Unjudgeable: {judgement.reason}.",
             answer={"status": UNJUDGEABLE, "reason": judgement.reason})
    traj.outcome = {"status": UNJUDGEABLE, "reason": judgement.reason, "judgeable": data, **outcome}
    return traj
