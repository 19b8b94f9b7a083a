"""`specreview import sft|bench` on real DuckDB files, with rows written by the real exporters from
trajectories the rules vet policy made on real LAMOST spectra of the shared data."""
import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from reviewer.cli import main
from reviewer.ingest import ingest_paths
from reviewer.store import Store


def accept(store, tid):
    """Revise event, two audits, three votes: the curation board then says `accepted`."""
    at = iter(datetime.now(UTC) + timedelta(seconds=i + 1) for i in range(10))
    store.add_curation_event(tid, "rev", "revise", created_at=next(at))
    store.add_curation_event(tid, "aud1", "audit", "approve", created_at=next(at))
    store.add_curation_event(tid, "aud2", "audit", "approve", created_at=next(at))
    for who in ("rev", "aud1", "aud2"):
        store.add_curation_event(tid, who, "vote", "accept", created_at=next(at))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, shared_spectra, manifest):
    """An A and a K star vetted for task `a`, approved and curated in a source database, then
    exported as SFT rows (+ PNGs) and as SpecVI-Bench parquet and JSON rows."""
    from agents.spectra import read_spectrum
    from agents.vet.run import vet_spectrum
    from reviewer.exports import export_bench, export_sft

    root = tmp_path_factory.mktemp("exported")
    picks = [next(r for r in manifest if r["survey"].startswith("LAMOST-LRS") and r["subclass"].startswith(p))
             for p in ("A", "K")]
    out = {"trajectories": [], "paths": []}
    with Store(root / "source.duckdb") as store:
        for row in picks:
            path = shared_spectra / row["file"].partition("#")[0]
            ingest_paths(store, [path], progress=False)
            sid = store.list_spectra(search=path.name)[0]["spectrum_id"]
            traj = vet_spectrum(read_spectrum(path), "a", spectrum_id=sid)
            store.save_trajectory(traj)
            store.add_review(traj.id, "ann", "approve")
            accept(store, traj.id)
            out["trajectories"].append(traj)
            out["paths"].append(path)
        assert export_sft(store, root / "sft").written == 2
        assert export_bench(store, root / "bench").files == ["review_a.parquet"]
        assert export_bench(store, root / "bench_json", fmt="json").files == ["review_a.json"]
    out["root"] = root
    return out


def test_import_sft_stores_trajectories_with_images_once(tmp_path, exported, capsys):
    db = tmp_path / "dst.duckdb"
    a_path = exported["paths"][0]
    with Store(db) as store:  # the A star is already here: its imported trajectory links to it
        ingest_paths(store, [a_path], progress=False)
        a_sid = store.list_spectra(search=a_path.name)[0]["spectrum_id"]
    sft_file = exported["root"] / "sft" / "train_sharegpt.json"
    rows = json.loads(sft_file.read_text())
    assert main(["import", "sft", str(sft_file), "--db", str(db)]) == 0
    assert "imported trajectories: 2; already present: 0" in capsys.readouterr().out
    with Store(db) as store:
        stored = store.list_trajectories(task="a", backend="spec-o3-sft")
        assert len(stored) == 2
        by_source = {r["source_path"]: store.load_trajectory(r["id"], with_images=True) for r in stored}
        for original, row in zip(exported["trajectories"], rows, strict=True):
            traj = by_source[row["source_name"]]
            assert [s.kind for s in traj.steps] == [s.kind for s in original.steps]
            assert [s.tool_args for s in traj.steps if s.kind == "tool_call"] == \
                [s.tool_args for s in original.steps if s.kind == "tool_call"]
            assert traj.outcome["prediction"] == original.outcome["prediction"]
            assert traj.outcome["ground_truth"] == row["ground_truth"]
            shas = [s.image_sha for s in traj.steps if s.kind in ("prompt", "tool_result") and not s.is_error]
            assert len(shas) == len(row["images"]) and all(sha in traj.images for sha in shas)
            files = [(exported["root"] / "sft" / p).read_bytes() for p in row["images"]]
            assert [traj.images[sha] for sha in shas] == files
        assert by_source[str(a_path.resolve())].spectrum_id == a_sid
        assert by_source[str(exported["paths"][1].resolve())].spectrum_id is None
    # idempotent: nothing new the second time
    assert main(["import", "sft", str(sft_file), "--db", str(db)]) == 0
    assert "imported trajectories: 0; already present: 2" in capsys.readouterr().out
    with Store(db) as store:
        assert store.count_trajectories(backend="spec-o3-sft") == 2


def test_import_sft_reports_missing_images(tmp_path, exported, capsys):
    sft_file = exported["root"] / "sft" / "train_sharegpt.json"
    db = tmp_path / "dst.duckdb"
    assert main(["import", "sft", str(sft_file), "--images", str(tmp_path), "--db", str(db), "--task", "a"]) == 0
    captured = capsys.readouterr()
    assert "imported trajectories: 2" in captured.out and "not found under" in captured.err
    with Store(db) as store:
        traj = store.load_trajectory(store.list_trajectories(task="a")[0]["id"], with_images=True)
        assert traj.images == {} and all(s.image_sha is None for s in traj.steps)


@pytest.mark.parametrize("name", ["bench/review_a.parquet", "bench_json/review_a.json"])
def test_import_bench_writes_fits_ingests_and_labels(tmp_path, exported, capsys, name):
    from agents.spectra import read_spectrum

    db = tmp_path / "dst.duckdb"
    bench_file = exported["root"] / name
    assert main(["import", "bench", str(bench_file), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "imported spectra: 2; already present: 0" in out
    folder = tmp_path / "imported" / "review_a"
    fits_files = sorted(folder.glob("*.fits"))
    assert len(fits_files) == 2
    labels_file = folder / "manifest-labels.csv"
    assert f"labels: {labels_file}" in out
    with open(labels_file, newline="") as fh:
        labels = list(csv.DictReader(fh))
    truth = {t.id: t.outcome["prediction"] for t in exported["trajectories"]}  # approved: the agent's answer
    assert sorted(r["index"] for r in labels) == sorted(truth)
    for r in labels:
        assert r["task"] == "a" and r["label"] == truth[r["index"]] and Path(r["path"]).is_file()
    originals = {t.id: read_spectrum(p) for t, p in zip(exported["trajectories"], exported["paths"], strict=True)}
    label_of = {r["path"]: r for r in labels}
    with Store(db) as store:
        stored = store.list_spectra()
        assert sorted(s["source_path"] for s in stored) == sorted(r["path"] for r in labels)
        for s in stored:
            spec = read_spectrum(s["source_path"])
            original = originals[label_of[s["source_path"]]["index"]]
            assert s["object_id"] == label_of[s["source_path"]]["object_id"] == original.meta["object_id"]
            assert np.allclose(spec.flux.value, original.flux.value, equal_nan=True)
            assert np.allclose(spec.spectral_axis.value, original.spectral_axis.value)
            assert spec.mask.mean() < 0.5 and s["snr"] > 0  # DER_SNR ivar: the pixels are usable
            header = store.get_spectrum(s["spectrum_id"])["header"]
            assert s["pipeline_class"] is None and header["SPECVI_INDEX"] == label_of[s["source_path"]]["index"]
            assert not any(v in ("YES", "NO") for v in header.values())  # the truth stays out
    # the eval can use the truth: vet the imported spectra, score against the labels CSV
    assert main(["vet", "--task", "a", "--db", str(db), "--no-progress", *[str(f) for f in fits_files]]) == 0
    capsys.readouterr()
    assert main(["eval", "--task", "a", "--labels", str(labels_file), "--db", str(db), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["tasks"]["a"]["n"] == 2
    # idempotent: no new file, no new spectrum, the same labels
    before = labels_file.read_text()
    assert main(["import", "bench", str(bench_file), "--db", str(db)]) == 0
    assert "imported spectra: 0; already present: 2" in capsys.readouterr().out
    assert sorted(folder.glob("*.fits")) == fits_files and labels_file.read_text() == before
    with Store(db) as store:
        assert store.count_spectra() == 2


def test_import_rejects_a_missing_file_and_an_unknown_task(tmp_path, capsys):
    assert main(["import", "bench", str(tmp_path / "nope.parquet"), "--db", str(tmp_path / "d.duckdb")]) == 1
    assert "no such file" in capsys.readouterr().err
    rows = tmp_path / "rows.json"
    rows.write_text("[]")
    assert main(["import", "sft", str(rows), "--task", "zz", "--db", str(tmp_path / "d.duckdb")]) == 2
