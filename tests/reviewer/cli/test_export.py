"""`specreview export` end to end on a real DuckDB file."""
import csv
import json

import pandas as pd

from reviewer.cli import main
from reviewer.exports import VI_COLUMNS
from reviewer.store import Store


def build(path):
    """Two spectra with VI labels, one in a closed session plus one written after it closed."""
    store = Store(path)
    for sid, oid in (("s1", "39633345008634465"), ("s2", "7")):
        store.add_spectrum({"spectrum_id": sid, "source_path": f"x/{sid}.fits", "file_sha256": sid * 8,
                            "object_id": oid, "pipeline_class": "GALAXY", "pipeline_z": 0.1})
    session = store.create_session("may", "verdicts", [], reviewers=["ann"])
    store.add_vi_label("s1", "ann", quality=3, z=0.1, spectype="GALAXY", session_id=session)
    store.close_session(session)
    store.add_vi_label("s2", "ann", quality=2, session_id=session)  # after close: frozen out
    store.add_vi_label("s2", "bob", quality=4)
    store.close()


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_export_vi_all_and_by_session(tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    build(db)
    assert main(["export", "vi", "--db", str(db), "--out", str(tmp_path / "all.csv")]) == 0
    rows = read_csv(tmp_path / "all.csv")
    assert list(rows[0]) == list(VI_COLUMNS)
    assert sorted((r["TARGETID"], r["VI_scanner"]) for r in rows) == [
        ("39633345008634465", "ann"), ("7", "ann"), ("7", "bob")]
    assert main(["export", "vi", "--db", str(db), "--out", str(tmp_path / "may.csv"), "--session", "may"]) == 0
    assert [(r["TARGETID"], r["VI_quality"]) for r in read_csv(tmp_path / "may.csv")] == [("39633345008634465", "3")]
    assert "wrote 1 VI rows" in capsys.readouterr().out


def test_export_parquet_and_unknown_session(tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    build(db)
    assert main(["export", "parquet", "--db", str(db), "--out", str(tmp_path / "pq")]) == 0
    labels = pd.read_parquet(tmp_path / "pq" / "vi_labels.parquet")
    assert sorted(labels["reviewer"]) == ["ann", "ann", "bob"]
    assert main(["export", "parquet", "--db", str(db), "--out", str(tmp_path / "pq2"), "--session", "may"]) == 0
    assert len(pd.read_parquet(tmp_path / "pq2" / "vi_labels.parquet")) == 1
    assert main(["export", "vi", "--db", str(db), "--out", str(tmp_path / "x.csv"), "--session", "june"]) == 1
    assert "no audit session named 'june'" in capsys.readouterr().err


def test_export_sft_with_nothing_accepted_writes_an_empty_dataset(tmp_path):
    db = tmp_path / "r.duckdb"
    build(db)
    assert main(["export", "sft", "--db", str(db), "--out", str(tmp_path / "sft")]) == 0
    assert json.loads((tmp_path / "sft" / "train_sharegpt.json").read_text()) == []
    assert (tmp_path / "sft" / "data_info.json").exists()
