"""`specreview verify`, `eval --verify` and `ablate` end to end on real files and a real DuckDB file."""
import json
import shutil

import pytest
from scripted_openai_server import Reply
from shared_data import shared_data_dir

from reviewer.cli import main
from reviewer.store import Store

FILES = ["sdss_pyqsofit/spec-0332-52367-0639.fits", "sdss_gelato/spec-0295-51585-0596.fits",
         "sdss_bossbrain/spec-3586-55181-0500.fits"]


@pytest.fixture
def templates():
    base = shared_data_dir()
    if base is None:
        pytest.skip("shared data not found")
    return str(base / "redrock-templates")


@pytest.fixture
def folder(tmp_path, shared_spectra):
    d = tmp_path / "spectra"
    d.mkdir()
    for rel in FILES:
        shutil.copy(shared_spectra / rel, d / rel.split("/")[-1])
    return d


def test_verify_json_store_resume_eval_plot(tmp_path, folder, templates, capsys):
    db = tmp_path / "v.duckdb"
    assert main(["verify", "--db", str(db), "--templates", templates, "--json", "--no-progress", str(folder)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == len(FILES)
    for b in lines:
        assert set(b) >= {"source_path", "type", "redshift", "credibility", "feature_score", "human_review"}
        assert b["type"] in ("STAR", "GALAXY", "QSO", "UNKNOWN") and b["credibility"] in ("HIGH", "MEDIUM", "LOW")
    by_name = {b["source_path"].split("/")[-1]: b for b in lines}
    assert by_name["spec-0332-52367-0639.fits"]["type"] == "QSO"
    assert by_name["spec-3586-55181-0500.fits"]["type"] == "STAR"
    with Store(db) as store:
        rows = store.trajectories.list_trajectories(task="verify")
        assert len(rows) == len(FILES)
        traj = store.trajectories.load_trajectory(rows[0]["id"])
        assert traj.outcome["report"].startswith("# Verification report")
    # resume: nothing is verified twice, the stored briefs are printed again
    assert main(["verify", "--db", str(db), "--templates", templates, "--json", "--no-progress", str(folder)]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == len(FILES) and "skipped (already verified): 3" in captured.err
    plot = tmp_path / "acc.png"
    assert main(["eval", "--verify", "--db", str(db), "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "3 labelled spectra" in out and ">= MEDIUM" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ablate_narrow_lines_reports_change(shared_spectra, templates, capsys):
    path = str(shared_spectra / FILES[0])
    assert main(["ablate", path, "--narrow-lines", "900", "--templates", templates, "--json"]) == 0
    change = json.loads(capsys.readouterr().out)
    assert change["before"]["type"] == "QSO"
    assert change["credibility_change"] < 0 or change["verdict_changed"]


def test_verify_reports_missing_path(tmp_path, capsys):
    assert main(["verify", "--db", str(tmp_path / "x.duckdb"), "--no-progress", str(tmp_path / "nope.fits")]) == 1


def test_verify_with_a_model_reviews_concurrently_and_records_usage(tmp_path, folder, templates, openai_server,
                                                                     monkeypatch, capsys):
    review = json.dumps({"verdict": "UNCERTAIN", "credibility": "LOW", "concerns": ["scripted"], "narrative": "n"})

    def reply(body):
        openai_server.wait_for_in_flight(2)  # the reviews of different spectra must overlap
        return Reply.text(review)

    openai_server.responder = reply
    monkeypatch.setenv("SPECREVIEW_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SPECREVIEW_LLM_API_KEY", "k")
    db = tmp_path / "vl.duckdb"
    assert main(["verify", "--db", str(db), "--templates", templates, "--backend", "openai", "--model", "rev",
                 "--concurrency", "3", "--no-progress", str(folder)]) == 0
    out = capsys.readouterr().out
    assert openai_server.max_in_flight >= 2
    calls = len(openai_server.requests)
    assert 1 <= calls <= len(FILES) and f"model calls: {calls} (" in out and "tokens: prompt" in out
    with Store(db) as store:
        trajs = [store.trajectories.load_trajectory(r["id"]) for r in store.trajectories.list_trajectories(task="verify")]
    reviewed = [t for t in trajs if "usage" in t.outcome.get("llm_review", {})]
    assert len(reviewed) == calls
    for t in reviewed:
        step = next(s for s in t.steps if s.data.get("role") == "llm_reviewer")
        assert step.data["usage"] == t.outcome["llm_review"]["usage"] and step.data["usage"]["prompt_tokens"] > 0
