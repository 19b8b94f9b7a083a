"""`specreview eval` against a real store: pipeline-derived truth from kb, CSV truth, JSON shape."""
import csv
import json
import shutil

import pytest

from reviewer.cli import main
from reviewer.cli.eval import score
from reviewer.store import Store


@pytest.fixture(scope="module")
def vetted_db(tmp_path_factory, shared_spectra, manifest):
    tmp = tmp_path_factory.mktemp("eval")
    folder = tmp / "spectra"
    folder.mkdir()
    picks = [r for r in manifest if "LAMOST-LRS" in r["survey"] and r["subclass"][:1] in "AK"][:40]
    picks = [r for r in picks if r["subclass"][0] == "A"][:6] + [r for r in picks if r["subclass"][0] == "K"][:6]
    for r in picks:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].split("/")[-1])
    db = tmp / "eval.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", str(folder)]) == 0
    return db, picks


def stored_pairs(db, truth_of):
    with Store(db) as store:
        pairs = []
        for row in store.trajectories.list_trajectories(task="a"):
            spec = store.spectra.get_spectrum(row["spectrum_id"])
            outcome = row["outcome"] if isinstance(row["outcome"], dict) else json.loads(row["outcome"])
            pairs.append((truth_of(spec), outcome["prediction"]))
    return pairs


def test_eval_json_with_pipeline_labels(vetted_db, capsys):
    db, picks = vetted_db
    assert main(["eval", "--db", str(db), "--task", "a", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    expected = score(stored_pairs(db, lambda s: "YES" if s["pipeline_subclass"].startswith("A") else "NO"))
    assert got["tasks"]["a"] == expected
    assert got["tasks"]["a"]["n"] == len(picks) and got["tasks"]["a"]["positives"] == 6
    assert got["macro_f1"] == expected["f1"]


def test_eval_with_label_csv_overrides_pipeline(vetted_db, tmp_path, capsys):
    db, _picks = vetted_db
    with Store(db) as store:
        spectra = store.spectra.list_spectra()
    path = tmp_path / "labels.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["object_id", "task", "label"])
        for s in spectra:  # deliberately inverted truth: accuracy must become 1 - the real one
            w.writerow([s["object_id"], "a", "NO" if s["pipeline_subclass"].startswith("A") else "YES"])
    assert main(["eval", "--db", str(db), "--task", "a", "--json", "--labels", str(path)]) == 0
    inverted = json.loads(capsys.readouterr().out)["tasks"]["a"]
    assert main(["eval", "--db", str(db), "--task", "a", "--json"]) == 0
    real = json.loads(capsys.readouterr().out)["tasks"]["a"]
    assert inverted["n"] == real["n"] and inverted["accuracy"] == pytest.approx(1 - real["accuracy"])
    assert main(["eval", "--db", str(db), "--task", "a"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["task", "n", "pos", "pred+", "acc", "F1"] and "macro" in table


def test_score_counts():
    s = score([("YES", "YES"), ("YES", "NO"), ("NO", "YES"), ("NO", "NO"), ("NO", None)])
    assert (s["tp"], s["fp"], s["fn"], s["tn"], s["no_valid_answer"]) == (1, 1, 1, 1, 1)
    assert s["accuracy"] == pytest.approx(2 / 5) and s["f1"] == pytest.approx(0.5)
