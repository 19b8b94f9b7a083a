"""Claim checker results in a real DuckDB file (table claim_results, schema V4): saved and read back
as the checker gave them, replaced per checker version, counted per trajectory, and shown, filtered
and sorted in the review queue. The results are the real checker's on a real demo spectrum."""
import re

import duckdb
import pytest

from agents.claims import check_trajectory
from reviewer.services.claims import CHECKER_VERSION, check_and_store, claim_rows, results_from_rows
from reviewer.store import Store
from reviewer.store.schema import MIGRATIONS, migrate

A_STAR = "spec-55862-B6212_sp01-001.fits.gz"  # LAMOST A1IV, high S/N: its H-beta EW is measured to ~1 A


@pytest.fixture(scope="module")
def a_star(demo_dir):
    from agents.spectra import read_spectrum

    return read_spectrum(demo_dir / A_STAR)


def vetted(spec, spectrum_id="sA", tripled=False):
    """A rules trajectory for task a; `tripled`: its H-beta equivalent width tripled in the text."""
    from agents.vet import vet_spectrum

    traj = vet_spectrum(spec, "a", spectrum_id=spectrum_id)
    if tripled:
        step = next(s for s in traj.steps if s.kind == "think" and "H-beta equivalent width" in s.text)
        found = re.search(r"H-beta equivalent width = (-?[\d.]+)", step.text)
        step.text = step.text.replace(found.group(0), f"H-beta equivalent width = {3 * float(found.group(1)):.2f}")
    return traj


def test_a_v3_database_migrates_to_v4_with_the_claims_table(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    assert migrate(con, MIGRATIONS[:3]) == 3
    con.close()
    with Store(path) as store:
        assert store.schema_version == len(MIGRATIONS) >= 4
        assert "claim_results" in store.reviews.table_names()
        assert store.claims.claims_for("nothing") == [] and store.claims.claim_counts(["nothing"]) == {}


def test_save_and_read_back_the_checkers_results(store, a_star):
    traj = vetted(a_star)
    store.trajectories.save_trajectory(traj)
    results = check_and_store(store, traj, a_star)
    assert results and all(r.verdict == "supported" for r in results)
    rows = store.claims.claims_for(traj.id)
    assert len(rows) == len(results)
    assert [(r["step_idx"], r["claim_idx"]) for r in rows] == sorted((r["step_idx"], r["claim_idx"]) for r in rows)
    assert {r["checker_version"] for r in rows} == {CHECKER_VERSION}
    # the checker's whole result comes back, and the columns say the same
    assert [r.to_dict() for r in results_from_rows(rows)] == [r.to_dict() for r in results]
    step_text = {s.index: s.text for s in traj.steps}
    for row, res in zip(rows, results, strict=True):
        assert step_text[row["step_idx"]][row["span_start"]:row["span_end"]] == row["claim_text"] == res.claim.text
        assert (row["verdict"], row["measured"], row["tolerance"], row["unit"]) == (
            res.verdict, res.measured, res.tolerance, res.claim.unit)
        assert [row["window_lo"], row["window_hi"]] == (res.window or [None, None])
        assert row["created_at"].tzinfo is not None
    assert store.claims.claim_counts([traj.id, "absent"]) == {traj.id: {"supported": len(results), "contradicted": 0,
                                                                 "unverifiable": 0}}


def test_saving_a_version_again_replaces_it_and_the_latest_version_is_read(store, a_star):
    traj = vetted(a_star)
    store.trajectories.save_trajectory(traj)
    rows = claim_rows(check_trajectory(traj, a_star))
    assert store.claims.save_claims(traj.id, "v1", rows) == len(rows)
    assert store.claims.save_claims(traj.id, "v1", rows[:2]) == 2  # replaced, not added
    assert len(store.claims.claims_for(traj.id, "v1")) == 2
    contradicted = [{**r, "verdict": "contradicted"} for r in rows[:3]]
    store.claims.save_claims(traj.id, "v2", contradicted)
    assert store.claims.claim_versions(traj.id) == ["v2", "v1"]
    assert [r["checker_version"] for r in store.claims.claims_for(traj.id)] == ["v2"] * 3  # the latest saved
    assert len(store.claims.claims_for(traj.id, "v1")) == 2  # the older version stays
    assert store.claims.claim_counts([traj.id])[traj.id] == {"supported": 0, "contradicted": 3, "unverifiable": 0}
    store.claims.save_claims(traj.id, "v2", [])  # cleared: v1 is the latest again
    assert store.claims.claim_counts([traj.id])[traj.id]["supported"] == 2


def test_a_bad_row_changes_nothing(store, a_star):
    traj = vetted(a_star)
    store.trajectories.save_trajectory(traj)
    rows = claim_rows(check_and_store(store, traj, a_star))
    before = store.claims.claims_for(traj.id)
    with pytest.raises(ValueError, match="verdict"):
        store.claims.save_claims(traj.id, CHECKER_VERSION, [*rows[:1], {**rows[1], "verdict": "maybe"}])
    with pytest.raises(ValueError, match="unknown"):
        store.claims.save_claims(traj.id, CHECKER_VERSION, [{**rows[0], "colour": "red"}])
    with pytest.raises(ValueError, match="version"):
        store.claims.save_claims(traj.id, "", rows)
    assert store.claims.claims_for(traj.id) == before


def test_queue_column_filter_and_order_on_contradicted_claims(store, a_star):
    honest = [vetted(a_star) for _ in range(2)]
    planted = vetted(a_star, tripled=True)
    unchecked = vetted(a_star)
    for traj in [honest[0], planted, honest[1], unchecked]:  # creation order: honest, planted, honest, unchecked
        store.trajectories.save_trajectory(traj)
    for traj in [*honest, planted]:
        check_and_store(store, traj, a_star)
    rows = {r["trajectory_id"]: r for r in store.queue.queue_items()}
    assert {tid: r["contradicted"] for tid, r in rows.items()} == {
        honest[0].id: 0, honest[1].id: 0, planted.id: 1, unchecked.id: 0}
    # a page's counts, read for its items only, are the counts of the aggregate that orders by them
    by_order = {r["trajectory_id"]: r["contradicted"] for r in store.queue.queue_items(order="contradicted")}
    assert by_order == {tid: r["contradicted"] for tid, r in rows.items()}
    at = [r["trajectory_id"] for r in store.queue.queue_items()].index(planted.id)
    assert [(r["trajectory_id"], r["contradicted"]) for r in store.queue.queue_items(offset=at, limit=1)] == [(planted.id, 1)]
    assert [r["trajectory_id"] for r in store.queue.queue_items(contradicted=True)] == [planted.id]
    assert store.queue.queue_count(contradicted=True) == 1 and store.queue.queue_count(contradicted=False) == 3
    default = [r["trajectory_id"] for r in store.queue.queue_items()]
    by_claims = [r["trajectory_id"] for r in store.queue.queue_items(order="contradicted")]
    assert by_claims == [planted.id] + [t for t in default if t != planted.id]  # ties keep the default order
    assert store.queue.queue_position(planted.id, order="contradicted") == 0
    assert store.queue.queue_position(planted.id) == default.index(planted.id)
    with pytest.raises(ValueError, match="order"):
        store.queue.queue_items(order="loudest")


def test_contradicted_filter_with_a_session_keeps_the_parameters_in_order(store, a_star):
    """The session join's parameter moves before the WHERE's: with a task, a reviewer, the
    contradicted filter and a session together, each value must still reach its own placeholder."""
    planted, honest = vetted(a_star, tripled=True), vetted(a_star)
    other_task = vetted(a_star)
    other_task.task = "wd"
    for traj in (planted, honest, other_task):
        store.trajectories.save_trajectory(traj)
        check_and_store(store, traj, a_star)
    sid = store.sessions.create_session("claims-check", "verdicts", [honest.id, planted.id], ["ann"])
    store.labels.add_review(honest.id, "ann", "approve", session_id=sid)
    got = store.queue.queue_items("ann", task="a", session_id=sid, contradicted=True, state="todo")
    assert [r["trajectory_id"] for r in got] == [planted.id] and got[0]["contradicted"] == 1
    assert store.queue.queue_count("ann", task="a", session_id=sid, contradicted=False, state="done") == 1
    ordered = store.queue.queue_items("ann", session_id=sid, order="contradicted")
    assert [r["trajectory_id"] for r in ordered] == [planted.id, honest.id]
    assert [r["trajectory_id"] for r in store.queue.queue_items("ann", session_id=sid)] == [honest.id, planted.id]
    assert store.queue.queue_position(planted.id, "ann", session_id=sid, order="contradicted", task="a") == 0


def test_claims_are_kept_apart_per_store_file(tmp_path, a_star):
    """Two files, two sets of results (the results belong to the file their trajectory is in)."""
    traj = vetted(a_star)
    with Store(tmp_path / "one.duckdb") as one:
        one.trajectories.save_trajectory(traj)
        check_and_store(one, traj, a_star)
        n = len(one.claims.claims_for(traj.id))
    with Store(tmp_path / "two.duckdb") as two:
        assert two.claims.claims_for(traj.id) == []
    with Store(tmp_path / "one.duckdb") as one:
        assert len(one.claims.claims_for(traj.id)) == n > 0
