"""The curation board one page at a time (issue 11): a page, with or without a state filter, is the
same slice of the full board (same rows, states and order), and the Curation tab holds one page."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from databases import own_copy

from reviewer.components.curation_board import CurationBoard
from reviewer.review_state import ReviewState
from reviewer.services.curation import BOARD_FILTERS, curation_board, curation_page
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)


def at(minutes):
    return T0 + timedelta(minutes=minutes)


def history(store, tid, *events, session_id=None):
    """Curation events (reviewer, event, value) one minute apart."""
    for i, (who, event, value) in enumerate(events):
        store.labels.add_curation_event(tid, who, event, value, session_id=session_id, created_at=at(i + 1))


@pytest.fixture(scope="module")
def curated_template(tmp_path_factory):
    """The demo store with every curation state, a trajectory with events that is still a draft, and
    revisions without any event; built once, closed, and copied for each test (curated)."""
    path = tmp_path_factory.mktemp("board") / "board.duckdb"
    store = Store(path)
    seed_demo_if_empty(store)
    ids = [r["trajectory_id"] for r in curation_board(store)]
    revise, audits = ("rev", "revise", None), [("aud1", "audit", "approve"), ("aud2", "audit", "approve")]
    store.labels.add_revision(ids[1], 0, "rev", text="revised", created_at=at(0))  # revised, by a revision row only
    history(store, ids[3], revise, ("aud1", "audit", "request_changes"))  # changes_requested
    history(store, ids[5], revise, *audits)  # voting
    history(store, ids[7], revise, *audits, *[(w, "vote", "accept") for w in ("v1", "v2", "v3")])  # accepted
    history(store, ids[9], revise, *audits, ("v1", "vote", "reject"))  # rejected
    history(store, ids[11], ("aud1", "audit", "approve"))  # an event, but no revision: still a draft
    store.labels.add_revision(ids[-1], 1, "rev", text="last", created_at=at(0))
    history(store, ids[-1], ("aud1", "audit", "approve"))  # revised, one audit so far
    sid = store.sessions.create_session("board-pilot", "curation", ids[:20], ["rev", "aud1", "aud2"], blind=True)
    history(store, ids[13], revise, session_id=sid)  # revised in the session
    store.close()
    return path, ids, sid


@pytest.fixture
def curated(curated_template, tmp_path):
    """This test's own copy of the curated board (a test adds votes)."""
    path, ids, sid = curated_template
    store = Store(own_copy(path, tmp_path))
    yield store, ids, sid
    store.close()


def wanted(board, state):
    if state == "all":
        return board
    if state == "not draft":
        return [r for r in board if r["state"] != "draft"]
    return [r for r in board if r["state"] == state]


@pytest.mark.parametrize("scope", [{}, {"task": "a"}, {"session": "board-pilot"}])
def test_a_page_of_the_board_is_the_slice_of_the_full_board(curated, scope):
    store = curated[0]
    full = curation_board(store, **scope)
    states = {r["state"] for r in full}
    if not scope:
        assert states == {"draft", "revised", "changes_requested", "voting", "accepted", "rejected"}
    for state in BOARD_FILTERS:
        expected = wanted(full, state)
        for offset, limit in ((0, 5), (5, 5), (3, 1), (max(0, len(expected) - 3), 10), (len(expected) + 4, 10)):
            rows, total = curation_page(store, state=state, offset=offset, limit=limit, **scope)
            assert total == len(expected), (state, scope)
            assert rows == expected[offset:offset + limit], (state, scope, offset)


def test_a_draft_with_events_is_counted_as_a_draft(curated):
    store, ids, _ = curated
    drafts, total = curation_page(store, state="draft", limit=1000)
    assert ids[11] in [r["trajectory_id"] for r in drafts] and total == len(ids) - 7
    assert ids[11] not in [r["trajectory_id"] for r in curation_page(store, state="not draft", limit=1000)[0]]


def test_the_tab_holds_one_page_and_paging_reaches_the_last_trajectory(curated):
    store, ids, _ = curated
    state = ReviewState(store, reviewer="kai")
    state.open_first()
    board = CurationBoard(state=state)
    board.refresh()
    table = board.table
    assert table.total == len(ids) > table.page_size
    assert len(table.rows) == len(board.table._table.rows) == table.page_size
    table.go_to_page(10**6)
    assert table.rows[-1]["trajectory_id"] == ids[-1]
    assert len(table._table.rows) <= table.page_size
    assert table.page * table.page_size + len(table.rows) == len(ids)
    table._table._handle_msg({"key": table.rows[-1]["trajectory_id"]})  # the browser's message for a click on the last row
    assert state.item.trajectory_id == ids[-1]

    table.curation_state = "accepted"
    assert [r["trajectory_id"] for r in table.rows] == [ids[7]] and table.total == 1 and table.page == 0
    assert "accepted" in [r["state"] for r in board.table._table.rows]
    table.curation_state = "not draft"
    assert table.total == 7 and {r["state"] for r in table.rows} >= {"revised", "voting", "rejected"}


def test_a_new_curation_event_refreshes_the_page(curated):
    store, ids, _ = curated
    state = ReviewState(store, reviewer="zoe")
    state.open_item(trajectory_id=ids[5])  # voting
    board = CurationBoard(state=state)
    board.table.curation_state = "voting"
    assert [r["trajectory_id"] for r in board.table.rows] == [ids[5]]
    for who in ("zoe", "yan", "xia"):
        state.reviewer = who
        state.writer.save("curation_event", event="vote", value="accept", comment=None)
    assert board.table.rows == [] and board.table.total == 0
