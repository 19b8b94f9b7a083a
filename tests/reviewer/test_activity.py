"""Time on item (issue 47, item 3): the page's active time as the server accepts it (bounded by the wall
clock between reports), and the seconds a verdict is stored with."""
from __future__ import annotations

from reviewer.activity import SLACK_S, ActiveTime
from reviewer.review_state import ReviewState


class Clock:
    """The server's monotonic clock, moved by the test."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_page_cannot_claim_more_time_than_passed():
    clock = Clock()
    active = ActiveTime(clock)
    active.report(0)
    clock.now += 10
    active.report(8_000)  # 8 s of 10 in use
    assert active.active_s == 8.0
    clock.now += 5
    active.report(3_600_000 + 8_000)  # an hour claimed in 5 s: 5 s (and the slack) taken
    assert active.active_s == 8.0 + 5 + SLACK_S
    before = active.active_s
    for bad in (-1, 1.5e9, "9999", None, 7_000):  # negative, not an int, going back
        active.report(bad)
    assert active.active_s == before


def test_the_time_on_an_item_starts_when_it_is_opened():
    clock = Clock()
    active = ActiveTime(clock)
    assert active.seconds_on_item() is None  # no report: not measured
    active.report(0)
    clock.now += 30
    active.report(30_000)
    active.start_item()
    clock.now += 12
    active.report(42_000)
    assert active.seconds_on_item() == 12.0


def test_a_verdict_is_stored_with_the_active_seconds_on_its_item(demo_store):
    clock = Clock()
    state = ReviewState(demo_store, reviewer="tess")
    state.activity = ActiveTime(clock)
    state.activity.report(0)
    assert state.open_first()
    clock.now += 20
    state.activity.report(17_000)  # 3 s of the 20 hidden or idle
    ack = state.writer.save("verdict", action="approve")
    assert ack is not None
    row = demo_store.labels.latest_review(state.item.trajectory_id, "tess")
    assert row["active_s"] == 17.0
    state.step_item(+1)
    clock.now += 4
    state.activity.report(21_000)
    state.writer.save("verdict", action="reject")
    assert demo_store.labels.latest_review(state.item.trajectory_id, "tess")["active_s"] == 4.0
    # a verdict from a page that reported nothing (the CLI's path, a test driving the state) has none
    quiet = ReviewState(demo_store, reviewer="quinn")
    assert quiet.open_first() and quiet.writer.save("verdict", action="approve") is not None
    assert demo_store.labels.latest_review(quiet.item.trajectory_id, "quinn")["active_s"] is None
