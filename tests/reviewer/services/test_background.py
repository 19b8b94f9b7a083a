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
