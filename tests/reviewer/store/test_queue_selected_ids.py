"""The queue restricted to ids chosen elsewhere (a selection in the Stats tab, issue 47 item 7), on the demo's
real DuckDB file: count, pages, positions and n / b hold exactly those items, combined with the other
filters; more ids than the cap are refused, naming the cap."""
from __future__ import annotations

import pytest

from reviewer.store.queue import MAX_SELECTED_IDS


def test_the_queue_holds_exactly_the_selected_items(demo_store):
    queue = demo_store.queue
    every = [r["trajectory_id"] for r in queue.queue_items(limit=1000)]
    chosen = [every[-1], every[0], every[len(every) // 2], "no-such-id"]
    assert queue.queue_count(selected_ids=chosen) == 3
    rows = queue.queue_items(selected_ids=chosen, limit=10)
    assert [r["trajectory_id"] for r in rows] == [t for t in every if t in chosen]  # the queue's own order
    assert queue.queue_position(every[-1], selected_ids=chosen) == 2
    assert queue.queue_neighbour(every[0], 1, selected_ids=chosen) == (rows[1]["trajectory_id"], 1)
    assert queue.queue_neighbour(every[1], 1, selected_ids=chosen) == (every[0], 0)  # not in it: its first item
    task = rows[0]["task"]
    assert queue.queue_count(selected_ids=chosen, task=task) == sum(r["task"] == task for r in rows)
    assert queue.queue_count(selected_ids=[]) == 0  # an empty selection is an empty queue
    assert queue.queue_count(selected_ids=None) == len(every)  # no selection: the whole queue


def test_more_ids_than_the_cap_are_refused(demo_store):
    with pytest.raises(ValueError, match=f"{MAX_SELECTED_IDS:,}"):
        demo_store.queue.queue_count(selected_ids=[f"t{i}" for i in range(MAX_SELECTED_IDS + 1)])
