"""The picture that goes with a trajectory step: its stored render, or the same render re-made from
the spectrum and the recorded call (Spec-o3 renders are deferred to keep trajectories small)."""
from __future__ import annotations

import logging

from agents.tools.render import render_png
from agents.trajectory import ZOOM_TOOLS, call_window
from reviewer.spectra_cache import cached_render, prefetch

log = logging.getLogger(__name__)


def _make(store, item, step) -> bytes | None:
    if step.image_sha:
        png = store.images.get_image(step.image_sha)
        if png is not None:
            return png
    traj, spec = item.trajectory, item.spectrum
    if step.is_error or traj is None or spec is None:
        return None
    vet = traj.agent.name == "vet"
    if not ((step.kind == "prompt" and vet) or (step.kind == "tool_result" and step.tool_name in ZOOM_TOOLS)):
        return None
    try:  # the same render the agent saw, re-made from the spectrum and the recorded call
        if vet:
            from agents.vet.renders import render_step

            return render_step(traj, step, spec)
        lo, hi = call_window(step.tool_args) or (None, None)
        return render_png(spec, lo, hi, label=(step.tool_args or {}).get("label"))
    except Exception as err:  # a render that fails must not break the review
        log.warning("could not re-render step %s of %s: %s", step.index, traj.id, err)
        return None


def step_render(store, item, index: int) -> bytes | None:
    traj = item.trajectory if item is not None else None
    if traj is None or not 0 <= index < len(traj.steps):
        return None
    return cached_render((traj.id, index), lambda: _make(store, item, traj.steps[index]))


def cached_step(item, index: int) -> tuple[bool, bytes | None]:
    """(known, png): whether the step's render is already made, without making it."""
    from reviewer.spectra_cache import peek_render

    traj = item.trajectory if item is not None else None
    if traj is None:
        return True, None
    return peek_render((traj.id, index))


def owner_of_render(item, index: int) -> int | None:
    traj = item.trajectory if item is not None else None
    return traj.render_index_at(index) if traj is not None else None


def render_in_view(store, item, index: int) -> tuple[bytes | None, int | None]:
    """The render that belongs with step `index` (what the agent is reasoning about), made now if
    needed, with the index of the step it comes from."""
    owner = owner_of_render(item, index)
    return (None, None) if owner is None else (step_render(store, item, owner), owner)


def prefetch_renders(store, item, still_current) -> None:
    """Render an opened trajectory's steps in the background so stepping serves cached PNGs;
    stops as soon as `still_current()` says the reviewer moved on."""
    traj = item.trajectory
    if traj is None:
        return

    def work():
        for step in traj.steps:
            if not still_current():
                return
            if step.kind in ("prompt", "tool_result") and not step.is_error:
                step_render(store, item, step.index)

    prefetch(work)
