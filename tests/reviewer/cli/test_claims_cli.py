"""`specreview claims`, and the claim checks `vet` and `verify` make on every new trajectory, on the real
demo spectra and a real DuckDB file: the rules policy's trajectories have no contradicted claim, a
trajectory with a planted false claim (an H-beta equivalent width tripled) has exactly one, and the
queue shows, filters and sorts it."""
import json
import re
import shutil

import pytest
from scripted_openai_server import Reply

from agents.claims import CHECKER_VERSION
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
        tids = [r["id"] for r in store.trajectories.list_trajectories()]
        assert len(tids) == 2 * len(DEMO_FILES)
        counts = store.claims.claim_counts(tids)
        assert set(counts) == set(tids)  # every trajectory was checked when it was stored
        assert all(c["contradicted"] == 0 and c["supported"] > 0 for c in counts.values())
        assert all(r["contradicted"] == 0 for r in store.queue.queue_items())


def test_claims_command_on_paths_ids_and_trajectories(vetted_db, tmp_path, capsys):
    db = copy_db(vetted_db, tmp_path)
    _, folder = vetted_db
    capsys.readouterr()
    with Store(db) as store:
        before = {r["id"]: store.claims.claims_for(r["id"]) for r in store.trajectories.list_trajectories()}
        sid = store.spectra.list_spectra(search=DEMO_FILES[0])[0]["spectrum_id"]
        one = store.trajectories.trajectories_on_spectrum(
            store.spectra.list_spectra(search=DEMO_FILES[1])[0]["spectrum_id"])[0]["id"]
    assert main(["claims", "--db", str(db), "--no-progress", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"checked: {2 * len(DEMO_FILES)} trajectories" in out and "trajectories with a contradicted claim: 0" in out
    per_trajectory = [line for line in out.splitlines() if " rules/" in line]
    assert len(per_trajectory) == 2 * len(DEMO_FILES) and all("0 contradicted" in line for line in per_trajectory)
    with Store(db) as store:  # re-checked with the same version: the same results, replaced not added
        after = {tid: store.claims.claims_for(tid) for tid in before}
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
        sid = store.spectra.list_spectra(search=DEMO_FILES[0])[0]["spectrum_id"]
        rec = store.spectra.get_spectrum(sid)
        traj = vet_spectrum(read_spectrum(rec["source_path"]), "a", spectrum_id=sid)
        traj.source_path = rec["source_path"]
        step = next(s for s in traj.steps if s.kind == "think" and "H-beta equivalent width" in s.text)
        found = re.search(r"H-beta equivalent width = (-?[\d.]+)", step.text)
        true_ew = float(found.group(1))
        step.text = step.text.replace(found.group(0), f"H-beta equivalent width = {3 * true_ew:.2f}")
        store.trajectories.save_trajectory(traj)  # stored without a check: the command does it
        assert store.claims.claim_counts([traj.id]) == {}
    capsys.readouterr()
    assert main(["claims", "--db", str(db), "--no-progress", traj.id]) == 0
    out = capsys.readouterr().out
    assert "1 contradicted" in out and f"contradicted, step {step.index}: 'H-beta equivalent width = " in out
    with Store(db) as store:
        bad = [r for r in store.claims.claims_for(traj.id) if r["verdict"] == "contradicted"]
        assert len(bad) == 1 and bad[0]["step_idx"] == step.index
        # measured again by a second method (agents.claims.second): the agent's own EW, within its tolerance
        assert bad[0]["claimed"] == pytest.approx(3 * true_ew)
        assert bad[0]["measured"] == pytest.approx(true_ew, abs=bad[0]["tolerance"])
        assert bad[0]["window_lo"] < 4862 < bad[0]["window_hi"]
        assert step.text[bad[0]["span_start"]:bad[0]["span_end"]] == bad[0]["claim_text"]
        rows = {r["trajectory_id"]: r["contradicted"] for r in store.queue.queue_items(limit=100)}
        assert rows[traj.id] == 1 and sum(rows.values()) == 1
        assert [r["trajectory_id"] for r in store.queue.queue_items(contradicted=True)] == [traj.id]
        assert store.queue.queue_items(order="contradicted")[0]["trajectory_id"] == traj.id
        assert store.queue.queue_count(contradicted=False) == 2 * len(DEMO_FILES)


def test_verify_checks_its_trajectories_and_no_claims_skips_it(tmp_path, demo_dir, capsys):
    spectrum = demo_dir / DEMO_FILES[0]
    db = tmp_path / "verify.duckdb"
    assert main(["verify", "--db", str(db), "--no-progress", str(spectrum)]) == 0
    assert "claims: " in capsys.readouterr().out
    with Store(db) as store:
        tid = store.trajectories.list_trajectories(task="verify")[0]["id"]
        assert store.claims.claims_for(tid) and set(store.claims.claim_counts([tid])) == {tid}
    nocheck = tmp_path / "nocheck.duckdb"
    assert main(["vet", "--db", str(nocheck), "--task", "a", "--no-claims", "--no-progress", str(spectrum)]) == 0
    assert "claims: " not in capsys.readouterr().out
    with Store(nocheck) as store:
        tid = store.trajectories.list_trajectories()[0]["id"]
        assert store.claims.claim_counts([tid]) == {}
        assert store.queue.queue_items()[0]["contradicted"] == 0


# -- --backend openai: a chat model finds claims the patterns miss; the same checker judges them -----
LLM_SENTENCE = ("Looking again at the red side: the reddest of those dips is plainly there, while the second "
                "trough from the red end is wholly missing.")
TRUE_QUOTE = "the reddest of those dips is plainly there"  # H-alpha absorption: there (EW ~8 Å)
FALSE_QUOTE = "the second trough from the red end is wholly missing"  # H-beta: deep absorption (EW ~16 Å)
LLM_CLAIMS = {"claims": [
    {"quote": TRUE_QUOTE, "kind": "feature", "line": "H-alpha", "present": True, "line_kind": "absorption"},
    {"quote": FALSE_QUOTE, "kind": "feature", "line": "H-beta", "present": False, "line_kind": None},
]}


@pytest.fixture
def worded(vetted_db, tmp_path):
    """A copy of the vetted database with one more rules trajectory on the A star whose first think
    step also says, in words no pattern reads, one true and one false thing about the spectrum."""
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    db = copy_db(vetted_db, tmp_path)
    with Store(db) as store:
        sid = store.spectra.list_spectra(search=DEMO_FILES[0])[0]["spectrum_id"]
        rec = store.spectra.get_spectrum(sid)
        traj = vet_spectrum(read_spectrum(rec["source_path"]), "a", spectrum_id=sid)
        traj.source_path = rec["source_path"]
        step = next(s for s in traj.steps if s.kind == "think")
        step.text = step.text.replace("</think>", f" {LLM_SENTENCE}</think>")
        store.trajectories.save_trajectory(traj)
    assert main(["claims", "--db", str(db), "--no-progress", traj.id]) == 0  # the patterns alone
    with Store(db) as store:
        patterns_only = store.claims.claims_for(traj.id)
    assert patterns_only and not any(TRUE_QUOTE in r["claim_text"] or FALSE_QUOTE in r["claim_text"]
                                     for r in patterns_only)
    return db, traj, step.index, patterns_only


def scripted_extractor(server, for_sentence: str):
    """The scripted model: `for_sentence` as its reply to the step holding LLM_SENTENCE, no claims else."""
    def reply(body):
        prompt = " ".join(str(m.get("content")) for m in body["messages"])
        return Reply.text(for_sentence if LLM_SENTENCE in prompt else json.dumps({"claims": []}))

    server.responder = reply


def test_claims_backend_openai_judges_the_models_claims_with_the_checker(worded, capsys):
    from scripted_openai_server import ScriptedOpenAIServer

    db, traj, step, patterns_only = worded
    capsys.readouterr()
    with ScriptedOpenAIServer() as server:
        scripted_extractor(server, "Here you go:\n```json\n" + json.dumps(LLM_CLAIMS) + "\n```")
        assert main(["claims", "--db", str(db), "--no-progress", "--backend", "openai", "--model", "extractor-m",
                     "--base-url", server.base_url, traj.id]) == 0
        asked = [r for r in server.requests if r["model"] == "extractor-m"]
        texts = [s for s in traj.steps if s.kind in ("think", "answer") and s.text]
        assert len(asked) == len(server.requests) == len(texts)  # one extraction per checked step
        prompt = " ".join(str(m.get("content")) for m in asked[0]["messages"])
        assert "Do not judge" in prompt
    out = capsys.readouterr().out
    assert "extractor: patterns+llm (extractor-m)" in out
    assert "1 contradicted" in out and f"contradicted, step {step}: {FALSE_QUOTE!r}" in out
    with Store(db) as store:
        rows = store.claims.claims_for(traj.id)
        llm = {r["claim_text"]: r for r in rows if r["result"]["claim"]["source"] == "llm"}
        assert {r["checker_version"] for r in rows} == {f"{CHECKER_VERSION}+llm:extractor-m"}
        assert store.claims.claim_versions(traj.id)[0] == f"{CHECKER_VERSION}+llm:extractor-m"
        assert store.claims.claim_counts([traj.id])[traj.id]["contradicted"] == 1  # the queue sees it
    assert {t: r["verdict"] for t, r in llm.items()} == {TRUE_QUOTE: "supported", FALSE_QUOTE: "contradicted"}
    assert all(r["step_idx"] == step for r in llm.values())
    assert llm[FALSE_QUOTE]["window_lo"] < 4862 < llm[FALSE_QUOTE]["window_hi"]  # measured where H-beta is
    # every pattern claim is still there, judged the same
    strip = [(r["step_idx"], r["claim_text"], r["verdict"]) for r in patterns_only]
    assert [(r["step_idx"], r["claim_text"], r["verdict"]) for r in rows if r["claim_text"] not in llm] == strip


def test_claims_backend_openai_json_names_the_extractor(worded, capsys):
    from scripted_openai_server import ScriptedOpenAIServer

    db, traj, _, _ = worded
    capsys.readouterr()
    with ScriptedOpenAIServer() as server:
        scripted_extractor(server, json.dumps(LLM_CLAIMS))
        assert main(["claims", "--db", str(db), "--no-progress", "--json", "--backend", "openai",
                     "--model", "extractor-m", "--base-url", server.base_url, traj.id]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["extractor"] == "patterns+llm" and doc["extractor_model"] == "extractor-m"
    (row,) = doc["trajectories"]
    assert row["extractor"] == "patterns+llm" and row["contradicted"] == 1
    assert doc["checker_version"] == f"{CHECKER_VERSION}+llm:extractor-m"
    assert main(["claims", "--db", str(db), "--no-progress", "--json", traj.id]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["extractor"] == "patterns" and doc["extractor_model"] is None
    assert doc["trajectories"][0]["extractor"] == "patterns" and doc["trajectories"][0]["contradicted"] == 0


def test_malformed_json_from_the_model_names_the_trajectory_and_keeps_the_pattern_claims(worded, capsys):
    from scripted_openai_server import ScriptedOpenAIServer

    db, traj, step, patterns_only = worded
    capsys.readouterr()
    with ScriptedOpenAIServer() as server:
        scripted_extractor(server, '{"claims": [{"quote": "the reddest of those dips", "kind": ')
        assert main(["claims", "--db", str(db), "--no-progress", "--backend", "openai", "--model", "extractor-m",
                     "--base-url", server.base_url, traj.id]) == 1
    out = capsys.readouterr().out
    problem = next(line for line in out.splitlines() if "problem:" in line)
    assert traj.id in problem and f"step {step}" in problem and "not valid JSON" in problem
    assert "pattern claims kept" in problem
    line = next(line for line in out.splitlines() if line.startswith(traj.id))
    assert line.endswith("extractor: patterns")  # what ran for this trajectory in the end
    with Store(db) as store:
        rows = store.claims.claims_for(traj.id)
    assert [(r["step_idx"], r["claim_text"], r["verdict"]) for r in rows] == [
        (r["step_idx"], r["claim_text"], r["verdict"]) for r in patterns_only]
    assert {r["checker_version"] for r in rows} == {CHECKER_VERSION}
