"""`--dask` for real: vet on a 2-worker LocalCluster (separate processes) over a slice of the shared
corpus gives the serial run's trajectories, one unreadable file fails alone, and the workers never
touch the database (the client writes). `verify --dask local:2` starts and stops its own cluster."""
import shutil
import sys

import pytest

from reviewer.cli import main
from reviewer.store import Store

distributed = pytest.importorskip("distributed")

N_FILES = 10


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


@pytest.fixture
def corpus(tmp_path, shared_spectra, manifest):
    folder = tmp_path / "spectra"
    folder.mkdir()
    rows = [r for r in manifest if r["survey"].startswith(("LAMOST-LRS", "SDSS")) and "#" not in r["file"]]
    for r in rows[:N_FILES]:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].replace("/", "__"))
    return folder


def _ingested(tmp_path, corpus, name):
    db = tmp_path / f"{name}.duckdb"
    assert main(["ingest", "--db", str(db), str(corpus)]) == 0
    with Store(db) as store:
        ids = [s["spectrum_id"] for s in store.spectra.list_spectra(limit=None)]
    return db, ids


def _results(db):
    """(spectrum, task) -> everything an agent decided: outcome and steps without ids and clocks."""
    out = {}
    with Store(db) as store:
        for row in store.trajectories.list_trajectories():
            traj = store.trajectories.load_trajectory(row["id"])
            steps = [s.model_dump(exclude={"created_at"}) for s in traj.steps]
            for s in steps:
                s["data"].pop("elapsed_s", None)  # wall time of a model call differs run to run
            out[(traj.spectrum_id, traj.task)] = (traj.outcome, steps, traj.agent.model_dump())
    return out


def test_vet_on_a_two_worker_cluster_matches_the_serial_run(tmp_path, corpus, cluster, capsys):
    serial_db, ids = _ingested(tmp_path, corpus, "serial")
    dask_db, dask_ids = _ingested(tmp_path, corpus, "dask")
    assert sorted(ids) == sorted(dask_ids) and len(ids) >= N_FILES
    bad = sorted(corpus.iterdir())[3]
    bad.write_bytes(b"SIMPLE  = not a FITS file any more")  # ingested fine, unreadable when vetted
    capsys.readouterr()

    # exit 1: one file failed (reviewer/cli/exits.py), the others are vetted
    assert main(["vet", "--db", str(serial_db), "--task", "a,mg", "--no-progress", *ids]) == 1
    serial_out = capsys.readouterr().out
    assert main(["vet", "--db", str(dask_db), "--task", "a,mg", "--no-progress",
                 "--dask", cluster.scheduler_address, *ids]) == 1
    dask_out = capsys.readouterr().out

    for out in (serial_out, dask_out):
        problems = [line for line in out.splitlines() if "problem:" in line]
        assert len(problems) == 2 and all(bad.name in p for p in problems)  # tasks a and mg of that file
        assert f"vetted: {2 * (len(ids) - 1)}" in out
    serial, dask = _results(serial_db), _results(dask_db)
    assert len(serial) == 2 * (len(ids) - 1)
    assert dask == serial
    with distributed.Client(cluster) as client:
        touched = client.run(lambda: sorted(m for m in sys.modules if m == "duckdb" or m.startswith("reviewer")))
        ran = client.run(lambda: "agents.jobs" in sys.modules)
    assert all(ran.values()), "the cluster's workers did not run the jobs"
    assert all(mods == [] for mods in touched.values()), touched


def test_verify_on_a_local_cluster(tmp_path, shared_spectra, capsys):
    from shared_data import shared_data_dir

    files = ["sdss_pyqsofit/spec-0332-52367-0639.fits", "sdss_bossbrain/spec-3586-55181-0500.fits"]
    folder = tmp_path / "v"
    folder.mkdir()
    for rel in files:
        shutil.copy(shared_spectra / rel, folder / rel.split("/")[-1])
    templates = str(shared_data_dir() / "redrock-templates")
    db = tmp_path / "v.duckdb"
    assert main(["verify", "--db", str(db), "--templates", templates, "--no-progress", "--dask", "local:2",
                 str(folder)]) == 0
    out = capsys.readouterr().out
    assert "verified: 2" in out and "run: 2 spectra done, 0 failed" in out
    with Store(db) as store:
        assert {t["type"] for t in (store.trajectories.load_trajectory(r["id"]).outcome
                                    for r in store.trajectories.list_trajectories())} == {"QSO", "STAR"}


@pytest.mark.parametrize("spec, parsed", [
    ("local", ("local", None)), ("local:3", ("local", 3)), ("tcp://10.0.0.5:8786", ("address", None)),
    ("localhost:8786", ("address", None)),
])
def test_dask_spec(spec, parsed):
    from agents.batch import parse_dask

    assert parse_dask(spec) == parsed


def test_dask_spec_rejects_a_bad_count():
    from agents.batch import parse_dask

    with pytest.raises(ValueError, match="positive worker count"):
        parse_dask("local:0")
