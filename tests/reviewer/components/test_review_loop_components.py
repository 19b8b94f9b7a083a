"""The review loop's widgets (issue 19, finding 8), each bound to a review state on a seeded store:
buttons say what they save and which item they act on, the merge form starts from the disputed
labels and needs a comment, Other reviewers follows labels saved elsewhere, playback stops on a new
item, "Compare with" offers the same task, the address keeps the typed name, and every button of
the page has a title."""
from __future__ import annotations

import threading
from urllib.parse import parse_qs

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc
from served_doc import ServedDoc

from layouts import create_app
from layouts.audit import LazyTab
from layouts.identity import session_identity
from reviewer.components.address import ItemAddress
from reviewer.components.conflicts import ConflictQueue
from reviewer.components.controls import Controls
from reviewer.components.curation_board import CurationBoard
from reviewer.components.feedback import OthersView
from reviewer.components.preference_form import PreferenceForm
from reviewer.components.queue import QueueView
from reviewer.components.review_form import ReviewForm
from reviewer.components.spectrum_list import SpectrumListView
from reviewer.components.trajectory_player import TrajectoryPlayer
from reviewer.review_state import ReviewState
from reviewer.services import background
from reviewer.services.conflicts import conflict_queue
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The real page on a seeded file, for the test that only reads it (its buttons' titles)."""
    path = tmp_path_factory.mktemp("loop") / "loop.duckdb"
    store = Store(path)
    seed_demo_if_empty(store)
    template = create_app(path)
    template.main[0].get_root(Document())
    yield template
    store.close()


@pytest.fixture
def db(demo_store, wait_for_background_renders):
    """This test's own copy of the seeded file: the tests write labels, spectra and trajectories, which
    must not reach the next test."""
    yield demo_store
    wait_for_background_renders()  # no background read left on the store closed next


def queue(db, task=None):
    return db.queue.queue_items(limit=100, **({"task": task} if task else {}))


def opened(db, name, trajectory_id, **params) -> ReviewState:
    state = ReviewState(db, reviewer=name, **params)
    assert state.open_item(trajectory_id=trajectory_id)
    return state


def test_the_verdict_buttons_say_what_they_save_and_undo_names_the_item(db):
    no = next(r for r in queue(db, "a") if r["answer"] == "NO")
    s = opened(db, "ari", no["trajectory_id"])
    form = ReviewForm(state=s)
    assert form._override.label == "Override → YES (o)"
    assert "Reject" in form._reject.label and "no label" in form._reject.label
    assert form._undo.disabled and "Nothing to undo" in form._undo.label
    s.writer.save("verdict", action="approve")
    assert not form._undo.disabled
    assert "approve" in form._undo.label and s.item.subject in form._undo.label
    s.step_item(+1)  # another item: `u` would withdraw nothing here, and the button says so
    assert form._undo.disabled and s.item.subject in form._undo.label


def test_the_merge_form_starts_from_the_disputed_labels_and_needs_a_comment(db):
    tid = next(r for r in queue(db, "verify") if r["answer"] == "GALAXY")["trajectory_id"]
    db.labels.add_review(tid, "ann", "approve")
    db.labels.add_review(tid, "bo", "override", {"type": "QSO", "z": 0.37})
    s = ReviewState(db, reviewer="mia", blind=False)
    form = ConflictQueue(state=s)
    form.refresh()
    form._choose(f"trajectory:{tid}")
    assert [c["action"] for c in form.choices] == ["approve", "override"]
    # the corrected class and z start at the disputed correction, never at "STAR z=0"
    assert (form._type.value, form._z.value) == ("QSO", pytest.approx(0.37))
    assert form._action.value == "approve"  # the first disputed label
    assert not form._type.visible  # shown for an override only
    form._start.value = 1
    assert form._action.value == "override" and form._type.value == "QSO" and form._type.visible
    form._start.value = 0
    assert form._action.value == "approve" and form._type.value == "GALAXY"
    assert form._z.value == pytest.approx(0.3687, abs=1e-3)
    assert "may resolve" in form._who.object
    assert form._button.disabled  # no comment yet
    assert form.submit() is None and "comment" in s.error
    assert tid in [i["item_id"] for i in conflict_queue(db)]
    form._comment.value_input = form._comment.value = "Broad Mg II at 3830 A: a QSO."
    assert not form._button.disabled
    assert form.submit() is not None
    assert tid not in [i["item_id"] for i in conflict_queue(db)]


def test_the_curation_form_says_which_item_and_step_it_revises(db):
    row = queue(db, "cv")[1]
    s = opened(db, "cai", row["trajectory_id"])
    board = CurationBoard(state=s)
    s.go_to_step(2)
    assert "step 3" in board.target_text() and s.item.subject in board.target_text()
    board.act("audit", "approve")
    assert "draft" in s.error and s.writer.ack is None


def test_other_reviewers_follow_labels_saved_elsewhere(db):
    tid = queue(db, "mg")[2]["trajectory_id"]
    ola, pia = opened(db, "ola", tid), opened(db, "pia", tid)
    view = OthersView(state=ola)
    ola.writer.save("verdict", action="approve")
    assert "No other reviewer" in view._pane.object
    pia.writer.save("verdict", action="reject")  # another session (another browser)
    assert ola.poll_store()  # what the page's periodic callback does
    assert "pia" in view._pane.object


def test_other_reviewers_lines_name_the_label(db):
    row = next(r for r in queue(db, "mg")[6:] if r["answer"] in ("YES", "NO"))
    tid, answer = row["trajectory_id"], row["answer"]
    other = "NO" if answer == "YES" else "YES"
    ada, bo, cy = opened(db, "ada", tid), opened(db, "bo", tid), opened(db, "cy", tid, blind=False)
    ada.writer.save("verdict", action="approve")
    bo.writer.save("verdict", action="override")  # the other answer
    view = OthersView(state=cy)
    assert f"<b>ada</b>: approve ({answer})" in view._pane.object
    assert f"<b>bo</b>: override → {other}" in view._pane.object


def test_a_pages_own_verdict_is_not_read_again_as_one_stored_elsewhere(db):
    """The queue re-reads its page with a verdict's acknowledgement; the page's next poll does not re-read
    it for the same verdict (~150-300 ms of the page thread at 1M trajectories). A verdict stored
    elsewhere before the page's own still moves the lists at the poll."""
    first, second = (r["trajectory_id"] for r in queue(db, "mg")[4:6])
    ola, pia = opened(db, "ola", first), opened(db, "pia", first)
    ola.poll_store()
    view = QueueView(state=ola)
    reads = []
    view.fetch = lambda offset, limit: reads.append(offset) or QueueView.fetch(view, offset, limit)
    ola.writer.save("verdict", action="approve")
    assert ola.writer.ack is not None and len(reads) == 1  # with the acknowledgement (outside a served page: at once)
    assert not ola.poll_store() and len(reads) == 1
    pia.writer.save("verdict", action="reject")  # another browser, before ola's next verdict
    assert ola.open_item(trajectory_id=second)
    reads.clear()
    ola.writer.save("verdict", action="approve")
    assert len(reads) == 1 and ola.poll_store() and len(reads) == 2
    assert ola.store_mark == db.queue.content_mark()


def test_a_served_pages_queue_reads_again_off_its_thread_and_an_older_read_never_overwrites_a_newer(db):
    """After a verdict, or a write elsewhere, a served page's queue reads its page on the "lists" lane: the
    page's thread stays free for the reviewer's next key (at 1M trajectories these reads take 60-300 ms).
    What was read goes in at the next tick, unless a newer read (the reviewer's filter) went in first."""
    first, second = (r["trajectory_id"] for r in queue(db, "mg")[6:8])
    # an open review (not blind): ola may list the items pia labelled
    ola, pia = opened(db, "ola", first, blind=False), opened(db, "pia", first)
    ola.filters.reviewed_by = "pia"
    view = QueueView(state=ola)
    before, readers, doc = view.total, [], ServedDoc()
    view.fetch = lambda offset, limit: readers.append(threading.current_thread().name) or QueueView.fetch(
        view, offset, limit)
    pia.writer.save("verdict", action="approve")  # another browser
    with set_curdoc(doc):
        assert ola.poll_store()
    assert view.total == before  # nothing read on the page's thread
    doc.run(1)
    assert [name.split("_")[0] for name in readers] == ["specreview-lists"]
    assert view.total == before + 1 and first in [r["trajectory_id"] for r in view.rows]

    assert pia.open_item(trajectory_id=second)
    pia.writer.save("verdict", action="reject")
    with set_curdoc(doc):
        assert ola.poll_store()
    background.wait_for("lists")  # read with the filter then on screen (reviewed by pia)...
    ola.filters.reviewed_by = ""  # ...then the reviewer clears it: read and put in at once
    everything = view.total
    doc.run(1)  # the earlier read's result, after: not put in
    assert view.total == everything > before + 2 and ola.filters.reviewed_by == ""


def test_the_spectrum_list_rereads_for_new_spectra_not_for_every_verdict_stored_elsewhere(db):
    """Each open page polls the store; with K reviewers, each verdict would make K-1 pages re-read a
    list that shows no verdicts. The queue follows verdicts; the Spectra list follows spectra."""
    tid = queue(db, "mg")[3]["trajectory_id"]
    ola, pia = opened(db, "ola", tid), opened(db, "pia", tid)
    spectra = SpectrumListView(state=ola)
    before = spectra.total
    reads = []
    spectra.fetch = lambda offset, limit: reads.append(offset) or SpectrumListView.fetch(spectra, offset, limit)
    pia.writer.save("verdict", action="approve")
    assert ola.poll_store() and reads == []
    db.spectra.add_spectrum({**db.spectra.get_spectrum(ola.item.spectrum_id), "spectrum_id": "added-elsewhere"})
    assert ola.poll_store() and reads == [0]
    assert spectra.total == before + 1 == db.spectra.count_spectra()


def test_playback_stops_on_a_new_item_and_a_late_tick_is_ignored(db):
    s = opened(db, "pat", queue(db, "a")[3]["trajectory_id"])
    player = TrajectoryPlayer(state=s)
    steps = player._player
    assert all(title for _, _, title in steps.buttons)
    strip = player.strip._buttons
    assert len(strip.titles) == len(strip.labels) and all(strip.titles)
    steps.playing = True
    old_key = steps.item_key
    steps._handle_msg({"action": "next", "key": old_key})
    assert s.step_index == 1
    s.step_item(+1)
    assert steps.playing is False and s.step_index == 0
    steps._handle_msg({"action": "next", "key": old_key})  # a tick sent before the new item arrived
    assert s.step_index == 0
    steps._handle_msg({"action": "last", "key": steps.item_key})
    assert s.step_index == len(s.steps) - 1


def test_compare_with_offers_the_same_task_only(db):
    from agents.trajectory import AgentInfo

    s = opened(db, "quy", queue(db, "wd")[4]["trajectory_id"])
    twin = s.item.trajectory.model_copy(deep=True, update={"id": "twin-wd-" + s.item.trajectory_id[:8],
                                                           "agent": AgentInfo(name="vet", backend="openai", model="m2")})
    db.trajectories.save_trajectory(twin)
    s.open_item(trajectory_id=s.item.trajectory_id)
    form = PreferenceForm(state=s)
    assert list(form._other.options.values()) == [twin.id]


def test_the_address_keeps_the_typed_name(db):
    s = opened(db, "", queue(db)[0]["trajectory_id"])
    address = ItemAddress(s, base_query={"trajectory": "old"})
    assert "reviewer" not in parse_qs(address.query) and address.remember == ""
    s.reviewer = "tia"
    assert parse_qs(address.query)["reviewer"] == ["tia"] and address.remember == "tia"
    login = opened(db, "alma", queue(db)[0]["trajectory_id"], login=True)
    assert "reviewer" not in parse_qs(ItemAddress(login, base_query={}).query)
    assert ItemAddress(login, base_query={}).remember == ""


def test_a_remembered_name_is_used_when_the_address_has_none():
    assert session_identity("", remembered="tia").reviewer == "tia"
    assert session_identity("ann", remembered="tia").reviewer == "ann"
    refused = session_identity("", remembered="<img src=x>")
    assert refused.reviewer == "" and refused.problem == ""  # a bad cookie is dropped, not shown


def test_every_button_on_the_page_has_a_title(app):
    roots = [*app.header, *app.sidebar, *app.main, *app.right_sidebar]
    for root in roots:
        for tab in root.select(LazyTab):
            tab.open()
    buttons = [b for root in roots for b in root.select(pn.widgets.Button)]
    assert len(buttons) > 15
    assert any(isinstance(tab.component, Controls) for root in roots for tab in root.select(LazyTab))
    untitled = [b.label for b in buttons if not b.description]
    assert untitled == []
