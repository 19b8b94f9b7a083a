"""`specreview export trajectories` / `specreview import trajectories`: SpecReview's own format,
round trip on real spectra of the shared corpus (a rules vet run, a FORMA-protocol verify run with
its renders made eagerly, and a hand-made trajectory with every step kind), bad rows refused by line
and nothing half-written."""
import json
from pathlib import Path

import pytest

from agents.interop.trajectory_file import trajectory_json_schema
from reviewer.cli import main
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

REPO = Path(__file__).resolve().parents[3]


def counts(db) -> tuple[int, int, int]:
    with Store(db) as store:
        return tuple(int(store.db.scalar(f"SELECT count(*) FROM {t}")) for t in ("trajectories", "steps", "images"))


@pytest.fixture(scope="module")
def source(tmp_path_factory, shared_spectra, manifest):
    """A source database: two real LAMOST spectra, a vet and an eager verify trajectory on the first, a
    hand-made one (every step kind, two PNGs) on the second."""
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum
    from agents.vet.run import vet_spectrum
    from tests.reviewer.conftest import make_png

    root = tmp_path_factory.mktemp("traj")
    rows = [r for r in manifest if r["survey"].startswith("LAMOST-LRS")][:2]
    paths = [shared_spectra / r["file"].partition("#")[0] for r in rows]
    db = root / "source.duckdb"
    with Store(db) as store:
        ingest_paths(store, paths, progress=False)
        sids = [store.spectra.list_spectra(search=p.name)[0]["spectrum_id"] for p in paths]
        spec = read_spectrum(paths[0])
        store.trajectories.save_trajectory(vet_spectrum(spec, "a", spectrum_id=sids[0]))
        store.trajectories.save_trajectory(verify_spectrum(spec, spectrum_id=sids[0], eager_renders=True))
        from agents.trajectory import AgentInfo, Trajectory, Verdict
        traj = Trajectory(spectrum_id=sids[1], source_path=str(paths[1]), task="wd",
                          agent=AgentInfo(name="vet", backend="mine", model="m-1"))
        full, zoom = traj.add_image(make_png(40, 20, 1)), traj.add_image(make_png(30, 10, 2))
        traj.add("prompt", text="Is this a white dwarf? <b>x</b>", image_sha=full, data={"tool_state": {"redshift": 0}})
        traj.add("think", text="Broad H-beta \u2028 wings.")
        traj.add("tool_call", tool_name="spectral_visualization_tool",
                 tool_args={"wavelength_range": [4700, 5000.5], "label": "H\u03b2"}, label="H\u03b2")
        traj.add("tool_result", tool_name="spectral_visualization_tool", image_sha=zoom, data={"ew": [38.2, None]})
        traj.add("tool_result", text="Error: out of range", is_error=True)
        traj.add("verdict", verdict=Verdict(who="feature_auditor", value="FLAG", evidence=["4861.3 \u00c5"]))
        traj.add("answer", text="YES", answer={"answer": "YES"})
        traj.outcome = {"answer": "YES", "z": 1e-05, "nested": {"a": [1, 2.5, None]}}
        store.trajectories.save_trajectory(traj)
        originals = {r["id"]: store.trajectories.load_trajectory(r["id"], with_images=True)
                     for r in store.trajectories.list_trajectories()}
    assert sum(bool(t.images) for t in originals.values()) == 2
    return {"root": root, "db": db, "paths": paths, "originals": originals}


def same(a, b):
    """Every field of every step, the outcome and every image byte."""
    assert a.model_dump() == b.model_dump()
    assert a.images == b.images


@pytest.mark.parametrize("inline", [False, True])
def test_export_then_import_gives_back_every_step_image_and_outcome(tmp_path, source, capsys, inline):
    out = tmp_path / "export"
    assert main(["export", "trajectories", "--db", str(source["db"]), "--out", str(out)]
                + (["--inline-images"] if inline else [])) == 0
    assert "wrote 3 trajectories" in capsys.readouterr().out
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 3
    assert len(list((out / "images").iterdir())) == (0 if inline else
                                                     len({s for t in source["originals"].values() for s in t.images}))
    dst = tmp_path / "dst.duckdb"
    with Store(dst) as store:
        ingest_paths(store, source["paths"], progress=False)
    assert main(["import", "trajectories", str(out), "--db", str(dst)]) == 0
    assert "imported trajectories: 3; already present: 0; refused: 0" in capsys.readouterr().out
    with Store(dst) as store:
        for tid, original in source["originals"].items():
            same(store.trajectories.load_trajectory(tid, with_images=True), original)
    # again: nothing new
    assert main(["import", "trajectories", str(out / "trajectories.jsonl"), "--db", str(dst)]) == 0
    assert "imported trajectories: 0; already present: 3" in capsys.readouterr().out


def test_an_import_ends_with_its_trajectories_triage_signals_stored(tmp_path, source, capsys):
    """As a campaign does (vet, verify): the first read after an import finds the signals of the imported
    trajectories stored, not ~90 s of them to compute at 1M (issue 22, item 4). An import that adds none
    stores none and says nothing of them."""
    from tests.reviewer.conftest import assert_signals_stored_as_computed

    out = tmp_path / "export"
    assert main(["export", "trajectories", "--db", str(source["db"]), "--out", str(out)]) == 0
    dst = tmp_path / "dst.duckdb"
    with Store(dst) as store:
        ingest_paths(store, source["paths"], progress=False)
    capsys.readouterr()
    assert main(["import", "trajectories", str(out), "--db", str(dst)]) == 0
    assert "triage signals stored for 3 trajectories" in capsys.readouterr().out
    with Store(dst) as store:
        assert_signals_stored_as_computed(store, 3)
    assert main(["import", "trajectories", str(out), "--db", str(dst)]) == 0
    assert "triage signals" not in capsys.readouterr().out
    # into a database without their spectra: imported without one, their signals stored all the same
    bare = tmp_path / "bare.duckdb"
    assert main(["import", "trajectories", str(out), "--db", str(bare)]) == 0
    assert "triage signals stored for 3 trajectories" in capsys.readouterr().out
    with Store(bare) as store:
        assert store.db.scalar("SELECT count(*) FROM trajectories WHERE spectrum_id IS NULL") == 3
        assert_signals_stored_as_computed(store, 3)


def test_the_schema_file_is_the_one_the_code_describes():
    shipped = json.loads((REPO / "docs" / "trajectory.schema.json").read_text())
    assert shipped == trajectory_json_schema()
    assert shipped["properties"]["schema_version"]["default"] == 1


def test_bad_rows_are_refused_by_line_and_store_nothing(tmp_path, source, capsys):
    out = tmp_path / "export"
    assert main(["export", "trajectories", "--db", str(source["db"]), "--out", str(out)]) == 0
    good = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    with_image = next(r for r in good if r["images"])
    sha = next(iter(with_image["images"]))
    bad = [
        "{not json",
        json.dumps({**good[0], "id": "x1", "task": None}),  # line 3
        json.dumps({**good[0], "id": "x2", "schema_version": 99}),
        json.dumps({**with_image, "id": "x3", "images": {sha: "../outside.png"}}),
        json.dumps({**with_image, "id": "x4", "images": {**with_image["images"], sha: "images/missing.png"}}),
        json.dumps({**with_image, "id": "x5", "images": {}}),
        json.dumps({**good[0], "id": "x6", "outcome": {"note": "y" * 1_000_001}}),
        json.dumps({**good[0], "id": "x7", "outcome": {"deep": json.loads("[" * 70 + "]" * 70)}}),
        json.dumps({**good[0], "id": "x8", "steps": [{"index": 0, "kind": "shout"}]}),
    ]
    (out / "trajectories.jsonl").write_text("\n".join([json.dumps(good[0]), *bad]) + "\n")
    (out / "images" / "other.png").write_bytes(b"\x89PNG\r\n\x1a\nnot this one")
    dst = tmp_path / "dst.duckdb"
    assert main(["import", "trajectories", str(out), "--db", str(dst)]) == 1
    captured = capsys.readouterr()
    assert "imported trajectories: 1; already present: 0; refused: 9" in captured.out
    err = captured.err
    for needle in ("trajectories.jsonl line 2: not valid JSON", "line 3: task:",
                   "line 4: schema_version: 99 is newer", "line 5: images.", "is outside",
                   "line 6: images.", "not found", "line 7: steps[", "has no entry in 'images'",
                   "line 8: outcome.note: text of 1,000,001 bytes", "line 9: nested deeper than 64",
                   "line 10: steps[0].kind"):
        assert needle in err, needle
    assert "Traceback" not in err
    one = source["originals"][good[0]["id"]]
    assert counts(dst) == (1, len(one.steps), len(one.images))


def test_a_row_whose_png_is_not_its_sha_is_refused(tmp_path, source, capsys):
    out = tmp_path / "export"
    assert main(["export", "trajectories", "--db", str(source["db"]), "--out", str(out)]) == 0
    png = next((out / "images").iterdir())
    png.write_bytes(png.read_bytes() + b"tampered")
    dst = tmp_path / "dst.duckdb"
    assert main(["import", "trajectories", str(out), "--db", str(dst)]) == 1
    assert "the PNG's sha256 is" in capsys.readouterr().err
    assert counts(dst)[0] == 3 - sum(1 for t in source["originals"].values() if png.stem in t.images)


def test_the_shipped_demo_file_is_a_trajectories_file(tmp_path, demo_dir, capsys):
    """One reader for the demo JSONL and the import: the shipped file imports as it seeds."""
    from reviewer.services.demo import DEMO_TRAJECTORIES, read_shipped

    db = tmp_path / "demo.duckdb"
    with Store(db) as store:
        ingest_paths(store, [demo_dir], progress=False)
    assert main(["import", "trajectories", str(DEMO_TRAJECTORIES), "--db", str(db)]) == 0
    shipped = read_shipped()
    assert f"imported trajectories: {len(shipped)}; already present: 0; refused: 0" in capsys.readouterr().out
    with Store(db) as store:
        for traj in shipped[:5]:
            stored = store.trajectories.load_trajectory(traj.id)
            assert stored.spectrum_id == traj.spectrum_id and stored.steps == traj.steps
