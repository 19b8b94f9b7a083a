"""`specreview import forma DIR` on real SDSS spectra of the shared corpus. The FORMA output trees are
written by the tests (tests/reviewer/cli/forma_tree.py) from the formats in the FORMA paper and the
reference notes: no FORMA run ships with the corpus."""
import json
import shutil

import pytest

from reviewer.cli import main
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store
from tests.reviewer.cli.forma_tree import write_forma_tree

PICKS = (("sdss_gelato/spec-0295-51585-0596.fits", 0.137877, "Galaxy"),
         ("sdss_gelato/spec-0853-52374-0240.fits", 0.196801, "QSO"))


def counts(db) -> tuple[int, int, int]:
    with Store(db) as store:
        return tuple(int(store.db.scalar(f"SELECT count(*) FROM {t}")) for t in ("trajectories", "steps", "images"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shared_spectra):
    root = tmp_path_factory.mktemp("forma")
    paths = [shared_spectra / f for f, _z, _c in PICKS]
    db = root / "base.duckdb"
    with Store(db) as store:
        ingest_paths(store, paths, progress=False)
        sids = {p.name: store.spectra.list_spectra(search=p.name)[0]["spectrum_id"] for p in paths}
    run = root / "run"
    names = [write_forma_tree(run / p.stem, p, z, c) for p, (_f, z, c) in zip(paths, PICKS, strict=True)]
    return {"root": root, "run": run, "db": db, "paths": paths, "sids": sids, "names": names}


def fresh_db(tmp_path, corpus):
    db = tmp_path / "dst.duckdb"
    db.write_bytes(corpus["db"].read_bytes())
    return db


def test_a_forma_run_becomes_a_verify_trajectory_that_plays_back(tmp_path, corpus, capsys):
    from agents.interop.forma import FORMA_VERSION

    db = fresh_db(tmp_path, corpus)
    assert main(["import", "forma", str(corpus["run"]), "--db", str(db)]) == 0
    out = capsys.readouterr()
    assert "imported trajectories: 2; already present: 0; refused: 0" in out.out
    assert "problem" not in out.err
    with Store(db) as store:
        stored = store.trajectories.list_trajectories(backend="forma")
        assert {r["spectrum_id"] for r in stored} == set(corpus["sids"].values())
        galaxy = next(r for r in stored if r["spectrum_id"] == corpus["sids"][corpus["paths"][0].name])
        traj = store.trajectories.load_trajectory(galaxy["id"], with_images=True)
    assert traj.task == "verify" and traj.agent.name == "verify" and traj.agent.version == FORMA_VERSION
    kinds = [(s.kind, s.tool_name or (s.verdict.who if s.verdict else None)) for s in traj.steps]
    assert kinds[:5] == [("prompt", None), ("tool_call", "render"), ("tool_result", "render"),
                         ("tool_call", "cwt_features"), ("tool_result", "cwt_features")]
    for expected in (("tool_result", "redshift_hypotheses"), ("tool_call", "analyse_hypothesis"),
                     ("verdict", "feature_auditor"), ("tool_result", "feature_audit"), ("verdict", "synthesis"),
                     ("verdict", "result_auditor"), ("think", None)):
        assert expected in kinds, expected
    assert kinds[-1] == ("answer", None)
    assert traj.steps[0].data["coverage"][0] > 3700 and traj.steps[0].data["good_pixels"] > 3000
    assert traj.steps[2].image_sha in traj.images  # the Visual Interpreter's plot
    analyses = [s for s in traj.steps if s.kind == "tool_call" and s.tool_name == "analyse_hypothesis"]
    assert [(a.tool_args["idx"], a.tool_args["class"]) for a in analyses] == [(0, "Galaxy"), (1, "Galaxy")]
    assert abs(analyses[0].tool_args["z"] - PICKS[0][1]) < 1e-5
    result0 = next(s for s in traj.steps if s.kind == "tool_result" and s.tool_name == "analyse_hypothesis")
    assert result0.data["summary"]["verdict"] == "SUPPORTED" and result0.data["summary"]["n_likely"] == 4
    z0, cls0 = traj.hypothesis_at(analyses[0].index)  # the candidates panel knows which hypothesis is shown
    assert cls0 == "Galaxy" and abs(z0 - PICKS[0][1]) < 1e-5
    removed = next(s for s in traj.steps if s.kind == "verdict" and s.verdict.who == "feature_auditor")
    assert removed.verdict.value == "REMOVE"
    lo, hi = traj.zoom_at(removed.index)  # the plot shows the feature the auditor removed
    assert lo < 5577.3 < hi
    ra = next(s for s in traj.steps if s.kind == "verdict" and s.verdict.who == "result_auditor")
    assert (ra.verdict.value, ra.verdict.credibility) == ("CONFIRM", "MEDIUM")
    streams = [s.data["source"] for s in traj.steps if s.kind == "think"]
    assert streams == ["feature_auditor/stream.md", "stream.md"]
    assert traj.outcome["type"] == "Galaxy" and traj.outcome["credibility"] == "MEDIUM"
    assert abs(traj.outcome["z"] - PICKS[0][1]) < 1e-9 and traj.outcome["forma"]["missing"] == []
    assert "<script>" in traj.steps[-1].text  # kept as written: the app escapes it on display
    assert main(["import", "forma", str(corpus["run"]), "--db", str(db)]) == 0
    assert "imported trajectories: 0; already present: 2" in capsys.readouterr().out


def test_what_a_folder_lacks_is_reported_not_invented(tmp_path, corpus, capsys):
    run = tmp_path / "run"
    shutil.copytree(corpus["run"], run)
    folder = run / corpus["paths"][0].stem
    name = corpus["names"][0]
    for rel in ("feature_auditor/verdict.json", f"{name}_in_brief.json", f"visual_interpreter/{name}_spectrum.npz",
                "hypothesis_synthesis/synthesis.json"):
        (folder / rel).unlink()
    brief = {"file_name": name, "type": "Galaxy", "signal_clarity": "3", "redshift": "0.13788", "redshift_rms": "",
             "lines": "H\u03b1", "confidence": "MEDIUM", "human_review": "No"}
    (run / "in_brief.csv").write_text(",".join(brief) + "\n" + ",".join(brief.values()) + "\n")
    shutil.rmtree(run / corpus["paths"][1].stem)
    db = fresh_db(tmp_path, corpus)
    assert main(["import", "forma", str(run), "--db", str(db)]) == 0
    err = capsys.readouterr().err
    for part in ("feature_auditor/verdict.json", f"visual_interpreter/{name}_spectrum.npz (the snapshot)",
                 "hypothesis_synthesis/*.json"):
        assert f"problem: {folder.name}/: missing {part}" in err, part
    with Store(db) as store:
        traj = store.trajectories.load_trajectory(store.trajectories.list_trajectories(backend="forma")[0]["id"])
    assert not any(s.verdict and s.verdict.who == "feature_auditor" for s in traj.steps)
    assert "coverage" not in traj.steps[0].data
    assert traj.outcome["brief"]["redshift"] == 0.13788 and traj.outcome["brief"]["redshift_rms"] is None
    assert len(traj.outcome["forma"]["missing"]) == 3


def test_bad_folders_are_refused_by_name_and_store_nothing(tmp_path, corpus, capsys):
    run = tmp_path / "run"
    shutil.copytree(corpus["run"], run)
    good, broken = (run / p.stem for p in corpus["paths"])
    (broken / "result_auditor" / "auditor_verdict.json").write_text('{"verdict": "CONFIRM",')
    deep = run / "deep"
    shutil.copytree(good, deep)
    (deep / "feature_auditor" / "verdict.json").write_text(json.dumps({"x": json.loads("[" * 70 + "]" * 70)}))
    long_log = run / "long_log"
    shutil.copytree(good, long_log)
    (long_log / "stream.md").write_text("x" * 1_000_001)
    stranger = run / "stranger"
    shutil.copytree(good, stranger)
    for p in stranger.rglob(f"{corpus['names'][0]}*"):
        p.rename(p.with_name(p.name.replace(corpus["names"][0], "spec-9999-99999-0001")))
    (stranger / "stream.md").write_text("another spectrum")
    db = fresh_db(tmp_path, corpus)
    before = counts(db)
    assert main(["import", "forma", str(run), "--db", str(db)]) == 1
    captured = capsys.readouterr()
    assert "imported trajectories: 1; already present: 0; refused: 4" in captured.out
    err = captured.err
    for needle in (f"{broken.name}/: result_auditor/auditor_verdict.json: not valid JSON at line 1",
                   "deep/: feature_auditor/verdict.json: nested deeper than 64",
                   "long_log/: steps[", "text of 1,000,001 bytes",
                   "stranger/: no stored spectrum named 'spec-9999-99999-0001'"):
        assert needle in err, needle
    assert "Traceback" not in err
    after = counts(db)
    with Store(db) as store:
        (only,) = store.trajectories.list_trajectories(backend="forma")
        traj = store.trajectories.load_trajectory(only["id"], with_images=True)
    assert after == (before[0] + 1, before[1] + len(traj.steps), before[2] + len(traj.images))


def test_not_a_forma_folder_imports_nothing(tmp_path, corpus, capsys):
    (tmp_path / "empty").mkdir()
    db = fresh_db(tmp_path, corpus)
    assert main(["import", "forma", str(tmp_path / "empty"), "--db", str(db)]) == 1
    assert "no FORMA output here" in capsys.readouterr().err
    assert main(["import", "forma", str(corpus["paths"][0]), "--db", str(db)]) == 1
    assert "no such folder" in capsys.readouterr().err
