"""Time on item per reviewer and task (issue 47, item 3): medians, p90, throughput, rushed verdicts and the
campaign's time to completion, from verdicts stored with known active seconds in a real database."""
from __future__ import annotations

import numpy as np
import pytest

from reviewer.services.review_times import RUSHED_FRACTION, reviewer_times, seconds_to_complete


def store_verdicts(store, reviewer: str, task: str, seconds: list[float | None]) -> list[str]:
    ids = [r["trajectory_id"] for r in store.queue.queue_items(task=task, limit=100)][:len(seconds)]
    assert len(ids) == len(seconds)
    for tid, s in zip(ids, seconds, strict=True):
        store.labels.add_review(tid, reviewer, "approve", active_s=s)
    return ids


def test_figures_per_reviewer_and_task(demo_store):
    seconds = [40.0, 50.0, 60.0, 70.0, 5.0]  # the last a glance: under a quarter of the usual 50 s
    ids = store_verdicts(demo_store, "ann", "a", seconds)
    store_verdicts(demo_store, "ann", "verify", [100.0, None])  # untimed verdicts are not counted
    store_verdicts(demo_store, "bo", "a", [20.0, 30.0])
    rows = {(r["reviewer"], r["task"]): r for r in reviewer_times(demo_store)}
    ann = rows[("ann", "a")]
    assert ann["timed"] == 5 and ann["median_seconds"] == 50.0
    assert ann["p90_seconds"] == pytest.approx(float(np.percentile(seconds, 90)), abs=0.05)  # 66.0
    assert ann["items_per_hour"] == pytest.approx(3600 * 5 / sum(seconds), abs=0.05)  # 80 per hour
    assert ann["rushed"] == [ids[-1]] and RUSHED_FRACTION * 50.0 > 5.0
    assert rows[("ann", "verify")]["timed"] == 1
    assert rows[("bo", "a")]["rushed"] == []  # two verdicts: no usual time yet, nothing marked
    pooled = {r["reviewer"]: r for r in reviewer_times(demo_store, by_task=False)}
    assert pooled["ann"]["timed"] == 6 and pooled["ann"]["median_seconds"] == 55.0


def test_a_withdrawn_verdict_is_not_timed_and_the_latest_counts(demo_store):
    tid = store_verdicts(demo_store, "cy", "a", [30.0])[0]
    demo_store.labels.add_review(tid, "cy", "reject", active_s=12.0)
    assert [r["median_seconds"] for r in reviewer_times(demo_store)] == [12.0]
    demo_store.labels.add_review(tid, "cy", "clear")
    assert reviewer_times(demo_store) == []


def test_time_to_complete(demo_store):
    store_verdicts(demo_store, "ann", "a", [40.0, 50.0, 60.0])
    store_verdicts(demo_store, "bo", "a", [20.0])
    times = reviewer_times(demo_store)
    # 10 verdicts left at the usual 50 s (ann's three, bo's one: the median of 50, 50, 50, 20), two reviewers
    assert seconds_to_complete(10, times, reviewers=2) == 250.0
    assert seconds_to_complete(10, [], reviewers=2) is None
