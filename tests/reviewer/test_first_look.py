"""An independent first look (issue 47, item 2): in a first-look campaign the item is shown as the spectrum
alone (no trajectory, answer, claims, pipeline labels or header) until the reviewer records their own
answer; then it is shown whole for their verdict. Both are stored; reopening the item shows it whole."""
from __future__ import annotations

from reviewer.review_state import ReviewState
from reviewer.services.campaigns import create_campaign
from reviewer.services.reviewer_stats import reviewer_report


def looking(store, name="fay", task="a"):
    create_campaign(store, "look", task=task, reviewers=[name, "gus"], first_look=True)
    state = ReviewState(store, reviewer=name)
    assert state.open_campaign("look") and state.open_first()
    return state


def test_the_item_is_the_spectrum_alone_until_the_first_look(demo_store):
    s = looking(demo_store)
    whole = s.unrevealed
    assert whole is not None and whole.trajectory is not None
    shown = s.item
    assert shown.trajectory is None and shown.agent_label == {} and shown.claims == ()
    assert shown.spectrum is whole.spectrum and shown.task == "a"
    assert not any(k.startswith("pipeline_") for k in shown.record) and "header" not in shown.record
    assert s.frame.z == 0.0 and s.zoom_window() is None  # no pipeline z, no agent's window
    assert s.writer.save("verdict", action="approve") is None and s.error.startswith("First look")
    assert demo_store.labels.count_labels("reviews") == 0
    ack = s.writer.save("first_look", label={"answer": "NO"})
    assert ack is not None and "first look NO" in ack.text() and whole.subject in ack.text()
    assert s.item is whole and s.unrevealed is None  # shown whole, for the verdict
    assert s.writer.save("verdict", action="approve") is not None
    row = demo_store.labels.first_look(whole.trajectory_id, "fay", s.session_id)
    assert row["label"] == {"answer": "NO"}
    assert demo_store.labels.latest_review(whole.trajectory_id, "fay")["action"] == "approve"
    again = ReviewState(demo_store, reviewer="fay")
    assert again.open_campaign("look") and again.open_item(trajectory_id=whole.trajectory_id)
    assert again.unrevealed is None and again.item.trajectory is not None  # recorded: shown whole


def test_a_first_look_needs_an_answer_and_a_campaign_with_first_looks(demo_store):
    s = looking(demo_store)
    assert s.writer.save("first_look", label={}) is None and "YES or NO" in s.error
    assert s.writer.save("first_look", label={"answer": "maybe"}) is None
    assert s.unrevealed is not None  # refused: still masked
    plain = ReviewState(demo_store, reviewer="fay")
    assert plain.open_first() and plain.unrevealed is None
    assert plain.writer.save("first_look", label={"answer": "YES"}) is None


def test_first_look_agreement_and_revisions_in_the_reviewers_report(demo_store):
    s = looking(demo_store)
    answers = []
    for _ in range(4):  # agree, agree, disagree then approve (revised after seeing the agent), disagree and keep
        agent = s.unrevealed.agent_label["answer"]
        other = "NO" if agent == "YES" else "YES"
        k = len(answers)
        first = agent if k < 2 else other
        assert s.writer.save("first_look", label={"answer": first}) is not None
        action = "approve" if k != 3 else "override"
        if action == "override":
            s.draft.label = {"answer": other}
        assert s.writer.save("verdict", action=action) is not None, s.error
        answers.append(first)
        s.step_item(+1)
    fay = {r["reviewer"]: r for r in reviewer_report(demo_store, s.campaign)}["fay"]
    assert fay["first_looks"] == 4
    assert fay["first_look_agreement"] == 0.5  # two of four first answers were the agent's
    assert fay["revised_after_reveal"] == 0.25  # one of four verdicts differs from its first look


def test_the_curation_board_of_a_first_look_campaign_lists_no_answers(demo_store):
    from reviewer.components.curation_board import CurationTable

    s = looking(demo_store)
    board = CurationTable(state=s)
    board.refresh()
    assert board.rows and any(r.get("answer") for r in board.rows)  # the agents' answers are there to hide
    shown = [board.row_values(r) for r in board.rows]
    assert all(v["answer"] == "" for v in shown) and all(v["object"] for v in shown)
    plain = CurationTable(state=ReviewState(demo_store, reviewer="fay"))
    plain.refresh()
    assert any(plain.row_values(r)["answer"] for r in plain.rows)
