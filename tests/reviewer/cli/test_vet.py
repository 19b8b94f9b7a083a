"""`specreview vet` end to end on real files and a real DuckDB file; trajectories of both policies
reload from the store identically."""
import shutil

import pytest
from scripted_openai_server import Reply, ScriptedOpenAIServer

from reviewer.cli import main
from reviewer.store import Store


@pytest.fixture
def few_spectra(tmp_path, shared_spectra, manifest):
    folder = tmp_path / "spectra"
    folder.mkdir()
    picks = [r for r in manifest if "LAMOST-LRS" in r["survey"] and r["subclass"][:2] in ("A7", "K3")][:4]
    for r in picks:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].split("/")[-1])
    return folder, picks


def test_vet_ingests_stores_skips_and_forces(tmp_path, few_spectra, capsys):
    folder, picks = few_spectra
    db = tmp_path / "vet.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a,mg", "--no-progress", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"vetted: {2 * len(picks)}" in out and "skipped (already vetted): 0" in out
    with Store(db) as store:
        rows = store.list_trajectories(task="a")
        assert len(rows) == len(picks) and all(r["backend"] == "rules" for r in rows)
        ids = [s["spectrum_id"] for s in store.list_spectra()]
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", *ids]) == 0
    assert f"skipped (already vetted): {len(picks)}" in capsys.readouterr().out
    assert main(["vet", "--db", str(db), "--task", "a", "--force", "--no-progress", ids[0]]) == 0
    with Store(db) as store:
        assert store.count_trajectories(task="a") == len(picks) + 1


def test_vet_rejects_unknown_task_and_missing_path(tmp_path, capsys):
    db = tmp_path / "x.duckdb"
    assert main(["vet", "--db", str(db), "--task", "nope", "--no-progress", str(tmp_path)]) == 2
    assert "unknown task" in capsys.readouterr().err
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", str(tmp_path / "missing.fits")]) == 1
    assert "neither a stored spectrum id nor an existing path" in capsys.readouterr().out


def test_vet_with_two_worker_processes(tmp_path, few_spectra, capsys):
    folder, picks = few_spectra
    db = tmp_path / "w.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--workers", "2", "--no-progress", str(folder)]) == 0
    with Store(db) as store:
        assert store.count_trajectories(task="a") == len(picks)


def test_trajectories_of_both_policies_reload_identically(tmp_path, shared_spectra, manifest):
    from agents.llm import LLMConfig
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    row = next(r for r in manifest if "LAMOST-LRS" in r["survey"] and r["subclass"].startswith("A7"))
    spec = read_spectrum(shared_spectra / row["file"])
    rules = vet_spectrum(spec, "a", eager_renders=True)
    with ScriptedOpenAIServer([
        Reply.tool_call("spectral_visualization_tool", {"wavelength_range": [6500, 6620], "label": "H-alpha"},
                        content="<think>zoom</think>"),
        Reply.text("<think>deep</think><answer>\\boxed{YES} deep Balmer lines</answer>")]) as server:
        cfg = LLMConfig(base_url=server.base_url, model="scripted", api_key="k", timeout=5, max_retries=0)
        llm = vet_spectrum(spec, "a", backend="openai", llm_config=cfg)
    assert llm.outcome["status"] == "answered"
    with Store(tmp_path / "t.duckdb") as store:
        for traj in (rules, llm):
            store.save_trajectory(traj)
            back = store.load_trajectory(traj.id, with_images=True)
            assert back.model_dump() == traj.model_dump()
            assert back.images == traj.images and back.images


def test_trajectory_writer_groups_saves_and_isolates_a_bad_one(tmp_path, shared_spectra, manifest):
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum
    from reviewer.cli.common import TrajectoryWriter

    row = next(r for r in manifest if "LAMOST-LRS" in r["survey"] and "#" not in r["file"])
    spec = read_spectrum(shared_spectra / row["file"])
    trajs = [vet_spectrum(spec, "a") for _ in range(5)]
    bad = trajs[2]
    with Store(tmp_path / "w.duckdb") as store:
        save = store.save_trajectory

        def refusing(traj):
            if traj.id == bad.id:
                raise ValueError("refused")
            return save(traj)

        store.save_trajectory = refusing
        with TrajectoryWriter(store, group=10, max_wait_s=3600) as writer:
            for t in trajs:
                writer.add(t)
            assert store.count_trajectories() == 0  # still grouped
        # the group's transaction rolled back, then each was saved alone: only the bad one is missing
        assert [(t.id, str(e)) for t, e in writer.errors] == [(bad.id, "refused")]
        assert store.count_trajectories() == 4 and store.load_trajectory(bad.id) is None
