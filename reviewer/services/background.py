"""Background work a reviewer does not wait for, with one owner.

Five lanes, one worker thread each (work runs in the order it was queued): "render" (the steps of an
opened item rendered ahead), "read-ahead" (the next queue item's spectrum read into the cache),
"priority" (an item's review priority recomputed after a verdict), "stats" (the Stats tab's
figures computed again after labels are written: reviewer.services.stats_snapshots) and "lists" (a
page's list read again after a verdict or a write elsewhere). They start on first use and stop
with the server (reviewer/app_hooks.on_server_unloaded) or at the end of a test session: work still
queued is dropped, running work finishes, and what registered with `when_stopping` (the render
processes) is shut down. A lane used after `stop` starts again.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

LANES = ("render", "read-ahead", "priority", "stats", "lists")
_lock = threading.Lock()
_lanes: dict[str, ThreadPoolExecutor] = {}
_on_stop: list[Callable[[], None]] = []


def submit(lane: str, fn: Callable, *args) -> Future:
    if lane not in LANES:
        raise ValueError(f"no background lane {lane!r} (lanes: {', '.join(LANES)})")
    with _lock:
        if lane not in _lanes:
            _lanes[lane] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"specreview-{lane}")
        return _lanes[lane].submit(fn, *args)


def wait_for(lane: str, timeout: float = 300.0) -> None:
    """Wait until what was queued in `lane` so far has run (from another lane: work that reads what it writes)."""
    with _lock:
        pool = _lanes.get(lane)
    if pool is not None:
        pool.submit(lambda: None).result(timeout=timeout)


def drain(timeout: float = 300.0) -> None:
    """Wait until what was queued so far has run, lane by lane in LANES order (a render may queue a
    read-ahead, never the reverse): a store is then not closed under work that reads it."""
    for lane in LANES:
        wait_for(lane, timeout)


def when_stopping(fn: Callable[[], None]) -> None:
    """Call `fn` (once per `stop`) after the lanes have stopped."""
    with _lock:
        if fn not in _on_stop:
            _on_stop.append(fn)


def stop() -> None:
    with _lock:
        pools = list(_lanes.values())
        _lanes.clear()
        stoppers = list(_on_stop)
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)
    for fn in stoppers:
        fn()


def live_threads() -> list[str]:
    """Names of the lane threads still alive (none after `stop`)."""
    return sorted(t.name for t in threading.enumerate()
                  if t.is_alive() and t.name.startswith(tuple(f"specreview-{lane}" for lane in LANES)))
