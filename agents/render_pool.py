"""Renders in worker processes, for runs whose threads mostly wait on a model server.

An LLM campaign keeps dozens of requests in flight from threads of one process, but every zoom the
model asks for is a matplotlib render (~15-30 ms of CPU): under one GIL the renders, not the model,
end up bounding the run, and each thread would also build its own figures (~150 ms each, per
size). While a pool is running, zoom tools made by `zoom_tool` hand their renders to it: the threads
wait (the GIL free) while other cores draw. The renderer is the same function with the same
arguments, so the PNG bytes are those an inline render makes.

    with render_pool.running(2):
        ... vet_spectrum(..., backend="openai") from many threads ...
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from agents.tools.zoom import SpectralVisualizationTool


class RenderPool:
    """The running pool and how many renders it drew.

    The workers start at once and import the renderer (matplotlib and its fonts, ~1 s of CPU each)
    while the caller is still getting ready, rather than when the first zooms of a campaign arrive
    together and every thread waits for the first process to come up."""

    def __init__(self, processes: int, *, niceness: int = 0):
        # spawn, not fork: this process has threads (HTTP pools, the batch) a fork would copy mid-state
        self.executor = ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context("spawn"),
                                            initializer=_warm, initargs=(niceness,))
        self.renders = 0
        self._lock = threading.Lock()
        # a spawn-context pool starts a worker per submit while none is idle: one no-op each starts
        # them all now (not waited for; the first renders queue behind them)
        for _ in range(processes):
            self.executor.submit(_ready)

    def render(self, *args, **kwargs) -> bytes:
        """`agents.tools.render.render_arrays(*args, **kwargs)` in a worker."""
        return self.call(_render, *args, **kwargs)

    def call(self, fn, *args, **kwargs):
        """`fn(*args, **kwargs)` in a worker (`fn` a module-level function, arguments picklable):
        the same function on the same arguments, so the same bytes as a call in this process."""
        result = self.executor.submit(fn, *args, **kwargs).result()
        with self._lock:
            self.renders += 1
        return result


_pool: RenderPool | None = None


def _warm(niceness: int = 0) -> None:
    # A Ctrl-C at the terminal reaches the whole process group, workers included: the pool's owner
    # ends them (executor.shutdown). Interrupted on their own, they printed tracebacks and could leave
    # a task half done or the pool broken while the owner shut it down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if niceness:  # speculative work (a reviewer's prefetch) yields the CPU to what someone waits for
        os.nice(niceness)
    import agents.tools.render_figure  # noqa: F401  (matplotlib, its Agg backend, the text sprites)


def _ready() -> bool:
    return True


def _render(*args, **kwargs) -> bytes:
    from agents.tools.render import render_arrays

    return render_arrays(*args, **kwargs)


class PooledZoomTool(SpectralVisualizationTool):
    """The Spec-o3 zoom tool, drawing in the render pool when one runs (else in this thread)."""

    def render(self, wave_min=None, wave_max=None, label=None, marks=None) -> bytes:
        pool = _pool
        if pool is not None:
            try:
                return pool.render(self.wavelength, self.flux, wave_min, wave_max, label=label, title=self.title,
                                   marks=marks)
            except (BrokenProcessPool, OSError):  # the pool died, not the render: draw it here
                pass
        return super().render(wave_min, wave_max, label, marks)


@contextmanager
def running(processes: int):
    """Run a pool of `processes` render workers for the duration (0: render inline, yields None)."""
    global _pool
    if processes < 1:
        yield None
        return
    pool = RenderPool(processes)
    _pool = pool
    try:
        yield pool
    finally:
        _pool = None
        pool.executor.shutdown(wait=True, cancel_futures=True)
