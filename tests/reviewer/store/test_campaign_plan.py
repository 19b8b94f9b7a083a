"""Issue 47, items 1 and 6, in the store (the demo's real DuckDB file): a campaign's reviewers per item and
gold items written with it in one transaction, who holds an item (verdicts in the campaign's scope, live
reservations), and the queue's `overlap` filter."""
from __future__ import annotations

from datetime import timedelta

import pytest

from reviewer.store.codec import now


def demo_items(store, n=5):
    rows = sorted(store.trajectories.list_trajectories(task="a"), key=lambda r: (r["created_at"], r["id"]))
    return [r["id"] for r in rows[:n]]


def test_a_campaign_keeps_its_plan_and_its_gold_apart_from_its_items(demo_store):
    items = demo_items(demo_store)
    gold = [{"trajectory_id": items[3], "answer": "YES", "answer_z": None, "source": "file", "origin": "g.csv:2"}]
    sid = demo_store.sessions.create_session("c", "verdicts", items, ["ann", "bo"], per_item=2, gold=gold,
                                             gold_rate=0.2)
    session = demo_store.sessions.get_session(sid)
    assert (session["per_item"], session["gold_rate"], session["trajectory_ids"]) == (2, 0.2, items)
    assert demo_store.sessions.gold_items(sid) == [{**gold[0], "task": "a", "position": 3}]
    assert demo_store.sessions.is_gold(sid, items[3]) and not demo_store.sessions.is_gold(sid, items[0])
    with pytest.raises(ValueError, match="must be one of the campaign's items"):
        demo_store.sessions.create_session("d", "verdicts", items[:2], [], gold=gold)
    with pytest.raises(ValueError, match="at least 1"):
        demo_store.sessions.create_session("e", "verdicts", items, [], per_item=0)
    assert [s["name"] for s in demo_store.sessions.list_sessions()] == ["c"]  # nothing of the refused ones


def test_who_holds_an_item_verdicts_in_scope_and_live_reservations(demo_store):
    items = demo_items(demo_store)
    sid = demo_store.sessions.create_session("c", "verdicts", items, ["ann", "bo", "cy"], per_item=2)
    t = items[0]
    demo_store.labels.add_review(t, "ann", "approve", session_id=sid)
    demo_store.labels.add_review(t, "dee", "approve")  # outside the campaign: not counted
    demo_store.labels.add_review(t, "bo", "approve", session_id=sid)
    demo_store.labels.add_review(t, "bo", "clear", session_id=sid)  # withdrawn
    demo_store.sessions.reserve(sid, t, "cy", now() + timedelta(minutes=5))
    demo_store.sessions.reserve(sid, t, "eve", now() - timedelta(minutes=5))  # expired
    assert demo_store.sessions.holders(sid, t, now()) == {"ann", "cy"}
    assert demo_store.sessions.holders(sid, t, now() + timedelta(minutes=10)) == {"ann"}
    assert demo_store.sessions.verdict_counts(sid) == {**dict.fromkeys(items, 0), t: 1}

    def queue(reviewer):
        return [r["trajectory_id"] for r in demo_store.queue.queue_items(reviewer, session_id=sid, overlap=2)]

    assert queue("bo") == items[1:]  # ann and cy hold the first: not for a third
    assert queue("ann") == queue("cy") == items  # theirs stays in their queue
    assert demo_store.queue.queue_count("bo", session_id=sid, overlap=2) == len(items) - 1
    assert demo_store.queue.queue_count("bo", session_id=sid) == len(items)  # without the plan: everything
    with pytest.raises(ValueError, match="give its session_id"):
        demo_store.queue.queue_items("bo", overlap=2)


def test_gold_items_stay_in_everyones_queue(demo_store):
    items = demo_items(demo_store, 3)
    gold = [{"trajectory_id": items[0], "answer": "NO", "source": "survey", "origin": "LAMOST"}]
    sid = demo_store.sessions.create_session("c", "verdicts", items, ["ann", "bo", "cy"], per_item=1, gold=gold)
    for who in ("ann", "bo"):
        demo_store.labels.add_review(items[0], who, "approve", session_id=sid)
        demo_store.labels.add_review(items[1], who, "approve", session_id=sid)
    assert [r["trajectory_id"] for r in demo_store.queue.queue_items("cy", session_id=sid, overlap=1)] == [items[0], items[2]]


def test_a_campaigns_export_holds_its_own_gold_and_reservations_only(demo_store):
    items = demo_items(demo_store, 4)
    for name, gold_at in (("c", 0), ("d", 1)):
        sid = demo_store.sessions.create_session(name, "verdicts", items, ["ann"], per_item=1, gold=[
            {"trajectory_id": items[gold_at], "answer": "NO", "source": "file", "origin": f"{name}.csv:2"}])
        demo_store.sessions.reserve(sid, items[2], "ann", now() + timedelta(minutes=5))
    c = demo_store.sessions.find_session("c")["id"]
    assert demo_store.reviews.table_frame("gold_items", session="c")["origin"].tolist() == ["c.csv:2"]
    assert demo_store.reviews.table_frame("item_reservations", session="c")["session_id"].tolist() == [c]
    assert len(demo_store.reviews.table_frame("gold_items")) == 2
