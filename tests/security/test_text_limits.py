"""Finding 9 (lengths): comment, note, VI comment and merger comment sizes are enforced where labels
are written, not only by the page's max_length: a 5 MB comment is refused and nothing is stored."""
from __future__ import annotations

import pytest

from reviewer.review_state import ReviewState
from reviewer.services.labels import TEXT_LIMITS

HUGE = "x" * 5_000_000


@pytest.fixture
def state(demo_store, wait_for_background_renders):
    """A review state on the test's own copy of the demo database (the tests store labels)."""
    st = ReviewState(demo_store, reviewer="ann")
    st.open_first()
    yield st
    wait_for_background_renders()


def counts(state) -> tuple[int, int, int]:
    store, item = state.store, state.item
    return (len(store.labels.reviews_for(item.trajectory_id)), len(store.labels.annotations_for(item.trajectory_id)),
            len(store.labels.vi_labels_for(item.spectrum_id)))


def test_huge_texts_are_refused_and_nothing_is_stored(state):
    before = counts(state)
    state.draft.comment = HUGE
    assert state.writer.save("verdict", action="approve") is None and "at most 2000" in state.error
    assert state.writer.save("note", comment=HUGE, flags=[]) is None and "at most 5000" in state.error
    state.error = ""
    assert state.writer.save("vi", quality=4, issues="", z=0.0, spectype="STAR", comment="y" * 101) is None
    assert "at most 100" in state.error
    assert counts(state) == before


def test_texts_at_the_limit_are_stored_whole(state):
    state.draft.comment = "c" * TEXT_LIMITS["comment"]
    ack = state.writer.save("verdict", action="approve")
    assert ack is not None
    assert state.store.labels.latest_review(state.item.trajectory_id, "ann")["comment"] == "c" * TEXT_LIMITS["comment"]
