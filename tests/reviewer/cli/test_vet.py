"""`specreview vet` end to end on real files and a real DuckDB file; trajectories of both policies
reload from the store identically."""
import shutil
import time

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
        rows = store.trajectories.list_trajectories(task="a")
        assert len(rows) == len(picks) and all(r["backend"] == "rules" for r in rows)
        ids = [s["spectrum_id"] for s in store.spectra.list_spectra()]
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", *ids]) == 0
    assert f"skipped (already vetted): {len(picks)}" in capsys.readouterr().out
    assert main(["vet", "--db", str(db), "--task", "a", "--force", "--no-progress", ids[0]]) == 0
    with Store(db) as store:
        assert store.trajectories.count_trajectories(task="a") == len(picks) + 1


def test_vet_rejects_unknown_task_and_missing_path(tmp_path, capsys):
    db = tmp_path / "x.duckdb"
    assert main(["vet", "--db", str(db), "--task", "nope", "--no-progress", str(tmp_path)]) == 2
    assert "unknown task" in capsys.readouterr().err
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", str(tmp_path / "missing.fits")]) == 1
    assert "neither a stored spectrum id nor an existing path" in capsys.readouterr().out


def test_files_named_one_by_one_are_registered_in_one_walk(tmp_path, few_spectra, capsys, monkeypatch):
    """A campaign names its files one by one (a shell glob): they are registered in one walk, as
    `specreview ingest` would, not one walk, one cross-match and one lookup of the known each. Stored
    ids and paths mixed keep their meaning, and a missing path is still named."""
    import reviewer.services.ingest as ingest
    from reviewer.store.spectra import SpectrumRepository

    folder, picks = few_spectra
    files = sorted(str(p) for p in folder.iterdir())
    db = tmp_path / "glob.duckdb"
    walks, lookups = [], []
    monkeypatch.setattr(ingest, "add_to_groups", lambda store, ids, radius: walks.append(list(ids)))
    looked_up = SpectrumRepository.file_stamps
    monkeypatch.setattr(SpectrumRepository, "file_stamps",
                        lambda self, paths: lookups.append(len(paths)) or looked_up(self, paths))
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", *files]) == 0
    assert f"vetted: {len(picks)}" in capsys.readouterr().out
    assert len(walks) == 1 and len(walks[0]) == len(picks)  # one cross-match of every new spectrum
    assert lookups == [len(picks)]
    with Store(db) as store:
        first = next(r["spectrum_id"] for r in store.spectra.list_spectra()
                     if r["source_path"] == str((folder / files[0]).resolve()))
    lookups.clear()
    missing = str(tmp_path / "missing.fits")
    assert main(["vet", "--db", str(db), "--task", "a", "--force", "--no-progress", first, *files[1:], missing]) == 1
    out = capsys.readouterr().out
    assert f"vetted: {len(picks)}" in out and f"{missing}: neither a stored spectrum id nor an existing path" in out
    assert lookups == [len(picks) - 1]  # the known files passed on their stat, in one lookup


def test_a_campaign_vets_its_first_files_while_its_last_are_still_being_read(tmp_path, few_spectra, capsys,
                                                                            monkeypatch):
    """The paths are registered a group at a time, and a group's jobs start once it is stored: a campaign
    over a survey's files does not read them all before it vets the first. A spectrum named twice (its
    id and its file) is vetted once."""
    import agents.jobs as jobs
    import agents.spectra as spectra
    import reviewer.services.ingest as ingest

    folder, picks = few_spectra
    files = sorted(str(p) for p in folder.iterdir())
    monkeypatch.setattr(ingest, "WRITE_GROUP", 1)
    events, FileSpectra, job = [], spectra.FileSpectra, jobs.vet_and_check_job
    monkeypatch.setattr(spectra, "FileSpectra", lambda path: events.append("read") or FileSpectra(path))
    monkeypatch.setattr(jobs, "vet_and_check_job", lambda j: events.append("vet") or job(j))
    db = tmp_path / "stream.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", *files]) == 0
    assert f"vetted: {len(picks)}" in capsys.readouterr().out
    assert events.count("read") == events.count("vet") == len(picks)
    assert events.index("vet") < len(events) - 1 - events[::-1].index("read")  # the first vetted before the last read
    with Store(db) as store:
        assert store.trajectories.count_trajectories(task="a") == len(picks)
        first = store.spectra.list_spectra()[0]["spectrum_id"]
    assert main(["vet", "--db", str(db), "--task", "a", "--force", "--no-progress", first, *files]) == 0
    assert f"vetted: {len(picks)} " in capsys.readouterr().out


def test_vet_with_two_worker_processes(tmp_path, few_spectra, capsys):
    folder, picks = few_spectra
    db = tmp_path / "w.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--workers", "2", "--no-progress", str(folder)]) == 0
    with Store(db) as store:
        assert store.trajectories.count_trajectories(task="a") == len(picks)


def _stored_claims(db):
    keep = ("step_idx", "claim_idx", "kind", "claim_text", "verdict", "claimed", "measured", "checker_version")
    with Store(db) as store:
        return {(r["spectrum_id"], r["task"]): [tuple(c[k] for k in keep) for c in store.claims.claims_for(r["id"])]
                for r in store.trajectories.list_trajectories()}


def test_claims_checked_on_the_spectrum_a_job_read_are_those_of_a_fresh_read(tmp_path, few_spectra, capsys):
    """In one process the claim check takes the spectrum the job read (no second read); worker processes
    make the checker read it again. The stored claims are the same."""
    folder, picks = few_spectra
    here, there = tmp_path / "here.duckdb", tmp_path / "there.duckdb"
    assert main(["vet", "--db", str(here), "--task", "a,mg", "--no-progress", str(folder)]) == 0
    assert main(["vet", "--db", str(there), "--task", "a,mg", "--workers", "2", "--no-progress", str(folder)]) == 0
    mine, theirs = _stored_claims(here), _stored_claims(there)
    assert len(mine) == 2 * len(picks) and mine == theirs
    assert sum(len(rows) for rows in mine.values()) > 0  # there were claims to check


def test_a_long_one_worker_run_vets_in_a_process_beside_the_check_and_stores_the_same(tmp_path, few_spectra,
                                                                                       capsys, monkeypatch):
    """From PIPELINE_FROM jobs on, one worker's jobs run in a process of their own and hand over the
    Measurer made from the spectrum they read; this process checks the claims on it and writes. The
    stored trajectories and claims are those of the run that does it all in one process."""
    import reviewer.cli.vet as vet
    from reviewer.services.claims import ClaimChecker

    folder, picks = few_spectra
    here, beside = tmp_path / "here.duckdb", tmp_path / "beside.duckdb"
    assert main(["vet", "--db", str(here), "--task", "a,mg", "--no-progress", str(folder)]) == 0
    assert "worker process" not in capsys.readouterr().out
    monkeypatch.setattr(vet, "PIPELINE_FROM", 2 * len(picks))
    monkeypatch.setattr(ClaimChecker, "spectrum", lambda self, traj: pytest.fail("a second read of the spectrum"))
    assert main(["vet", "--db", str(beside), "--task", "a,mg", "--no-progress", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "vetted in one worker process; claims checked and stored beside it" in out
    assert f"vetted: {2 * len(picks)}" in out
    mine, theirs = _stored_claims(here), _stored_claims(beside)
    assert len(mine) == 2 * len(picks) and mine == theirs and sum(map(len, mine.values())) > 0
    with Store(here) as a, Store(beside) as b:
        steps = [{(r["spectrum_id"], r["task"]): [(s.kind, s.text) for s in st.trajectories.load_trajectory(r["id"]).steps]
                  for r in st.trajectories.list_trajectories()} for st in (a, b)]
    assert steps[0] == steps[1]


def test_a_run_checks_the_files_it_registers_on_its_own_read_and_the_worker_hands_back_trajectories_alone(
        tmp_path, few_spectra, capsys, monkeypatch):
    """A pipelined run reads the files it registers (their records); the claim check uses that read (the
    Measurer made then), so the worker hands back each trajectory alone: no Measurer comes through the
    pipe. Spectra registered before (the forced second run) are measured where they are vetted, as
    before. Both runs store the same claims."""
    import agents.claims.measure as measure
    import reviewer.cli.vet as vet

    arrived, unpickle = [], measure._measurer
    monkeypatch.setattr(measure, "_measurer", lambda *a: arrived.append(a[0].size) or unpickle(*a))
    monkeypatch.setattr(vet, "PIPELINE_FROM", 1)
    folder, picks = few_spectra
    db = tmp_path / "p.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a,mg", "--no-progress", str(folder)]) == 0
    assert "vetted in one worker process" in capsys.readouterr().out and arrived == []
    first = _stored_claims(db)
    assert main(["vet", "--db", str(db), "--task", "a,mg", "--force", "--no-progress", str(folder)]) == 0
    assert f"vetted: {2 * len(picks)}" in capsys.readouterr().out and len(arrived) == 2 * len(picks)
    with Store(db) as store:
        rows = store.trajectories.list_trajectories()
        claims = {}
        for r in rows:
            claims.setdefault((r["spectrum_id"], r["task"]), []).append(
                [(c["kind"], c["claim_text"], c["verdict"], c["measured"]) for c in store.claims.claims_for(r["id"])])
    assert len(first) == len(claims) == 2 * len(picks) and sum(map(len, first.values())) > 0
    assert all(len(both) == 2 and both[0] == both[1] and both[0] for both in claims.values())


def test_measurers_made_on_registering_are_held_until_their_spectrums_last_job_is_back(shared_spectra, manifest):
    """At most `limit` held (a spectrum past it is measured in the worker); one per spectrum whatever its
    jobs; let go when the last of them is back, or at once when no job wanted it."""
    from agents.spectra import read_spectrum
    from reviewer.cli.vet import MeasuredOnRegistering

    row = next(r for r in manifest if "LAMOST-LRS" in r["survey"])
    spec = read_spectrum(shared_spectra / row["file"])
    held = MeasuredOnRegistering(limit=2)
    for sid in ("s1", "s2", "s3"):
        held.keep(sid, spec)
    assert [held.claim(sid) for sid in ("s1", "s1", "s2", "s3")] == [True, True, True, False]
    first = held.take("s1")
    assert held.take("s1") is first and first.a.wave.size == spec.flux.size
    assert not held.claim("s1")  # its two jobs are back: let go
    held.keep("s4", spec)
    held.keep("s5", spec)  # one over the limit while s2 is held
    assert held.claim("s4") and not held.claim("s5")
    held.keep("s6", spec)  # no room for it yet
    held.drop_unclaimed(["s2", "s4"])  # s2 and s4 have jobs out: kept
    assert held.take("s2") is not None and held.take("s4") is not None and not held.claim("s6")
    held.keep("s7", spec)
    held.drop_unclaimed(["s7"])  # vetted before: no job wanted it
    assert not held.claim("s7")


def test_the_process_beside_the_worker_never_imports_the_vetting_policy(tmp_path, few_spectra):
    """A run vetting in a worker process of its own only registers, checks and writes here: its start-up
    does not import LangChain, LangGraph or the vetting graph, which the worker imports meanwhile."""
    import subprocess
    import sys

    folder, _ = few_spectra
    probe = ("import sys\nimport reviewer.cli.vet as vet\nfrom reviewer.cli import main\n"
             "if __name__ == '__main__':\n"
             "    vet.PIPELINE_FROM = 1\n"
             f"    rc = main(['vet', '--db', {str(tmp_path / 'p.duckdb')!r}, '--task', 'a', '--no-progress', {str(folder)!r}])\n"
             "    heavy = ('langchain_core', 'langgraph', 'agents.vet.graph', 'agents.vet.rules_model')\n"
             "    print(rc, ','.join(m for m in heavy if m in sys.modules))\n")
    script = tmp_path / "probe.py"
    script.write_text(probe)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "vetted in one worker process" in out.stdout, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0"


@pytest.mark.parametrize("workers", [1, 2])
def test_the_workers_start_before_this_process_imports_the_spectrum_readers(tmp_path, few_spectra, workers):
    """The worker processes of a rules run (the one beside a pipelined run, or --workers N) are started
    before this process imports its spectrum readers (agents.spectra: specutils, ~2.5 s), so that both
    import at once and the first results come that much sooner."""
    import subprocess
    import sys

    folder, _ = few_spectra
    probe = ("import sys\nimport agents.batch as batch\nimport reviewer.cli.vet as vet\nfrom reviewer.cli import main\n"
             "if __name__ == '__main__':\n"
             "    vet.PIPELINE_FROM = 1\n"
             "    made = batch.process_pool\n"
             "    def pool(*a, **kw):\n"
             "        print('readers imported when the workers started:', 'agents.spectra' in sys.modules)\n"
             "        return made(*a, **kw)\n"
             "    batch.process_pool = pool\n"
             f"    rc = main(['vet', '--db', {str(tmp_path / 'p.duckdb')!r}, '--task', 'a', '--no-progress',"
             f" '--workers', '{workers}', {str(folder)!r}])\n"
             "    print(rc)\n")
    script = tmp_path / "probe.py"
    script.write_text(probe)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "0", out.stdout + out.stderr
    assert "readers imported when the workers started: False" in lines, out.stdout + out.stderr


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
            store.trajectories.save_trajectory(traj)
            back = store.trajectories.load_trajectory(traj.id, with_images=True)
            assert back.model_dump() == traj.model_dump()
            assert back.images == traj.images and back.images


@pytest.mark.parametrize("background", [False, True])
def test_trajectory_writer_groups_saves_and_isolates_a_bad_one(tmp_path, shared_spectra, manifest, background):
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum
    from reviewer.cli.common import TrajectoryWriter

    row = next(r for r in manifest if "LAMOST-LRS" in r["survey"] and "#" not in r["file"])
    spec = read_spectrum(shared_spectra / row["file"])
    trajs = [vet_spectrum(spec, "a") for _ in range(5)]
    bad = trajs[2]
    with Store(tmp_path / "w.duckdb") as store:
        save, save_group = store.trajectories.save_trajectory, store.trajectories.save_trajectories

        def refusing(traj):
            if traj.id == bad.id:
                raise ValueError("refused")
            return save(traj)

        def refusing_group(group):
            save_group(group)  # written, then rolled back with the group's transaction
            if any(t.id == bad.id for t in group):
                raise ValueError("refused")

        store.trajectories.save_trajectory = refusing
        store.trajectories.save_trajectories = refusing_group
        with TrajectoryWriter(store, group=10, max_wait_s=3600, background=background) as writer:
            for t in trajs:
                writer.add(t)
            assert store.trajectories.count_trajectories() == 0  # still grouped
        # the group's transaction rolled back, then each was saved alone: only the bad one is missing
        assert [(t.id, str(e)) for t, e in writer.errors] == [(bad.id, "refused")]
        assert store.trajectories.count_trajectories() == 4 and store.trajectories.load_trajectory(bad.id) is None


def test_a_background_writer_writes_on_time_checks_claims_and_never_blocks_for_good(tmp_path, shared_spectra,
                                                                                      manifest):
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum
    from reviewer.cli.common import TrajectoryWriter

    row = next(r for r in manifest if "LAMOST-LRS" in r["survey"] and "#" not in r["file"])
    spec = read_spectrum(shared_spectra / row["file"])
    trajs = [vet_spectrum(spec, "a") for _ in range(7)]

    class Claims:  # a ClaimChecker stand-in: fails on one trajectory, finds nothing on the others
        version = "test"

        def rows(self, traj):
            if traj is trajs[3]:
                raise FileNotFoundError("spectrum file unavailable")
            return []

    with Store(tmp_path / "b.duckdb") as store:
        writer = TrajectoryWriter(store, group=1000, max_wait_s=0.05, claims=Claims(), background=True)
        with writer:
            writer.add(trajs[0])
            deadline = time.monotonic() + 30
            while store.trajectories.count_trajectories() == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert store.trajectories.count_trajectories() == 1  # written max_wait_s later, with no further add
            for t in trajs[1:]:  # more than the hand-over queue holds (4 x group) is fine too
                writer.add(t)
        assert store.trajectories.count_trajectories() == len(trajs) and not writer.errors
        assert [(t.id, type(e).__name__) for t, e in writer.claim_errors] == [(trajs[3].id, "FileNotFoundError")]

    with Store(tmp_path / "c.duckdb") as store:  # a queue smaller than the run: add waits, then goes on
        with TrajectoryWriter(store, group=1, max_wait_s=3600, background=True) as writer:
            for t in trajs:
                writer.add(t)
        assert store.trajectories.count_trajectories() == len(trajs)


def _stored(store):
    """Every stored trajectory (by spectrum, task) with its steps and claim results, less the times of saving."""
    out = {}
    for row in store.trajectories.list_trajectories():
        traj = store.trajectories.load_trajectory(row["id"], with_images=True)
        claims = [{k: v for k, v in c.items() if k != "created_at"} for c in store.claims.claims_for(row["id"])]
        out[(traj.source_path, traj.task)] = ({k: v for k, v in row.items() if k != "saved_at"},
                                              traj.model_dump(), traj.images, claims)
    return out


def test_batched_writes_of_worker_checked_trajectories_store_what_one_at_a_time_stores(tmp_path, few_spectra):
    """The campaign path (each job checks its claims on the spectrum it read; the writer stores a group
    in a few statements) stores the same trajectories, steps and claim results as saving each one on its
    own with its claims checked on a fresh read of its file."""
    from agents.jobs import vet_and_check_job
    from reviewer.cli.common import TrajectoryWriter
    from reviewer.services.claims import ClaimChecker

    folder, picks = few_spectra
    jobs = [{"spectrum_id": None, "source_path": str(p), "target": None, "task": task, "backend": "rules"}
            for p in sorted(folder.iterdir()) for task in ("a", "mg")]
    made = [vet_and_check_job(job) for job in jobs]
    with Store(tmp_path / "batch.duckdb") as store:
        with TrajectoryWriter(store, group=100, max_wait_s=3600, claims=ClaimChecker(store),
                              background=True) as writer:
            for traj, checked in made:
                writer.add(traj, checked)
        assert writer.stored == len(made) and not writer.errors and not writer.claim_errors
        batched = _stored(store)
    with Store(tmp_path / "one.duckdb") as store:
        checker = ClaimChecker(store)
        for traj, _ in made:
            store.trajectories.save_trajectory(traj)
            checker.run_and_store(traj)
        one_at_a_time = _stored(store)
    assert len(batched) == 2 * len(picks) and batched == one_at_a_time
    assert sum(len(v[3]) for v in batched.values()) > 0  # claims were checked and stored


def test_a_job_failing_mid_batch_is_named_and_leaves_nothing_half_written(tmp_path, few_spectra, capsys,
                                                                          monkeypatch):
    import agents.jobs

    folder, picks = few_spectra
    bad = str(sorted(folder.iterdir())[1].resolve())
    real = agents.jobs.vet_job

    def failing(job, spectrum=None):
        if job["source_path"] == bad:
            raise RuntimeError("the disk went away")
        return real(job, spectrum=spectrum)

    monkeypatch.setattr(agents.jobs, "vet_job", failing)
    db = tmp_path / "i.duckdb"
    main(["vet", "--db", str(db), "--task", "a", "--no-progress", str(folder)])
    out = capsys.readouterr().out
    assert f"problem: {bad}# [a]: RuntimeError: the disk went away" in out
    assert f"vetted: {len(picks) - 1} " in out
    with Store(db) as store:
        rows = store.trajectories.list_trajectories()
        assert len(rows) == len(picks) - 1 and bad not in {r["source_path"] for r in rows}
        for row in rows:  # every stored trajectory whole: its steps and its claims
            assert len(store.trajectories.load_trajectory(row["id"]).steps) == row["n_steps"] > 0
            assert store.claims.claims_for(row["id"])


def test_a_group_that_fails_part_way_rolls_back_and_stores_the_others_whole(tmp_path, shared_spectra, manifest):
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum
    from reviewer.cli.common import TrajectoryWriter

    row = next(r for r in manifest if "LAMOST-LRS" in r["survey"] and "#" not in r["file"])
    spec = read_spectrum(shared_spectra / row["file"])
    trajs = [vet_spectrum(spec, "a") for _ in range(4)]
    bad = trajs[2]
    good_row = {"step_idx": 0, "claim_idx": 0, "kind": "measure", "claim_text": "x", "verdict": "supported"}

    class Claims:  # its rows for `bad` are refused by the store, after the group's trajectories were written
        version = "test"

        def rows(self, traj):
            return [{"no such field": 1}] if traj is bad else [good_row]

    with Store(tmp_path / "g.duckdb") as store:
        with TrajectoryWriter(store, group=10, max_wait_s=3600, claims=Claims()) as writer:
            for t in trajs:
                writer.add(t)
        assert [(t.id, type(e).__name__) for t, e in writer.errors] == [(bad.id, "ValueError")]
        assert writer.stored == len(trajs) - 1
        assert store.trajectories.load_trajectory(bad.id) is None
        assert store.db.scalar("SELECT count(*) FROM steps WHERE trajectory_id = ?", [bad.id]) == 0
        assert store.claims.claims_for(bad.id) == []
        for t in trajs:
            if t is not bad:
                assert len(store.trajectories.load_trajectory(t.id).steps) == len(t.steps)
                assert len(store.claims.claims_for(t.id, "test")) == 1


def test_a_campaign_ends_with_its_trajectories_triage_signals_stored(tmp_path, few_spectra, capsys):
    """The first read after a campaign (the server's start, the Stats tab, the priority queue) finds the
    triage signals of its trajectories stored: left to that read, they were ~90 s of a server's background
    work at 1M trajectories (docs/benchmarks.md, issue 22)."""
    from tests.reviewer.conftest import assert_signals_stored_as_computed

    folder, picks = few_spectra
    db = tmp_path / "signals.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a,mg", "--no-progress", str(folder)]) == 0
    assert f"triage signals stored for {2 * len(picks)} trajectories" in capsys.readouterr().out
    with Store(db) as store:
        assert_signals_stored_as_computed(store, 2 * len(picks))
