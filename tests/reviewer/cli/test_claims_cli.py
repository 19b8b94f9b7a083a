"""`specreview claims`, and the claim checks `vet` and `verify` make on every new trajectory, on the real
demo spectra and a real DuckDB file: the rules policy's trajectories have no contradicted claim, a
trajectory with a planted false claim (an H-beta equivalent width tripled) has exactly one, and the
queue shows, filters and sorts it."""
import json
import re
import shutil

import pytest

from reviewer.cli import main
from reviewer.store import Store

DEMO_FILES = ("spec-55862-B6212_sp01-001.fits.gz",  # LAMOST A1IV
              "spec-55859-F5902_sp07-209.fits.gz",
              "sdss_dr18_0358-51818-0504.fits")


@pytest.fixture(scope="module")
def vetted_db(tmp_path_factory, demo_dir):
    """Three demo spectra vetted for tasks a and wd by the rules policy through the CLI."""
    root = tmp_path_factory.mktemp("claims")
    folder = root / "spectra"
    folder.mkdir()
    for name in DEMO_FILES:
        shutil.copy(demo_dir / name, folder / name)
    db = root / "claims.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a,wd", "--no-progress", str(folder)]) == 0
    return db, folder


def copy_db(vetted_db, tmp_path):
    db = tmp_path / "copy.duckdb"
    shutil.copy(vetted_db[0], db)
    return db


def test_vet_checks_every_new_trajectory_and_the_rules_contradict_nothing(vetted_db):
    db, _ = vetted_db
    with Store(db) as store:
        tids = [r["id"] for r in store.list_trajectories()]
        assert len(tids) == 2 * len(DEMO_FILES)
        counts = store.claim_counts(tids)
        assert set(counts) == set(tids)  # every trajectory was checked when it was stored
        assert all(c["contradicted"] == 0 and c["supported"] > 0 for c in counts.values())
        assert all(r["contradicted"] == 0 for r in store.queue_items())


def test_claims_command_on_paths_ids_and_trajectories(vetted_db, tmp_path, capsys):
    db = copy_db(vetted_db, tmp_path)
    _, folder = vetted_db
    capsys.readouterr()
    with Store(db) as store:
        before = {r["id"]: store.claims_for(r["id"]) for r in store.list_trajectories()}
        sid = store.list_spectra(search=DEMO_FILES[0])[0]["spectrum_id"]
        one = store.trajectories_on_spectrum(store.list_spectra(search=DEMO_FILES[1])[0]["spectrum_id"])[0]["id"]
    assert main(["claims", "--db", str(db), "--no-progress", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"checked: {2 * len(DEMO_FILES)} trajectories" in out and "trajectories with a contradicted claim: 0" in out
    per_trajectory = [line for line in out.splitlines() if " rules/" in line]
    assert len(per_trajectory) == 2 * len(DEMO_FILES) and all("0 contradicted" in line for line in per_trajectory)
    with Store(db) as store:  # re-checked with the same version: the same results, replaced not added
        after = {tid: store.claims_for(tid) for tid in before}
        strip = [{k: v for k, v in r.items() if k != "created_at"} for r in before[one]]
        assert [{k: v for k, v in r.items() if k != "created_at"} for r in after[one]] == strip
        assert all(len(after[t]) == len(before[t]) for t in before)
    # a spectrum id and a trajectory id, only task a, as JSON
    assert main(["claims", "--db", str(db), "--no-progress", "--json", "--task", "a", sid, one]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {t["task"] for t in doc["trajectories"]} == {"a"} and len(doc["trajectories"]) == 2
    assert doc["totals"]["contradicted"] == 0 and doc["totals"]["supported"] > 0 and doc["problems"] == []
    assert doc["checker_version"] and all(t["contradicted_claims"] == [] for t in doc["trajectories"])


def test_claims_command_reports_unknown_items(vetted_db, tmp_path, capsys):
    db = copy_db(vetted_db, tmp_path)
    assert main(["claims", "--db", str(db), "--no-progress", "nope", str(tmp_path / "missing.fits")]) == 1
    out = capsys.readouterr().out
    assert "checked: 0 trajectories" in out and out.count("neither a stored trajectory or spectrum id") == 2


def test_a_planted_false_claim_is_contradicted_in_the_store_and_the_queue(vetted_db, tmp_path, demo_dir, capsys):
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    db = copy_db(vetted_db, tmp_path)
    with Store(db) as store:
        sid = store.list_spectra(search=DEMO_FILES[0])[0]["spectrum_id"]
        rec = store.get_spectrum(sid)
        traj = vet_spectrum(read_spectrum(rec["source_path"]), "a", spectrum_id=sid)
        traj.source_path = rec["source_path"]
        step = next(s for s in traj.steps if s.kind == "think" and "H-beta equivalent width" in s.text)
        found = re.search(r"H-beta equivalent width = (-?[\d.]+)", step.text)
        true_ew = float(found.group(1))
        step.text = step.text.replace(found.group(0), f"H-beta equivalent width = {3 * true_ew:.2f}")
        store.save_trajectory(traj)  # stored without a check: the command does it
        assert store.claim_counts([traj.id]) == {}
    capsys.readouterr()
    assert main(["claims", "--db", str(db), "--no-progress", traj.id]) == 0
    out = capsys.readouterr().out
    assert "1 contradicted" in out and f"contradicted, step {step.index}: 'H-beta equivalent width = " in out
    with Store(db) as store:
        bad = [r for r in store.claims_for(traj.id) if r["verdict"] == "contradicted"]
        assert len(bad) == 1 and bad[0]["step_idx"] == step.index
        assert bad[0]["claimed"] == pytest.approx(3 * true_ew) and bad[0]["measured"] == pytest.approx(true_ew, abs=0.01)
        assert bad[0]["window_lo"] < 4862 < bad[0]["window_hi"]
        assert step.text[bad[0]["span_start"]:bad[0]["span_end"]] == bad[0]["claim_text"]
        rows = {r["trajectory_id"]: r["contradicted"] for r in store.queue_items(limit=100)}
        assert rows[traj.id] == 1 and sum(rows.values()) == 1
        assert [r["trajectory_id"] for r in store.queue_items(contradicted=True)] == [traj.id]
        assert store.queue_items(order="contradicted")[0]["trajectory_id"] == traj.id
        assert store.queue_count(contradicted=False) == 2 * len(DEMO_FILES)


def test_verify_checks_its_trajectories_and_no_claims_skips_it(tmp_path, demo_dir, capsys):
    spectrum = demo_dir / DEMO_FILES[0]
    db = tmp_path / "verify.duckdb"
    assert main(["verify", "--db", str(db), "--no-progress", str(spectrum)]) == 0
    assert "claims: " in capsys.readouterr().out
    with Store(db) as store:
        tid = store.list_trajectories(task="verify")[0]["id"]
        assert store.claims_for(tid) and set(store.claim_counts([tid])) == {tid}
    nocheck = tmp_path / "nocheck.duckdb"
    assert main(["vet", "--db", str(nocheck), "--task", "a", "--no-claims", "--no-progress", str(spectrum)]) == 0
    assert "claims: " not in capsys.readouterr().out
    with Store(nocheck) as store:
        tid = store.list_trajectories()[0]["id"]
        assert store.claim_counts([tid]) == {}
        assert store.queue_items()[0]["contradicted"] == 0
