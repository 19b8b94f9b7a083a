"""The review loop's traps (issue 19, finding 8), through the review state and the label service on a
seeded store: undo acts on the item on screen and says what it withdraws; the form clears after each
save and after undo; a binary task's override starts at the other answer; a stale name problem clears;
curation events that cannot count are refused with the reason; a preference compares one task; a
conflict's form starts from the disputed labels."""
from __future__ import annotations

import pytest

from agents.trajectory import AgentInfo
from reviewer.review_state import ReviewState
from reviewer.services.conflicts import conflict_queue, disputed_choices
from reviewer.services.curation import curation_status, event_refusal
from reviewer.services.labels import LabelRefused, default_correction


@pytest.fixture
def db(demo_store):
    """Each test its own copy of the seeded demo database."""
    return demo_store


def queue(db, task=None):
    return db.queue.queue_items(limit=100, **({"task": task} if task else {}))


def opened(db, name, trajectory_id, **params) -> ReviewState:
    state = ReviewState(db, reviewer=name, **params)
    assert state.open_item(trajectory_id=trajectory_id)
    return state


def other(answer: str) -> str:
    return "NO" if answer == "YES" else "YES"


# ---- undo acts on the item on screen ------------------------------------------------------------
def test_undo_acts_only_on_the_item_on_screen_and_says_which(db):
    rows = queue(db, "a")
    s = opened(db, "uma", rows[0]["trajectory_id"])
    first, first_subject = s.item.trajectory_id, s.item.subject
    assert rows[0]["object_id"] in first_subject and "a" in first_subject
    s.writer.save("verdict", action="approve")
    assert s.writer.undoable is not None and s.writer.undoable.trajectory_id == first
    s.open_item(trajectory_id=rows[1]["trajectory_id"])
    assert s.writer.undoable is None  # nothing of mine to withdraw on this item
    assert s.writer.undo() is None
    assert "Nothing to undo" in s.error and s.item.subject in s.error
    assert db.labels.latest_review(first, "uma")["action"] == "approve"  # the previous item's verdict stands

    s.writer.save("verdict", action="reject")  # the newest verdict of the session is now on the second item
    s.open_item(trajectory_id=first)
    assert s.writer.undoable.trajectory_id == first and "approve" in s.writer.undoable.what
    ack = s.writer.undo()
    assert ack.trajectory_id == first
    assert "'approve'" in ack.text() and "withdrawn" in ack.text() and first_subject in ack.text()
    assert db.labels.latest_review(first, "uma") is None
    assert db.labels.latest_review(rows[1]["trajectory_id"], "uma")["action"] == "reject"


def test_every_verdict_acknowledgement_names_its_item(db):
    s = opened(db, "una", queue(db, "wd")[0]["trajectory_id"])
    ack = s.writer.save("verdict", action="approve")
    assert s.item.subject in ack.text()


# ---- the form clears ----------------------------------------------------------------------------
def test_an_undone_overrides_comment_is_not_stored_with_the_next_approval(db):
    row = queue(db, "mg")[0]
    s = opened(db, "vic", row["trajectory_id"])
    s.draft.label = {"answer": other(s.item.agent_label["answer"])}
    s.draft.comment = "the agent missed the Mg b triplet"
    assert s.writer.save("verdict", action="override") is not None
    assert s.draft.comment == "" and s.draft.label == default_correction(s.item.trajectory.task, s.item.agent_label)
    s.draft.comment = "half-typed, then undone"
    s.writer.undo()
    assert s.draft.comment == ""
    s.writer.save("verdict", action="approve")
    latest = db.labels.latest_review(row["trajectory_id"], "vic")
    assert latest["action"] == "approve" and latest["comment"] is None


# ---- binary tasks: the override starts at the other answer --------------------------------------
def test_a_binary_override_starts_at_the_other_answer(db):
    row = next(r for r in queue(db, "cv") if r["answer"] in ("YES", "NO"))
    s = opened(db, "wes", row["trajectory_id"])
    assert s.draft.label == {"answer": other(row["answer"])}
    ack = s.writer.save("verdict", action="override")  # `o` at once saves the other answer, never a refusal
    assert ack is not None and db.labels.latest_review(row["trajectory_id"], "wes")["label"] == {"answer": other(row["answer"])}
    # a verify item starts with no corrected label (never the agent's own answer): `o` asks for one
    verify = queue(db, "verify")[0]
    s.open_item(trajectory_id=verify["trajectory_id"])
    assert s.draft.label == {}
    assert s.writer.save("verdict", action="override") is None and "z tab" in s.error
    assert db.labels.latest_review(verify["trajectory_id"], "wes") is None


# ---- every acknowledgement names the label (issue 46, item 8) ---------------------------------
def test_acknowledgements_name_the_label_approved_or_corrected(db):
    row = next(r for r in queue(db, "cv") if r["answer"] in ("YES", "NO"))
    s = opened(db, "yan", row["trajectory_id"])
    answer = row["answer"]
    ack = s.writer.save("verdict", action="approve")
    assert f"verdict 'approve' ({answer}) on {s.item.subject}" in ack.text()
    ack = s.writer.save("verdict", action="override")
    assert f"verdict 'override' to {other(answer)} on" in ack.text()
    ack = s.writer.undo()
    assert f"undo: verdict 'override' to {other(answer)} withdrawn, back to 'approve' ({answer})" in ack.text()
    ack = s.writer.undo()
    assert f"undo: verdict 'approve' ({answer}) withdrawn" in ack.text()


def test_a_refused_vote_reads_a_vote():
    draft = curation_status([])
    assert "a vote counts only after" in event_refusal(draft, "ann", "vote", "accept")
    assert "an audit counts only after" in event_refusal(draft, "ann", "audit", "approve")


# ---- stale messages -----------------------------------------------------------------------------
def test_the_name_problem_clears_once_a_name_is_given(db):
    s = opened(db, "", queue(db)[0]["trajectory_id"])
    s.writer.save("verdict", action="approve")
    assert "name is needed" in s.error
    s.reviewer = "xena"
    assert s.error == ""


def test_a_problem_not_about_the_name_stays_when_a_name_is_given(db):
    s = opened(db, "", queue(db)[0]["trajectory_id"])
    s.error = "Spectrum x is not in the database."
    s.reviewer = "xavi"
    assert s.error == "Spectrum x is not in the database."


# ---- curation: what cannot count is refused with the reason -------------------------------------
def test_curation_events_that_cannot_count_are_refused_with_the_reason(db):
    tid = queue(db, "wd")[3]["trajectory_id"]
    before = len(db.labels.curation_events_for(tid, latest=False))
    s = opened(db, "quin", tid)
    assert s.writer.save("curation_event", event="audit", value="approve", comment=None) is None
    assert "draft" in s.error and "revis" in s.error
    assert s.writer.save("curation_event", event="vote", value="accept", comment=None) is None and "draft" in s.error
    assert len(db.labels.curation_events_for(tid, latest=False)) == before  # nothing stored

    call = next(st for st in s.steps if st.kind == "tool_call")
    s.go_to_step(call.index)
    assert s.writer.save("revision", text=(call.text or "") + " (checked)", tool_args=None, comment=None) is not None
    assert s.writer.save("curation_event", event="audit", value="approve", comment=None) is None and "independent" in s.error
    rex = opened(db, "rex", tid)
    assert rex.writer.save("curation_event", event="vote", value="accept", comment=None) is None
    assert "0 of 2" in rex.error
    assert rex.writer.save("curation_event", event="audit", value="approve", comment=None) is not None  # this one counts


def test_event_refusal_is_the_state_machines_answer():
    revised = [{"reviewer": "rev", "event": "revise", "value": None, "created_at": 1, "seq": 1}]
    status = curation_status(revised)
    assert event_refusal(curation_status([]), "ann", "audit", "approve")
    assert event_refusal(status, "rev", "audit", "approve")
    assert event_refusal(status, "ann", "audit", "approve") is None
    assert event_refusal(status, "ann", "vote", "accept")
    audited = revised + [{"reviewer": w, "event": "audit", "value": "approve", "created_at": 2 + i, "seq": 2 + i}
                         for i, w in enumerate(("ann", "bob"))]
    assert event_refusal(curation_status(audited), "cy", "vote", "accept") is None


# ---- preference: the same task only -------------------------------------------------------------
def test_a_preference_compares_two_trajectories_of_the_same_task(db):
    rows = queue(db, "a")
    s = opened(db, "yan", rows[2]["trajectory_id"])
    spectrum = s.item.spectrum_id
    verify = next(r for r in db.trajectories.trajectories_on_spectrum(spectrum) if r["task"] == "verify")
    assert s.writer.save("preference", other_id=verify["id"], outcome="win") is None and "same task" in s.error
    with pytest.raises(LabelRefused):
        s.labels.write_preference("yan", s.item.trajectory_id, verify["id"], "win", spectrum)
    twin = s.item.trajectory.model_copy(deep=True, update={"id": "twin-" + s.item.trajectory_id[:8],
                                                           "agent": AgentInfo(name="vet", backend="openai", model="m2")})
    db.trajectories.save_trajectory(twin)
    assert s.writer.save("preference", other_id=twin.id, outcome="tie") is not None


# ---- conflicts: the merger starts from the disputed labels --------------------------------------
def galaxy_conflict(db) -> dict:
    """The DESI galaxy's verify item (GALAXY z=0.3687): ann approves, bo overrides to QSO z=0.37."""
    tid = next(r for r in queue(db, "verify") if r["answer"] == "GALAXY")["trajectory_id"]
    if tid not in [i["item_id"] for i in conflict_queue(db)]:
        db.labels.add_review(tid, "ann", "approve")
        db.labels.add_review(tid, "bo", "override", {"type": "QSO", "z": 0.37})
    return next(i for i in conflict_queue(db) if i["item_id"] == tid)


def test_a_conflicts_choices_are_its_disputed_labels(db):
    item = galaxy_conflict(db)
    choices = disputed_choices(item)
    assert [(c["action"], c["label"].get("type")) for c in choices] == [("approve", "GALAXY"), ("override", "QSO")]
    assert choices[0]["label"]["z"] == pytest.approx(0.3687, abs=1e-3) and choices[0]["reviewers"] == ["ann"]
    assert choices[1]["label"]["z"] == pytest.approx(0.37) and "bo" in choices[1]["text"]


def test_who_may_resolve_is_said_and_a_resolution_needs_a_comment(db):
    s = ReviewState(db, reviewer="zoe", blind=False)
    item = galaxy_conflict(db)
    assert s.writer.save("resolution", item=item, action="reject", label=None, comment="   ") is None and "comment" in s.error
    rule = s.labels.who_may_resolve(None, blind=True)
    assert "may resolve" in rule and "comment" in rule and "own label" in rule
    sid = db.sessions.create_session("loop-merge", "verdicts", [item["item_id"]], ["ann", "bo"], blind=True)
    in_campaign = s.labels.who_may_resolve(db.sessions.get_session(sid), blind=True)
    assert "ann" in in_campaign and "loop-merge" in in_campaign


def test_a_verify_correction_of_the_agents_own_class_without_z_is_no_override():
    from reviewer.services.labels import validate_correction

    with pytest.raises(LabelRefused, match="must differ"):
        validate_correction("verify", {"type": "STAR", "z": None}, {"type": "STAR", "z": -0.0003})
    assert validate_correction("verify", {"type": "QSO", "z": None}, {"type": "STAR", "z": -0.0003})["type"] == "QSO"
