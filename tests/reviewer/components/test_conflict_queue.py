"""The Conflicts tab's list: a click names its conflict by key, and the detail and the resolver follow it."""
from __future__ import annotations

from reviewer.components.conflicts import ConflictQueue
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def test_a_click_chooses_the_conflict_it_names(tmp_path):
    store = Store(tmp_path / "conflicts.duckdb")
    seed_demo_if_empty(store)
    rows = [r for r in store.queue.queue_items(limit=100) if r["task"] != "verify"][:2]
    for row in rows:  # two reviewers disagree on two items
        store.labels.add_review(row["trajectory_id"], "ann", "approve")
        store.labels.add_review(row["trajectory_id"], "bo", "reject")
    merger = ConflictQueue(state=ReviewState(store, reviewer="cy"))
    merger.refresh()
    assert {i["item_id"] for i in merger.items} == {r["trajectory_id"] for r in rows}
    assert merger.selected == 0 and merger._table.selected == 0
    second = merger.items[1]
    merger._table._handle_msg({"key": f"trajectory:{second['item_id']}"})  # the browser's message for a click
    assert merger.current is second and merger._table.selected == 1
    assert str(second.get("object_id") or second["item_id"]) in merger._detail.object
    merger._table._handle_msg({"key": "trajectory:not-a-conflict"})
    assert merger.current is second  # nothing else chosen
    store.close()
