"""Issue 47, items 1 and 6, as an organiser runs them (subprocesses, the demo's real DuckDB file):
`session create` with gold and reviewers per item, `session progress`, `specreview reviewers --json`, and the
exit codes of reviewer/cli/exits.py for a refused gold file and for options that cannot go together."""
from __future__ import annotations

import json
import subprocess
import sys

from databases import own_copy

from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from reviewer.services.items import find_campaign, trajectory
from reviewer.services.labels import LabelService
from reviewer.store import Store


def cli(*args, db):
    return subprocess.run([sys.executable, "-m", "reviewer.cli", *args, "--db", str(db)],
                          capture_output=True, text=True, timeout=120)


def test_a_campaign_with_gold_and_two_reviewers_per_item_and_its_reviewers_report(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    store = Store(db)
    names = {s["spectrum_id"]: s["file_name"] for s in store.spectra.list_spectra(limit=100)}
    a = [r for r in store.trajectories.list_trajectories(task="a") if r["answer"] in ("YES", "NO")]
    store.close()
    gold = tmp_path / "gold.csv"
    gold.write_text("file,task,answer\n" + "".join(f"{names[r['spectrum_id']]},a,{r['answer']}\n" for r in a[:4]))

    made = cli("session", "create", "pilot", "--task", "a", "--reviewers", "ann,bo,cy", "--gold-file", str(gold),
               "--gold-rate", "0.25", "--per-item", "2", "--limit", "6", db=db)
    assert made.returncode == EXIT_OK, made.stderr
    assert "8 trajectories, 2 of them gold" in made.stdout and "2 reviewers per item" in made.stdout
    assert "gold.csv: 4 known answers for task a" in made.stdout

    store = Store(db)
    campaign = find_campaign(store, "pilot")
    labels = LabelService(store)
    gold_items = store.sessions.gold_items(campaign["id"])
    for g in gold_items:  # ann approves the agent, which is right on every gold item here; bo overrides one
        labels.write_verdict("ann", trajectory(store, g["trajectory_id"]), "approve", campaign=campaign)
    other = "NO" if gold_items[0]["answer"] == "YES" else "YES"
    labels.write_verdict("bo", trajectory(store, gold_items[0]["trajectory_id"]), "override", {"answer": other},
                         campaign=campaign)
    regular = [t for t in campaign["trajectory_ids"] if t not in {g["trajectory_id"] for g in gold_items}]
    for who in ("ann", "cy"):
        labels.write_verdict(who, trajectory(store, regular[0]), "reject", campaign=campaign)
    store.close()

    progress = cli("session", "progress", "pilot", db=db)
    assert progress.returncode == EXIT_OK
    assert "complete at 2 reviewers per item\t1/6 (and 2 gold items, asked of everyone)" in progress.stdout

    report = cli("reviewers", "--session", "pilot", "--json", db=db)
    assert report.returncode == EXIT_OK, report.stderr
    people = {r["reviewer"]: r for r in json.loads(report.stdout)["reviewers"]}
    assert sorted(people) == ["ann", "bo", "cy"]
    ann, bo, cy = people["ann"], people["bo"], people["cy"]
    assert (ann["labelled"], ann["gold_n"], ann["gold_accuracy"]) == (3, 2, 1.0)
    assert ann["gold_accuracy_interval"][1] == 1.0 and 0.3 < ann["gold_accuracy_interval"][0] < 0.35  # 2 of 2
    assert (bo["labelled"], bo["gold_n"], bo["gold_accuracy"], bo["yes_bias"]) == (1, 1, 0.0, 1.0 if other == "YES" else -1.0)
    assert (cy["labelled"], cy["gold_n"], cy["gold_accuracy"], cy["gold_accuracy_interval"]) == (1, 0, None, None)
    for r in people.values():
        for key in ("z_bias_kms", "median_seconds", "p90_seconds", "first_look_agreement", "revised_after_reveal"):
            assert key in r and r[key] is None
    table = cli("reviewers", "--session", "pilot", db=db)
    assert table.returncode == EXIT_OK and table.stdout.splitlines()[1].startswith("ann\t3\t2\t1.000 [0.3")


def test_a_refused_gold_file_exits_1_naming_it_and_writes_nothing_usage_errors_exit_2(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    gold = tmp_path / "gold.csv"
    gold.write_text("file,task,answer\nnot-stored.fits,a,YES\n")
    refused = cli("session", "create", "g", "--task", "a", "--reviewers", "ann,bo", "--gold-file", str(gold),
                  "--gold-rate", "0.1", db=db)
    assert refused.returncode == EXIT_SOME_FAILED
    assert f"{gold}: 1 problem(s), nothing was written" in refused.stderr
    assert "line 2: file 'not-stored.fits' is not a stored spectrum" in refused.stderr
    assert "Traceback" not in refused.stderr
    too_many = cli("session", "create", "g", "--task", "a", "--reviewers", "ann,bo", "--per-item", "3", db=db)
    assert too_many.returncode == EXIT_USAGE and "needs at least 3 reviewers" in too_many.stderr
    assert cli("session", "list", db=db).stdout == ""
    unknown = cli("reviewers", "--session", "nope", db=db)
    assert unknown.returncode == EXIT_SOME_FAILED and "no campaign named 'nope'" in unknown.stderr
