"""Finding 9 (40 parallel page requests stalled the app for 24 s): page loads are limited per client,
in seconds of the server's time and in flight; the client past its limit gets 429 with Retry-After
at once, and another client is served. Measured over real HTTP against `panel serve reviewer`."""
from __future__ import annotations

import http.client
from concurrent.futures import ThreadPoolExecutor

import pytest
from served_app import ServedApp, seeded_db

from reviewer.page_limits import PageLoadLimit


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_each_client_spends_its_own_budget_of_build_seconds():
    clock = Clock()
    limit = PageLoadLimit(burst_s=2.0, share=0.5, in_flight=2, clock=clock)
    assert limit.admit("a") == 0.0 and limit.admit("a") == 0.0
    assert limit.admit("a") > 0  # two in flight already
    assert limit.admit("b") == 0.0  # another client is not held up
    limit.done("a", 1.5), limit.done("a", 1.5)  # 3 s of building against a 2 s budget
    assert limit.admit("a") == pytest.approx(2.0)  # 1 s owed, refilled at half the clock
    clock.now += 2.1
    assert limit.admit("a") == 0.0
    limit.done("a", 0.1)
    clock.now += 100.0  # the bucket refills to its burst, no further
    assert limit.admit("a") == 0.0 and limit._clients["a"].seconds == 2.0


def test_a_client_can_stall_the_others_for_at_most_burst_over_one_minus_share():
    clock = Clock()
    limit = PageLoadLimit(burst_s=10.0, share=0.2, clock=clock)
    for build_s in (0.5, 5.0):  # a quiet machine and a busy one
        spent, served = 0.0, 0
        for _ in range(40):  # one after another, as the event loop builds them
            if limit.admit(f"flood-{build_s}") == 0.0:
                clock.now += build_s
                limit.done(f"flood-{build_s}", build_s)
                spent, served = spent + build_s, served + 1
        assert spent <= 10.0 / (1 - 0.2) + build_s and served < 40


def test_settings_are_checked(monkeypatch):
    monkeypatch.setenv("SPECREVIEW_PAGE_SHARE_PERCENT", "many")
    with pytest.raises(SystemExit, match="SPECREVIEW_PAGE_SHARE_PERCENT='many' is not a whole number"):
        PageLoadLimit.from_environment()
    monkeypatch.setenv("SPECREVIEW_PAGE_SHARE_PERCENT", "100")
    with pytest.raises(SystemExit, match="between 1 and 99"):
        PageLoadLimit.from_environment()


def page_status(port: int, source: str = "127.0.0.1") -> tuple[int, str | None]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300, source_address=(source, 0))
    try:
        conn.request("GET", "/reviewer?reviewer=flood")
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After")
    finally:
        conn.close()


@pytest.mark.ui  # a served app: run with the browser tests
def test_forty_parallel_page_loads_from_one_client_are_mostly_refused_and_others_are_served(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECREVIEW_PAGE_BURST_SECONDS", "10")  # the defaults a team server runs with
    monkeypatch.setenv("SPECREVIEW_PAGE_SHARE_PERCENT", "20")
    db, _ = seeded_db(tmp_path)
    app = ServedApp(db, tmp_path / "panel.log")
    try:
        with ThreadPoolExecutor(max_workers=40) as pool:
            answers = list(pool.map(lambda _: page_status(app.port), range(40)))
        statuses = [status for status, _ in answers]
        assert set(statuses) <= {200, 429}
        assert statuses.count(429) >= 20  # served: about 12.5 s of building, at most
        assert all(retry and int(retry) >= 1 for status, retry in answers if status == 429)
        assert page_status(app.port, source="127.0.0.2")[0] == 200  # another client
        assert app.proc.poll() is None
    finally:
        app.stop()
