"""Finding 5: a label write the database refuses says so in the page at once (what failed, that
nothing was saved, what to do); no acknowledgement stays on screen for it; no row appears."""
from __future__ import annotations

import duckdb

from reviewer.components.feedback import AckView
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def test_a_refused_write_is_shown_and_no_acknowledgement_follows_it(tmp_path, wait_for_background_renders):
    path = tmp_path / "writes.duckdb"
    store = Store(path)
    seed_demo_if_empty(store)
    state = ReviewState(store, reviewer="ann")
    state.open_first()
    view = AckView(state=state)
    assert state.writer.save("verdict", action="approve") is not None
    assert "approve" in view._ack.object
    tid = state.item.trajectory_id
    wait_for_background_renders()
    store.close()  # the database goes away under the page (as a full disk or a lost mount would)
    assert state.writer.save("verdict", action="reject") is None
    assert "NOT SAVED" in state.error and "Nothing was stored" in state.error
    assert view._error.visible and "NOT SAVED" in view._error.object
    assert view._ack.object == ""  # the earlier acknowledgement is not left to look like this one's
    assert str(tmp_path) not in state.error  # no server path in the page
    with duckdb.connect(str(path), read_only=True) as db:
        rows = db.execute("SELECT reviewer, action FROM reviews WHERE trajectory_id = ?", [tid]).fetchall()
    assert rows == [("ann", "approve")]
