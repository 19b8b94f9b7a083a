"""The Stats figures remembered for every page (reviewer.services.stats_snapshots): the stats mark
moves with every write the figures are read from and with none of the reads (which store derived
rows: signals, synced consensus), and a figure computed from an older mark never replaces a newer."""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from datetime import UTC, datetime
from functools import partial

import pytest
from databases import own_copy

from reviewer.services import background, stats, stats_snapshots, triage
from reviewer.services.labels import LabelService
from reviewer.store import Store


@pytest.fixture
def store(demo_template, tmp_path):
    with Store(own_copy(demo_template, tmp_path)) as opened:
        yield opened


def test_the_mark_moves_with_every_write_the_figures_read_and_not_with_reading_them(store):
    ids = [r["id"] for r in store.trajectories.list_trajectories(limit=3)]
    sid = store.sessions.create_session("april", "verdicts", ids)
    triage.triage_inputs(store)
    stats.review_stats(store)
    writes = {
        "verdict": lambda: store.labels.add_review(ids[0], "ann", "approve"),
        "score": lambda: store.labels.add_rating(ids[0], "ann", 3, "1"),
        "resolution": lambda: store.reviews.add_resolution("trajectory", ids[1], "mia", "approve"),
        "trajectory": lambda: store.trajectories.save_trajectory(store.trajectories.load_trajectory(ids[2])),
        "claims": lambda: store.claims.save_claims(ids[0], "test-9", [
            {"step_idx": 0, "claim_idx": 0, "kind": "feature", "claim_text": "x", "verdict": "contradicted"}]),
        "weights": lambda: store.triage.save_triage_model("default", list(triage.FEATURES), [0.0] * 6),
        "campaign closed": lambda: store.sessions.close_session(sid, at=datetime(2026, 1, 1, tzinfo=UTC)),
    }
    for what, write in writes.items():
        before = store.reviews.stats_mark()
        write()
        assert store.reviews.stats_mark() != before, what
        mark = store.reviews.stats_mark()
        triage.triage_inputs(store)  # stores the signals the write made stale
        stats.review_stats(store)  # syncs the stored consensus
        assert store.reviews.stats_mark() == mark, f"a read after the {what} moved the mark"


def test_a_figure_from_an_older_mark_never_replaces_a_newer(store):
    slow_started, fast_done = threading.Event(), threading.Event()

    def slow():
        slow_started.set()
        fast_done.wait(30)
        return "old"

    got = {}
    thread = threading.Thread(target=lambda: got.update(old=stats_snapshots.compute(store, "x", None, slow)))
    thread.start()
    slow_started.wait(30)
    store.labels.add_review(store.trajectories.list_trajectories(limit=1)[0]["id"], "ann", "approve")
    newer = stats_snapshots.compute(store, "x", None, lambda: "new")
    fast_done.set()
    thread.join(30)
    kept = stats_snapshots.remembered(store, "x")
    assert kept == newer and kept.value == "new" and got["old"].value == "old"
    assert stats_snapshots.is_current(store, kept) and not stats_snapshots.is_current(store, got["old"])
    assert stats_snapshots.remembered(store, "x", "a campaign") is None  # kept per campaign


def test_a_part_kept_at_the_mark_read_is_returned_not_computed_again(store):
    """A page that found the part stale and asks for it after another computation finished at the same
    mark (the refresh a verdict started, another page) gets that one: at 1M trajectories computing it
    again took the page ~0.8 s of a busy server (docs/benchmarks.md, issue 22)."""
    works = []
    first = stats_snapshots.compute(store, "x", None, lambda: works.append(1) or "first")
    again = stats_snapshots.compute(store, "x", None, lambda: works.append(2) or "again")
    assert again is first and works == [1]
    store.labels.add_review(store.trajectories.list_trajectories(limit=1)[0]["id"], "ann", "approve")
    after = stats_snapshots.compute(store, "x", None, lambda: works.append(3) or "after")
    assert after.value == "after" and works == [1, 3] and stats_snapshots.is_current(store, after)


def shown_and_computed(store) -> dict:
    """Both parts as a page opening the tab asks for and computes them."""
    out = {}
    for part in ("stats", "triage"):
        assert stats_snapshots.remembered(store, part) is None
        out[part] = stats_snapshots.compute(store, part, None, stats_snapshots.part_work(store, part, None))
    return out


def test_a_verdict_refreshes_in_the_background_the_figures_a_page_showed(store):
    before = shown_and_computed(store)
    trajectory = store.trajectories.load_trajectory(store.trajectories.list_trajectories(limit=1)[0]["id"])
    LabelService(store).write_verdict("ann", trajectory, "reject")
    assert not stats_snapshots.is_current(store, before["stats"])
    background.drain()
    for part in ("stats", "triage"):
        now = stats_snapshots.remembered(store, part)
        assert now is not before[part] and stats_snapshots.is_current(store, now), part
    scores = stats_snapshots.remembered(store, "stats").value["scores"]
    assert scores.equals(stats.review_stats(store)["scores"])  # what a page computing now would show
    inputs, report = stats_snapshots.remembered(store, "triage").value
    assert report == triage.triage_report(store, stats_snapshots.TARGET)
    assert trajectory.id in set(inputs.labelled.index)


def test_a_verdicts_refresh_computes_the_reviewers_part_without_waiting_for_the_priorities(store):
    """The reviewers' statistics read no priority: the refresh a verdict starts computes them while the
    triage's part waits for the verdict's priority (which its report reads), not after both. (Before any
    weights are stored it waits too: test_a_verdict_refreshes_in_the_background_the_figures_a_page_showed.)"""
    triage.refresh(store)  # weights stored: a database past its first verdicts
    before = shown_and_computed(store)
    priorities_held, release = threading.Event(), threading.Event()
    background.submit("priority", lambda: priorities_held.set() or release.wait(60))
    try:
        assert priorities_held.wait(30)
        trajectory = store.trajectories.load_trajectory(store.trajectories.list_trajectories(limit=1)[0]["id"])
        LabelService(store).write_verdict("ann", trajectory, "reject")
        deadline = time.monotonic() + 30
        while not stats_snapshots.is_current(store, stats_snapshots.remembered(store, "stats", shown=False)):
            assert time.monotonic() < deadline, "the reviewers' part waited for the priorities"
            time.sleep(0.05)
        assert stats_snapshots.remembered(store, "triage", shown=False) is before["triage"]
    finally:
        release.set()
    background.drain()
    inputs, report = stats_snapshots.remembered(store, "triage").value
    assert report == triage.triage_report(store, stats_snapshots.TARGET) and trajectory.id in set(inputs.labelled.index)


def test_figures_nobody_looked_at_lately_are_left_to_the_next_opening(store, monkeypatch):
    before = shown_and_computed(store)
    monkeypatch.setattr(stats_snapshots, "KEEP_FRESH_S", 0.0)
    LabelService(store).write_score("ann", store.trajectories.list_trajectories(limit=1)[0]["id"], 4, "1")
    background.drain()
    assert stats_snapshots.remembered(store, "stats", shown=False) is before["stats"]


def test_a_part_computed_at_the_same_mark_meanwhile_is_waited_for_not_computed_again(store, monkeypatch):
    started, release, waiting, runs = threading.Event(), threading.Event(), threading.Event(), []

    class SeenWaiting(Future):
        def result(self, timeout=None):
            waiting.set()
            return super().result(timeout)

    monkeypatch.setattr(stats_snapshots, "Future", SeenWaiting)

    def slow():
        runs.append("slow")
        started.set()
        release.wait(30)
        return "figures"

    got = {}
    first = threading.Thread(target=lambda: got.update(first=stats_snapshots.compute(store, "x", None, slow)))
    first.start()
    started.wait(30)
    second = threading.Thread(target=lambda: got.update(
        second=stats_snapshots.compute(store, "x", None, lambda: runs.append("again") or "again")))
    second.start()
    assert waiting.wait(30)  # the second page waits for the first's result
    release.set()
    first.join(30)
    second.join(30)
    assert runs == ["slow"] and got["second"] is got["first"] and got["first"].value == "figures"


def test_refreshes_are_spaced_by_what_the_last_one_cost():
    assert stats_snapshots.next_refresh_at(100.0, 0.1) == 100.0 + stats_snapshots.MIN_GAP_S
    assert stats_snapshots.next_refresh_at(100.0, 2.0) == 100.0 + stats_snapshots.GAP_FACTOR * 2.0


def test_the_server_computes_both_parts_as_it_starts_and_refreshes_them_once_a_page_shows_them(store):
    stats_snapshots.prepare(store)
    background.drain()
    tid = store.trajectories.list_trajectories(limit=1)[0]["id"]
    prepared = {part: stats_snapshots.remembered(store, part, shown=False) for part in stats_snapshots.PARTS}
    assert all(kept is not None and stats_snapshots.is_current(store, kept) for kept in prepared.values())
    LabelService(store).write_score("ann", tid, 4, "1")  # nobody looked at them: left for the first opening
    background.drain()
    assert stats_snapshots.remembered(store, "stats", shown=False) is prepared["stats"]
    assert stats_snapshots.remembered(store, "stats") is prepared["stats"]  # a page opens the tab
    LabelService(store).write_score("bob", tid, 2, "1")
    background.drain()
    assert stats_snapshots.is_current(store, stats_snapshots.remembered(store, "stats", shown=False))


def test_a_part_pauses_between_its_reads_and_computes_the_same_figures(store):
    """The background's computation of a part gives way to pages between its reads (issue 48, item 3):
    `pause` runs between them, and the figures are those computed without it."""
    for part, reads in (("stats", 3), ("triage", 2)):
        pauses = []
        paused = stats_snapshots.part_work(store, part, None, pause=partial(pauses.append, 1))()
        assert len(pauses) == reads - 1, part
        assert repr(paused) == repr(stats_snapshots.part_work(store, part, None)()), part
