"""More than 5,000 queue items: every one is reachable by paging and with `n`, and the progress line
counts exactly the reachable items (no silent cap)."""
from __future__ import annotations

import pytest
from databases import own_copy

from reviewer.components.queue import QueueView
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

N_COPIES = 80  # 65 demo trajectories x 80 = 5,200 queue items


@pytest.fixture(scope="module")
def big_template(tmp_path_factory):
    """The file, made once per module and closed: each test opens its own copy (some write labels and
    priorities, which must not reach the next test)."""
    path = tmp_path_factory.mktemp("scale") / "scale.duckdb"
    store = Store(path)
    seed_demo_if_empty(store)
    # copies of the real demo trajectories under new ids, made in the database (fixture set-up only)
    store.db.execute(
        "INSERT INTO trajectories SELECT t.id || '-' || c.i, t.spectrum_id, t.source_path, t.target, t.task, "
        "t.agent_name, t.backend, t.model, t.agent_version, t.answer, t.answer_z, t.credibility, t.n_steps, "
        "t.n_tool_calls, t.outcome, t.schema_version, t.created_at + c.i * INTERVAL 1 SECOND, t.saved_at "
        f"FROM trajectories t, range(1, {N_COPIES}) c(i)")
    store.db.execute(
        "INSERT INTO steps SELECT s.trajectory_id || '-' || c.i, s.* EXCLUDE (trajectory_id) "
        f"FROM steps s, range(1, {N_COPIES}) c(i)")
    store.close()
    return path


@pytest.fixture
def big_store(big_template, tmp_path, wait_for_background_renders):
    store = Store(own_copy(big_template, tmp_path))
    yield store
    wait_for_background_renders()  # no background read left on the store closed next
    store.close()


def test_the_last_of_more_than_5000_items_is_reachable(big_store):
    state = ReviewState(big_store, reviewer="far")
    queue = QueueView(state=state)
    state.open_first()
    total = big_store.queue.queue_count("far")
    assert total == 65 * N_COPIES > 5000
    queue.go_to_page(10**6)  # past the end: the last page
    last = queue.rows[-1]
    assert queue.page * queue.page_size + len(queue.rows) == total
    state.open_item(trajectory_id=queue.rows[-2]["trajectory_id"])
    state.step_item(+1)
    assert state.item.trajectory_id == last["trajectory_id"]
    state.step_item(+1)  # n on the last item stays there
    assert state.item.trajectory_id == last["trajectory_id"]
    assert f"0 / {total} reviewed" in queue._progress.object


def test_the_neighbour_query_walks_the_filtered_queue_like_paging(big_store):
    """`n` / `b` ask one query for the neighbour; it must agree with the pages, in every order and filter."""
    for filters in ({}, {"task": "a"}, {"order": "contradicted"}, {"state": "todo", "task": "verify"}):
        rows = big_store.queue.queue_items("far", limit=50, offset=100, **filters)
        for i in (0, 17, 48):
            here, there = rows[i]["trajectory_id"], rows[i + 1]["trajectory_id"]
            assert big_store.queue.queue_neighbour(here, +1, "far", **filters) == (there, 101 + i)
            assert big_store.queue.queue_neighbour(there, -1, "far", **filters) == (here, 100 + i)
    first = big_store.queue.queue_items("far", limit=1, task="a")[0]["trajectory_id"]
    assert big_store.queue.queue_neighbour("not-in-the-queue", +1, "far", task="a") == (first, 0)
    assert big_store.queue.queue_neighbour(first, -1, "far", task="a") == (first, 0)  # never before the first
    last = big_store.queue.queue_items("far", offset=big_store.queue.queue_count("far") - 1, limit=1)[0]["trajectory_id"]
    assert big_store.queue.queue_neighbour(last, +1, "far") is None  # past the end


def test_a_page_is_its_slice_of_the_whole_ordered_queue_whatever_the_filters_and_order(big_store):
    """A page is chosen by its ids first, with only the joins its filters and order name, and only then
    given its columns: it must hold exactly the rows the whole ordered queue has at those places, with
    the same columns; and the whole queue in creation order is the trajectories sorted by (created_at, id)."""
    queue, db = big_store.queue, big_store.db
    every = db.rows("SELECT id, created_at FROM trajectories")
    by_creation = [r["id"] for r in sorted(every, key=lambda r: (r["created_at"], r["id"]))]
    assert [r["trajectory_id"] for r in queue.queue_items("pager", limit=len(every))] == by_creation
    ids = [r["trajectory_id"] for r in queue.queue_items("pager", limit=400, task="a")]
    for tid in ids[:40]:
        big_store.labels.add_review(tid, "pager", "approve")
    for tid in ids[:10]:
        big_store.labels.add_review(tid, "pager", "clear")  # withdrawn: to do again
    db.execute("INSERT INTO triage_priority SELECT unnest(?), unnest(?), '{}', 'test', now()",
               [ids[::4], [float(i % 2) for i in range(len(ids[::4]))]])
    try:
        todo = [r["trajectory_id"] for r in queue.queue_items("pager", limit=len(every), state="todo")]
        assert todo == [t for t in by_creation if t not in set(ids[10:40])]
        for filters in ({}, {"state": "todo"}, {"state": "done"}, {"task": "a", "state": "todo"},
                        {"order": "priority"}, {"order": "contradicted"}, {"order": "priority", "state": "todo"}):
            total = queue.queue_count("pager", **filters)
            whole = queue.queue_items("pager", limit=total, **filters)
            assert len(whole) == total > 0, filters
            for offset in (0, 1, 29, total // 2, total - 5):
                assert queue.queue_items("pager", offset=offset, limit=12, **filters) == whole[offset:offset + 12], \
                    (filters, offset)
    finally:
        db.execute("DELETE FROM triage_priority")


def test_the_neighbour_is_the_item_paging_shows_in_every_order_with_ties_gaps_and_long_steps(big_store):
    """`n` / `b` read the rows past the current item's sort key: on priorities that tie and are
    missing (NULLs last), in a campaign's order, with steps of several items and past either end, the
    neighbour is the item the queue's pages put `delta` places away."""
    queue = big_store.queue
    ids = [r["trajectory_id"] for r in queue.queue_items("far", limit=600, task="a")]
    # three priority values over every third item of the first 600: ties everywhere, the rest NULL
    big_store.db.execute("DELETE FROM triage_priority")
    big_store.db.execute(
        "INSERT INTO triage_priority SELECT unnest(?), unnest(?), '{}', 'test', now()",
        [ids[::3], [float(i % 3) / 2 for i in range(len(ids[::3]))]])
    campaign = big_store.sessions.create_session("keyset", "verdicts", list(reversed(ids[:300])), ["far"])
    try:  # the campaign stays: nothing else here reads campaigns
        for filters in ({"order": "priority"}, {"order": "priority", "task": "a"},
                        {"session_id": campaign}, {"session_id": campaign, "order": "priority"}):
            total = queue.queue_count("far", **filters)
            rows = [r["trajectory_id"] for r in queue.queue_items("far", limit=total, **filters)]
            for at in (0, 1, 150, 199, 200, 201, total - 2, total - 1):
                for delta in (-7, -1, 0, 1, 3):
                    want = None if at + delta >= total else (rows[max(0, at + delta)], max(0, at + delta))
                    assert queue.queue_neighbour(rows[at], delta, "far", **filters) == want, (filters, at, delta)
    finally:
        big_store.db.execute("DELETE FROM triage_priority")
