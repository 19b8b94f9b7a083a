"""The review state and the label service without a browser: a real DuckDB file seeded with the demo
spectra and the shipped `rules` / FORMA trajectories, driven through the state's methods."""
from __future__ import annotations

from pathlib import Path

import pytest
from false_claims import add_contradicted_claims

import kb
from agents.trajectory import AgentInfo, Trajectory
from reviewer.label_writer import LABEL_KINDS
from reviewer.review_state import ReviewState
from reviewer.services.campaigns import create_campaign
from reviewer.services.conflicts import conflict_queue, verdict_for

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"


@pytest.fixture
def seeded_db(demo_store):
    """Each test its own copy of the seeded demo database."""
    return demo_store


def state_for(store, name, **params):
    state = ReviewState(store, reviewer=name, **params)
    assert state.open_first()
    return state


def other_answer(state) -> dict:
    return {"answer": "NO" if state.item.agent_label["answer"] == "YES" else "YES"}


def test_opens_on_the_first_queue_item_with_its_spectrum_and_trajectory(seeded_db):
    s = state_for(seeded_db, "alice")
    first = seeded_db.queue.queue_items(limit=1)[0]
    assert s.item.trajectory_id == first["trajectory_id"]
    assert s.item.spectrum is not None and s.item.spectrum_id == s.item.trajectory.spectrum_id


def test_steps_scores_and_verdicts_go_to_the_item_on_screen(seeded_db):
    s = state_for(seeded_db, "alice")
    tid = s.item.trajectory_id
    for _ in range(3):
        s.next_step()
    s.previous_step()
    assert s.step_index == 2
    s.writer.save("score", score=4)
    s.writer.save("verdict", action="approve")
    assert seeded_db.labels.latest_review(tid, "alice")["action"] == "approve"
    assert seeded_db.labels.latest_rating(tid, "alice")["score"] == 4
    assert "verdict 'approve'" in s.writer.ack.text() and s.writer.ack.trajectory_id == tid
    s.step_item(+1)
    assert s.item.trajectory_id != tid and s.step_index == 0


def test_an_override_equal_to_the_agent_answer_is_refused(seeded_db):
    s = state_for(seeded_db, "bea")
    tid = s.item.trajectory_id
    assert s.draft.label == other_answer(s)  # a yes/no override starts at the other answer
    s.draft.label = dict(s.item.agent_label)
    assert s.writer.save("verdict", action="override") is None
    assert "must differ from the agent's answer" in s.error and seeded_db.labels.latest_review(tid, "bea") is None
    s.draft.label = other_answer(s)
    ack = s.writer.save("verdict", action="override")
    assert ack is not None and seeded_db.labels.latest_review(tid, "bea")["label"] == other_answer(s)


def test_a_verify_draft_never_carries_over_from_the_previous_item(seeded_db):
    s = state_for(seeded_db, "cem")
    verify = [r for r in seeded_db.queue.queue_items(task="verify", limit=100)]
    galaxy = next(r for r in verify if r["answer"] == "GALAXY")
    star = next(r for r in verify if r["answer"] == "STAR")
    s.open_item(trajectory_id=galaxy["trajectory_id"])
    s.draft.label = {"type": "QSO", "z": 1.2}
    s.open_item(trajectory_id=star["trajectory_id"])
    assert s.draft.label == {}  # nothing corrected yet: not the QSO typed on the galaxy, nor the star's own answer
    assert s.writer.save("verdict", action="override") is None and "z tab" in s.error


def test_undo_restores_the_verdict_before_as_a_new_row(seeded_db):
    s = state_for(seeded_db, "dan")
    tid = s.item.trajectory_id
    s.writer.save("verdict", action="approve")
    s.draft.label = other_answer(s)
    s.writer.save("verdict", action="override")
    s.writer.undo()
    assert seeded_db.labels.latest_review(tid, "dan")["action"] == "approve"
    s.writer.undo()
    assert seeded_db.labels.latest_review(tid, "dan") is None  # withdrawn
    history = seeded_db.labels.label_history("reviews", trajectory_id=tid)
    assert [r["action"] for r in history if r["reviewer"] == "dan"] == ["approve", "override", "approve", "clear"]
    assert s.writer.undo() is None and "Nothing to undo" in s.error


def test_opening_a_spectrum_opens_its_trajectory_or_disables_the_form(seeded_db, tmp_path):
    s = state_for(seeded_db, "eve")
    spectrum_id = seeded_db.spectra.list_spectra(limit=100)[-1]["spectrum_id"]
    s.open_item(spectrum_id=spectrum_id)
    assert s.item.spectrum_id == spectrum_id and s.item.trajectory.spectrum_id == spectrum_id
    # a spectrum no agent has run on: shown, but nothing can be labelled
    # (the same file, so the same content hash: a stored hash the file does not have is refused)
    seeded_db.spectra.add_spectrum({**seeded_db.spectra.get_spectrum(spectrum_id), "spectrum_id": "bare"})
    s.open_item(spectrum_id="bare")
    assert s.item.trajectory is None and "No agent trajectory" in s.item.why_not_reviewable
    assert s.writer.save("verdict", action="approve") is None and "No agent trajectory" in s.error


def test_approve_and_override_to_the_same_answer_agree_everywhere(seeded_db):
    a, b = state_for(seeded_db, "fay"), state_for(seeded_db, "gus")
    verify = seeded_db.queue.queue_items(task="verify", limit=1)[0]["trajectory_id"]
    a.open_item(trajectory_id=verify), b.open_item(trajectory_id=verify)
    a.writer.save("verdict", action="approve")
    b.draft.label = {"type": b.item.agent_label["type"], "z": (b.item.agent_label.get("z") or 0) + 0.0001}
    assert b.writer.save("verdict", action="override") is None  # within dz/(1+z) < 0.0033: the same answer
    b.draft.label = {"type": "QSO", "z": 2.0}
    b.writer.save("verdict", action="override")
    row = seeded_db.queue.queue_items("fay", task="verify", limit=1)[0]
    in_conflicts = verify in [i["item_id"] for i in conflict_queue(seeded_db)]
    assert row["disagreement"] is True and in_conflicts


def test_two_reviewers_disagree_and_a_merger_resolves(seeded_db):
    alice, bob = state_for(seeded_db, "hal"), state_for(seeded_db, "ida")
    alice.step_item(+3), bob.step_item(+3)
    tid = alice.item.trajectory_id
    assert bob.item.trajectory_id == tid
    alice.writer.save("verdict", action="approve")
    assert bob.labels.others_visible("ida", tid, blind=True) is None  # blind until bob saves
    bob.writer.save("verdict", action="reject")
    assert [r["reviewer"] for r in bob.labels.others_visible("ida", tid, blind=True)] == ["hal"]
    item = next(i for i in conflict_queue(seeded_db) if i["item_id"] == tid)
    assert item["object_id"] and item["survey"]  # rows name the object, not a hex id
    carol = state_for(seeded_db, "jo", blind=False)  # blind, a merger labels first (tests/security/test_blind_review.py)
    carol.writer.save("resolution", item=item, action="reject", label=None, comment="No Balmer lines at all: reject.")
    assert tid not in [i["item_id"] for i in conflict_queue(seeded_db)]
    assert verdict_for(seeded_db, tid)["final"]["action"] == "reject"
    assert not seeded_db.queue.queue_items("jo", limit=1000, disagreement=True) or \
        tid not in [r["trajectory_id"] for r in seeded_db.queue.queue_items("jo", limit=1000, disagreement=True)]


def test_a_reviewer_name_is_required_and_checked(seeded_db):
    s = state_for(seeded_db, "")
    before = seeded_db.labels.count_labels("reviews")
    s.writer.save("verdict", action="approve")
    assert seeded_db.labels.count_labels("reviews") == before and "name is needed" in s.error
    s.reviewer = "<img src=x onerror=alert(1)>"
    s.writer.save("verdict", action="approve")
    assert seeded_db.labels.count_labels("reviews") == before and "may hold letters" in s.error


# ---- one write path: every label kind through `save` --------------------------------------------
def test_every_label_kind_round_trips_through_save_to_the_store(seeded_db):
    """Each kind of LABEL_KINDS saved through `ReviewState.save` and read back from the store: a kind
    added to the table without a case here fails the first assert."""
    db = seeded_db
    tid = add_contradicted_claims(db)
    claim = next(c for c in db.claims.claims_for(tid) if c["verdict"] == "contradicted")
    s = ReviewState(db, reviewer="rho", blind=False)
    assert s.open_item(trajectory_id=tid)
    s.go_to_step(claim["step_idx"])
    step, spectrum_id = s.step, s.item.spectrum_id
    twin = s.item.trajectory.model_copy(deep=True, update={"id": "twin-" + tid[:8],
                                                           "agent": AgentInfo(name="vet", backend="openai", model="m2")})
    db.trajectories.save_trajectory(twin)  # a preference compares two trajectories of one task
    db.labels.add_review(tid, "ann", "approve")
    db.labels.add_review(tid, "bo", "reject")
    conflict = next(i for i in conflict_queue(db) if i["item_id"] == tid)
    auditor = ReviewState(db, reviewer="sig")  # audits are independent: not the reviser
    assert auditor.open_item(trajectory_id=tid)
    version = str(kb.load("rubrics")["reasoning"]["version"])
    revised = (step.text or "") + " (checked)"
    task = s.item.trajectory.task
    create_campaign(db, "look", task=task, reviewers=["rho"], first_look=True)
    looker = ReviewState(db, reviewer="rho")  # a first look is given in a first-look campaign, on a masked item
    assert looker.open_campaign("look") and looker.open_first() and looker.unrevealed is not None
    look_id, look = looker.unrevealed.trajectory_id, {"answer": "YES"} if task != "verify" else {"type": "STAR"}
    cases = {  # kind: (the state that saves, the fields, the label read back is the one saved)
        "verdict": (s, {"action": "approve"}, lambda: s.labels.my_review("rho", tid)["action"] == "approve"),
        "first_look": (looker, {"label": look},
                       lambda: looker.labels.my_first_look("rho", look_id, looker.campaign)["label"] == look),
        "score": (s, {"score": 4}, lambda: s.labels.my_rating("rho", tid, version)["score"] == 4),
        "note": (s, {"comment": "deep lines", "flags": ["hallucinated_feature"]},
                 lambda: s.labels.my_notes("rho", tid)[step.index]["comment"] == "deep lines"),
        "claim_flag": (s, {"claim": claim, "decision": "confirm"},
                       lambda: [f["decision"] for f in s.labels.my_claim_flags("rho", tid)] == ["confirm"]),
        "vi": (s, {"quality": 3, "issues": "", "z": 0.1, "spectype": "GALAXY", "comment": "fine"},
               lambda: s.labels.my_vi("rho", spectrum_id)["quality"] == 3),
        "preference": (s, {"other_id": twin.id, "outcome": "win"},
                       lambda: [(p["reviewer"], p["outcome"]) for p in db.labels.preferences_for(twin.id)] in
                       ([("rho", "win")], [("rho", "loss")])),
        "resolution": (s, {"item": conflict, "action": "reject", "label": None, "comment": "no lines: reject"},
                       lambda: db.verdict_state.latest_resolution(tid)["merger"] == "rho"),
        "revision": (s, {"text": revised, "tool_args": None, "comment": None},
                     lambda: db.labels.revisions_for(tid)[-1]["text"] == revised),
        "curation_event": (auditor, {"event": "audit", "value": "approve", "comment": None},
                           lambda: [(e["reviewer"], e["event"]) for e in db.labels.curation_events_for(tid)
                                    if e["event"] == "audit"] == [("sig", "audit")]),
        "step_judgment": (s, {"judgment": "incorrect", "tags": ["wrong_z"]},
                          lambda: s.labels.my_step_judgments("rho", tid)[step.index]["tags"] == ["wrong_z"]),
    }
    assert list(cases) == list(LABEL_KINDS)
    for kind, (state, fields, stored) in cases.items():
        ack = state.writer.save(kind, **fields)
        assert ack is not None and ack.subject, (kind, state.error)
        assert stored(), kind
    assert s.writer.undoable is not None and s.writer.undoable.kind == "verdict"  # only a verdict is what `u` withdraws


# one set of fields each kind takes (for the refusals: never stored)
FIELDS = {"verdict": {"action": "approve"}, "score": {"score": 3}, "note": {"comment": "x", "flags": []},
          "claim_flag": {"claim": {}, "decision": "confirm"}, "preference": {"other_id": "x", "outcome": "win"},
          "revision": {"text": "x", "tool_args": None, "comment": None},
          "curation_event": {"event": "audit", "value": "approve", "comment": None},
          "step_judgment": {"judgment": "correct"}}


def test_save_refuses_an_unknown_kind_and_a_trajectory_kind_where_none_is_open(seeded_db):
    s = state_for(seeded_db, "tau")
    with pytest.raises(ValueError, match=r"'rating'.*verdict, first_look, score"):
        s.writer.save("rating", score=3)
    with pytest.raises(TypeError):  # a field the kind does not take
        s.writer.save("score", stars=3)
    seeded_db.spectra.add_spectrum({**seeded_db.spectra.get_spectrum(s.item.spectrum_id), "spectrum_id": "bare"})
    assert s.open_item(spectrum_id="bare") and s.item.trajectory is None
    before = {t: seeded_db.labels.count_labels(t) for t in ("reviews", "ratings", "annotations")}
    needing = [kind for kind, spec in LABEL_KINDS.items() if spec.needs in ("trajectory", "step")]
    assert set(needing) == set(FIELDS)
    for kind in needing:
        s.error = ""
        assert s.writer.save(kind, **FIELDS[kind]) is None and s.error == s.item.why_not_reviewable, kind
    assert {t: seeded_db.labels.count_labels(t) for t in before} == before
    assert s.writer.save("vi", quality=3) is not None  # a VI is on the spectrum: a bare one takes it
    nothing_open = ReviewState(seeded_db, reviewer="tau")
    assert nothing_open.writer.save("verdict", action="approve") is None and nothing_open.error == "Open an item first."


def test_curation_revision_audits_and_votes(seeded_db):
    from reviewer.services.curation import curation_board

    s = state_for(seeded_db, "kai")
    tid = s.item.trajectory_id
    call = next(st for st in s.steps if st.kind == "tool_call")
    s.go_to_step(call.index)
    s.writer.save("revision", text=call.text, tool_args={"wavelength_range": [4080, 4130], "label": "H-delta"}, comment="tighter")
    assert seeded_db.labels.revisions_for(tid)[-1]["tool_args"]["wavelength_range"] == [4080, 4130]
    for who in ("lea", "max"):
        state_for(seeded_db, who).writer.save("curation_event", event="audit", value="approve", comment=None)
    for who in ("lea", "max", "ned"):
        state_for(seeded_db, who).writer.save("curation_event", event="vote", value="accept", comment=None)
    assert next(r for r in curation_board(seeded_db) if r["trajectory_id"] == tid)["state"] == "accepted"


def test_campaign_scopes_the_queue_blinds_and_freezes(seeded_db):
    ids = [r["trajectory_id"] for r in seeded_db.queue.queue_items(task="wd")][:3]
    sid = seeded_db.sessions.create_session("wd-pilot", "rating", ids, ["heidi", "ivan"], blind=True)
    s = ReviewState(seeded_db, reviewer="heidi")
    assert s.open_campaign("wd-pilot") and s.open_first()
    assert [r["trajectory_id"] for r in seeded_db.queue.queue_items("heidi", **s.queue_args())] == ids
    s.writer.save("verdict", action="approve")  # rating-only campaign: no verdicts
    assert seeded_db.labels.latest_review(ids[0], "heidi") is None and "rating only" in s.error
    s.writer.save("score", score=3)
    assert seeded_db.labels.latest_rating(ids[0], "heidi")["session_id"] == sid
    outsider = ReviewState(seeded_db, reviewer="zed")
    outsider.open_campaign("wd-pilot"), outsider.open_first()
    assert outsider.writer.save("score", score=1) is None and "not assigned" in outsider.error
    seeded_db.sessions.close_session(sid)
    s.writer.save("score", score=4)
    assert "closed" in s.error and seeded_db.labels.latest_rating(ids[0], "heidi")["score"] == 3


def test_a_broken_file_shows_its_error_and_the_previous_item_stays(seeded_db, tmp_path):
    from agents.spectra import read_spectrum, write_fits
    from reviewer.services.ingest import ingest_paths

    copy = tmp_path / "spec-copy.fits.gz"
    write_fits(read_spectrum(DEMO / "spec-55859-F5902_sp07-209.fits.gz") * 1.0001, copy)
    assert not ingest_paths(seeded_db, [copy], progress=False).failed
    record = next(r for r in seeded_db.spectra.list_spectra(limit=1000) if r["source_path"] == str(copy))
    copy.write_bytes(copy.read_bytes()[:2000])  # truncated after it was registered
    s = state_for(seeded_db, "alice")
    shown = s.item
    assert s.open_item(spectrum_id=record["spectrum_id"]) is False
    assert "spec-copy.fits.gz" in s.error and s.item is shown


def test_step_zoom_windows_and_renders(seeded_db):
    s = state_for(seeded_db, "alice")
    s.open_item(trajectory_id=seeded_db.queue.queue_items(task="verify", limit=1)[0]["trajectory_id"])
    renders = [st for st in s.steps if st.kind == "tool_result" and st.tool_name == "render"]
    window = next(st for st in renders if st.tool_args.get("wave_min") is not None)
    s.go_to_step(window.index)
    assert s.zoom_window() == (window.tool_args["wave_min"], window.tool_args["wave_max"])
    png, owner = s.render()
    assert png[:4] == b"\x89PNG" and owner == window.index
    # a vet trajectory zooms in the rest frame of its tool: shaded in the observed frame
    vet = Trajectory(spectrum_id=s.item.spectrum_id, task="a", agent=AgentInfo(name="vet", backend="openai"))
    vet.add("prompt", text="look", data={"tool_state": {"redshift": 0.5}})
    vet.add("tool_call", tool_name="spectral_visualization_tool", tool_args={"wavelength_range": [4000, 4200]})
    vet.add("think", text="deep lines")
    seeded_db.trajectories.save_trajectory(vet)
    s.open_item(trajectory_id=vet.id)
    s.go_to_step(2)
    assert s.zoom_window() == (6000.0, 6300.0)


def test_every_queue_item_is_reachable_with_n(seeded_db):
    s = state_for(seeded_db, "walker")
    total = seeded_db.queue.queue_count("walker")
    seen = {s.item.trajectory_id}
    for _ in range(total + 2):
        s.step_item(+1)
        seen.add(s.item.trajectory_id)
    assert len(seen) == total
    last = seeded_db.queue.queue_items("walker", offset=total - 1, limit=1)[0]["trajectory_id"]
    assert s.item.trajectory_id == last


def test_under_a_login_labels_are_saved_as_the_login_only(seeded_db):
    s = state_for(seeded_db, "alma", login=True)
    tid = s.item.trajectory_id
    s.reviewer = "bert"  # whatever a page might manage to send
    assert s.writer.save("verdict", action="approve") is None and "saved as alma" in s.error
    assert seeded_db.labels.latest_review(tid, "bert") is None and seeded_db.labels.latest_review(tid, "alma") is None


def test_a_huge_step_text_is_cut_on_the_page_not_in_the_store(seeded_db):
    from reviewer.components.step_view import TEXT_SHOWN_MAX, step_html

    big = Trajectory(spectrum_id=seeded_db.spectra.list_spectra(limit=1)[0]["spectrum_id"], task="a",
                     agent=AgentInfo(name="vet", backend="openai"))
    big.add("think", text="x" * (TEXT_SHOWN_MAX + 5000))
    html = step_html(big.steps[0], 1)
    assert "5,000 more characters" in html and len(html) < TEXT_SHOWN_MAX + 2000
