"""`specreview import sft|bench` on real DuckDB files, with rows written by the real exporters from
trajectories the rules vet policy made on real LAMOST spectra of the shared data."""
import csv
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from reviewer.cli import main
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store


def accept(store, tid):
    """Revise event, two audits, three votes: the curation board then says `accepted`."""
    at = iter(datetime.now(UTC) + timedelta(seconds=i + 1) for i in range(10))
    store.labels.add_curation_event(tid, "rev", "revise", created_at=next(at))
    store.labels.add_curation_event(tid, "aud1", "audit", "approve", created_at=next(at))
    store.labels.add_curation_event(tid, "aud2", "audit", "approve", created_at=next(at))
    for who in ("rev", "aud1", "aud2"):
        store.labels.add_curation_event(tid, who, "vote", "accept", created_at=next(at))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, shared_spectra, manifest):
    """An A and a K star vetted for task `a`, approved and curated in a source database, then
    exported as SFT rows (+ PNGs) and as SpecVI-Bench parquet and JSON rows."""
    from agents.spectra import read_spectrum
    from agents.vet.run import vet_spectrum
    from reviewer.services.exports import export_bench, export_sft

    root = tmp_path_factory.mktemp("exported")
    picks = [next(r for r in manifest if r["survey"].startswith("LAMOST-LRS") and r["subclass"].startswith(p))
             for p in ("A", "K")]
    out = {"trajectories": [], "paths": []}
    with Store(root / "source.duckdb") as store:
        for row in picks:
            path = shared_spectra / row["file"].partition("#")[0]
            ingest_paths(store, [path], progress=False)
            sid = store.spectra.list_spectra(search=path.name)[0]["spectrum_id"]
            traj = vet_spectrum(read_spectrum(path), "a", spectrum_id=sid)
            store.trajectories.save_trajectory(traj)
            store.labels.add_review(traj.id, "ann", "approve")
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
        a_sid = store.spectra.list_spectra(search=a_path.name)[0]["spectrum_id"]
    sft_file = exported["root"] / "sft" / "train_sharegpt.json"
    rows = json.loads(sft_file.read_text())
    assert main(["import", "sft", str(sft_file), "--db", str(db)]) == 0
    assert "imported trajectories: 2; already present: 0" in capsys.readouterr().out
    with Store(db) as store:
        stored = store.trajectories.list_trajectories(task="a", backend="spec-o3-sft")
        assert len(stored) == 2
        by_source = {r["source_path"]: store.trajectories.load_trajectory(r["id"], with_images=True) for r in stored}
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
        assert store.trajectories.count_trajectories(backend="spec-o3-sft") == 2


def test_import_sft_reports_missing_images(tmp_path, exported, capsys):
    sft_file = exported["root"] / "sft" / "train_sharegpt.json"
    db = tmp_path / "dst.duckdb"
    assert main(["import", "sft", str(sft_file), "--images", str(tmp_path), "--db", str(db), "--task", "a"]) == 0
    captured = capsys.readouterr()
    assert "imported trajectories: 2" in captured.out and "not found under" in captured.err
    with Store(db) as store:
        traj = store.trajectories.load_trajectory(store.trajectories.list_trajectories(task="a")[0]["id"], with_images=True)
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
        stored = store.spectra.list_spectra()
        assert sorted(s["source_path"] for s in stored) == sorted(r["path"] for r in labels)
        for s in stored:
            spec = read_spectrum(s["source_path"])
            original = originals[label_of[s["source_path"]]["index"]]
            assert s["object_id"] == label_of[s["source_path"]]["object_id"] == original.meta["object_id"]
            assert np.allclose(spec.flux.value, original.flux.value, equal_nan=True)
            assert np.allclose(spec.spectral_axis.value, original.spectral_axis.value)
            assert spec.mask.mean() < 0.5 and s["snr"] > 0  # DER_SNR ivar: the pixels are usable
            header = store.spectra.get_spectrum(s["spectrum_id"])["header"]
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
        assert store.spectra.count_spectra() == 2


def test_import_rejects_a_missing_file_and_an_unknown_task(tmp_path, capsys):
    assert main(["import", "bench", str(tmp_path / "nope.parquet"), "--db", str(tmp_path / "d.duckdb")]) == 1
    assert "no such file" in capsys.readouterr().err
    rows = tmp_path / "rows.json"
    rows.write_text("[]")
    assert main(["import", "sft", str(rows), "--task", "zz", "--db", str(tmp_path / "d.duckdb")]) == 2


# -- refused rows (issue 10, item 7): the file, the line/row and the problem; the rest imports ----------
RAW_ERRORS = ("KeyError", "StopIteration", "TypeError", "Traceback", "PosixPath", "JSONDecodeError")


def _jsonl(path, lines):
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def _no_raw_errors(text):
    assert not any(word in text for word in RAW_ERRORS), text


def test_import_sft_refuses_bad_rows_by_line_and_imports_the_rest(tmp_path, exported, capsys):
    good_a, good_b = json.loads((exported["root"] / "sft" / "train_sharegpt.json").read_text())
    no_human = {**good_a, "conversations": [t for t in good_a["conversations"] if t["from"] != "human"]}
    dict_images = {**good_a, "images": [{"path": p} for p in good_a["images"]]}
    extra_token = {**good_a, "conversations": [*good_a["conversations"], {"from": "human", "value": "<image><image>"}]}
    no_from = {**good_a, "conversations": [{"value": "hi"}]}
    sft = _jsonl(tmp_path / "rows.jsonl", [
        good_a,                                  # line 1
        '{"conversations": [',                   # line 2: broken JSON
        "",                                      # line 3: blank, still counted
        {"images": []},                          # line 4: no conversations
        no_human,                                # line 5: no human prompt
        dict_images,                             # line 6: image paths are objects
        extra_token,                             # line 7: more <image> tokens than images
        [1, 2],                                  # line 8: not an object
        no_from,                                 # line 9: a turn without `from`
        good_b,                                  # line 10
    ])
    db = tmp_path / "dst.duckdb"
    code = main(["import", "sft", str(sft), "--images", str(exported["root"] / "sft"), "--db", str(db)])
    captured = capsys.readouterr()
    assert code == 1  # some rows were refused
    assert "imported trajectories: 2; already present: 0; refused: 7" in captured.out
    err = captured.err
    _no_raw_errors(err)
    expected = {
        2: r"not valid JSON \(.*column",
        4: r"missing field 'conversations'",
        5: r"conversations: no 'human' turn",
        6: r"images\[0\]: expected a path \(string\), got object",
        7: rf"{len(good_a['images']) + 2} <image> tokens but 'images' lists {len(good_a['images'])} paths",
        8: r"expected a JSON object, got array",
        9: r"conversations\[0\]\.from: missing",
    }
    for line, problem in expected.items():
        assert re.search(rf"rows\.jsonl line {line}: [^\n]*{problem}", err), (line, err)
    assert "line 1:" not in err and "line 3:" not in err and "line 10:" not in err
    with Store(db) as store:
        assert store.trajectories.count_trajectories(backend="spec-o3-sft") == 2


def test_import_sft_of_a_broken_json_file_names_where(tmp_path, capsys):
    bad = tmp_path / "rows.json"
    bad.write_text('[{"conversations": []},\n {"oops" ]\n]')
    assert main(["import", "sft", str(bad), "--db", str(tmp_path / "d.duckdb")]) == 1
    err = capsys.readouterr().err
    _no_raw_errors(err)
    assert re.search(r"rows\.json: not valid JSON at line 2 column \d+", err), err
    with Store(tmp_path / "d.duckdb") as store:
        assert store.trajectories.count_trajectories() == 0


def test_import_bench_refuses_bad_rows_and_leaves_no_file_for_them(tmp_path, exported, capsys):
    good_a, good_b = json.loads((exported["root"] / "bench_json" / "review_a.json").read_text())
    import copy

    def variant(change):
        row = copy.deepcopy(good_a)
        change(row["extra_info"]["tools_kwargs"]["spectral_visualization_tool"]["create_kwargs"])
        row["extra_info"]["index"] = f"{row['extra_info']['index']}-{change.__name__}"
        return row

    def short_flux(ck):
        ck["flux"] = ck["flux"][:-5]

    def parsec(ck):
        ck["wavelength"] = [w * 1e26 for w in ck["wavelength"]]

    def huge(ck):
        ck["flux"] = [1e300 * (1 + 0.1 * (i % 7)) for i in range(len(ck["flux"]))]

    def text_flux(ck):
        ck["flux"] = ["bright"] * len(ck["flux"])

    no_extra = {k: v for k, v in good_a.items() if k != "extra_info"}
    rows = _jsonl(tmp_path / "bench.jsonl", [
        good_a,                 # line 1
        no_extra,               # line 2
        variant(short_flux),    # line 3
        variant(parsec),        # line 4: written, then refused on read: the FITS must go
        variant(huge),          # line 5
        "not json",             # line 6
        variant(text_flux),     # line 7
        good_b,                 # line 8
    ])
    db, out = tmp_path / "dst.duckdb", tmp_path / "out"
    code = main(["import", "bench", str(rows), "--db", str(db), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert "imported spectra: 2; already present: 0; refused: 6" in captured.out
    err = captured.err
    _no_raw_errors(err)
    expected = {
        2: r"missing field 'extra_info'",
        3: r"create_kwargs: 'wavelength' has \d+ values, 'flux' has \d+",
        4: r"outside the plausible spectroscopic range",
        5: r"flux value 1e\+300 .*overflow",
        6: r"not valid JSON",
        7: r"create_kwargs\.flux\[0\]: expected a number, got string",
    }
    for line, problem in expected.items():
        assert re.search(rf"bench\.jsonl line {line}: [^\n]*{problem}", err), (line, err)
    assert sorted(p.suffix for p in out.iterdir()) == [".csv", ".fits", ".fits"]  # nothing else, no partials
    with Store(db) as store:
        assert store.spectra.count_spectra() == 2
    with open(out / "manifest-labels.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 2


def test_import_bench_removes_the_fits_of_a_row_whose_ingest_fails(tmp_path, exported, capsys, monkeypatch):
    import reviewer.services.ingest as ingest_module

    real_ingest = ingest_module.ingest_paths
    calls = []

    def flaky(store, paths, **kw):
        calls.append(paths[0])
        if len(calls) == 1:  # the first row's file: the store refuses it
            return type("S", (), {"added": 0, "skipped_existing": 0,
                                  "failed": [(str(paths[0]), "simulated store failure")]})()
        return real_ingest(store, paths, **kw)

    monkeypatch.setattr(ingest_module, "ingest_paths", flaky)
    bench = exported["root"] / "bench" / "review_a.parquet"
    db, out = tmp_path / "dst.duckdb", tmp_path / "out"
    assert main(["import", "bench", str(bench), "--db", str(db), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "imported spectra: 1; already present: 0; refused: 1" in captured.out
    assert "review_a.parquet row 1: " in captured.err and "simulated store failure" in captured.err
    assert not calls[0].exists()  # written for the refused row, then removed
    assert len(list(out.glob("*.fits"))) == 1


# -- text size limit (agents.trajectory.MAX_STEP_TEXT_BYTES, 1 MB) ----------------------------------------
def test_import_sft_refuses_a_row_with_a_step_text_over_the_limit(tmp_path, exported, capsys):
    from agents.trajectory import MAX_STEP_TEXT_BYTES

    good_a, good_b = json.loads((exported["root"] / "sft" / "train_sharegpt.json").read_text())
    big = json.loads(json.dumps(good_a))
    k = next(i for i, t in enumerate(big["conversations"]) if t["from"] == "gpt")
    big["conversations"][k]["value"] += "x" * 1_100_000  # a 1.1 MB think/answer text
    db = tmp_path / "dst.duckdb"
    with Store(db) as store:
        before = store.trajectories.count_trajectories()
    rows = _jsonl(tmp_path / "rows.jsonl", [good_a, big, good_b])
    code = main(["import", "sft", str(rows), "--images", str(exported["root"] / "sft"), "--db", str(db)])
    captured = capsys.readouterr()
    assert code == 1
    assert "imported trajectories: 2; already present: 0; refused: 1" in captured.out
    _no_raw_errors(captured.err)
    assert re.search(rf"rows\.jsonl line 2: conversations\[{k}\]\.value: [^\n]*over the "
                     rf"{MAX_STEP_TEXT_BYTES:,}[^\n]*limit", captured.err), captured.err
    assert "line 1:" not in captured.err and "line 3:" not in captured.err
    assert len(captured.err) < 2000  # the refusal names the text, it does not echo it
    with Store(db) as store:
        assert before == 0 and store.trajectories.count_trajectories() == 2
        for r in store.trajectories.list_trajectories():
            traj = store.trajectories.load_trajectory(r["id"])
            assert max(len(s.text) for s in traj.steps) < MAX_STEP_TEXT_BYTES


def test_import_bench_refuses_a_row_with_a_text_over_the_limit(tmp_path, exported, capsys):
    from agents.trajectory import MAX_STEP_TEXT_BYTES

    good_a, good_b = json.loads((exported["root"] / "bench_json" / "review_a.json").read_text())
    big = json.loads(json.dumps(good_a))
    big["prompt"][-1]["content"] += "y" * 1_100_000
    big["extra_info"]["index"] = "big-one"  # another spectrum name: it would be a new file
    db, out = tmp_path / "dst.duckdb", tmp_path / "out"
    rows = _jsonl(tmp_path / "bench.jsonl", [good_a, big, good_b])
    code = main(["import", "bench", str(rows), "--db", str(db), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert "imported spectra: 2; already present: 0; refused: 1" in captured.out
    n = len(big["prompt"]) - 1
    assert re.search(rf"bench\.jsonl line 2: prompt\[{n}\]\.content: [^\n]*over the "
                     rf"{MAX_STEP_TEXT_BYTES:,}[^\n]*limit", captured.err), captured.err
    assert sorted(p.suffix for p in out.iterdir()) == [".csv", ".fits", ".fits"]  # nothing for the refused row
    with Store(db) as store:
        assert store.spectra.count_spectra() == 2
