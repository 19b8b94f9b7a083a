"""Triage (reviewer/services/triage.py): the regularised logistic fit recovers known weights, the defaults hold
until there are enough verdicts, the signals come out of a real store (the demo spectra with the rules
and FORMA trajectories), the decision margin the rules policy records is the one its measurements give,
the cached priorities drive the queue's "priority" order, and the abstention estimate is built from
the verdicts with bootstrap intervals."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from false_claims import add_contradicted_claims

from agents.vet.evidence import MARGIN_CAP, decision_margin
from reviewer.services import triage


# -- the fit -------------------------------------------------------------------------------------
def synthetic(n: int, weights: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.uniform(0, 1, size=(n, len(weights) - 1))])
    y = (rng.uniform(size=n) < triage.sigmoid(X @ weights)).astype(float)
    return X, y


def test_logistic_fit_recovers_known_weights():
    true = np.array([-2.0, 1.5, -1.0, 2.5, 0.5, -0.8])
    X, y = synthetic(40_000, true, seed=1)
    fitted = triage.fit_logistic(X, y, ridge=1e-6)
    assert np.max(np.abs(fitted - true)) < 0.2
    # and it is the maximum of the likelihood: the score (gradient) vanishes there
    assert np.max(np.abs(X.T @ (triage.sigmoid(X @ fitted) - y))) / len(y) < 1e-6


def test_the_penalty_pulls_toward_the_prior_and_keeps_separable_data_finite():
    X, y = synthetic(300, np.array([-1.0, 2.0, 0.0]), seed=2)
    X[:, 2] = 0.0  # a signal the labels never exercise
    prior = np.array([0.0, 0.0, 1.7])
    w = triage.fit_logistic(X, y, prior=prior, ridge=1.0)
    assert w[2] == pytest.approx(1.7, abs=1e-6)  # keeps its prior weight
    sep_X = np.column_stack([np.ones(40), np.r_[np.zeros(20), np.ones(20)]])
    sep_y = np.r_[np.zeros(20), np.ones(20)]  # perfectly separable
    w = triage.fit_logistic(sep_X, sep_y, ridge=1.0)
    assert np.all(np.isfinite(w)) and w[1] > 0
    strong = triage.fit_logistic(sep_X, sep_y, ridge=100.0)
    assert abs(strong[1]) < abs(w[1])  # more penalty, smaller weight


def training_frame(n: int, errors: int) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.uniform(0, 1, size=(n, len(triage.FEATURES))), columns=list(triage.FEATURES))
    frame["error"] = [1] * errors + [0] * (n - errors)
    return frame


def test_default_weights_until_enough_verdicts_of_both_kinds():
    few = triage.fit_model(training_frame(triage.MIN_LABELS - 1, 10))
    assert few.kind == "default" and tuple(few.weights) == triage.DEFAULT_WEIGHTS
    assert str(triage.MIN_LABELS) in few.info["why"]
    one_sided = triage.fit_model(training_frame(3 * triage.MIN_LABELS, triage.MIN_PER_CLASS - 1))
    assert one_sided.kind == "default"
    enough = triage.fit_model(training_frame(3 * triage.MIN_LABELS, 20))
    assert enough.kind == "fitted" and enough.n_labels == 3 * triage.MIN_LABELS and enough.n_errors == 20
    assert tuple(enough.weights) != triage.DEFAULT_WEIGHTS


# -- signals on a real store ---------------------------------------------------------------------
# (demo_store: each test's own copy of the demo database, tests/conftest.py)


def test_the_rules_policy_records_its_margin_and_it_matches_the_measurements(demo_store):
    """The outcome's margin (added by agents/vet) gives the same answer as the trajectory, and the
    margin recomputed from the measurements its steps recorded (how older trajectories get one) is the
    recorded one."""
    import kb

    vet = [t for t in demo_store.trajectories.list_trajectories(agent_name="vet")
           if t["outcome"]["status"] != "unjudgeable"]  # a refusal decides nothing: no margin
    assert vet
    recorded = demo_store.triage.recorded_measurements([t["id"] for t in vet])
    for row in vet:
        margin = row["outcome"]["margin"]
        assert margin["answer"] == row["answer"] == row["outcome"]["prediction"]
        assert 0.0 <= margin["value"] <= MARGIN_CAP
        again = triage._margin_from_measurements(row["task"], row["answer"], recorded[row["id"]])
        assert again == pytest.approx(margin["value"])
    # a leaf right on its threshold has margin 0, one far away the cap
    task = kb.task("a")
    from agents.vet.evidence import Measurement

    values = {m: Measurement(m, m, "x", 20.0) for m in ("hdelta_ew", "hgamma_ew", "hbeta_ew", "snr")}
    values["balmer_ew_mean"] = Measurement("balmer_ew_mean", "mean", "mean_of",
                                           float(task["decision"]["require"][0]["value"]))
    values["cak_depth"] = Measurement("cak_depth", "K", "line_depth", 0.3)
    values["cak_hhe_ratio"] = Measurement("cak_hhe_ratio", "ratio", "ratio_of", 0.1)
    at_threshold = decision_margin(task, values)
    assert at_threshold["value"] == 0.0 and at_threshold["measure"] == "balmer_ew_mean"


def test_signals_of_the_demo_store(demo_store):
    signals = triage.compute_signals(demo_store)
    rows = {r["id"]: r for r in demo_store.trajectories.list_trajectories()}
    assert set(signals.index) == set(rows)
    for f in triage.FEATURES:
        assert signals[f].between(0, 1).all(), f
    vet = signals[signals["agent"].str.startswith("vet/") & ~signals["unjudgeable"]]
    verify = signals[signals["agent"].str.startswith("verify/")]
    assert len(vet) and len(verify)
    assert vet["margin"].notna().all()  # every rules answer has its margin (refusals have none)
    assert np.allclose(vet["closeness"], 1 - vet["margin"].clip(0, 1))
    assert (verify["closeness"] == triage.UNKNOWN).all()
    for tid, row in verify.iterrows():  # a verify item's credibility is its own
        assert row["low_credibility"] == triage.CREDIBILITY_RISK[rows[tid]["credibility"]]
    counts = demo_store.claims.claim_counts(signals.index)
    assert all(signals.at[t, "n_contradicted"] == counts.get(t, {}).get("contradicted", 0) for t in signals.index)
    assert (signals["seen"] == 0).all() and (signals["n_reviewers"] == 0).all()

    # an older trajectory without the margin in its outcome gets it from its recorded measurements
    tid = vet.index[0]
    traj = demo_store.trajectories.load_trajectory(tid)
    traj.outcome.pop("margin")
    demo_store.trajectories.save_trajectory(traj)
    again = triage.compute_signals(demo_store)
    assert again.at[tid, "margin"] == pytest.approx(signals.at[tid, "margin"])


def test_disagreement_between_agents_on_the_same_spectrum_and_task(demo_store):
    row = demo_store.trajectories.list_trajectories(agent_name="vet", task="a")[0]
    other = demo_store.trajectories.load_trajectory(row["id"])
    other.id = "llm-" + row["id"]
    other.agent = other.agent.model_copy(update={"backend": "openai", "model": "some-vlm"})
    flipped = "NO" if row["answer"] == "YES" else "YES"
    other.outcome = {"status": "answered", "prediction": flipped, "answer": flipped}
    demo_store.trajectories.save_trajectory(other)
    signals = triage.compute_signals(demo_store)
    assert signals.at[row["id"], "disagreement"] > 0
    assert signals.at[other.id, "disagreement"] > 0
    assert signals.at[other.id, "closeness"] == triage.UNKNOWN  # an LLM records no margin
    same_spectrum_other_task = [t["id"] for t in demo_store.trajectories.list_trajectories(agent_name="vet")
                                if t["spectrum_id"] == row["spectrum_id"] and t["task"] != "a"]
    # the vet-verify comparison only concerns YES answers of tasks whose positive rule names a class
    for tid in same_spectrum_other_task:
        assert signals.at[tid, "disagreement"] == 0 or signals.at[tid, "answer"] == "YES"


def test_the_inputs_of_some_spectra_are_those_rows_of_a_full_read(demo_store):
    """A refresh after a verdict reads one spectrum's trajectories with their own claim results and
    verdicts only; what it reads must be exactly the full read's rows of them (reviewers counted, a
    withdrawn verdict not, contradicted claims counted, other spectra's labels ignored)."""
    store = demo_store
    false_claims = store.trajectories.load_trajectory(add_contradicted_claims(store)).spectrum_id
    rows = store.trajectories.list_trajectories()
    spectra = sorted({r["spectrum_id"] for r in rows})
    picked = [false_claims, *[s for s in spectra if s != false_claims][:2]]
    for i, row in enumerate(r for r in rows if r["spectrum_id"] in picked):
        store.labels.add_review(row["id"], "ann", "approve")
        store.labels.add_review(row["id"], "bo", "override" if i % 2 else "approve", label={"answer": "YES"})
        if i % 3 == 0:
            store.labels.add_review(row["id"], "bo", "clear")
    for r in rows[::2]:  # other spectra's items labelled too: the full read counts them, the picked one must not
        if r["spectrum_id"] not in picked:
            store.labels.add_review(r["id"], "cy", "approve")
    full = {r["trajectory_id"]: r for r in store.triage.triage_items()}
    assert any(r["n_reviewers"] == 2 for r in full.values()) and any(r["n_reviewers"] == 1 for r in full.values())
    assert any(r["contradicted"] for r in full.values())
    for subset, task in (([picked[0]], None), (picked, None), (picked, "a"), (spectra, None), (None, "a")):
        some = store.triage.triage_items(task, subset)
        want = [r for r in full.values() if (subset is None or r["spectrum_id"] in subset)
                and (task is None or r["task"] == task)]
        assert some == sorted(want, key=lambda r: (r["created_at"], r["trajectory_id"])), (subset, task)
        assert some  # every case reads some rows


def test_refresh_caches_priorities_and_the_queue_sorts_by_them(demo_store):
    model = triage.refresh(demo_store)
    assert model.kind == "default" and model.id is not None  # no verdicts yet
    cached = demo_store.triage.priorities()
    assert set(cached) == {r["id"] for r in demo_store.trajectories.list_trajectories()}
    refused = set(signals_refused(demo_store))
    assert refused  # the demo's M0 star cannot be judged for tasks a and wd: first, at priority 1
    assert all((c["priority"] == 1) == (tid in refused) and 0 < c["priority"] <= 1
               and set(c["signals"]) == set(triage.FEATURES) for tid, c in cached.items())
    queue = demo_store.queue.queue_items(order="priority", limit=1000)
    priorities = [r["priority"] for r in queue]
    assert priorities == sorted(priorities, reverse=True)
    top = queue[0]["trajectory_id"]
    assert demo_store.queue.queue_position(top, order="priority") == 0

    # a contradicted claim raises an item's priority (default weights)
    last = queue[-1]["trajectory_id"]
    demo_store.claims.save_claims(last, "test-checker", [{"step_idx": 1, "claim_idx": 0, "kind": "feature",
                                                   "claim_text": "H-beta in emission", "verdict": "contradicted"}])
    triage.refresh(demo_store, [last], refit=False)
    assert demo_store.triage.priorities([last])[last]["priority"] > cached[last]["priority"]

    # after a verdict, the label service's one call recomputes that item with the stored weights
    demo_store.labels.add_review(top, "ann", "approve")
    again = triage.refresh(demo_store, [top], refit=False)
    assert again.id == model.id
    after = demo_store.triage.priorities([top])[top]
    assert after["signals"]["seen"] == 0.5 and after["priority"] < cached[top]["priority"]


def signals_refused(store) -> list[str]:
    signals = triage.compute_signals(store)
    return list(signals.index[signals["unjudgeable"]])


def simulate_verdicts(store, n_errors: int) -> None:
    """Two reviewers: the items nearest their thresholds are overridden, the rest approved (answers
    only: a refusal has none to approve or override)."""
    signals = triage.compute_signals(store)
    signals = signals[~signals["unjudgeable"]].sort_values("closeness", ascending=False)
    for i, tid in enumerate(signals.index):
        answer = signals.at[tid, "answer"]
        if i < n_errors:
            store.labels.add_review(tid, "ann", "override", label={"answer": "NO" if answer == "YES" else "YES"})
        else:
            store.labels.add_review(tid, "ann", "approve")


def test_weights_are_fitted_once_there_are_enough_verdicts(demo_store):
    simulate_verdicts(demo_store, n_errors=12)
    history = demo_store.triage.review_history()
    assert len(history) >= triage.MIN_LABELS
    model = triage.refresh(demo_store)
    assert model.kind == "fitted" and model.n_labels == len(history) and model.n_errors == 12
    stored = demo_store.triage.triage_model()
    assert stored["id"] == model.id and stored["kind"] == "fitted"
    assert model.as_dict()["weights"]["closeness"] > triage.DEFAULT_WEIGHTS[4]  # the labels favour closeness
    rows = triage.training_rows(history, triage.compute_signals(demo_store))
    assert len(rows) == len(history) and (rows["seen"] == 0).all()  # one reviewer: nobody had seen them


# -- abstention ----------------------------------------------------------------------------------
def abstention_frames(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 400
    priority = rng.uniform(0, 1, n)
    correct = rng.uniform(size=n) > priority ** 3  # errors concentrate at high priority
    labelled = pd.DataFrame({"task": "a", "agent": "vet/rules/r", "priority": priority, "correct": correct})
    unreviewed = pd.DataFrame({"task": "a", "agent": "vet/rules/r", "priority": rng.uniform(0, 1, 200)})
    return labelled, unreviewed


def test_abstention_threshold_estimate_and_interval():
    labelled, unreviewed = abstention_frames()
    table = triage.abstention(labelled, unreviewed, target=0.98, n_boot=300)
    group = table[table["task"] == "a"].iloc[0]
    thr = group["threshold"]
    below = labelled[labelled["priority"] <= thr]
    assert group["n_labelled_accepted"] == len(below)
    assert group["estimated_accuracy"] == pytest.approx(below["correct"].mean()) and group["estimated_accuracy"] >= 0.98
    assert group["ci_low"] <= group["estimated_accuracy"] <= group["ci_high"]
    assert group["n_accept"] == (unreviewed["priority"] <= thr).sum()
    assert group["fraction_accept"] == pytest.approx(group["n_accept"] / len(unreviewed))
    # a higher target accepts no more; an unreachable one accepts nothing
    stricter = triage.abstention(labelled, unreviewed, target=0.995, n_boot=300)
    assert stricter.iloc[0]["n_accept"] <= group["n_accept"]
    nothing = triage.abstention(labelled.assign(correct=False), unreviewed, target=0.98, n_boot=50)
    assert nothing.iloc[0]["n_accept"] == 0 and nothing.iloc[0]["estimated_accuracy"] is None
    pooled = table[table["task"] == "all"].iloc[0]
    assert pooled["n_accept"] == group["n_accept"] and pooled["n_unreviewed"] == len(unreviewed)


def _threshold_by_definition(priority, correct, target, min_accept):
    """The highest labelled priority t whose answers at or below it number at least `min_accept` and are right
    at least `target` of the time, tried one t at a time."""
    best = None
    for t in np.unique(priority):
        below = priority <= t
        if below.sum() >= min_accept and correct[below].mean() >= target:
            best = float(t)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_the_acceptance_threshold_is_the_highest_priority_meeting_the_target(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    # few distinct priorities in half the cases: ties, which a threshold takes all of or none of
    priority = rng.integers(0, 8, n) / 8.0 if seed % 2 else rng.uniform(0, 1, n)
    correct = rng.uniform(size=n) > priority ** int(rng.integers(1, 6))
    target, min_accept = float(rng.choice([0.5, 0.8, 0.9, 0.98, 1.0])), int(rng.integers(1, n + 2))
    assert triage.acceptance_threshold(priority, correct, target, min_accept) == \
        _threshold_by_definition(priority, correct, target, min_accept)


def test_the_acceptance_threshold_counts_exactly_min_accept_answers_and_takes_ties_whole():
    p, ok = np.array([0.1, 0.2, 0.3, 0.3]), np.array([True, True, True, False])
    assert triage.acceptance_threshold(p, ok, 1.0, min_accept=2) == 0.2  # two answers, both right
    assert triage.acceptance_threshold(p, ok, 1.0, min_accept=3) is None  # the third's tie brings an error
    assert triage.acceptance_threshold(p, ok, 0.75, min_accept=4) == 0.3


def test_a_bootstrap_interval_leaves_out_resamples_with_nothing_to_measure():
    boot_n = np.array([0.0, 10.0, 10.0, 10.0, 0.0])
    boot_correct = np.array([0.0, 9.0, 8.0, 10.0, 0.0])
    lo, hi = triage._interval(boot_correct, boot_n, successes=9, n=10, level=0.5)
    assert (lo, hi) == pytest.approx((0.85, 0.95))  # the middle half of 0.8, 0.9 and 1.0; the two empty resamples left out
    assert triage._interval(np.zeros(3), np.zeros(3), 0, 0, 0.95) == (None, None)


def test_accuracy_by_priority_bins_for_the_stats_tab():
    labelled, _ = abstention_frames(1)
    bins = triage.accuracy_by_priority(labelled, n_bins=4, n_boot=300)
    assert list(bins.columns) == ["task", "agent", "bin", "priority_lo", "priority_hi", "priority_mid", "n",
                                  "accuracy", "ci_low", "ci_high"]
    assert bins["n"].sum() == len(labelled) and len(bins) == 4
    assert (bins["ci_low"] <= bins["accuracy"]).all() and (bins["accuracy"] <= bins["ci_high"]).all()
    assert bins["accuracy"].iloc[0] > bins["accuracy"].iloc[-1]  # accuracy falls as priority rises


def test_trajectory_truth_from_verdicts_and_resolutions():
    history = [{"trajectory_id": "t1", "action": "approve"}, {"trajectory_id": "t1", "action": "override"},
               {"trajectory_id": "t2", "action": "approve"}, {"trajectory_id": "t3", "action": "reject"}]
    truth = triage.trajectory_truth(history, {"t3": {"action": "approve"}})
    assert truth.to_dict() == {"t1": False, "t2": True, "t3": True}  # a tie is not "right"; a resolution decides


def test_calibration_frame_from_the_store(demo_store):
    assert triage.calibration_frame(demo_store, n_boot=50).empty  # no verdicts yet
    simulate_verdicts(demo_store, n_errors=12)
    triage.refresh(demo_store)
    frame = triage.calibration_frame(demo_store, n_boot=100)
    labelled = len(demo_store.triage.review_history())
    assert frame["n"].sum() == labelled and {"accuracy", "ci_low", "ci_high", "priority_mid"} <= set(frame.columns)
    assert set(triage.calibration_frame(demo_store, task="a", n_boot=50)["task"]) == {"a"}
