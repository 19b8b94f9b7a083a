"""Finding 3: one blind rule (LabelService.sees_others) for every list a reviewer sees: the Conflicts
table (verdict and VI conflicts: who said what, and why), its detail, and the queue's ≠ column and
filter. A reviewer with no label of their own on an item sees none of that, not even that it is disputed
(the conflict is not listed, nor counted); once they label, all. Issue 45 item 4 walks every tab:
tests/security/test_blind_walk.py."""
from __future__ import annotations

import pytest

from reviewer.components.conflicts import ConflictQueue
from reviewer.review_state import ReviewState
from reviewer.services.conflicts import conflict_queue, sync_verdict_states
from reviewer.services.labels import LabelRefused


@pytest.fixture
def disputed(demo_store):
    """ann approves and bo rejects a vet item; ann and bo give a spectrum different VI classes (each test
    its own copy of the demo database)."""
    store = demo_store
    row = next(r for r in store.queue.queue_items(limit=100) if r["task"] != "verify")
    store.labels.add_review(row["trajectory_id"], "ann", "approve")
    store.labels.add_review(row["trajectory_id"], "bo", "reject", comment="no Balmer jump")
    spectrum = store.spectra.list_spectra(limit=3)[2]["spectrum_id"]
    store.labels.add_vi_label(spectrum, "ann", quality=4, spectype="STAR", z=0.0, comment="clear M dwarf")
    store.labels.add_vi_label(spectrum, "bo", quality=4, spectype="GALAXY", z=0.3, comment="emission lines")
    # written straight to the store, as an import would: the app syncs such labels when a page loads
    # (this test had relied on another test's read doing it while the module shared one database)
    sync_verdict_states(store)
    return store, row["trajectory_id"], spectrum


def conflicts_seen_by(store, reviewer, blind=True):
    view = ConflictQueue(state=ReviewState(store, reviewer=reviewer, blind=blind))
    view.refresh()
    return view


def test_a_reviewer_without_a_label_sees_no_names_labels_or_reasons(disputed):
    """Not even that the items are disputed, nor by how many (the conflicts are neither listed nor counted)."""
    store = disputed[0]
    view = conflicts_seen_by(store, "cy")
    assert view.items == [] and view.total == 0 and view._table.rows == [] and view._count.object == ""
    assert "blind review" in view._detail.object
    for secret in ("ann", "bo", "GALAXY", "Balmer", "M dwarf", "disagree"):
        assert secret not in view._detail.object + view._count.object


def test_a_reviewer_sees_a_conflict_once_they_labelled_it_and_only_that_one(disputed):
    store, tid, spectrum = disputed
    view = conflicts_seen_by(store, "ann")  # ann labelled both
    assert {i["item_id"] for i in view.items} == {tid, spectrum} and not any(i["hidden"] for i in view.items)
    assert all(row["why"] for row in view._table.rows)
    store.labels.add_review(tid, "dee", "approve")
    dee = conflicts_seen_by(store, "dee")
    assert [i["item_id"] for i in dee.items] == [tid] and dee.total == 1 and "1-1 of 1" in dee._count.object
    assert "ann" in dee._detail.object and "Balmer" in dee._detail.object


def test_open_review_shows_everything(disputed):
    store = disputed[0]
    view = conflicts_seen_by(store, "cy", blind=False)
    assert not any(i["hidden"] for i in view.items)


def test_a_hidden_conflict_cannot_be_resolved_blind(disputed):
    """Not listed to a merger without a label of their own, and refused when sent all the same (a forged
    widget event carrying the item)."""
    store, tid, _ = disputed
    view = conflicts_seen_by(store, "cy")
    assert view.current is None and view.submit() is None
    item = next(i for i in conflict_queue(store) if i["item_id"] == tid)
    before = len(store.reviews.latest_resolutions("trajectory", None))
    assert view.state.writer.save("resolution", item=item, action="approve", label=None, comment="ann is right") is None
    assert "blind review" in view.state.error.lower()
    assert len(store.reviews.latest_resolutions("trajectory", None)) == before


def test_the_queue_shows_disagreement_only_where_i_have_a_verdict(disputed):
    store, tid, _ = disputed
    cy = ReviewState(store, reviewer="cy")
    row = next(r for r in store.queue.queue_items("cy", limit=200, **cy.queue_args()) if r["trajectory_id"] == tid)
    assert row["disagreement"] is False
    assert store.queue.queue_count("cy", **{**cy.queue_args(), "disagreement": True}) == 0
    ann = ReviewState(store, reviewer="ann")
    assert tid in [r["trajectory_id"] for r in store.queue.queue_items("ann", limit=200,
                                                                        **{**ann.queue_args(), "disagreement": True})]


def test_a_resolution_needs_a_merger_comment(disputed):
    store, tid, _ = disputed
    view = conflicts_seen_by(store, "ann")
    view.selected = next(n for n, i in enumerate(view.items) if i["item_id"] == tid)
    view._comment.value = "   "
    view.submit()
    assert "comment" in view.state.error
    with pytest.raises(LabelRefused):
        view.state.labels.write_resolution("ann", view.current, "approve", None, "")
