"""The stored triage signals (table triage_signals, kept current on write and recomputed per stale
spectrum on read) and the SQL truth of each labelled trajectory equal a full recompute after any
sequence of writes: verdicts (approve / override / reject), re-labels by the same reviewer, undos,
resolutions, scores, claim results and re-saved trajectories, in any order (a property test over
random sequences on the demo store). Also: a database of schema version 7 upgrades and fills the
table on its first read."""
from __future__ import annotations

import contextlib
import shutil
from datetime import timedelta

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from reviewer import labels as label_service
from reviewer import triage
from reviewer.consensus import agent_label
from reviewer.demo import seed_demo_if_empty
from reviewer.labels import LabelService, default_correction
from reviewer.store import Store
from reviewer.store.schema import MIGRATIONS, migrate

REVIEWERS = ("ann", "bob", "cy")
N_ITEMS = 12  # the trajectories the writes pick from (the first of the demo's 65, several spectra)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("incremental") / "demo.duckdb"
    store = Store(path)
    assert seed_demo_if_empty(store) > 0
    store.close()
    return path


def drain() -> None:
    """Wait for the label service's background priority refreshes (one worker) to finish."""
    label_service._priorities.submit(lambda: None).result()


def reference_inputs(store) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(labelled, unreviewed) as the triage computed them before the stored signals: every signal
    recomputed, the truth from the verdicts in Python."""
    signals = triage.compute_signals(store)
    model = triage.stored_model(store) or triage.fit_from_store(store, signals)
    truth = triage.trajectory_truth(store.triage.review_history(), store.reviews.latest_resolutions("trajectory"))
    signals = signals[~signals["unjudgeable"].to_numpy(bool)]
    frame = signals[["task", "agent"]].assign(priority=model.score(signals.assign(seen=0.0)))
    labelled = frame.loc[frame.index.intersection(truth.index)].assign(correct=truth)
    unreviewed = frame.loc[~frame.index.isin(truth.index) & (signals["n_reviewers"] == 0)]
    return labelled, unreviewed


def assert_same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    got, want = got.sort_index(), want.sort_index()
    assert list(got.index) == list(want.index)
    assert set(got.columns) == set(want.columns)
    for column in want.columns:
        a, b = got[column], want[column]
        if pd.api.types.is_numeric_dtype(b) or pd.api.types.is_bool_dtype(b):
            np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), atol=1e-12, err_msg=column)
        else:
            assert [None if pd.isna(x) else x for x in a] == [None if pd.isna(x) else x for x in b], column


def assert_equals_full_recompute(store) -> None:
    drain()
    assert_same_frame(triage.current_signals(store), triage.compute_signals(store))
    truth = triage.trajectory_truth(store.triage.review_history(), store.reviews.latest_resolutions("trajectory"))
    stored = store.triage.labelled_truth().set_index("trajectory_id")["correct"]
    assert dict(stored.astype(bool)) == dict(truth)
    inputs = triage.triage_inputs(store)
    labelled, unreviewed = reference_inputs(store)
    assert_same_frame(inputs.labelled, labelled)
    assert_same_frame(inputs.unreviewed, unreviewed)
    # the report (bootstrap intervals included, same seed) is then the one a full recompute gives
    mine = triage.triage_report(store, 0.9, inputs=inputs, n_boot=200)
    ref = triage.triage_report(store, 0.9, inputs=triage.TriageInputs(inputs.model, labelled, unreviewed), n_boot=200)
    assert mine["groups"] == ref["groups"] and mine["bins"] == ref["bins"]


writes = st.one_of(
    st.tuples(st.just("verdict"), st.sampled_from(REVIEWERS), st.integers(0, N_ITEMS - 1),
              st.sampled_from(("approve", "approve", "override", "reject"))),
    st.tuples(st.just("undo"), st.sampled_from(REVIEWERS)),
    st.tuples(st.just("resolve"), st.integers(0, N_ITEMS - 1), st.sampled_from(("approve", "override", "reject"))),
    st.tuples(st.just("score"), st.sampled_from(REVIEWERS), st.integers(0, N_ITEMS - 1), st.integers(0, 5)),
    st.tuples(st.just("claims"), st.integers(0, N_ITEMS - 1), st.integers(0, 3)),
    st.tuples(st.just("resave"), st.integers(0, N_ITEMS - 1), st.integers(-3, 3)),
    st.tuples(st.just("read")),  # the cache is read (and filled) part-way, then written around
)


def apply(store, service: LabelService, ids: list[str], acks: dict, op: tuple) -> None:
    kind = op[0]
    if kind == "verdict":
        _, who, i, action = op
        traj = store.trajectories.load_trajectory(ids[i])
        label = default_correction(traj.task, agent_label(traj.task, None, None, traj.outcome)) \
            if action == "override" else None
        # an override with nothing to correct (a refusal) is refused: nothing stored
        with contextlib.suppress(label_service.LabelRefused):
            acks[who] = service.write_verdict(who, traj, action, label=label)
    elif kind == "undo" and acks.get(op[1]) is not None:
        service.undo_verdict(op[1], acks.pop(op[1]))  # only a verdict can be undone, not an undo
    elif kind == "resolve":
        _, i, action = op
        summary = store.trajectories.trajectory_summary(ids[i])
        own = agent_label(summary["task"], summary["answer"], summary["answer_z"], summary["outcome"])
        label = default_correction(summary["task"], own) if action == "override" else None
        with contextlib.suppress(label_service.LabelRefused):
            service.write_resolution("merger", {"kind": "trajectory", "item_id": ids[i], "task": summary["task"]},
                                     action, label, "the spectrum shows it")
    elif kind == "score":
        _, who, i, score = op
        service.write_score(who, ids[i], score, "1")
    elif kind == "claims":
        _, i, n = op
        rows = [{"step_idx": 0, "claim_idx": k, "kind": "feature", "claim_text": f"claim {k}",
                 "verdict": "contradicted"} for k in range(n)]
        store.claims.save_claims(ids[i], "test-checker-9", rows)
    elif kind == "resave":
        _, i, minutes = op
        traj = store.trajectories.load_trajectory(ids[i])
        # a later (or earlier) copy of the run: which run speaks for its agent on the spectrum changes
        store.trajectories.save_trajectory(traj.model_copy(update={"created_at": traj.created_at
                                                                   + timedelta(minutes=minutes)}))
    elif kind == "read":
        drain()
        triage.current_signals(store)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # shrinking a store sequence takes minutes
@given(ops=st.lists(writes, min_size=1, max_size=14))
def test_after_any_writes_the_stored_aggregates_equal_a_full_recompute(demo_db, tmp_path_factory, ops):
    path = tmp_path_factory.mktemp("seq") / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        ids = [r["id"] for r in store.trajectories.list_trajectories(limit=N_ITEMS)]
        service, acks = LabelService(store), {}
        for op in ops:
            apply(store, service, ids, acks, op)
        assert_equals_full_recompute(store)
    finally:
        drain()
        store.close()


def test_writers_mark_what_they_make_stale(demo_db, tmp_path):
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        triage.current_signals(store)
        assert store.triage.stale_signal_spectra() == []
        tid = store.trajectories.list_trajectories(limit=1)[0]["id"]
        spectrum = store.trajectories.trajectory_summary(tid)["spectrum_id"]
        store.claims.save_claims(tid, "test-checker-9", [{"step_idx": 0, "claim_idx": 0, "kind": "feature",
                                                          "claim_text": "x", "verdict": "contradicted"}])
        assert store.triage.stale_signal_spectra() == [spectrum]
        assert triage.current_signals(store).at[tid, "n_contradicted"] == 1
        assert store.triage.stale_signal_spectra() == []
        # verdicts change no stored row: seen is counted on each read
        store.labels.add_review(tid, "ann", "approve")
        assert store.triage.stale_signal_spectra() == []
        assert triage.current_signals(store).at[tid, "n_reviewers"] == 1
    finally:
        store.close()


def test_a_version_7_database_upgrades_and_fills_the_signals_on_first_read(demo_db, tmp_path):
    path = tmp_path / "v7.duckdb"
    shutil.copyfile(demo_db, path)
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE triage_signals")
    con.execute("DELETE FROM schema_version WHERE version = 8")
    con.close()
    con = duckdb.connect(str(path))
    assert migrate(con) == len(MIGRATIONS) == 8
    assert con.execute("SELECT count(*) FROM triage_signals").fetchone()[0] == 0
    con.close()
    store = Store(path)
    try:
        store.labels.add_review(store.trajectories.list_trajectories(limit=1)[0]["id"], "ann", "reject")
        assert_equals_full_recompute(store)
        assert store.triage.stale_signal_spectra() == []
        assert int(store.db.scalar("SELECT count(*) FROM triage_signals")) == \
            int(store.db.scalar("SELECT count(*) FROM trajectories"))
    finally:
        store.close()


def test_concurrent_reads_and_writes_leave_nothing_missing_or_stale(demo_db, tmp_path):
    """Two threads read (and fill) the stored signals while claim checks and re-saves are written: every
    read returns every trajectory, and afterwards the table equals a full recompute."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        ids = [r["id"] for r in store.trajectories.list_trajectories(limit=N_ITEMS)]
        n = int(store.db.scalar("SELECT count(*) FROM trajectories"))
        with ThreadPoolExecutor(max_workers=2) as pool:
            reads = [pool.submit(triage.current_signals, store) for _ in range(4)]
            for i in range(0, N_ITEMS, 3):
                apply(store, LabelService(store), ids, {}, ("claims", i, 2))
                apply(store, LabelService(store), ids, {}, ("resave", i + 1, 1))
            assert all(len(r.result()) == n for r in reads)
        assert_equals_full_recompute(store)
    finally:
        drain()
        store.close()
