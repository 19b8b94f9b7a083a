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
   (`windows[].range`) is below MIN_WINDOW_SNR: no window holds any signal.

Verify has no task windows: the lines that give a redshift depend on the redshift sought, and an
emission-line galaxy or quasar can give one with a continuum at S/N ~0 (the FORMA audit rates such a
result's credibility), so only rule 1 applies to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import kb
from agents.spectra.core import MIN_FINITE_PIXELS
from agents.tools.measure import MIN_PIXELS, Arrays, measure
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

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    def as_data(self) -> dict[str, Any]:
        return {"judgeable": self.judgeable, "reason": self.reason, "usable_pixels": self.usable_pixels,
                "pixels": self.pixels, "coverage": None if self.coverage is None else round(self.coverage, 3),
                "missing": list(self.missing), "snr": None if self.snr is None else round(self.snr, 2),
                "snr_window": self.snr_window, "quality": None if self.snr is None else quality_label(self.snr),
                "thresholds": {
                    "min_usable_pixels": MIN_USABLE_PIXELS, "min_window_pixels": MIN_WINDOW_PIXELS,
                    "min_window_snr": MIN_WINDOW_SNR}}


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


def assess(arrays: Arrays, task: dict | None = None) -> Judgement:
    """The rule for one spectrum and a vet task (a kb/tasks entry), or for verification (task None)."""
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
    coverage = 1.0 - len(missing) / len(required) if required else 1.0
    return Judgement(not reasons, tuple(reasons), usable, pixels, coverage, names, snr, where)


def quality_label(snr: float | None) -> str:
    """The spectrum quality a measured median S/N per pixel earns (kb/quality.yaml): the one rule every
    report and judgement that names a quality uses."""
    if snr is None or snr != snr:  # unmeasured or NaN: no signal to speak of
        return kb.load("quality")["labels"][-1]["label"]
    return next(q["label"] for q in kb.load("quality")["labels"] if snr >= q["min_snr"])


def refuse(traj: Trajectory, judgement: Judgement, **outcome: Any) -> Trajectory:
    """End `traj` as a refusal: a reasoning step quoting the rule's numbers, an answer step that says
    unjudgeable and why (no YES / NO, no type, no z), and the outcome (extra keys from `outcome`)."""
    data = judgement.as_data()
    traj.add("think", text=f"I cannot judge this spectrum: {judgement.reason}.", data={"judgeable": data})
    traj.add("answer", text=f"Unjudgeable: {judgement.reason}.",
             answer={"status": UNJUDGEABLE, "reason": judgement.reason})
    traj.outcome = {"status": UNJUDGEABLE, "reason": judgement.reason, "judgeable": data, **outcome}
    return traj
