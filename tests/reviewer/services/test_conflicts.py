"""Consensus, stats, curation and judge queries on a real DuckDB file."""
import random
from datetime import UTC, datetime, timedelta

import pytest

from reviewer.services.conflicts import (
    conflict_page,
    conflict_queue,
    evaluation_frame,
    sync_verdict_states,
    verdict_for,
    verdicts_frame,
    vi_consensus,
)
from reviewer.services.consensus import merge_vi_labels
from reviewer.services.curation import curation_board
from reviewer.services.rows import group_rows
from reviewer.store.review_queries import UnknownSession

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)


def at(minutes):
    return T0 + timedelta(minutes=minutes)


@pytest.fixture
def two(store, make_trajectory):
    """Two stored vet trajectories (agent answer YES) on two spectra."""
    a = store.trajectories.save_trajectory(make_trajectory(spectrum_id="specA", task="a"))
    b = store.trajectories.save_trajectory(make_trajectory(spectrum_id="specB", task="wd"))
    return a, b


def test_disagreeing_verdicts_enter_the_queue_until_a_merger_resolves_them(store, two):
    a, b = two
    store.labels.add_review(a, "ann", "approve", created_at=at(1))
    store.labels.add_review(a, "bob", "override", {"answer": "NO"}, created_at=at(2))
    store.labels.add_review(b, "ann", "approve", created_at=at(1))
    store.labels.add_review(b, "bob", "approve", created_at=at(2))
    queue = conflict_queue(store)
    assert [(i["kind"], i["item_id"]) for i in queue] == [("trajectory", a)]
    assert queue[0]["reasons"] == ["label differs: ann=YES vs bob=NO"]
    assert {r["reviewer"] for r in queue[0]["labels"]} == {"ann", "bob"}

    store.reviews.add_resolution("trajectory", a, "mia", "override", {"answer": "NO"}, merger_comment="weak H-alpha",
                                 created_at=at(3))
    assert conflict_queue(store) == []
    resolved = conflict_queue(store, include_resolved=True)
    assert resolved[0]["resolved"] and resolved[0]["resolution"]["merger_comment"] == "weak H-alpha"
    final = verdict_for(store, a)["final"]
    assert final == {"action": "override", "label": {"answer": "NO"}, "source": "resolution"}

    store.labels.add_review(a, "ann", "approve", comment="still think so", created_at=at(4))  # newer label reopens it
    assert [i["item_id"] for i in conflict_queue(store)] == [a]


def test_pages_of_conflicts_interleave_both_kinds_by_their_newest_label(store, make_trajectory):
    """The Conflicts tab reads a page at a time: trajectory conflicts (their order from the stored
    consensus and label times) and VI conflicts in one order, oldest first; the pages put together are
    the whole list, whose length is the count; each trajectory item carries its labels and reasons."""
    ids = [store.trajectories.save_trajectory(make_trajectory(spectrum_id=f"spec{i}", task="a")) for i in range(4)]
    for i, tid in enumerate(ids):  # conflicts whose newest label is at minute 10 * i + 2
        store.labels.add_review(tid, "ann", "approve", created_at=at(10 * i + 1))
        store.labels.add_review(tid, "bob", "override", {"answer": "NO"}, created_at=at(10 * i + 2))
    for i in range(3):  # VI conflicts at minutes 5, 15, 25
        store.labels.add_vi_label(f"vi{i}", "ann", quality=4, z=0.1, spectype="GALAXY", created_at=at(10 * i + 4))
        store.labels.add_vi_label(f"vi{i}", "bob", quality=4, z=0.1, spectype="STAR", created_at=at(10 * i + 5))
    whole = conflict_queue(store)
    assert [i["item_id"] for i in whole] == [ids[0], "vi0", ids[1], "vi1", ids[2], "vi2", ids[3]]
    pages = [conflict_page(store, offset=offset, limit=3) for offset in (0, 3, 6, 9)]
    assert [n for _, n in pages] == [7, 7, 7, 7]
    assert [i for page, _ in pages for i in page] == whole
    assert pages[0][0][0]["reasons"] == ["label differs: ann=YES vs bob=NO"]
    assert {r["reviewer"] for r in pages[0][0][0]["labels"]} == {"ann", "bob"}
    store.reviews.add_resolution("trajectory", ids[0], "mia", "override", {"answer": "NO"}, merger_comment="ok",
                                 created_at=at(50))
    assert conflict_page(store, limit=2) == (whole[1:3], 6)


def _vi_conflicts_in_full(store, session, include_resolved):
    """The VI conflicts as merging every spectrum's current VI labels finds them (the reference the
    stored `vi_state` must equal): (spectrum id, reasons, reviewers, resolved), oldest first."""
    resolutions = store.reviews.latest_resolutions("spectrum", session)
    found = []
    for sid, rows in group_rows(store.reviews.current_vi_labels(session), "spectrum_id").items():
        merge = merge_vi_labels(rows, rows[0]["pipeline_z"], rows[0]["pipeline_class"])
        res = resolutions.get(sid)
        resolved = bool(res) and all((res["created_at"], res["seq"]) > (r["created_at"], r["seq"]) for r in rows)
        if merge.is_conflict and (include_resolved or not resolved):
            found.append((max(r["created_at"] for r in rows), sid, merge.reasons,
                          sorted(r["reviewer"] for r in rows), resolved))
    return [f[1:] for f in sorted(found, key=lambda f: (f[0], f[1]))]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_any_vi_labels_and_resolutions_the_stored_vi_conflicts_equal_a_full_merge(store, seed):
    """The Conflicts tab reads VI conflicts from their stored consensus (`vi_state`, synced on read):
    after every write of a random sequence (labels by several inspectors, in and out of a campaign,
    agreeing or not, and merger resolutions) the conflicts listed are those a merge of every spectrum's
    current labels finds, in the same order, with the same reasons, in every scope."""
    rng = random.Random(seed)
    campaign = store.sessions.create_session(f"vi-{seed}", "verdicts", [], ["ann", "bob", "cy"])
    for minute in range(1, 41):
        spectrum, session = f"s{rng.randrange(4)}", rng.choice([None, campaign])
        if rng.random() < 0.2:
            store.reviews.add_resolution("spectrum", spectrum, "mia", label={"quality": 4, "z": 0.1},
                                         merger_comment="merged", session_id=session, created_at=at(minute))
        else:
            store.labels.add_vi_label(spectrum, rng.choice(["ann", "bob", "cy"]), quality=rng.choice([3, 4]),
                                      z=rng.choice([0.1, 0.1, 0.5]), spectype=rng.choice(["GALAXY", "STAR"]),
                                      session_id=session, created_at=at(minute))
        for scope in (None, campaign):
            for include_resolved in (False, True):
                listed = [(i["item_id"], i["reasons"], sorted(r["reviewer"] for r in i["labels"]), i["resolved"])
                          for i in conflict_queue(store, kind="spectrum", session=scope,
                                                  include_resolved=include_resolved)]
                assert listed == _vi_conflicts_in_full(store, scope, include_resolved), (minute, scope)


def test_vi_conflict_and_merge(store):
    store.labels.add_vi_label("s1", "ann", quality=4, z=0.10, spectype="GALAXY", created_at=at(1))
    store.labels.add_vi_label("s1", "bob", quality=4, z=0.10, spectype="STAR", created_at=at(2))
    store.labels.add_vi_label("s2", "ann", quality=3, z=1.0, spectype="QSO", issues="R", created_at=at(1))
    store.labels.add_vi_label("s2", "bob", quality=4, z=1.001, spectype="QSO", comment="BAL", created_at=at(2))
    queue = conflict_queue(store, kind="spectrum")
    assert [i["item_id"] for i in queue] == ["s1"] and "spectype" in queue[0]["reasons"][0]
    merged = vi_consensus(store, "s2")
    assert merged["status"] == "merged" and merged["best_quality"] == 3.5 and merged["best_issues"] == "R"
    with pytest.raises(ValueError):
        store.reviews.add_resolution("spectrum", "s1", "mia")  # needs the merged label
    store.reviews.add_resolution("spectrum", "s1", "mia", label={"quality": 4, "z": 0.1, "spectype": "GALAXY"},
                                 merger_comment="clear 4000 break", created_at=at(3))
    assert conflict_queue(store, kind="spectrum") == []
    assert vi_consensus(store, "s1")["resolution"]["label"]["spectype"] == "GALAXY"


def test_resolution_arguments_are_checked(store):
    with pytest.raises(ValueError):
        store.reviews.add_resolution("trajectory", "t", "mia", "override")  # override without label
    with pytest.raises(ValueError):
        store.reviews.add_resolution("trajectory", "t", "mia", "maybe")
    with pytest.raises(ValueError):
        store.reviews.add_resolution("galaxy", "t", "mia", "approve")


def test_evaluation_rows_use_settled_labels_only(store, make_trajectory):
    ids = [store.trajectories.save_trajectory(make_trajectory(spectrum_id=f"s{i}", task="a")) for i in range(5)]
    store.labels.add_review(ids[0], "ann", "approve")                                  # truth YES
    store.labels.add_review(ids[1], "ann", "override", {"answer": "NO"})               # truth NO
    store.labels.add_review(ids[2], "ann", "approve")
    store.labels.add_review(ids[2], "bob", "override", {"answer": "NO"})               # open conflict: left out
    store.labels.add_review(ids[3], "ann", "reject")                                   # unusable: left out
    store.labels.add_review(ids[4], "ann", "approve", created_at=at(1))
    store.labels.add_review(ids[4], "ann", "clear", created_at=at(2))                  # withdrawn: left out
    frame = evaluation_frame(store).set_index("trajectory_id")
    assert sorted(frame.index) == sorted(ids[:2])
    assert frame.loc[ids[0], "truth"] == "YES" and frame.loc[ids[1], "truth"] == "NO"
    assert (frame["predicted"] == "YES").all() and (frame["credibility"] == "HIGH").all()
    from reviewer.services.stats import task_scores

    scores = task_scores(frame.reset_index()).set_index("task")
    assert scores.loc["a", "accuracy"] == 0.5 and scores.loc["a", "n"] == 2


def test_closed_session_freezes_its_labels(store, two):
    a, b = two
    sid = store.sessions.create_session("april", "verdicts", [a, b], reviewers=["ann", "bob"], created_at=at(0))
    store.labels.add_review(a, "ann", "approve", session_id=sid, created_at=at(1))
    store.labels.add_rating(a, "ann", 4, "1", session_id=sid, created_at=at(1))
    store.labels.add_review(b, "bob", "approve", created_at=at(1))  # outside the session
    store.sessions.close_session(sid, at=at(5))
    store.labels.add_review(a, "bob", "reject", session_id=sid, created_at=at(6))  # after close: not frozen in
    store.labels.add_rating(a, "ann", 1, "1", session_id=sid, created_at=at(6))

    frozen = verdicts_frame(store, session="april")
    assert frozen[["trajectory_id", "reviewer", "action"]].values.tolist() == [[a, "ann", "approve"]]
    assert store.reviews.ratings_frame(session=sid)["score"].tolist() == [4.0]
    assert len(verdicts_frame(store)) == 3 and store.reviews.ratings_frame()["score"].tolist() == [1.0]
    assert conflict_queue(store, session="april") == [] and len(conflict_queue(store)) == 1
    assert len(store.reviews.table_frame("reviews", session="april")) == 1
    assert sorted(store.reviews.table_frame("session_items", session="april")["trajectory_id"]) == sorted([a, b])
    with pytest.raises(UnknownSession):
        verdicts_frame(store, session="nope")


def test_ratings_frame_keeps_each_raters_latest(store, two):
    a, b = two
    store.labels.add_rating(a, "ann", 2, "1", created_at=at(1))
    store.labels.add_rating(a, "ann", 3, "1", created_at=at(2))
    store.labels.add_rating(a, "llm:m", 5, "1", rater_kind="llm", created_at=at(1))
    store.labels.add_rating(b, "llm:m", 1, "1", rater_kind="llm", created_at=at(1))
    frame = store.reviews.ratings_frame()
    assert sorted(zip(frame.rater, frame.trajectory_id, frame.score, strict=True)) == sorted(
        [("ann", a, 3.0), ("llm:m", a, 5.0), ("llm:m", b, 1.0)])
    assert store.reviews.ratings_frame(rater_kind="llm")["rater"].unique().tolist() == ["llm:m"]
    assert set(store.reviews.ratings_frame(task="wd")["trajectory_id"]) == {b}
    assert store.reviews.rated_trajectory_ids("llm:m", "1") == {a, b}
    assert store.reviews.rated_trajectory_ids("llm:m", "2") == set()


def test_curation_board_follows_the_events(store, two):
    a, b = two
    store.labels.add_revision(a, 1, "rev", text="better reasoning", created_at=at(1))
    store.labels.add_curation_event(a, "rev", "revise", created_at=at(2))
    store.labels.add_curation_event(a, "aud1", "audit", "approve", created_at=at(3))
    store.labels.add_curation_event(a, "aud2", "audit", "approve", created_at=at(4))
    for i, who in enumerate(("rev", "aud1", "aud2")):
        store.labels.add_curation_event(a, who, "vote", "accept", created_at=at(5 + i))
    board = {r["trajectory_id"]: r for r in curation_board(store)}
    assert board[a]["state"] == "accepted" and board[a]["revised_steps"] == [1]
    assert board[a]["approvals"] == ["aud1", "aud2"] and board[a]["reviser"] == "rev"
    assert board[b]["state"] == "draft"
    assert [r["trajectory_id"] for r in curation_board(store, state="accepted")] == [a]
    assert curation_board(store, task="wd")[0]["trajectory_id"] == b


def test_judge_failures_are_kept_apart_from_ratings(store, two):
    a, _ = two
    store.reviews.add_judge_failure(a, "llm:m", "1", "no score in the reply", "I think it is fine.")
    assert store.reviews.judge_failures("llm:m")[0]["reply"] == "I think it is fine."
    assert store.reviews.ratings_frame().empty
    assert "judge_failures" in store.reviews.table_names() and "resolutions" in store.reviews.table_names()


# -- one definition of "reviewers disagree": the queue column and filter equal Conflicts membership --
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

VERDICTS = st.sampled_from([("approve", None), ("reject", None), ("override", {"answer": "NO"}),
                            ("override", {"answer": "YES"}), ("clear", None)])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["ann", "bob", "cy"]), VERDICTS),
                       min_size=1, max_size=12))
def test_queue_disagreement_equals_conflict_membership(tmp_path_factory, make_trajectory, labels):
    from reviewer.store import Store

    store = Store(tmp_path_factory.mktemp("prop") / "p.duckdb")
    try:
        ids = [store.trajectories.save_trajectory(make_trajectory(spectrum_id=f"s{i}", task="a")) for i in range(4)]
        for item, who, (action, label) in labels:  # the agent answered YES: approve == override to YES
            store.labels.add_review(ids[item], who, action, label)
        sync_verdict_states(store)
        flagged = {r["trajectory_id"] for r in store.queue.queue_items(limit=10) if r["disagreement"]}
        filtered = {r["trajectory_id"] for r in store.queue.queue_items(limit=10, disagreement=True)}
        in_conflicts = {i["item_id"] for i in conflict_queue(store, kind="trajectory")}
        expected = {tid for tid in ids if verdict_for(store, tid)["status"] == "conflict"}
        assert flagged == filtered == in_conflicts == expected
    finally:
        store.close()


def test_approve_and_override_to_the_agents_answer_are_no_conflict(store, two):
    a, _ = two
    store.labels.add_review(a, "ann", "approve")
    store.labels.add_review(a, "bob", "override", {"answer": "YES"})  # the agent's own answer
    sync_verdict_states(store)
    assert not store.queue.queue_items(limit=5)[0]["disagreement"] and conflict_queue(store) == []


def test_a_whole_sync_is_skipped_until_something_is_written_and_a_write_during_one_is_caught_next(
        store, two, make_trajectory, monkeypatch):
    a, b = two

    def stored(tid):
        return store.db.scalar("SELECT n_reviews FROM verdict_state WHERE trajectory_id = ? AND scope = ''", [tid])

    store.labels.add_review(a, "ann", "approve", created_at=at(1))  # the store itself: no sync of its own
    assert sync_verdict_states(store) == 1 and stored(a) == 1
    real, checks = store.verdict_state.verdict_states_behind, []

    def counted(trajectory_id=None, answers_changed=True, labels_after=None):
        checks.append(answers_changed)
        return real(trajectory_id, answers_changed, labels_after)

    monkeypatch.setattr(store.verdict_state, "verdict_states_behind", counted)
    assert sync_verdict_states(store) == 0 and checks == []  # nothing written since: not even checked

    def then_a_label_elsewhere(trajectory_id=None, answers_changed=True, labels_after=None):  # written after the check,
        rows = counted(trajectory_id, answers_changed, labels_after)  # before it stored
        if len(checks) == 1:
            store.labels.add_review(b, "bob", "approve", created_at=at(2))
        return rows

    store.labels.add_review(a, "bob", "override", {"answer": "NO"}, created_at=at(3))
    monkeypatch.setattr(store.verdict_state, "verdict_states_behind", then_a_label_elsewhere)
    assert sync_verdict_states(store) == 1 and stored(a) == 2 and stored(b) is None
    assert sync_verdict_states(store) == 1 and stored(b) == 1  # the mark had moved: checked again
    assert sync_verdict_states(store) == 0 and len(checks) == 2  # and now in step: skipped
    assert checks == [False, False]  # only labels written since: the answers were not compared again

    again = make_trajectory(spectrum_id="specA", task="a")  # a saved again with another answer
    again.id, again.outcome = a, {**again.outcome, "prediction": "NO", "answer": "NO"}
    store.trajectories.save_trajectory(again)
    assert sync_verdict_states(store) == 1 and checks[-1] is True  # its settled label's prediction is behind


def test_a_sync_after_labels_alone_compares_only_the_labels_written_since_it_was_in_step(store, two, make_trajectory):
    """Once everything was in step, only a label written since can be newer than its stored consensus:
    the check reads those labels, not all of them (35-100 ms at 1M trajectories). A row behind for
    another reason (set back here by hand) is left to the next whole check, after a trajectory is saved."""
    a, b = two
    store.labels.add_review(a, "ann", "approve", created_at=at(1))
    assert sync_verdict_states(store) == 1
    store.db.execute("UPDATE verdict_state SET synced_seq = 0 WHERE trajectory_id = ?", [a])
    store.labels.add_review(b, "bob", "approve", created_at=at(2))
    assert sync_verdict_states(store) == 1  # b's label only
    assert store.db.scalar("SELECT synced_seq FROM verdict_state WHERE trajectory_id = ?", [a]) == 0
    again = make_trajectory(spectrum_id="specB", task="wd")
    again.id = b
    store.trajectories.save_trajectory(again)
    assert sync_verdict_states(store) == 1  # the whole check: a's row found behind its label
    assert store.db.scalar("SELECT synced_seq FROM verdict_state WHERE trajectory_id = ?", [a]) > 0
