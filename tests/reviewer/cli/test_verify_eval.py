"""`specreview eval --verify` in velocity (issue 50, item 6), on real files verified into a real DuckDB
file: per class and per survey the |dv| median, p90 and bias in km/s, the coverage of the stated
1-sigma and the catastrophic rate; an answer is right by a tolerance in km/s, not |dz| <= 0.01."""
import json
import shutil

import pytest
from astropy.constants import c
from shared_data import shared_data_dir

from reviewer.cli import main
from reviewer.store import Store

FILES = ["sdss_pyqsofit/spec-0332-52367-0639.fits", "sdss_gelato/spec-0295-51585-0596.fits",
         "sdss_bossbrain/spec-3586-55181-0500.fits"]


@pytest.fixture(scope="module")
def verified_db(tmp_path_factory, shared_spectra):
    base = shared_data_dir()
    if base is None:
        pytest.skip("shared data not found")
    tmp = tmp_path_factory.mktemp("veval")
    folder = tmp / "spectra"
    folder.mkdir()
    for rel in FILES:
        shutil.copy(shared_spectra / rel, folder / rel.split("/")[-1])
    db = tmp / "v.duckdb"
    assert main(["verify", "--db", str(db), "--templates", str(base / "redrock-templates"), "--no-progress",
                 str(folder)]) == 0
    return db


def _answers(db):
    """(class, z, survey, label class, label z, stated rms) of each stored verify answer."""
    out = []
    with Store(db) as store:
        for row in store.trajectories.list_trajectories(task="verify"):
            traj = store.trajectories.load_trajectory(row["id"])
            spec = store.spectra.get_spectrum(traj.spectrum_id)
            b = traj.outcome["brief"]
            out.append((b["type"], b["redshift"], spec["survey"], spec["pipeline_class"], float(spec["pipeline_z"]),
                        b["redshift_rms"]))
    return out


def test_eval_verify_reports_velocities_per_class_and_survey(verified_db, capsys):
    assert main(["eval", "--verify", "--db", str(verified_db), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    answers = _answers(verified_db)
    kms = c.to_value("km/s")
    for cls in ("GALAXY", "QSO"):
        mine = [a for a in answers if a[3] == cls and a[1] is not None]
        v = s["per_class"][cls]["velocity"]
        dv = [kms * (a[1] - a[4]) / (1 + a[4]) for a in mine]
        assert v["answered"] == len(mine) == 1
        assert v["median_abs_dv_kms"] == pytest.approx(abs(dv[0]), abs=0.5)
        assert v["bias_kms"] == pytest.approx(dv[0], abs=0.5)
        sigma = kms * mine[0][5] / (1 + mine[0][4])
        assert v["coverage"] == (1.0 if abs(dv[0]) <= sigma else 0.0)
        assert v["catastrophic"] == (1.0 if abs(dv[0]) > 1000 else 0.0)
    surveys = {a[2].split()[0] for a in answers}
    assert set(s["per_survey"]) == surveys
    assert s["tolerance_kms"]["GALAXY"] <= 300


def test_eval_verify_table_is_in_km_s(verified_db, capsys):
    assert main(["eval", "--verify", "--db", str(verified_db)]) == 0
    out = capsys.readouterr().out
    assert "3 labelled spectra" in out and ">= MEDIUM" in out
    assert "|dv|" in out and "km/s" in out and "catastrophic" in out
    assert not any(ln.startswith("tier") and "|dz|" in ln for ln in out.splitlines())
    assert "per survey" in out


def test_eval_verify_tolerance_flag(verified_db, capsys):
    """`--dv-max KMS` sets the galaxy and QSO tolerance: 0 km/s makes no galaxy or QSO answer right."""
    assert main(["eval", "--verify", "--db", str(verified_db), "--json", "--dv-max", "0"]) == 0
    s = json.loads(capsys.readouterr().out)
    for cls in ("GALAXY", "QSO"):
        assert s["per_class"][cls]["all"]["agreement"] == 0.0
    assert s["tolerance_kms"] == {"GALAXY": 0.0, "QSO": 0.0}
