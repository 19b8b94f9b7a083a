"""The Stats figures remembered for every page (reviewer.services.stats_snapshots): the stats mark
moves with every write the figures are read from and with none of the reads (which store derived
rows: signals, synced consensus), and a figure computed from an older mark never replaces a newer."""
from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from databases import own_copy

from reviewer.services import stats, stats_snapshots, triage
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
