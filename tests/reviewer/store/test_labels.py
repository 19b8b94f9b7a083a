"""Human actions are append-only, the latest row wins, and a retried write (same id) is a no-op."""
from datetime import UTC, datetime, timedelta

import pytest

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_review_latest_wins_and_history_is_kept(store):
    store.labels.add_review("t1", "ann", "approve", created_at=at(0))
    store.labels.add_review("t1", "ann", "override", label={"answer": "NO"}, comment="Balmer too narrow", created_at=at(5))
    store.labels.add_review("t1", "bob", "reject", created_at=at(1))
    latest = store.labels.latest_review("t1", "ann")
    assert latest["action"] == "override" and latest["label"] == {"answer": "NO"}
    assert [(r["reviewer"], r["action"]) for r in store.labels.reviews_for("t1")] == [("bob", "reject"), ("ann", "override")]
    assert [r["action"] for r in store.labels.label_history("reviews", trajectory_id="t1", reviewer="ann")] == [
        "approve", "override"]
    # an older timestamp written later does not win
    store.labels.add_review("t1", "ann", "approve", created_at=at(2))
    assert store.labels.latest_review("t1", "ann")["action"] == "override"
    # withdrawing is a new row too
    store.labels.add_review("t1", "ann", "clear", created_at=at(6))
    assert store.labels.latest_review("t1", "ann") is None
    assert [r["reviewer"] for r in store.labels.reviews_for("t1")] == ["bob"]
    assert store.labels.count_labels("reviews") == 5
    assert store.labels.list_reviewers() == ["ann", "bob"]


def test_same_timestamp_falls_back_to_insertion_order(store):
    store.labels.add_review("t1", "ann", "approve", created_at=T0)
    store.labels.add_review("t1", "ann", "reject", created_at=T0)
    assert store.labels.latest_review("t1", "ann")["action"] == "reject"


def test_retried_write_with_same_id_is_idempotent(store):
    first = store.labels.add_rating("t1", "ann", 4, "v1", id="6f1c0f0e-aaaa-4bbb-8ccc-000000000001")
    again = store.labels.add_rating("t1", "ann", 4, "v1", id="6f1c0f0e-aaaa-4bbb-8ccc-000000000001")
    assert first == again
    assert store.labels.count_labels("ratings") == 1
    ids = {store.labels.add_vi_label("s1", "ann", quality=3) for _ in range(3)}
    assert len(ids) == 3 and store.labels.count_labels("vi_labels") == 3


def test_vi_labels(store):
    store.labels.add_vi_label("s1", "ann", quality=2, issues="sr", z=0.51, spectype="galaxy", created_at=at(0))
    store.labels.add_vi_label("s1", "ann", quality=4, issues=["C"], z=0.5123, spectype="QSO", comment="BAL", created_at=at(1))
    store.labels.add_vi_label("s1", "bob", quality=3, created_at=at(2))
    row = store.labels.latest_vi_label("s1", "ann")
    assert (row["quality"], row["issues"], row["z"], row["spectype"], row["comment"]) == (4, "C", 0.5123, "QSO", "BAL")
    assert store.labels.label_history("vi_labels", spectrum_id="s1", reviewer="ann")[0]["issues"] == "RS"
    assert [r["reviewer"] for r in store.labels.vi_labels_for("s1")] == ["ann", "bob"]
    with pytest.raises(ValueError, match="0-4"):
        store.labels.add_vi_label("s1", "ann", quality=5)
    with pytest.raises(ValueError, match="RCS"):
        store.labels.add_vi_label("s1", "ann", quality=1, issues="RX")


def test_annotations_per_step_and_clearing(store):
    store.labels.add_annotation("t1", "ann", "zoom range misses H-alpha", step_idx=2, flags=["wrong_tool_args"],
                                created_at=at(0))
    store.labels.add_annotation("t1", "ann", "overall fine", created_at=at(1))
    store.labels.add_annotation("t1", "ann", "zoom misses H-alpha (6563)", step_idx=2,
                                flags=["wrong_tool_args", "hallucinated_feature", "wrong_tool_args"], created_at=at(2))
    store.labels.add_annotation("t1", "bob", "agree", step_idx=2, created_at=at(3))
    notes = store.labels.annotations_for("t1")
    assert [(n["step_idx"], n["reviewer"]) for n in notes] == [(None, "ann"), (2, "ann"), (2, "bob")]
    assert notes[1]["flags"] == ["wrong_tool_args", "hallucinated_feature"]
    store.labels.add_annotation("t1", "ann", "", step_idx=2, created_at=at(4))  # cleared
    assert [(n["step_idx"], n["reviewer"]) for n in store.labels.annotations_for("t1", reviewer="ann")] == [(None, "ann")]
    assert len(store.labels.label_history("annotations", trajectory_id="t1")) == 5


def test_ratings_per_rater_and_rubric(store):
    store.labels.add_rating("t1", "ann", 2, "v1", created_at=at(0))
    store.labels.add_rating("t1", "ann", 5, "v1", created_at=at(1))
    store.labels.add_rating("t1", "ann", 3, "v2", created_at=at(2))
    store.labels.add_rating("t1", "gpt-judge", 3.5, "v1", rater_kind="llm", created_at=at(3))
    got = {(r["rater"], r["rubric_version"]): r["score"] for r in store.labels.ratings_for("t1")}
    assert got == {("ann", "v1"): 5.0, ("ann", "v2"): 3.0, ("gpt-judge", "v1"): 3.5}
    assert store.labels.latest_rating("t1", "ann")["rubric_version"] == "v2"
    assert store.labels.latest_rating("t1", "ann", "v1")["score"] == 5.0
    assert "gpt-judge" not in store.labels.list_reviewers()
    for bad in (6, -1, True, "4"):
        with pytest.raises(ValueError):
            store.labels.add_rating("t1", "ann", bad, "v1")
    with pytest.raises(ValueError):
        store.labels.add_rating("t1", "ann", 3, "v1", rater_kind="robot")


def test_preferences_pair_is_unordered(store):
    store.labels.add_preference("ta", "tb", "ann", "win", spectrum_id="s1", created_at=at(0))
    store.labels.add_preference("tb", "ta", "ann", "win", spectrum_id="s1", created_at=at(1))  # changed mind
    store.labels.add_preference("ta", "tc", "ann", "tie", spectrum_id="s1", created_at=at(2))
    current = store.labels.preferences_for(spectrum_id="s1")
    assert [(p["trajectory_a"], p["trajectory_b"], p["outcome"]) for p in current] == [
        ("tb", "ta", "win"), ("ta", "tc", "tie")]
    assert len(store.labels.preferences_for(trajectory_id="tc")) == 1
    with pytest.raises(ValueError):
        store.labels.add_preference("ta", "tb", "ann", "better")
    with pytest.raises(ValueError):
        store.labels.add_preference("ta", "ta", "ann", "tie")


def test_revisions_are_versioned_per_step(store):
    store.labels.add_revision("t1", 2, "ann", tool_args={"wave_min": 6400, "wave_max": 6700}, created_at=at(0))
    store.labels.add_revision("t1", 2, "bob", text="zoom on H-alpha", created_at=at(1))
    store.labels.add_revision("t1", 4, "ann", text="EW 12 A", created_at=at(2))
    history = store.labels.label_history("revisions", trajectory_id="t1")
    assert [(r["step_idx"], r["version"]) for r in history] == [(2, 1), (2, 2), (4, 1)]
    assert history[0]["tool_args"] == {"wave_min": 6400, "wave_max": 6700}
    assert [(r["step_idx"], r["version"], r["reviewer"]) for r in store.labels.revisions_for("t1")] == [
        (2, 2, "bob"), (4, 1, "ann")]
    rid = store.labels.add_revision("t1", 4, "ann", text="EW 12 A", id="fixed-id")
    assert store.labels.add_revision("t1", 4, "ann", text="EW 12 A", id="fixed-id") == rid
    assert len(store.labels.label_history("revisions", trajectory_id="t1")) == 4


def test_curation_events_and_labels_for(store, make_trajectory):
    traj = make_trajectory(spectrum_id="s9")
    store.trajectories.save_trajectory(traj)
    store.labels.add_curation_event(traj.id, "ann", "audit", "request_changes", created_at=at(0))
    store.labels.add_curation_event(traj.id, "ann", "audit", "approve", created_at=at(1))
    store.labels.add_curation_event(traj.id, "bob", "vote", "accept", created_at=at(2))
    assert [(e["reviewer"], e["value"]) for e in store.labels.curation_events_for(traj.id)] == [
        ("ann", "approve"), ("bob", "accept")]
    assert len(store.labels.curation_events_for(traj.id, latest=False)) == 3
    with pytest.raises(ValueError):
        store.labels.add_curation_event(traj.id, "ann", "like")
    store.labels.add_review(traj.id, "ann", "approve")
    store.labels.add_vi_label("s9", "ann", quality=4)
    labels = store.labels.labels_for(traj.id)
    assert {k: len(v) for k, v in labels.items()} == {
        "reviews": 1, "annotations": 0, "ratings": 0, "preferences": 0, "revisions": 0, "curation_events": 2,
        "vi_labels": 1}


def test_validation(store):
    with pytest.raises(ValueError, match="action"):
        store.labels.add_review("t1", "ann", "maybe")
    with pytest.raises(ValueError, match="corrected label"):
        store.labels.add_review("t1", "ann", "override")
    with pytest.raises(ValueError, match="name"):
        store.labels.add_review("t1", "  ", "approve")
    with pytest.raises(ValueError, match="table"):
        store.labels.label_history("spectra")
    assert store.labels.count_labels("reviews") == 0


def test_audit_sessions(store):
    sid = store.sessions.create_session("March WD audit", "rating", ["t3", "t1", "t2", "t1"], reviewers=["ann", "bob"],
                                        filters={"task": "wd"}, created_by="lead")
    session = store.sessions.get_session(sid)
    assert session["trajectory_ids"] == ["t3", "t1", "t2"]
    assert session["reviewers"] == ["ann", "bob"] and session["blind"] is True
    assert session["filters"] == {"task": "wd"} and session["closed_at"] is None
    assert [s["id"] for s in store.sessions.list_sessions(reviewer="bob")] == [sid]
    assert store.sessions.list_sessions(reviewer="carl") == []
    assert store.sessions.close_session(sid) is True
    assert store.sessions.close_session(sid) is False
    assert store.sessions.get_session(sid)["closed_at"] is not None
    assert store.sessions.list_sessions(include_closed=False) == []
    with pytest.raises(ValueError):
        store.sessions.create_session("x", "chaos", [])
