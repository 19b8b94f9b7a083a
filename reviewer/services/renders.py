"""The picture that goes with a trajectory step: its stored render, or the same render re-made from
the spectrum and the recorded call (Spec-o3 renders are deferred to keep trajectories small).

Beside it, SpecReview's own marked copy: the same render (window, style) with thin vertical marks at
the lines the step is about. The agent never saw those marks, so the copy is made here for the
reviewer only, cached under a key of its own and never stored; the agent's picture stays as it was.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from agents.claims.lexicon import kb_lines, task_lines
from agents.render_pool import RenderPool
from agents.tools.lines import label_candidates
from agents.tools.render import render_arrays, spectrum_arrays
from agents.trajectory import ZOOM_TOOLS, call_window
from agents.verify.analysis import class_lines
from agents.vet.renders import render_step, tool_for
from reviewer.services import background
from reviewer.services.spectra_cache import LockedLRU, after_the_switch, cached_render, peek_render, prefetch

log = logging.getLogger(__name__)
MARKED = "marked"  # the marked copy's cache key: (trajectory id, step index, MARKED)
DRAWN_FROM_KEPT = 4  # items whose drawing inputs are kept: the open one and a few just left


def _remakeable(traj, step) -> bool:
    """Whether the step's render can be made from the spectrum and its recorded call."""
    vet = traj.agent.name == "vet"
    return not step.is_error and ((step.kind == "prompt" and vet)
                                  or (step.kind == "tool_result" and step.tool_name in ZOOM_TOOLS))


# (trajectory id, id(spectrum)) -> (spectrum, inputs): the entry holds its spectrum, so that id is not
# another object's while the entry is kept
_drawn_from = LockedLRU(DRAWN_FROM_KEPT)


def _drawing_inputs(traj, spec):
    """What the item's re-made renders are drawn from: the vet tool (its arrays), or the spectrum's
    arrays for FORMA; made once per item, not once per step (~2-4 ms each, holding the GIL)."""
    def make():
        return spec, (tool_for(traj, spec) if traj.agent.name == "vet" else spectrum_arrays(spec))

    return _drawn_from.get((traj.id, id(spec)), make)[1]


def _here(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def _remake(item, step, marks=None, pool: RenderPool | None = None) -> bytes | None:
    """The render re-made from the spectrum and the recorded call, drawn here or (`pool`) in a
    render process: the same function on the same arrays either way, so the same bytes."""
    traj, spec = item.trajectory, item.spectrum
    if traj is None or spec is None or not _remakeable(traj, step):
        return None
    draw = _here if pool is None else pool.call
    try:  # the same render the agent saw, re-made from the spectrum and the recorded call
        inputs = _drawing_inputs(traj, spec)
        if traj.agent.name == "vet":
            # the tool carries all the render needs: the trajectory itself is not sent to the process
            return draw(render_step, None, step, None, inputs, marks=marks)
        lo, hi = call_window(step.tool_args) or (None, None)
        wavelength, flux, mask, title = inputs  # what render_png draws
        return draw(render_arrays, wavelength, flux, lo, hi, label=(step.tool_args or {}).get("label"),
                    title=title, mask=mask, marks=marks)
    except BrokenProcessPool:
        raise  # the process died, not the render: the caller draws it here
    except Exception as err:  # a render that fails must not break the review
        log.warning("could not re-render step %s of %s: %s", step.index, traj.id, err)
        return None


def _make(store, item, step, pool: RenderPool | None = None) -> bytes | None:
    """The picture the agent saw: its stored image, else re-made."""
    if step.image_sha:
        png = store.images.get_image(step.image_sha)
        if png is not None:
            return png
    return _remake(item, step, pool=pool)


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
            background.when_stopping(stop_render_processes)
        return _processes[priority]


def stop_render_processes() -> None:
    """End the render processes (they start again on the next render)."""
    with _processes_lock:
        pools = list(_processes.values())
        _processes.clear()
    for pool in pools:
        pool.executor.shutdown(wait=True, cancel_futures=True)


def _in_process(priority: str, draw):
    """`draw(pool)` in the render process of that priority; here if the process has died."""
    try:
        return draw(render_process(priority))
    except BrokenProcessPool as err:
        log.warning("render process failed (%s); rendering in the server", err)
        with _processes_lock:
            _processes.pop(priority, None)  # the next render starts a new one
        return draw(None)


def _plotted_window(item, step) -> tuple[float, float] | None:
    """The render's wavelength range on its own axis: the call's window within the drawn pixels
    (finite, unmasked), or all of them. A vet tool with a redshift plots rest wavelengths."""
    import astropy.units as u

    spec, traj = item.spectrum, item.trajectory
    wave = np.asarray(spec.spectral_axis.to_value(u.AA, equivalencies=u.spectral()), dtype=float).ravel()
    good = np.isfinite(wave) & np.isfinite(np.asarray(getattr(spec.flux, "value", spec.flux), dtype=float).ravel())
    if spec.mask is not None:
        good &= ~np.asarray(spec.mask, dtype=bool).ravel()
    if not good.any():
        return None
    if traj.agent.name == "vet" and traj.tool_redshift():
        wave = wave / (1.0 + traj.tool_redshift())
    lo, hi = float(wave[good].min()), float(wave[good].max())
    window = call_window(step.tool_args) if step.kind == "tool_result" else None
    if window is not None:
        lo, hi = max(lo, window[0]), min(hi, window[1])
    return (lo, hi) if lo <= hi else None


def _lines_about(item, index: int) -> list[dict]:
    """The lines step `index` is about, placed on its render's axis (name, rest, x, major).

    Vet (Spec-o3 tasks): the task's diagnostic lines (agents.claims.lexicon.task_lines) at their rest
    wavelengths: the tasks are stars (z ~ 0), and a tool given a redshift plots rest wavelengths.
    Verify (FORMA): the lines the hypothesis' class predicts at rest x (1 + z), for a step of one
    hypothesis' analysis; elsewhere (the overview) those of the trajectory's answer (class, z).
    Wavelengths are vacuum, as in kb and in the interactive plot's line markers (one rule)."""
    traj = item.trajectory
    if traj.agent.name == "vet":
        known = kb_lines()
        return [{"name": name, "rest": known[name]["wave"], "x": known[name]["wave"],
                 "major": bool(known[name].get("major", False))} for name in task_lines(traj.task)]
    hypothesis = traj.hypothesis_at(index)
    if hypothesis is None:
        answer = item.agent_label or {}
        if answer.get("z") is None or not answer.get("type"):
            return []
        hypothesis = float(answer["z"]), str(answer["type"])
    z, spectype = hypothesis
    return [{"name": ln["name"], "rest": ln["rest"], "x": ln["rest"] * (1.0 + z), "major": bool(ln.get("key"))}
            for ln in class_lines(spectype)]


def step_marks(item, index: int) -> tuple[tuple[str, float], ...]:
    """What SpecReview marks on step `index`'s render: (label, x on the render's axis) of the lines
    the step is about that lie inside the render's window, one per wavelength, most important first
    (the interactive plot's label order: agents.tools.lines.label_candidates). Empty for a step
    whose render cannot be re-made from the spectrum (the marks need the same picture)."""
    traj = item.trajectory if item is not None else None
    if traj is None or item.spectrum is None or not 0 <= index < len(traj.steps):
        return ()
    step = traj.steps[index]
    if not _remakeable(traj, step):
        return ()
    try:
        window = _plotted_window(item, step)
        lines = _lines_about(item, index) if window is not None else []
    except Exception as err:  # marks that cannot be worked out must not break the review: none
        log.warning("no line marks for step %s of %s: %s", index, traj.id, err)
        return ()
    inside = [ln for ln in lines if window[0] <= ln["x"] <= window[1]]
    return tuple((ln["name"], float(ln["x"])) for ln in label_candidates(inside))


def _key(traj, index: int, marked: bool) -> tuple:
    return (traj.id, index, MARKED) if marked else (traj.id, index)


def step_render(store, item, index: int, *, marked: bool = False, priority: str = "now") -> bytes | None:
    """The render of step `index` as the agent saw it (its stored image, else re-made), or with
    `marked` SpecReview's copy marked with `step_marks` (None where it has no marks). `priority`:
    "now" for what the reviewer waits for, "ahead" for prefetches."""
    traj = item.trajectory if item is not None else None
    if traj is None or not 0 <= index < len(traj.steps):
        return None
    step = traj.steps[index]
    if marked:
        return cached_render(_key(traj, index, True), lambda: (
            _in_process(priority, lambda pool: _remake(item, step, marks, pool))
            if (marks := step_marks(item, index)) else None))
    return cached_render(_key(traj, index, False), lambda: _in_process(priority, lambda pool: _make(store, item, step, pool)))


def cached_step(item, index: int, *, marked: bool = False) -> tuple[bool, bytes | None]:
    """(known, png): whether the step's render (or its marked copy) is already made, without making it."""
    traj = item.trajectory if item is not None else None
    if traj is None:
        return True, None
    return peek_render(_key(traj, index, marked))


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
        if not after_the_switch(still_current):
            return
        # first what the step view shows by default (the marked copy where a step has marks), then
        # the agent's own pictures of the marked steps
        shown = [s.index for s in traj.steps if s.kind in ("prompt", "tool_result") and not s.is_error]
        marked = [i for i in shown if step_marks(item, i)]
        for index, as_marked in [*((i, i in marked) for i in shown), *((i, False) for i in marked)]:
            if not still_current():
                return
            step_render(store, item, index, marked=as_marked, priority="ahead")

    prefetch(work)
