"""`specreview triage` on a real DuckDB file holding the demo spectra and their rules / FORMA
trajectories: the defaults before any verdict, fitted weights and cached priorities after --refresh,
the abstention table per task and agent, and --json."""
from __future__ import annotations

import json

import pytest
from databases import own_copy

from agents.trajectory import UNJUDGEABLE
from reviewer.cli import main
from reviewer.services import triage
from reviewer.store import Store


@pytest.fixture
def db(demo_template, tmp_path):
    return own_copy(demo_template, tmp_path)


def run_json(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(["triage", *args, "--json", "--bootstrap", "200"]) == 0
    return json.loads(capsys.readouterr().out)


def n_answered(store) -> int:
    """Trajectories with an answer: a refusal (unjudgeable) is for a human, never accepted or fitted on."""
    return sum(1 for r in store.trajectories.list_trajectories(limit=100_000)
               if (r.get("outcome") or {}).get("status") != UNJUDGEABLE)


def label_everything(path) -> int:
    """One reviewer labels every trajectory: those nearest their decision threshold overridden."""
    with Store(path) as store:
        signals = triage.compute_signals(store).sort_values("closeness", ascending=False)
        n_errors = max(triage.MIN_PER_CLASS, len(signals) // 6)
        for i, tid in enumerate(signals.index):
            if i < n_errors:
                answer = signals.at[tid, "answer"]
                store.labels.add_review(tid, "ann", "override", label={"answer": "NO" if answer == "YES" else "YES"})
            else:
                store.labels.add_review(tid, "ann", "approve")
        return len(signals)


def test_triage_json_before_any_verdict_uses_the_defaults(db, capsys):
    report = run_json(capsys, "--db", str(db), "--target", "0.98")
    assert report["target"] == 0.98 and report["model"]["kind"] == "default"
    assert list(report["model"]["weights"].values()) == list(triage.DEFAULT_WEIGHTS)
    assert report["min_labels"] == triage.MIN_LABELS and "defaults" in report["model_info"]["why"]
    with Store(db) as store:
        n = n_answered(store)
    pooled = next(g for g in report["groups"] if g["task"] == "all")
    assert pooled["n_labelled"] == 0 and pooled["n_unreviewed"] == n
    assert pooled["n_accept"] == 0  # nothing is known to be safe before any verdict
    assert report["bins"] == []


def test_triage_refresh_fits_caches_and_estimates(db, capsys):
    n = label_everything(db)
    report = run_json(capsys, "--db", str(db), "--refresh")
    with Store(db) as store:
        answered = n_answered(store)
    assert report["model"]["kind"] == "fitted" and report["model"]["n_labels"] == answered
    assert report["cached_priorities"] == n
    groups = [g for g in report["groups"] if g["task"] != "all"]
    assert {g["task"] for g in groups} >= {"a", "verify"}
    assert all(g["n_labelled"] > 0 and g["n_unreviewed"] == 0 for g in groups)  # everything was labelled
    for g in groups:
        if g["estimated_accuracy"] is not None:
            assert g["estimated_accuracy"] >= 0.98 and g["ci_low"] <= g["estimated_accuracy"] <= g["ci_high"]
    assert all(b["ci_low"] <= b["accuracy"] <= b["ci_high"] for b in report["bins"])
    with Store(db) as store:
        assert store.triage.triage_model()["id"] == report["model"]["id"]
        queue = store.queue.queue_items(order="priority", limit=1000)
        assert [r["priority"] for r in queue] == sorted((r["priority"] for r in queue), reverse=True)

    only_a = run_json(capsys, "--db", str(db), "--task", "a")
    assert {g["task"] for g in only_a["groups"]} <= {"a", "all"}
    assert only_a["model"]["id"] == report["model"]["id"]  # without --refresh the stored weights are used


def test_triage_prints_a_table(db, capsys):
    capsys.readouterr()
    assert main(["triage", "--db", str(db), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "weights (default, 0 verdicts" in out
    assert "accept without review at target accuracy 0.98" in out
    assert main(["triage", "--db", str(db), "--target", "1.5"]) == 2
