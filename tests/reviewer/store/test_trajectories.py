"""Trajectories, steps and images round-trip through a real DuckDB file."""
import duckdb

from agents.trajectory import AgentInfo, Trajectory, image_sha
from reviewer.store import Store


def test_round_trip_is_identical(store, make_trajectory, tmp_path):
    traj = make_trajectory()
    assert {s.kind for s in traj.steps} == {"prompt", "think", "tool_call", "tool_result", "verdict", "answer"}
    store.trajectories.save_trajectory(traj)
    store.close()
    # a fresh connection: nothing may come from a cache
    reopened = Store(tmp_path / "review.duckdb")
    loaded = reopened.trajectories.load_trajectory(traj.id, with_images=True)
    assert loaded.model_dump() == traj.model_dump()
    assert loaded.to_json() == traj.to_json()
    assert loaded.images == traj.images
    assert all(s.created_at.utcoffset().total_seconds() == 0 for s in loaded.steps)
    reopened.close()


def test_images_are_stored_once_by_content(store, make_trajectory):
    first, second = make_trajectory(), make_trajectory()
    store.trajectories.save_trajectory(first)
    store.trajectories.save_trajectory(second)
    shas = {s.image_sha for s in first.steps if s.image_sha}
    assert len(shas) == 2
    for sha in shas:
        png = store.images.get_image(sha)
        assert png == first.images[sha] and image_sha(png) == sha
    rows = store.db.rows("SELECT sha256, width, height FROM images ORDER BY width")
    assert [(r["width"], r["height"]) for r in rows] == [(30, 10), (40, 20)]
    assert store.images.put_image(first.images[rows[0]["sha256"]]) == rows[0]["sha256"]
    assert store.db.scalar("SELECT count(*) FROM images") == 2
    assert store.images.get_image("0" * 64) is None


def test_summary_columns_and_filters(store, make_trajectory):
    a = make_trajectory(spectrum_id="s1", task="a", backend="rules")
    b = make_trajectory(spectrum_id="s1", task="wd", backend="openai", model="spec-o3-7b")
    b.outcome = {"answer": "NO", "credibility": "LOW"}
    c = make_trajectory(spectrum_id="s2", task="a", backend="rules")
    for t in (a, b, c):
        store.trajectories.save_trajectory(t)
    row = store.trajectories.list_trajectories(task="wd")[0]
    assert (row["id"], row["answer"], row["credibility"], row["model"]) == (b.id, "NO", "LOW", "spec-o3-7b")
    assert row["n_steps"] == len(b.steps) and row["n_tool_calls"] == 1
    full = store.trajectories.list_trajectories(spectrum_id="s1", backend="rules")[0]
    assert full["answer_z"] == 0.0012
    assert {r["id"] for r in store.trajectories.list_trajectories(spectrum_id="s1")} == {a.id, b.id}
    assert store.trajectories.count_trajectories(answer="YES") == 2
    assert store.trajectories.count_trajectories() == 3
    assert len(store.trajectories.list_trajectories(limit=2)) == 2


def test_find_trajectory_for_skip_done(store, make_trajectory):
    assert store.trajectories.find_trajectory("s1", "a", "rules") is None
    rules = make_trajectory(spectrum_id="s1", task="a", backend="rules")
    llm = make_trajectory(spectrum_id="s1", task="a", backend="openai", model="o3")
    store.trajectories.save_trajectory(rules)
    store.trajectories.save_trajectory(llm)
    assert store.trajectories.find_trajectory("s1", "a", "rules") == rules.id
    assert store.trajectories.find_trajectory("s1", "a", "openai", "o3") == llm.id
    assert store.trajectories.find_trajectory("s1", "a", "openai", "other") is None
    assert store.trajectories.find_trajectory("s1", "wd", "rules") is None


def test_resaving_replaces_the_steps(store, make_trajectory):
    traj = make_trajectory()
    store.trajectories.save_trajectory(traj)
    traj.steps = traj.steps[:3]
    traj.steps[2].text = "shorter"
    store.trajectories.save_trajectory(traj)
    assert store.trajectories.load_trajectory(traj.id).model_dump() == traj.model_dump()
    assert store.db.scalar("SELECT count(*) FROM steps WHERE trajectory_id = ?", [traj.id]) == 3
    assert store.trajectories.count_trajectories() == 1


def test_failed_save_writes_nothing(store, make_trajectory, monkeypatch):
    traj = make_trajectory()
    original = store.db.execute

    def steps_fail(sql, params=None):
        if "INSERT INTO steps" in sql:
            raise duckdb.ConstraintException("simulated failure while writing steps")
        return original(sql, params)

    monkeypatch.setattr(store.db, "execute", steps_fail)
    try:
        store.trajectories.save_trajectory(traj)
    except duckdb.ConstraintException:
        pass
    else:
        raise AssertionError("the simulated failure did not surface")
    assert store.trajectories.load_trajectory(traj.id) is None
    assert store.db.scalar("SELECT count(*) FROM images") == 0


def test_missing_trajectory_and_minimal_one(store):
    assert store.trajectories.load_trajectory("nope") is None
    bare = Trajectory(task="verify", agent=AgentInfo(name="verify", backend="rules"))
    store.trajectories.save_trajectory(bare)
    assert store.trajectories.load_trajectory(bare.id).model_dump() == bare.model_dump()
