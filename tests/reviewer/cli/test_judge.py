"""`specreview judge` against a real OpenAI-compatible HTTP server (scripted) on 127.0.0.1."""
import pytest
from scripted_openai_server import Reply, ScriptedOpenAIServer

from agents.judge import parse_score, trajectory_text
from reviewer.cli import main
from reviewer.store import Store


@pytest.mark.parametrize("reply, score", [
    ("The zooms are well chosen.\nScore: 4", 4.0),
    ("Score: **3**", 3.0),
    ("My score is 2 out of 5.", 2.0),
    ("<think>maybe score: 1</think> Final verdict \\boxed{5}", 5.0),
    ('{"score": 0, "why": "empty"}', 0.0),
    ("4", 4.0),
    ("Score: 2\n... on reflection, Score: 3", 3.0),
    ("Good trajectory: 4/5", 4.0),
    ("The agent used 3 zooms and got H-alpha right.", None),  # numbers in text are not scores
    ("Score: 7", None),
    ("", None),
])
def test_parse_score(reply, score):
    assert parse_score(reply) == score


@pytest.fixture(scope="module")
def vet_trajectories(shared_spectra, manifest):
    """Two trajectories made by the real rules vet policy on real LAMOST spectra."""
    from agents.spectra import read_spectrum
    from agents.vet.run import vet_spectrum

    rows = [r for r in manifest if r["survey"].startswith("LAMOST-LRS") and r["subclass"][:1] in ("A", "K")][:2]
    return [vet_spectrum(read_spectrum(shared_spectra / r["file"].partition("#")[0]), "a") for r in rows]


@pytest.fixture
def db(tmp_path, vet_trajectories):
    path = tmp_path / "judge.duckdb"
    store = Store(path)
    for traj in vet_trajectories:
        store.trajectories.save_trajectory(traj)
    store.close()
    return path


def test_judge_scores_and_records_failures(db, vet_trajectories, capsys):
    ids = sorted(t.id for t in vet_trajectories)
    with ScriptedOpenAIServer() as server:
        server.push(Reply.text("Coherent, zooms match the claims. Score: 4"),
                    Reply.text("Looks plausible to me."))
        rc = main(["judge", "--db", str(db), "--model", "judge-m", "--base-url", server.base_url,
                   "--concurrency", "1"])  # one at a time: the scripted replies are in order
        assert rc == 1  # one of the two failed (reviewer/cli/exits.py)
        sent = server.requests[0]
        assert sent["model"] == "judge-m"
        prompt = " ".join(m["content"] if isinstance(m["content"], str) else str(m["content"])
                          for m in sent["messages"])
        assert "Reasoning quality" in prompt and "Score: N" in prompt
        assert trajectory_text(vet_trajectories[0]).splitlines()[0] in prompt
    out = capsys.readouterr()
    assert "scored 1, failed 1" in out.out
    with Store(db) as store:
        ratings = store.reviews.ratings_frame()
        assert ratings[["trajectory_id", "rater", "rater_kind", "score", "rubric_version"]].values.tolist() == [
            [ids[0], "llm:judge-m", "llm", 4.0, "1"]]
        failures = store.reviews.judge_failures("llm:judge-m")
        assert [(f["trajectory_id"], f["error"], f["reply"]) for f in failures] == [
            (ids[1], "no score in the reply", "Looks plausible to me.")]


def test_judge_skips_what_it_scored_and_limits(db, vet_trajectories):
    ids = sorted(t.id for t in vet_trajectories)
    with ScriptedOpenAIServer() as server:
        server.push(Reply.text("Score: 5"))
        assert main(["judge", "--db", str(db), "--model", "m2", "--base-url", server.base_url, "--limit", "1"]) == 0
        server.push(Reply.text("Score: 1"))
        assert main(["judge", "--db", str(db), "--model", "m2", "--base-url", server.base_url]) == 0
        assert len(server.requests) == 2  # the second run asked only about the unscored one
        server.push(Reply.text("Score: 2"), Reply.text("Score: 2"))
        assert main(["judge", "--db", str(db), "--model", "m2", "--base-url", server.base_url, "--force"]) == 0
    with Store(db) as store:
        current = store.reviews.ratings_frame().set_index("trajectory_id")["score"].to_dict()
        assert current == {ids[0]: 2.0, ids[1]: 2.0}
        assert len(store.labels.label_history("ratings")) == 4


def test_judge_with_a_dead_endpoint_fails_every_call(db):
    with ScriptedOpenAIServer() as server:  # empty script: every call is answered 400
        rc = main(["judge", "--db", str(db), "--model", "m3", "--base-url", server.base_url, "--task", "a"])
    assert rc == 1
    with Store(db) as store:
        failures = store.reviews.judge_failures("llm:m3")
        assert len(failures) == 2 and all(f["error"].startswith("call failed") for f in failures)
        assert store.reviews.ratings_frame().empty


def test_judge_calls_overlap_and_the_run_is_summed(db, vet_trajectories, capsys):
    with ScriptedOpenAIServer() as server:
        def reply(body):
            server.wait_for_in_flight(2)  # a judge that sends one call at a time is answered late
            return Reply.text("Careful zooms. Score: 3")

        server.responder = reply
        assert main(["judge", "--db", str(db), "--model", "m4", "--base-url", server.base_url,
                     "--concurrency", "2"]) == 0
        assert server.max_in_flight == 2
    out = capsys.readouterr().out
    assert "scored 2, failed 0" in out and "model calls: 2 (1.00 per item), 0 failed" in out
    assert "tokens: prompt " in out
    with Store(db) as store:
        assert sorted(store.reviews.ratings_frame()["score"]) == [3.0, 3.0]
