"""Background work a reviewer does not wait for, with one owner.

Five lanes, one worker thread each (work runs in the order it was queued): "render" (the steps of an
opened item rendered ahead), "read-ahead" (the next queue item's spectrum read into the cache),
"priority" (an item's review priority recomputed after a verdict), "stats" (the Stats tab's
figures computed again after labels are written: reviewer.services.stats_snapshots) and "lists" (a
page's list read again after a verdict or a write elsewhere). They start on first use and stop
with the server (reviewer/app_hooks.on_server_unloaded) or at the end of a test session: work still
queued is dropped, running work finishes, and what registered with `when_stopping` (the render
processes) is shut down. A lane used after `stop` starts again.

Pages first (issue 48, item 3): a page being built holds `page_building()` until its browser has shown
it (the page side releases the hold: layouts/app.py), and work no reviewer is waiting on (the Stats
figures computed as the server starts or after writes) calls `yield_to_pages()` between its parts,
which waits while a page is being built. On a 2-core server the two otherwise share the cores (DuckDB
takes both for a read) and the GIL, and the pages of the first minute after a start were the slower
for it (docs/benchmarks.md). Nothing stalls for good: a hold ends by itself after PAGE_HOLD_S (a page
whose browser never says it is shown), and one wait lasts at most YIELD_MAX_S.
"""
from __future__ import annotations

import itertools
import threading
import time
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


# a page's build and first showing: ~0.5-3 s at 100k trajectories on a 2-core machine, ~30 s at 1M when
# the machine is busy; past this a hold is taken for a page that will not say it is shown
PAGE_HOLD_S = 30.0
# the longest one `yield_to_pages` waits: background work goes on at least this often under a stream of pages
YIELD_MAX_S = 20.0
_holds: dict[int, float] = {}  # a page's hold -> when it ends by itself (time.monotonic())
_holds_changed = threading.Condition()
_hold_ids = itertools.count()
_yielding = 0  # background works waiting in yield_to_pages now


class PageHold:
    """A page being built, from `page_building()` until `release()` (once; later calls do nothing) or
    until it ends by itself. A context manager too."""

    def __init__(self, hold_s: float):
        self.id = next(_hold_ids)
        with _holds_changed:
            _holds[self.id] = time.monotonic() + hold_s

    def release(self) -> None:
        with _holds_changed:
            if _holds.pop(self.id, None) is not None:
                _holds_changed.notify_all()

    def __enter__(self) -> PageHold:
        return self

    def __exit__(self, *_) -> None:
        self.release()


def page_building(hold_s: float = PAGE_HOLD_S) -> PageHold:
    """Say that a page is being built: `yield_to_pages` waits until it is released (at most `hold_s`)."""
    return PageHold(hold_s)


def _pages_left(now: float) -> float | None:
    """When the last hold still held ends by itself, with the ended ones dropped (None: none is held).
    Called under _holds_changed."""
    for hold in [h for h, ends in _holds.items() if ends <= now]:
        del _holds[hold]
    return max(_holds.values(), default=None)


def pages_building() -> int:
    """How many pages are being built now."""
    with _holds_changed:
        _pages_left(time.monotonic())
        return len(_holds)


def yielding() -> int:
    """How many background works are waiting for pages now."""
    with _holds_changed:
        return _yielding


def yield_to_pages(max_wait: float | None = None) -> float:
    """Wait while a page is being built (at most `max_wait` s, YIELD_MAX_S unless given); the seconds
    waited. For work no reviewer waits on, between its parts: a part that has begun runs to its end."""
    global _yielding
    limit = YIELD_MAX_S if max_wait is None else max_wait
    start = time.monotonic()
    with _holds_changed:
        _yielding += 1
        try:
            while True:
                now = time.monotonic()
                ends = _pages_left(now)
                if ends is None or now - start >= limit:
                    return now - start
                _holds_changed.wait(min(ends, start + limit) - now)
        finally:
            _yielding -= 1
