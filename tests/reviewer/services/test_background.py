"""Background work has an owner: stop() drops what is queued, lets what runs finish, ends the lane
threads and the render processes; a lane used afterwards starts again."""
from __future__ import annotations

import threading
import time

import pytest

from reviewer.services import background, renders


def test_stop_drops_queued_work_finishes_running_work_and_leaves_no_thread():
    started, release, ran = threading.Event(), threading.Event(), []

    def running():
        started.set()
        release.wait(30)
        ran.append("running")

    background.submit("priority", running)
    queued = background.submit("priority", lambda: ran.append("queued"))
    assert started.wait(30)
    stopper = threading.Thread(target=background.stop)
    stopper.start()
    deadline = time.monotonic() + 30
    while not queued.cancelled():  # stop() cancels what waits before it waits for what runs
        assert time.monotonic() < deadline, "queued work was not dropped"
        time.sleep(0.01)
    release.set()
    stopper.join(30)
    assert ran == ["running"]
    assert background.live_threads() == []
    assert background.submit("priority", lambda: 42).result(timeout=30) == 42  # the lane starts again
    background.stop()


def test_render_processes_end_with_the_background_work():
    pool = renders.render_process("ahead")
    assert pool.call(int, "7") == 7
    background.stop()
    assert "ahead" not in renders._processes
    with pytest.raises(RuntimeError, match="shutdown"):  # the process pool no longer takes work
        pool.executor.submit(int, "7")


def test_an_unknown_lane_is_refused():
    with pytest.raises(ValueError, match="no background lane"):
        background.submit("elsewhere", print)


def test_a_priority_refresh_whose_store_closed_is_dropped_without_a_warning(demo_store, caplog):
    """A verdict's priority refresh waits in the background lane; a store closed before it runs (the app
    stopping, a test ending) drops it, as a stale read-ahead is dropped: no 'connection closed' warning."""
    import logging

    from reviewer.services import background
    from reviewer.services.labels import _refresh_priority_later

    tid = demo_store.trajectories.list_trajectories(limit=1)[0]["id"]
    demo_store.close()
    with caplog.at_level(logging.WARNING, logger="reviewer.services.labels"):
        _refresh_priority_later(demo_store, tid)
        background.drain()
    assert not [r for r in caplog.records if "not refreshed" in r.getMessage()]


# --- pages first (issue 48, item 3) ---------------------------------------------------------------
def wait_until(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_background_work_waits_while_a_page_is_built_and_goes_on_once_it_is_shown():
    hold = background.page_building()
    waited = {}
    worker = threading.Thread(target=lambda: waited.update(s=background.yield_to_pages(max_wait=60)))
    worker.start()
    assert wait_until(lambda: background.yielding() == 1)
    worker.join(0.3)
    assert worker.is_alive(), "background work went on while a page was being built"
    hold.release()
    worker.join(30)
    assert not worker.is_alive() and 0.3 <= waited["s"] < 30
    assert background.pages_building() == 0 and background.yielding() == 0
    assert background.yield_to_pages(max_wait=60) < 1.0  # no page: at once
    hold.release()  # a second release does nothing


def test_the_wait_for_pages_is_bounded_and_a_hold_never_released_ends_by_itself():
    forgotten = background.page_building(hold_s=60)  # a page whose browser never says it is shown
    try:
        waited = background.yield_to_pages(max_wait=0.2)
        assert 0.2 <= waited < 10
        assert background.pages_building() == 1
    finally:
        forgotten.release()
    with background.page_building(hold_s=0.2):
        assert background.pages_building() == 1
        assert background.yield_to_pages(max_wait=60) < 10  # the hold ended by itself after 0.2 s
        assert background.pages_building() == 0


def test_the_stats_figures_computed_at_start_wait_for_a_page_and_are_computed_after(demo_store):
    """The server's start computes the Stats figures in the background (stats_snapshots.prepare): a page
    being built holds them back, and they are computed, current, once it is shown."""
    from reviewer.services import stats_snapshots

    hold = background.page_building()
    try:
        stats_snapshots.prepare(demo_store)
        assert wait_until(lambda: background.yielding() == 1), "the start-up work did not wait for the page"
        assert all(stats_snapshots.remembered(demo_store, part, shown=False) is None for part in stats_snapshots.PARTS)
    finally:
        hold.release()
    background.wait_for("stats", timeout=120)
    for part in stats_snapshots.PARTS:
        kept = stats_snapshots.remembered(demo_store, part, shown=False)
        assert kept is not None and stats_snapshots.is_current(demo_store, kept), part


def test_the_stats_figures_at_start_are_computed_under_a_page_never_shown(demo_store, monkeypatch):
    """Nothing waits for good: with a page held for longer than the bound, the start-up work still ends."""
    from reviewer.services import stats_snapshots

    monkeypatch.setattr(background, "YIELD_MAX_S", 0.1)
    with background.page_building(hold_s=600):
        stats_snapshots.prepare(demo_store)
        background.wait_for("stats", timeout=120)
        assert all(stats_snapshots.remembered(demo_store, part, shown=False) is not None
                   for part in stats_snapshots.PARTS)
