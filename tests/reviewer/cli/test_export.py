"""`specreview export` end to end on a real DuckDB file."""
import csv
import json

import pandas as pd

from reviewer.cli import main
from reviewer.services.exports import VI_COLUMNS
from reviewer.store import Store


def build(path):
    """Two spectra with VI labels, one in a closed session plus one written after it closed."""
    store = Store(path)
    for sid, oid in (("s1", "39633345008634465"), ("s2", "7")):
        store.spectra.add_spectrum({"spectrum_id": sid, "source_path": f"x/{sid}.fits", "file_sha256": sid * 8,
                            "object_id": oid, "pipeline_class": "GALAXY", "pipeline_z": 0.1})
    session = store.sessions.create_session("may", "verdicts", [], reviewers=["ann"])
    store.labels.add_vi_label("s1", "ann", quality=3, z=0.1, spectype="GALAXY", session_id=session)
    store.sessions.close_session(session)
    store.labels.add_vi_label("s2", "ann", quality=2, session_id=session)  # after close: frozen out
    store.labels.add_vi_label("s2", "bob", quality=4)
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


# -- unwritable destinations (issue 10, item 7): one clear line, exit 1, nothing half-written ----------
import errno  # noqa: E402
import re  # noqa: E402

import duckdb  # noqa: E402
import pytest  # noqa: E402

from reviewer.store.database import Database  # noqa: E402


def _one_line_error(capsys, *words):
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


def test_export_vi_refuses_to_overwrite_unless_forced(tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    build(db)
    out = tmp_path / "vi.csv"
    out.write_text("keep me\n")
    assert main(["export", "vi", "--db", str(db), "--out", str(out)]) == 1
    _one_line_error(capsys, str(out), "exists", "--force")
    assert out.read_text() == "keep me\n"
    assert main(["export", "vi", "--db", str(db), "--out", str(out), "--force"]) == 0
    assert len(read_csv(out)) == 3


@pytest.mark.parametrize("kind", ["sft", "bench", "parquet"])
def test_a_folder_export_onto_a_file_is_refused(tmp_path, capsys, kind):
    db = tmp_path / "r.duckdb"
    build(db)
    out = tmp_path / "taken"
    out.write_text("a file\n")
    assert main(["export", kind, "--db", str(db), "--out", str(out)]) == 1
    _one_line_error(capsys, str(out), "is a file", "folder")
    assert out.read_text() == "a file\n"


def test_a_vi_export_onto_a_folder_is_refused(tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    build(db)
    assert main(["export", "vi", "--db", str(db), "--out", str(tmp_path), "--force"]) == 1
    _one_line_error(capsys, "is a folder", "CSV file")


@pytest.mark.parametrize("kind, out", [("vi", "f/x.csv"), ("parquet", "f/pq")])
def test_an_export_below_a_file_is_refused(tmp_path, capsys, kind, out):
    db = tmp_path / "r.duckdb"
    build(db)
    (tmp_path / "f").write_text("a file, not a folder\n")
    assert main(["export", kind, "--db", str(db), "--out", str(tmp_path / out)]) == 1
    _one_line_error(capsys, "cannot write", str(tmp_path / "f"))


def failing_parquet_writes(monkeypatch, words: str, after: int = 0) -> list[str]:
    """DuckDB fails to write each Parquet file after the first `after` (its own words: the file named,
    then the system's reason); returns the files written."""
    real = Database.execute_with_retries
    written = []

    def copy(self, sql, params):
        target = re.search(r"^COPY \(.*\) TO '(.+)' \(FORMAT parquet\)$", sql, re.S)
        if target and len(written) >= after:
            raise duckdb.IOException(f'IO Error: Could not write file "{target.group(1)}": {words}')
        if target:
            written.append(target.group(1))
        return real(self, sql, params)

    monkeypatch.setattr(Database, "execute_with_retries", copy)
    return written


def test_a_permission_error_is_one_line(tmp_path, capsys, monkeypatch):
    db = tmp_path / "r.duckdb"
    build(db)
    failing_parquet_writes(monkeypatch, "Permission denied")
    assert main(["export", "parquet", "--db", str(db), "--out", str(tmp_path / "pq")]) == 1
    _one_line_error(capsys, "cannot write", "pq", "Permission denied")
    assert not (tmp_path / "pq").exists()


def test_a_full_disk_during_a_parquet_export_leaves_nothing(tmp_path, capsys, monkeypatch):
    db = tmp_path / "r.duckdb"
    build(db)
    written = failing_parquet_writes(monkeypatch, "No space left on device", after=1)
    out = tmp_path / "pq"
    assert main(["export", "parquet", "--db", str(db), "--out", str(out)]) == 1
    _one_line_error(capsys, "cannot write", str(out), "No space left on device")
    assert written and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.duckdb"]  # no staging left behind


def test_a_full_disk_during_a_vi_export_keeps_the_old_file(tmp_path, capsys, monkeypatch):
    db = tmp_path / "r.duckdb"
    build(db)
    out = tmp_path / "vi.csv"
    out.write_text("previous export\n")

    def full(self, rows):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(csv.DictWriter, "writerows", full)
    assert main(["export", "vi", "--db", str(db), "--out", str(out), "--force"]) == 1
    _one_line_error(capsys, "No space left on device")
    assert out.read_text() == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.duckdb", "vi.csv"]


def test_a_full_disk_during_an_sft_export_leaves_no_new_folder(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    db = tmp_path / "r.duckdb"
    build(db)

    def full(self, *a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    assert main(["export", "sft", "--db", str(db), "--out", str(tmp_path / "sft")]) == 1
    _one_line_error(capsys, "No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.duckdb"]
