"""The picture that goes with a trajectory step: its stored render, or the same render re-made from
the spectrum and the recorded call (Spec-o3 renders are deferred to keep trajectories small)."""
from __future__ import annotations

import logging
import threading
from concurrent.futures.process import BrokenProcessPool

from agents.render_pool import RenderPool
from agents.tools.render import render_png, spectrum_arrays
from agents.trajectory import ZOOM_TOOLS, call_window
from agents.vet.renders import render_step, tool_for
from reviewer.spectra_cache import cached_render, prefetch

log = logging.getLogger(__name__)


def _make(store, item, step, pool: RenderPool | None = None) -> bytes | None:
    """The step's PNG, drawn here or (`pool`) in a render process: the same function on the same
    arrays either way, so the same bytes."""
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
            tool = tool_for(traj, spec)
            return render_step(traj, step, spec, tool) if pool is None else pool.call(render_step, traj, step, None, tool)
        lo, hi = call_window(step.tool_args) or (None, None)
        label = (step.tool_args or {}).get("label")
        if pool is None:
            return render_png(spec, lo, hi, label)
        wavelength, flux, mask, title = spectrum_arrays(spec)
        return pool.render(wavelength, flux, lo, hi, label, title, mask)
    except BrokenProcessPool:
        raise  # the process died, not the render: the caller draws it here
    except Exception as err:  # a render that fails must not break the review
        log.warning("could not re-render step %s of %s: %s", step.index, traj.id, err)
        return None


def step_render(store, item, index: int) -> bytes | None:
    traj = item.trajectory if item is not None else None
    if traj is None or not 0 <= index < len(traj.steps):
        return None
    return cached_render((traj.id, index), lambda: _make_in_process(store, item, traj.steps[index], "now"))


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


# Renders are drawn in render processes, not in threads of the server: a render is ~20 ms of
# matplotlib holding the GIL, and drawn in a thread it slowed every item switch and key press that
# arrived meanwhile. "now": what a reviewer waits for; "ahead": prefetches, at the lowest CPU priority.
_NICENESS = {"now": 0, "ahead": 19}
_processes: dict[str, RenderPool] = {}
_processes_lock = threading.Lock()


def render_process(priority: str) -> RenderPool:
    with _processes_lock:
        if priority not in _processes:
            _processes[priority] = RenderPool(1, niceness=_NICENESS[priority])
        return _processes[priority]


def _make_in_process(store, item, step, priority: str) -> bytes | None:
    try:
        return _make(store, item, step, render_process(priority))
    except BrokenProcessPool as err:
        log.warning("render process failed (%s); rendering in the server", err)
        with _processes_lock:
            _processes.pop(priority, None)  # the next render starts a new one
        return _make(store, item, step)


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
                cached_render((traj.id, step.index), lambda step=step: _make_in_process(store, item, step, "ahead"))

    prefetch(work)
