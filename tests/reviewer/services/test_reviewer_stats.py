"""Issue 47, item 1: each reviewer measured on a campaign's gold items, on the demo's real DuckDB file:
accuracy with its Wilson interval (hand-computed), the YES bias, the z bias in km/s, the drift."""
from __future__ import annotations

import pytest

from reviewer.services.campaigns import create_campaign
from reviewer.services.items import find_campaign, trajectory
from reviewer.services.labels import LabelService
from reviewer.services.reviewer_stats import reviewer_report, wilson_interval

C_KMS = 299792.458  # km/s (agents.verify.evaluation.C_KMS, from astropy's constant)


def test_wilson_interval_on_counts_computed_by_hand():
    # 8 of 10, z = 1.959964: p = 0.8, centre 0.8 + z²/20 = 0.992073, half z sqrt(0.016 + z²/400) = 0.313617,
    # scale 1 + z²/10 = 1.384146: (0.490162, 0.943318)
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.490162, abs=1e-6) and high == pytest.approx(0.943318, abs=1e-6)
    # 0 of 5: (0, (z²/10 + z sqrt(z²/100)) / (1 + z²/5)) = (0, 0.434482)
    assert wilson_interval(0, 5) == (0.0, pytest.approx(0.434482, abs=1e-6))
    # 3 of 3: the mirror of 0 of 3
    assert wilson_interval(3, 3) == (pytest.approx(1 - wilson_interval(0, 3)[1]), 1.0)
    assert wilson_interval(0, 0) is None


def campaign_with_gold(store, tmp_path, task, rows, name="calibration"):
    """A campaign holding the known answers `rows` ((file name, answer[, z]) each) as gold items, all of them
    (the rate asks for more than there are)."""
    header = "file,task,answer" if task != "verify" else "file,task,class,z"
    path = tmp_path / f"{name}.csv"
    path.write_text("\n".join([header] + [",".join([r[0], task, *map(str, r[1:])]) for r in rows]) + "\n")
    create_campaign(store, name, task=task, reviewers=["ann", "bo"], gold_file=str(path), gold_rate=0.99)
    return find_campaign(store, name)


def by_file(store, task):
    names = {s["spectrum_id"]: s["file_name"] for s in store.spectra.list_spectra(limit=100)}
    return {names[r["spectrum_id"]]: r for r in store.trajectories.list_trajectories(task=task)}


def say(store, reviewer, row, campaign, label):
    """A verdict standing for `label`: approval where the agent said it, else an override to it."""
    labels, traj = LabelService(store), trajectory(store, row["id"])
    agent = {"answer": row["answer"]} if row["task"] != "verify" else {"type": row["answer"], "z": row["answer_z"]}
    if label == agent:
        return labels.write_verdict(reviewer, traj, "approve", campaign=campaign)
    return labels.write_verdict(reviewer, traj, "override", label, campaign=campaign)


def test_accuracy_interval_yes_bias_and_drift_on_known_counts(demo_store, tmp_path):
    rows = by_file(demo_store, "a")
    answered = sorted(name for name, r in rows.items() if r["answer"] in ("YES", "NO"))[:8]
    truth = {name: ("YES" if i < 4 else "NO") for i, name in enumerate(answered)}  # 4 YES, 4 NO
    campaign = campaign_with_gold(demo_store, tmp_path, "a", [(n, truth[n]) for n in answered])
    assert len(demo_store.sessions.gold_items(campaign["id"])) == 8
    # ann, in this order: right, right, right, right (the first half), then wrong, wrong, right, and a rejection
    plan = [(answered[0], "YES"), (answered[1], "YES"), (answered[4], "NO"), (answered[5], "NO"),
            (answered[6], "YES"), (answered[7], "YES"), (answered[2], "YES")]
    for name, said in plan:
        say(demo_store, "ann", rows[name], campaign, {"answer": said})
    LabelService(demo_store).write_verdict("ann", trajectory(demo_store, rows[answered[3]]["id"]), "reject",
                                           campaign=campaign)
    for name in answered:  # bo says YES to everything: 4 of 8 right
        say(demo_store, "bo", rows[name], campaign, {"answer": "YES"})

    report = {r["reviewer"]: r for r in reviewer_report(demo_store, campaign)}
    ann, bo = report["ann"], report["bo"]
    assert (ann["labelled"], ann["gold_n"], ann["gold_right"], ann["gold_rejected"]) == (8, 7, 5, 1)
    assert ann["gold_accuracy"] == pytest.approx(5 / 7)
    assert ann["gold_accuracy_interval"] == pytest.approx(list(wilson_interval(5, 7)))
    # ann's YES rate on the 7 answered: 5/7; the truth's on them: 3/7 (answered[0..2] are YES)
    assert ann["yes_bias"] == pytest.approx(5 / 7 - 3 / 7)
    assert ann["gold_drift"] == {"first_half": {"n": 3, "accuracy": 1.0},
                                 "second_half": {"n": 4, "accuracy": pytest.approx(0.5)}}
    assert ann["gold_in_order"] == [True, True, True, True, False, False, True]
    assert (bo["gold_n"], bo["gold_accuracy"], bo["yes_bias"]) == (8, 0.5, 0.5)
    # 4 of 8, by hand: centre 0.740091, half 0.421532, scale 1.480182
    assert bo["gold_accuracy_interval"] == pytest.approx([0.215216, 0.784784], abs=1e-6)
    for r in (ann, bo):
        assert r["z_bias_kms"] is None
        assert all(r[key] is None for key in ("median_seconds", "p90_seconds", "first_look_agreement",
                                               "revised_after_reveal"))


def test_z_bias_in_km_s_on_verify_gold(demo_store, tmp_path):
    rows = by_file(demo_store, "verify")
    far = sorted(n for n, r in rows.items() if r["answer"] in ("GALAXY", "QSO"))
    assert len(far) == 4
    # the known z set so that the agent's z (which ann approves) lies `offset` km/s from it
    offsets = dict(zip(far[:3], (120.0, -60.0, 400.0), strict=True))
    truth = {n: (rows[n]["answer"], rows[n]["answer_z"] - offsets[n] * (1 + rows[n]["answer_z"]) / C_KMS)
             for n in far[:3]}
    truth[far[3]] = (rows[far[3]]["answer"], rows[far[3]]["answer_z"])
    campaign = campaign_with_gold(demo_store, tmp_path, "verify", [(n, k, repr(z)) for n, (k, z) in truth.items()])
    for name in far[:3]:
        say(demo_store, "ann", rows[name], campaign, {"type": rows[name]["answer"], "z": rows[name]["answer_z"]})
    say(demo_store, "ann", rows[far[3]], campaign, {"type": "STAR", "z": 0.0})  # the wrong class: no z offset
    # dv = c (z - z_true) / (1 + z_true) of each approval, by hand; their median is the middle one's
    dv = sorted(C_KMS * (rows[n]["answer_z"] - truth[n][1]) / (1 + truth[n][1]) for n in far[:3])
    ann = next(r for r in reviewer_report(demo_store, campaign) if r["reviewer"] == "ann")
    assert ann["z_bias_kms"] == pytest.approx(dv[1], rel=1e-9) and abs(dv[1] - 120.0) < 1.0
    assert ann["z_bias_n"] == 3
    assert (ann["gold_n"], ann["gold_right"]) == (4, 3)  # within dz/(1+z) < 0.0033 (~990 km/s); STAR is wrong
    assert ann["yes_bias"] is None
    bo = next(r for r in reviewer_report(demo_store, campaign) if r["reviewer"] == "bo")
    assert bo["gold_n"] == 0 and bo["gold_accuracy"] is None and bo["gold_accuracy_interval"] is None
    assert bo["labelled"] == 0


def test_time_on_item_in_the_report(demo_store, tmp_path):
    rows = by_file(demo_store, "a")
    names = sorted(rows)[:6]
    campaign = campaign_with_gold(demo_store, tmp_path, "a", [(n, "YES") for n in names[:1]])
    labels = LabelService(demo_store)
    seconds = [30.0, 40.0, 50.0, 60.0, 70.0, 4.0]  # the last under a quarter of the usual 45 s
    for name, s in zip(names, seconds, strict=True):
        labels.write_verdict("ann", trajectory(demo_store, rows[name]["id"]), "reject", campaign=campaign, active_s=s)
    labels.write_verdict("bo", trajectory(demo_store, rows[names[0]]["id"]), "reject", campaign=campaign)  # untimed
    report = {r["reviewer"]: r for r in reviewer_report(demo_store, campaign)}
    ann, bo = report["ann"], report["bo"]
    assert (ann["timed"], ann["median_seconds"], ann["rushed"]) == (6, 45.0, 1)
    assert ann["p90_seconds"] == pytest.approx(65.0) and ann["items_per_hour"] == pytest.approx(3600 * 6 / 254, abs=0.05)
    assert (bo["timed"], bo["median_seconds"], bo["p90_seconds"], bo["rushed"]) == (0, None, None, 0)
