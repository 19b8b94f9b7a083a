"""Where the agent was looking at a step, and at which redshift, read from the trajectory itself.

Vet trajectories (Spec-o3 tool) record `wavelength_range` in their tool calls; when the prompt's
`tool_state` holds a truthy redshift the tool plotted the rest frame (reference: Spec-o3 zoom tool),
so the range is divided by 1 + z there and multiplied back here. Verify trajectories (FORMA) record
`render` calls with observed `wave_min`/`wave_max`, and their redshift hypotheses (best first).
"""
from __future__ import annotations

from dataclasses import dataclass

import kb


@dataclass(frozen=True)
class View:
    lo: float | None  # observed frame, Angstrom; None: the whole spectrum
    hi: float | None
    z: float | None  # the redshift the agent's plot used, if any
    rest_plot: bool
    step: int | None  # the step whose call set this zoom

    @property
    def range(self) -> tuple[float, float] | None:
        return None if self.lo is None or self.hi is None else (self.lo, self.hi)


def plot_redshift(trajectory) -> float | None:
    """The redshift the Spec-o3 tool plotted at (None: observed frame); the schema answers it."""
    return trajectory.tool_redshift() or None


def _range(args: dict | None):
    if not args:
        return None
    rng = args.get("wavelength_range")
    if isinstance(rng, (list, tuple)) and len(rng) == 2:
        return float(min(rng)), float(max(rng)), True
    if "wave_min" in args or "wave_max" in args:
        return args.get("wave_min"), args.get("wave_max"), False
    return None


def step_window(trajectory, step_index: int) -> View:
    """The zoom in force at `step_index`: the last successful zoom or render at or before it (its
    tool_result: a call whose result was an error changed nothing the agent saw)."""
    z = plot_redshift(trajectory)
    for step in reversed(trajectory.steps[: step_index + 1]):
        if step.kind != "tool_result" or step.is_error:
            continue
        found = _range(step.tool_args)
        if found is None:
            if step.tool_name in ("spectral_visualization_tool", "render"):
                return View(None, None, z, bool(z), step.index)  # a full-spectrum view
            continue
        lo, hi, spec_o3 = found
        factor = (1.0 + z) if (spec_o3 and z) else 1.0
        lo = None if lo is None else float(lo) * factor
        hi = None if hi is None else float(hi) * factor
        return View(lo, hi, z, bool(z) and spec_o3, step.index)
    return View(None, None, z, bool(z), None)


def trajectory_redshift(trajectory) -> tuple[float | None, str]:
    """The redshift to place named lines, and where it came from."""
    z = plot_redshift(trajectory)
    if z:
        return z, "tool_state"
    for step in trajectory.steps:
        hyps = (step.data or {}).get("hypotheses")
        if hyps:
            return float(hyps[0]["z"]), "best hypothesis"
    if trajectory.task in kb.tasks():
        # every vet task is stellar (kb/tasks): lines sit at their rest wavelengths within ~10 A
        return 0.0, "stellar task"
    return None, "unknown"
