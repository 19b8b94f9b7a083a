"""The stored triage signals (table triage_signals, kept current on write and recomputed per stale
spectrum on read), the SQL truth of each labelled trajectory and the stored settled labels (table
settled_labels, beside verdict_state) with the review statistics read from them equal a full
recompute after any sequence of writes: verdicts (approve / override / reject), re-labels by the same
reviewer, undos, resolutions, scores, claim results, re-saved trajectories and re-saved answers, in
any order (a property test over random sequences on the demo store). Also: a database of schema
version 7 upgrades and fills the signals on its first read; one of version 8 fills the settled labels
on its first sync; a closed campaign's settled labels are its frozen ones."""
from __future__ import annotations

import contextlib
import shutil
from datetime import UTC, datetime, timedelta

import duckdb
import numpy as np
import pandas as pd
import pytest
from databases import undo_version_13
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from reviewer.services import background, stats, triage
from reviewer.services import labels as label_service
from reviewer.services.conflicts import _credibility, evaluation_frame, final_verdict, verdicts_frame
from reviewer.services.consensus import DZ_MAX, agent_label, normalise_label, same_z
from reviewer.services.labels import LabelService, default_correction
from reviewer.services.rows import group_rows
from reviewer.store import Store
from reviewer.store.database import forget_signals
from reviewer.store.review_queries import UnknownSession
from reviewer.store.schema import MIGRATIONS, migrate
from reviewer.store.triage import _STALE_SQL

REVIEWERS = ("ann", "bob", "cy")
N_ITEMS = 12  # the trajectories the writes pick from (the first of the demo's 65, several spectra)


@pytest.fixture(scope="module")
def demo_db(demo_template):
    return demo_template


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


def reference_bins(unreviewed: pd.DataFrame, labelled: pd.DataFrame) -> list[tuple]:
    """Each unreviewed answer under the lowest labelled priority of its task and agent at or above its own
    (inf: none), counted: sorted (task, agent, that priority, n), one answer at a time."""
    counts: dict[tuple, int] = {}
    for task, agent, p in unreviewed[["task", "agent", "priority"]].itertuples(index=False, name=None):
        mine = labelled[(labelled["task"] == task) & (labelled["agent"] == agent)]["priority"]
        edge = float(mine[mine >= p].min()) if (mine >= p).any() else float("inf")
        counts[(task, agent, edge)] = counts.get((task, agent, edge), 0) + 1
    return sorted((*key, n) for key, n in counts.items())


def binned_records(frame: pd.DataFrame) -> list[tuple]:
    return sorted((str(t), str(a), float(p), int(n)) for t, a, p, n in
                  frame[["task", "agent", "priority", "n"]].itertuples(index=False, name=None))


def assert_triage_equals_full_recompute(store) -> None:
    assert_same_frame(triage.current_signals(store), triage.compute_signals(store))
    truth = triage.trajectory_truth(store.triage.review_history(), store.reviews.latest_resolutions("trajectory"))
    stored = store.triage.labelled_truth().set_index("trajectory_id")["correct"]
    assert dict(stored.astype(bool)) == dict(truth)
    inputs = triage.triage_inputs(store)
    labelled, unreviewed = reference_inputs(store)
    assert_same_frame(inputs.labelled, labelled)
    assert binned_records(inputs.unreviewed) == reference_bins(unreviewed, labelled)
    # the report (bootstrap intervals included, same seed) is then the one a full recompute gives
    mine = triage.triage_report(store, 0.9, inputs=inputs, n_boot=200)
    ref = triage.triage_report(store, 0.9, inputs=triage.TriageInputs(inputs.model, labelled, unreviewed), n_boot=200)
    assert mine["groups"] == ref["groups"] and mine["bins"] == ref["bins"]


EVALUATION_COLUMNS = ["trajectory_id", "spectrum_id", "task", "agent_name", "backend", "model", "credibility",
                      "predicted", "predicted_z", "truth", "truth_z", "truth_source"]


def reference_correct(row: dict) -> bool:
    """The answer against the truth, as the stats computed it per row before it was stored."""
    predicted, truth = row.get("predicted"), row.get("truth")
    if predicted is None or (isinstance(predicted, float) and np.isnan(predicted)):
        return False
    if str(predicted).upper() != str(truth).upper():
        return False
    if row.get("truth_z") is None:
        return True
    return same_z(None if row.get("predicted_z") is None else float(row["predicted_z"]), float(row["truth_z"]), DZ_MAX)


def reference_evaluation(store, session: str | None = None) -> pd.DataFrame:
    """The evaluation rows as computed before the stored settled labels: every current verdict's
    consensus recomputed in Python."""
    resolutions = store.reviews.latest_resolutions("trajectory", session)
    out = []
    for tid, rows in group_rows(store.reviews.current_reviews(session), "trajectory_id").items():
        first = rows[0]
        own = agent_label(first["task"], first["answer"], first["answer_z"], first["outcome"])
        final = final_verdict(rows, own, resolutions.get(tid))["final"]
        if final is None or final["action"] == "reject":
            continue
        truth = normalise_label(final["label"])
        out.append({
            "trajectory_id": tid, "spectrum_id": first["spectrum_id"], "task": first["task"],
            "agent_name": first["agent_name"], "backend": first["backend"], "model": first["model"],
            "credibility": _credibility(first), "predicted": own.get("answer", own.get("type")),
            "predicted_z": own.get("z"), "truth": truth.get("answer", truth.get("type")),
            "truth_z": truth.get("z"), "truth_source": final["source"],
        })
    frame = pd.DataFrame(out, columns=EVALUATION_COLUMNS)
    return frame.assign(correct=[reference_correct(r) for r in out])


def reference_distributions(ratings: pd.DataFrame) -> dict:
    """Each rater's score distribution from one row per current score (as stats computed it before the
    store counted them)."""
    out = {}
    for rater, group in ratings.groupby("rater", sort=True):
        scores = group["score"].to_numpy(float)
        rounded = np.clip(np.rint(scores), 0, 5).astype(int)
        out[str(rater)] = {"rater_kind": str(group["rater_kind"].iloc[0]), "n": int(scores.size),
                           "mean": float(scores.mean()), "median": float(np.median(scores)),
                           "counts": {s: int((rounded == s).sum()) for s in stats.SCORES},
                           "cdf": {"x": list(stats.SCORES), "y": [float((scores <= s).mean()) for s in stats.SCORES]}}
    return out


def reference_pairs(frame: pd.DataFrame, who: str, value: str, newest: bool) -> dict:
    """{(a, b): [(a's value, b's value) per shared trajectory]} of every pair a < b of `who`, from one row
    per label (`newest`: the rows in time order, each one's newest kept)."""
    frame = frame.sort_values("created_at") if newest else frame
    table = frame.drop_duplicates(["trajectory_id", who], keep="last").pivot(
        index="trajectory_id", columns=who, values=value)
    return {(a, b): list(table[[a, b]].dropna().itertuples(index=False, name=None))
            for i, a in enumerate(sorted(table.columns)) for b in sorted(table.columns)[i + 1:]}


def reference_correlations(ratings: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (a, b), shared in reference_pairs(ratings, "rater", "score", newest=True).items():
        x, y = [s[0] for s in shared], [s[1] for s in shared]
        rho = p = float("nan")
        if len(shared) >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
            res = sps.spearmanr(x, y)
            rho, p = float(res.statistic), float(res.pvalue)
        rows.append({"rater_a": a, "rater_b": b, "n_shared": len(shared), "spearman": rho, "p_value": p})
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "n_shared", "spearman", "p_value"])


def reference_kappas(verdicts: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (a, b), shared in reference_pairs(verdicts, "reviewer", "action", newest=False).items():
        cats = sorted({c for pair in shared for c in pair})
        table = np.zeros((len(cats), len(cats)))
        for x, y in shared:
            table[cats.index(x), cats.index(y)] += 1
        rows.append({"reviewer_a": a, "reviewer_b": b, "n_shared": len(shared),
                     "agreement": float(np.mean([x == y for x, y in shared])) if shared else float("nan"),
                     "kappa": stats.kappa(table)})
    return pd.DataFrame(rows, columns=["reviewer_a", "reviewer_b", "n_shared", "agreement", "kappa"])


def reference_review_stats(store, session: str | None = None) -> dict:
    """stats.review_stats as computed before: the distributions, correlations and kappas from one row
    per current label, the evaluation rows from every current verdict in Python, each row's
    correctness computed per row."""
    ratings = store.reviews.ratings_frame(session=session)
    verdicts = verdicts_frame(store, session=session)
    evaluation = reference_evaluation(store, session).drop(columns="correct")
    settled = evaluation[evaluation["truth"].notna()] if not evaluation.empty else evaluation
    return {
        "distributions": reference_distributions(ratings),
        "correlations": reference_correlations(ratings) if not ratings.empty else pd.DataFrame(columns=["spearman"]),
        "kappas": reference_kappas(verdicts) if not verdicts.empty else pd.DataFrame(),
        "scores": stats.task_scores(settled) if not settled.empty else pd.DataFrame(),
        "coverage": stats.accuracy_vs_coverage(evaluation[evaluation["task"] == "verify"])
        if not evaluation.empty else pd.DataFrame(),
        # read from the label rows themselves, not from summaries kept on write: nothing to recompute
        "failure_modes": stats.failure_modes(store.step_judgments.failure_mode_counts(session)),
        "judges": stats.judge_report(store, session),
    }


def assert_same_review_stats(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    assert got["distributions"].keys() == want["distributions"].keys()
    for rater, mine in got["distributions"].items():  # sums of counts against means of rows: float rounding
        theirs = want["distributions"][rater]
        assert {k: v for k, v in mine.items() if k != "mean"} == {k: v for k, v in theirs.items() if k != "mean"}
        assert mine["mean"] == pytest.approx(theirs["mean"], rel=1e-12)
    for key in ("correlations", "kappas", "scores", "coverage"):
        pd.testing.assert_frame_equal(got[key].reset_index(drop=True), want[key].reset_index(drop=True),
                                      check_dtype=False, check_index_type=False, obj=key)


def assert_settled_labels_equal_a_full_recompute(store, session: str | None = None) -> None:
    got = evaluation_frame(store, session=session)
    want = reference_evaluation(store, session)
    assert list(got.columns) == [*EVALUATION_COLUMNS, "correct"]
    assert_same_frame(got.set_index("trajectory_id"), want.set_index("trajectory_id"))


def assert_equals_full_recompute(store) -> None:
    background.drain()
    assert_settled_labels_equal_a_full_recompute(store)
    assert_same_review_stats(stats.review_stats(store), reference_review_stats(store))
    assert_triage_equals_full_recompute(store)


writes = st.one_of(
    st.tuples(st.just("verdict"), st.sampled_from(REVIEWERS), st.integers(0, N_ITEMS - 1),
              st.sampled_from(("approve", "approve", "override", "reject"))),
    st.tuples(st.just("undo"), st.sampled_from(REVIEWERS)),
    st.tuples(st.just("resolve"), st.integers(0, N_ITEMS - 1), st.sampled_from(("approve", "override", "reject"))),
    st.tuples(st.just("score"), st.sampled_from(REVIEWERS), st.integers(0, N_ITEMS - 1), st.integers(0, 5)),
    st.tuples(st.just("claims"), st.integers(0, N_ITEMS - 1), st.integers(0, 3)),
    st.tuples(st.just("resave"), st.integers(0, N_ITEMS - 1), st.integers(-3, 3)),
    st.tuples(st.just("reanswer"), st.integers(0, N_ITEMS - 1), st.integers(0, 2)),
    st.tuples(st.just("read")),  # the cache is read (and filled) part-way, then written around
)


def correction(task: str, own: dict) -> dict:
    """An override's corrected label: the other answer (yes/no), or another class at the agent's z (verify,
    where the form starts with none)."""
    if task != "verify" or not own:
        return default_correction(task, own)
    return {"type": "QSO" if own.get("type") != "QSO" else "GALAXY", "z": own.get("z")}

def apply(store, service: LabelService, ids: list[str], acks: dict, op: tuple) -> None:
    kind = op[0]
    if kind == "verdict":
        _, who, i, action = op
        traj = store.trajectories.load_trajectory(ids[i])
        label = correction(traj.task, agent_label(traj.task, None, None, traj.outcome)) \
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
        label = correction(summary["task"], own) if action == "override" else None
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
    elif kind == "reanswer":
        # the same run saved again with another answer: no label changes, the settled label's
        # prediction (and its correctness) does
        _, i, k = op
        traj = store.trajectories.load_trajectory(ids[i])
        outcome = dict(traj.outcome)
        if traj.task == "verify":
            outcome["z"] = float(outcome.get("z") or 0.0) + (0.0, 0.002, 0.5)[k]
            outcome["credibility"] = ("HIGH", "MEDIUM", "LOW")[k]
            outcome["type"] = ("STAR", "GALAXY", "STAR")[k]
            outcome.pop("brief", None)
        else:
            outcome["prediction"] = outcome["answer"] = ("YES", "NO", "YES")[k]
        store.trajectories.save_trajectory(traj.model_copy(update={"outcome": outcome}))
    elif kind == "read":
        background.drain()
        triage.current_signals(store)
        triage.triage_inputs(store)  # the answers' priorities are kept at the signals' mark
        stats.review_stats(store)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # shrinking a store sequence takes minutes
@given(ops=st.lists(writes, min_size=1, max_size=14))
# a re-saved answer under a settled label (verify, vet): its prediction and correctness follow, no label written
@example(ops=[("verdict", "ann", 0, "approve"), ("read",), ("reanswer", 0, 2)])
@example(ops=[("verdict", "ann", 1, "override"), ("read",), ("reanswer", 1, 0)])
# contradicted claims raise an unreviewed answer's priority after its task's priorities were read and kept
@example(ops=[("verdict", "ann", 1, "approve"), ("verdict", "bob", 2, "reject"), ("read",), ("claims", 0, 3),
              ("claims", 3, 2)])
# a rater's newer score replaces their older one in the correlation of two raters
@example(ops=[("score", "ann", 0, 5), ("score", "bob", 0, 1), ("score", "ann", 1, 2), ("score", "bob", 1, 4),
              ("score", "ann", 2, 3), ("score", "bob", 2, 3), ("read",), ("score", "ann", 0, 0)])
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
        background.drain()
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


def test_old_writes_skip_the_joins_only_while_the_signals_cover_exactly_the_trajectories(demo_db, tmp_path):
    """Nothing written in the last minutes and the cached signals' trajectories are the trajectories:
    the stale check answers from counts and id checksums without the anti joins. A row missing, or a
    row of a trajectory that is gone in place of one that is there (the same count), is still found."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        triage.current_signals(store)
        store.db.execute("UPDATE trajectories SET saved_at = saved_at - INTERVAL 1 DAY")
        store.db.execute("UPDATE claim_results SET created_at = created_at - INTERVAL 1 DAY")
        ran = []
        execute = store.db.execute
        store.db.execute = lambda sql, params=None: (ran.append(sql), execute(sql, params))[1]
        assert store.triage.stale_signal_spectra() == [] and _STALE_SQL not in ran
        first, second = store.db.execute("SELECT trajectory_id, spectrum_id FROM triage_signals "
                                         "ORDER BY trajectory_id LIMIT 2").fetchall()
        # rows changed by hand move no mark (only the store's writers do): each check below is a first one
        store.db.execute("DELETE FROM triage_signals WHERE trajectory_id = ?", [first[0]])
        store.db.in_step_at.clear()
        assert store.triage.stale_signal_spectra() == [first[1]] and _STALE_SQL in ran
        triage.current_signals(store)
        assert store.triage.stale_signal_spectra() == []
        store.db.execute("UPDATE triage_signals SET trajectory_id = 'gone' WHERE trajectory_id = ?", [second[0]])
        store.db.in_step_at.clear()
        assert store.triage.stale_signal_spectra() == [second[1]]
    finally:
        store.close()


def test_the_stale_check_is_skipped_until_something_the_signals_are_read_from_is_written(demo_db, tmp_path,
                                                                                         monkeypatch):
    """After a check that found nothing stale, the next is skipped while no trajectory, claim result or
    dropped row moved the mark (a verdict does not: the signals count reviewers when read); a claim check,
    a trajectory saved again, or rows dropped by a write that then failed, are found."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        ids = [t["id"] for t in store.trajectories.list_trajectories(limit=3)]
        triage.current_signals(store)
        ran = []
        execute = store.db.execute
        monkeypatch.setattr(store.db, "execute", lambda sql, params=None: (ran.append(sql), execute(sql, params))[1])

        def checked() -> bool:
            ran.clear()
            assert store.triage.stale_signal_spectra() == []
            return any(sql == _STALE_SQL or "NOT EXISTS" in sql for sql in ran)

        assert not checked()
        store.labels.add_review(ids[0], "ann", "reject")
        assert not checked()
        store.claims.save_claims(ids[0], "test-checker-9", [{"step_idx": 0, "claim_idx": 0, "kind": "feature",
                                                             "claim_text": "c", "verdict": "contradicted"}])
        assert triage.current_signals(store).loc[ids[0], "n_contradicted"] == 1
        assert not checked()
        traj = store.trajectories.load_trajectory(ids[1])
        store.trajectories.save_trajectory(traj.model_copy(update={"created_at": traj.created_at + timedelta(minutes=1)}))
        assert store.triage.stale_signal_spectra() != []
        triage.current_signals(store)
        assert not checked()
        # a write that drops its rows, then fails: the mark of its inputs did not move
        spectrum = store.trajectories.trajectory_summary(ids[2])["spectrum_id"]
        forget_signals(store.db, "spectrum_id = ?", [spectrum])
        assert store.triage.stale_signal_spectra() == [spectrum]
    finally:
        store.close()


def test_signals_that_stay_stale_are_computed_in_full_with_the_same_truth(demo_db, tmp_path, monkeypatch):
    """When every read finds rows stale again (writes racing it STORE_TRIES times), the signals are
    computed in full: the triage's inputs, truth included, are those the stored rows give."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    with Store(path) as store:
        ids = [t["id"] for t in store.trajectories.list_trajectories(limit=6)]
        for i, tid in enumerate(ids):
            store.labels.add_review(tid, "ann", "approve" if i % 3 else "reject")
        stored = triage.triage_inputs(store)
        monkeypatch.setattr(type(store.triage), "stale_signal_spectra", lambda self: [None])
        full = triage.triage_inputs(store)
    assert_same_frame(full.labelled, stored.labelled)
    assert binned_records(full.unreviewed) == binned_records(stored.unreviewed)
    assert sorted(full.labelled.index) == sorted(ids) and (~full.labelled.loc[ids[0:1], "correct"]).all()


def undo_versions_11_to_13(con) -> None:
    """Undo schema versions 11 (indexes), 12 (vi_state) and 13 (current labels), for a file taken back
    to an earlier version."""
    con.execute("DROP INDEX steps_trajectory")
    con.execute("DROP INDEX claim_results_trajectory")
    con.execute("DROP TABLE vi_state")
    undo_version_13(con)


def test_a_version_7_database_upgrades_and_fills_the_signals_on_first_read(demo_db, tmp_path):
    path = tmp_path / "v7.duckdb"
    shutil.copyfile(demo_db, path)
    con = duckdb.connect(str(path))
    undo_versions_11_to_13(con)
    con.execute("DROP TABLE file_stamps")
    con.execute("DROP TABLE settled_labels")
    con.execute("DROP TABLE triage_signals")
    con.execute("DELETE FROM schema_version WHERE version >= 8")
    con.close()
    con = duckdb.connect(str(path))
    assert migrate(con) == len(MIGRATIONS)
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


def test_a_version_8_database_upgrades_and_fills_the_settled_labels_on_first_sync(demo_db, tmp_path):
    """Verdicts written at schema 8 (a consensus in verdict_state, no settled labels) are read right after
    the upgrade: the first sync stores every labelled trajectory's settled label."""
    path = tmp_path / "v8.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        ids = [r["id"] for r in store.trajectories.list_trajectories(limit=N_ITEMS)]
        service, acks = LabelService(store), {}
        for op in [("verdict", "ann", 0, "approve"), ("verdict", "bob", 0, "approve"), ("verdict", "ann", 1, "override"),
                   ("verdict", "ann", 2, "approve"), ("verdict", "bob", 2, "override"), ("verdict", "cy", 3, "reject"),
                   ("resolve", 2, "override"), ("verdict", "ann", 4, "approve"), ("verdict", "ann", 5, "override")]:
            apply(store, service, ids, acks, op)
        background.drain()
    finally:
        store.close()
    con = duckdb.connect(str(path))
    undo_versions_11_to_13(con)
    con.execute("DROP TABLE file_stamps")
    con.execute("DROP TABLE settled_labels")
    con.execute("DELETE FROM schema_version WHERE version >= 9")
    n_labelled = con.execute("SELECT count(*) FROM verdict_state").fetchone()[0]
    assert n_labelled >= 5
    con.close()
    con = duckdb.connect(str(path))
    assert migrate(con) == len(MIGRATIONS)
    assert con.execute("SELECT count(*) FROM settled_labels").fetchone()[0] == 0
    con.close()
    store = Store(path)
    try:
        assert len(store.verdict_state.verdict_states_behind()) == n_labelled
        assert_equals_full_recompute(store)
        assert store.verdict_state.verdict_states_behind() == []
        assert int(store.db.scalar("SELECT count(*) FROM settled_labels")) == n_labelled
        assert int(store.db.scalar("SELECT count(*) FROM settled_labels WHERE settled")) == len(reference_evaluation(store)) > 0
    finally:
        store.close()


def test_a_version_12_database_upgrades_with_its_settled_labels_tasks_and_current_labels(demo_db, tmp_path):
    """Settled labels stored at schema 12 gain their trajectory's task in the upgrade (no label written
    since, so no sync recomputes them), and the statistics read after it are a full recompute's."""
    path = tmp_path / "v12.duckdb"
    shutil.copyfile(demo_db, path)
    with Store(path) as store:
        ids = [r["id"] for r in store.trajectories.list_trajectories(limit=N_ITEMS)]
        service, acks = LabelService(store), {}
        for op in [("verdict", "ann", 0, "approve"), ("verdict", "bob", 0, "approve"), ("verdict", "ann", 1, "override"),
                   ("score", "ann", 1, 4), ("score", "bob", 1, 2), ("score", "ann", 1, 5), ("verdict", "ann", 4, "approve"),
                   ("verdict", "cy", 5, "approve")]:
            apply(store, service, ids, acks, op)
        background.drain()
        stats.review_stats(store)  # every settled label stored
    con = duckdb.connect(str(path))
    undo_version_13(con)
    con.close()
    with Store(path) as store:
        assert store.verdict_state.verdict_states_behind() == []
        assert store.db.scalar("SELECT count(*) FROM settled_labels s JOIN trajectories t ON t.id = s.trajectory_id "
                               "WHERE s.settled AND s.task IS NOT DISTINCT FROM t.task") == 4
        assert_equals_full_recompute(store)


def test_a_closed_campaigns_settled_labels_are_its_frozen_ones(demo_db, tmp_path):
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        ids = [r["id"] for r in store.trajectories.list_trajectories(limit=N_ITEMS)]
        sid = store.sessions.create_session("april", "verdicts", ids[:4], reviewers=["ann", "bob"])
        campaign = store.sessions.get_session(sid)
        service = LabelService(store)
        for i, action in enumerate(("approve", "override", "approve", "reject")):
            traj = store.trajectories.load_trajectory(ids[i])
            label = correction(traj.task, agent_label(traj.task, None, None, traj.outcome)) \
                if action == "override" else None
            service.write_verdict("ann", traj, action, label=label, campaign=campaign)
        service.write_verdict("bob", store.trajectories.load_trajectory(ids[0]), "reject", campaign=campaign)
        service.write_verdict("ann", store.trajectories.load_trajectory(ids[5]), "approve")  # outside the campaign
        for i, (ann, bob) in enumerate(((4, 5), (2, 2), (1, 3))):
            service.write_score("ann", ids[i], ann, "1", campaign=campaign)
            service.write_score("bob", ids[i], bob, "1", campaign=campaign)
        service.write_score("bob", ids[5], 0, "1")  # outside the campaign
        assert_settled_labels_equal_a_full_recompute(store, "april")
        assert sorted(evaluation_frame(store, session="april")["trajectory_id"]) == sorted(ids[1:3])
        closed = datetime.now(UTC)
        store.sessions.close_session(sid, at=closed)
        # written into the campaign after it closed (not through the service, which refuses it): not frozen in
        store.labels.add_review(ids[3], "bob", "approve", session_id=sid, created_at=closed + timedelta(seconds=1))
        store.labels.add_review(ids[1], "ann", "clear", session_id=sid, created_at=closed + timedelta(seconds=1))
        assert_settled_labels_equal_a_full_recompute(store, "april")
        assert_settled_labels_equal_a_full_recompute(store, sid)
        store.labels.add_rating(ids[0], "ann", 0, "1", session_id=sid, created_at=closed + timedelta(seconds=1))
        # the campaign's statistics are of its frozen labels: ann and bob's three shared scores, ann's and
        # bob's verdicts on ids[0] (approve, reject) and nothing written after it closed
        frozen = stats.review_stats(store, session="april")
        assert_same_review_stats(frozen, reference_review_stats(store, "april"))
        assert frozen["distributions"]["ann"]["counts"] == {0: 0, 1: 1, 2: 1, 3: 0, 4: 1, 5: 0}
        assert frozen["correlations"].iloc[0]["n_shared"] == 3 and frozen["kappas"].iloc[0]["n_shared"] == 1
        assert sorted(evaluation_frame(store, session="april")["trajectory_id"]) == sorted(ids[1:3])
        assert_equals_full_recompute(store)  # every label, the campaign's included
        with pytest.raises(UnknownSession):
            evaluation_frame(store, session="nope")
    finally:
        background.drain()
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
        background.drain()
        store.close()


def test_concurrent_stats_reads_and_verdicts_leave_the_settled_labels_current(demo_db, tmp_path):
    """Two threads read the review statistics (each read syncs and stores settled labels) while verdicts
    and resolutions are written through the label service (which syncs them too): no write fails, and
    afterwards the settled labels equal a full recompute."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        ids = [r["id"] for r in store.trajectories.list_trajectories(limit=N_ITEMS)]
        service, acks = LabelService(store), {}
        with ThreadPoolExecutor(max_workers=2) as pool:
            reads = [pool.submit(stats.review_stats, store) for _ in range(6)]
            for i in range(N_ITEMS):
                apply(store, service, ids, acks, ("verdict", REVIEWERS[i % 3], i, ("approve", "override", "reject")[i % 3]))
                apply(store, service, ids, acks, ("verdict", REVIEWERS[(i + 1) % 3], i, "approve"))
                if i % 4 == 0:
                    apply(store, service, ids, acks, ("resolve", i, "override"))
            for r in reads:
                r.result()
        assert_equals_full_recompute(store)
    finally:
        background.drain()
        store.close()


def test_signals_kept_stale_by_writers_are_computed_in_full_with_the_same_inputs(demo_db, tmp_path, monkeypatch):
    """When concurrent writes keep the stored signals stale past STORE_TRIES, the triage computes every
    signal instead (`_split_in_full`): the same labelled and unreviewed answers as the stored read."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    store = Store(path)
    try:
        service = LabelService(store)
        for i, tid in enumerate(r["id"] for r in store.trajectories.list_trajectories(limit=6)):
            service.write_verdict("ann", store.trajectories.load_trajectory(tid), ("approve", "reject")[i % 2])
        stored = triage.triage_inputs(store)
        monkeypatch.setattr(triage, "_read_fresh", lambda *_: None)  # stale at every try
        full = triage.triage_inputs(store)
        assert len(stored.labelled) == 6 and stored.unreviewed["n"].sum() > 0
        assert_same_frame(full.labelled, stored.labelled)
        assert binned_records(full.unreviewed) == binned_records(stored.unreviewed)
    finally:
        background.drain()
        store.close()


def test_stored_priorities_follow_the_weights_and_the_rows_written(demo_db, tmp_path):
    """With weights stored, each answered trajectory's priority is stored with its signals: all of them
    priced again under new weights, only a checked spectrum's rows after a claim check; the report's
    inputs are those of a full recompute at every step."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    with Store(path) as store:
        ids = [t["id"] for t in store.trajectories.list_trajectories(limit=4)]
        for i, tid in enumerate(ids):
            store.labels.add_review(tid, "ann", "approve" if i % 2 else "reject")
        first = triage.refresh(store)
        assert_triage_equals_full_recompute(store)
        answered = int(store.db.scalar("SELECT count(*) FROM triage_signals WHERE NOT unjudgeable"))
        assert store.triage.unpriced(first.id).empty and answered > 10
        store.triage.save_triage_model("default", list(triage.FEATURES), [-2.0, 2.0, 1.0, 1.0, 2.0, -1.0])
        second = triage.stored_model(store)
        assert len(store.triage.unpriced(second.id)) == answered
        assert_triage_equals_full_recompute(store)
        assert store.triage.unpriced(second.id).empty
        spectrum = store.trajectories.trajectory_summary(ids[0])["spectrum_id"]
        store.claims.save_claims(ids[0], "test-checker-9", [{"step_idx": 0, "claim_idx": 0, "kind": "feature",
                                                             "claim_text": "c", "verdict": "contradicted"}])
        triage.current_signals(store)  # the spectrum's signals stored again, not priced yet
        siblings = int(store.db.scalar("SELECT count(*) FROM triage_signals WHERE spectrum_id = ? AND NOT unjudgeable",
                                       [spectrum]))
        assert len(store.triage.unpriced(second.id)) == siblings < answered
        assert_triage_equals_full_recompute(store)


def test_the_answers_priorities_are_read_once_for_the_verdicts_and_again_after_a_trajectory(demo_db, tmp_path,
                                                                                            monkeypatch):
    """The report's unreviewed answers are every answer less the labelled ones: every answer's priority is
    read once and kept while the signals' mark and the weights stand. Verdicts move neither, so they read
    only the labelled answers; a new trajectory, a claim check or new weights read them all again."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    with Store(path) as store:
        reads = []
        priced_answers = store.triage.priced_answers
        monkeypatch.setattr(store.triage, "priced_answers", lambda: reads.append(1) or priced_answers())
        ids = [t["id"] for t in store.trajectories.list_trajectories(limit=6)]
        for i, tid in enumerate(ids[:3]):
            store.labels.add_review(tid, "ann", "approve" if i % 2 else "reject")
        triage.refresh(store)
        before = triage.triage_inputs(store)
        assert_triage_equals_full_recompute(store)
        assert reads, "every answer's priority was never read"
        reads.clear()
        for i, tid in enumerate(ids[3:]):
            store.labels.add_review(tid, "bob", "approve" if i % 2 else "reject")
            assert_triage_equals_full_recompute(store)
        assert not reads  # verdicts: the kept priorities
        copy = store.trajectories.load_trajectory(ids[0]).model_copy(update={"id": "a-new-run-of-the-same-spectrum"})
        store.trajectories.save_trajectory(copy)
        after = triage.triage_inputs(store)
        assert after.unreviewed["n"].sum() == before.unreviewed["n"].sum() - 3 + 1  # 3 more labelled, 1 new answer
        assert_triage_equals_full_recompute(store)
        assert reads
        reads.clear()
        store.claims.save_claims(ids[4], "test-checker-9", [{"step_idx": 0, "claim_idx": 0, "kind": "feature",
                                                             "claim_text": "c", "verdict": "contradicted"}])
        assert_triage_equals_full_recompute(store)
        assert reads
        reads.clear()
        store.triage.save_triage_model("default", list(triage.FEATURES), [-2.0, 2.0, 1.0, 1.0, 2.0, -1.0])
        assert_triage_equals_full_recompute(store)
        assert reads


def test_after_labels_alone_only_the_trajectories_labelled_since_are_read_again(demo_db, tmp_path, monkeypatch):
    """The labelled answers are kept with the database while the signals' mark and the weights stand: after
    verdicts, undos and resolutions only the trajectories they name are read again and their rows replaced,
    and the report's inputs stay those of a full recompute."""
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    with Store(path) as store:
        service = LabelService(store)
        read = []
        priced_labelled = store.triage.priced_labelled
        monkeypatch.setattr(store.triage, "priced_labelled",
                            lambda model_id, ids=None: read.append(ids) or priced_labelled(model_id, ids))
        trajectories = store.trajectories.list_trajectories(limit=6)
        ids = [t["id"] for t in trajectories]
        for i, tid in enumerate(ids[:3]):
            store.labels.add_review(tid, "ann", "approve" if i % 2 else "reject")
        triage.refresh(store)
        assert_triage_equals_full_recompute(store)
        assert None in read  # the first read is whole
        read.clear()
        assert_triage_equals_full_recompute(store)
        assert read == []  # nothing written: the kept rows
        ack = service.write_verdict("bob", store.trajectories.load_trajectory(ids[3]), "reject")
        assert_triage_equals_full_recompute(store)
        assert read == [[ids[3]]]
        read.clear()
        service.undo_verdict("bob", ack)  # its only verdict withdrawn: its row leaves the labelled answers
        inputs = triage.triage_inputs(store)
        assert ids[3] not in inputs.labelled.index and read == [[ids[3]]]
        assert_triage_equals_full_recompute(store)
        read.clear()
        store.labels.add_review(ids[0], "bob", "approve")  # ann rejected it: a conflict, then resolved
        assert_triage_equals_full_recompute(store)
        store.reviews.add_resolution("trajectory", ids[0], "merger", "approve")
        assert_triage_equals_full_recompute(store)
        assert read == [[ids[0]], [ids[0]]]
        assert triage.triage_inputs(store).labelled.loc[ids[0], "correct"]
        read.clear()
        signals = triage.compute_signals(store)
        refusal = signals.index[signals["unjudgeable"].to_numpy(bool)][0]  # the demo holds refusals
        store.labels.add_review(refusal, "bob", "reject")  # a refusal has no answer to accept unseen
        assert refusal not in triage.triage_inputs(store).labelled.index and read == [[refusal]]
        assert_triage_equals_full_recompute(store)


def test_the_trajectories_labelled_between_two_marks_and_a_row_committed_out_of_order(demo_db, tmp_path):
    path = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_db, path)
    with Store(path) as store:
        ids = [t["id"] for t in store.trajectories.list_trajectories(limit=3)]
        before = store.triage.labels_mark()
        store.labels.add_review(ids[1], "ann", "approve")
        store.labels.add_review(ids[1], "bob", "reject")
        store.reviews.add_resolution("trajectory", ids[2], "merger", "reject")
        after = store.triage.labels_mark()
        assert store.triage.labelled_between(before, after) == sorted(ids[1:])
        assert store.triage.labelled_between(after, after) == []
        # one row more than those above the earlier newest seq: a row took its seq before that mark was
        # read and committed after it, which `seq >` cannot find
        assert store.triage.labelled_between((before[0] - 1, *before[1:]), after) is None
        assert store.triage.labelled_between((*before[:2], before[2] - 1, before[3]), after) is None
