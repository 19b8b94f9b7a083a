"""The judges held against people (issue 47, item 5): weighted kappa against a hand-computed case, the offline
judge's policy, and `specreview judge --against-people` on a copy of the bundled demo database, with the
offline judge and with a model judge answering through the local OpenAI-compatible test server (the real
langchain-openai client)."""
import json

import numpy as np
import pytest
from databases import own_copy
from scripted_openai_server import Reply, ScriptedOpenAIServer

from agents.judge import OFFLINE_JUDGE, offline_judge
from agents.trajectory import Trajectory
from reviewer.cli import main
from reviewer.services.labels import LabelService
from reviewer.services.stats import PEOPLE, judge_agreement, kappa
from reviewer.store import Store

TABLE = np.array([[2, 1, 0], [0, 2, 1], [0, 0, 1]])


def test_kappa_against_a_hand_computed_case():
    """Rows r = (3, 3, 1), columns c = (2, 3, 2), n = 7. Unweighted: p_o = 5/7, p_e = 17/49, kappa =
    (35 - 17) / 32 = 0.5625. Quadratic weights (i - j)^2 / 4: sum(w O) = 0.25 + 0.25 = 0.5; sum(w E) =
    (0.25 * 9 + 6 + 0.25 * 6 + 0.25 * 6 + 2 + 0.25 * 3) / 7 = 14 / 7 = 2; kappa_w = 1 - 0.5 / 2 = 0.75."""
    assert kappa(TABLE) == pytest.approx(0.5625)
    assert kappa(TABLE, "quadratic") == pytest.approx(0.75)
    assert np.isnan(kappa(np.diag([0, 4, 0]), "quadratic"))  # one category only: chance says it all
    assert kappa(np.eye(6) * 3, "quadratic") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="quadratic"):
        kappa(TABLE, "linear-ish")


def qwk_by_pairs(people, judge):
    """The quadratic-weighted kappa of paired whole scores by its other form: 1 - mean((x - y)^2) over
    the pairs / mean((x_i - y_j)^2) over every i, j (the pairs broken by chance)."""
    x, y = np.asarray(people, float), np.asarray(judge, float)
    return 1 - np.mean((x - y) ** 2) / np.mean((x[:, None] - y[None, :]) ** 2)


def test_judge_agreement_against_the_people_and_each_person():
    import pandas as pd

    rows = []
    people = {"ann": [5, 4, 1, 0, 3], "bo": [4, 4, 2, 0, 3]}
    judge = [4.0, 5.0, 2.0, 1.0, 3.0]
    for i in range(5):
        for who, scores in people.items():
            rows.append({"trajectory_id": f"t{i}", "rater": who, "rater_kind": "human", "score": scores[i],
                         "rubric_version": "1"})
        rows.append({"trajectory_id": f"t{i}", "rater": "llm:m", "rater_kind": "llm", "score": judge[i],
                     "rubric_version": "1"})
    rows.append({"trajectory_id": "t9", "rater": "ann", "rater_kind": "human", "score": 2, "rubric_version": "0"})
    got = {r["people"]: r for r in judge_agreement(pd.DataFrame(rows))}
    assert list(got) == [PEOPLE, "ann", "bo"]
    median = [5, 4, 2, 0, 3]  # 4.5, 4, 1.5, 0, 3 halves up
    assert got[PEOPLE]["qwk"] == pytest.approx(qwk_by_pairs(median, judge))
    assert got["ann"]["qwk"] == pytest.approx(qwk_by_pairs(people["ann"], judge))
    assert got["ann"]["n"] == 5 and got["ann"]["exact"] == pytest.approx(1 / 5)
    assert got["bo"]["bias"] == pytest.approx(np.mean(np.array(judge) - people["bo"]))
    confusion = np.array(got[PEOPLE]["confusion"])
    assert confusion.sum() == 5 and confusion[5, 4] == 1 and confusion[2, 2] == 1 and confusion[0, 1] == 1
    # ranks (5, 4, 2, 1, 3) against (4, 5, 2, 1, 3): 1 - 6 * 2 / (5 * 24)
    assert got["ann"]["spearman"] == pytest.approx(0.9)


@pytest.mark.parametrize("counts, score", [
    ({"supported": 3, "contradicted": 3, "unverifiable": 0}, 1),
    ({"supported": 4, "contradicted": 1, "unverifiable": 0}, 2),
    ({"supported": 1, "contradicted": 0, "unverifiable": 0}, 3),
    ({"supported": 2, "contradicted": 0, "unverifiable": 3}, 3),
    ({"supported": 4, "contradicted": 0, "unverifiable": 1}, 4),
    ({"supported": 2, "contradicted": 0, "unverifiable": 0}, 4),
    ({"supported": 3, "contradicted": 0, "unverifiable": 0}, 5),
])
def test_the_offline_judge_reads_the_rubric_from_the_claim_checks(demo_store, counts, score):
    traj = demo_store.trajectories.load_trajectory(demo_store.trajectories.list_trajectories()[0]["id"])
    result = offline_judge(traj, counts)
    assert result.score == score and result.reply.endswith(f"Score: {score}")
    assert offline_judge(traj, None).score is None
    empty = Trajectory.model_validate({**traj.model_dump(), "steps": [], "outcome": {}})
    assert offline_judge(empty, {"supported": 0, "contradicted": 0, "unverifiable": 0}).score == 0


PEOPLE_SCORES = {"ann": [5, 3, 4, 2, 4, 1], "bo": [4, 3, 5, 2, 3, 2]}


@pytest.fixture
def rated_demo(demo_template, tmp_path):
    """A copy of the demo database where two people scored six vet trajectories of task a."""
    db = own_copy(demo_template, tmp_path)
    with Store(db) as store:
        ids = sorted(r["id"] for r in store.trajectories.list_trajectories(task="a"))[:6]
        labels = LabelService(store)
        for who, scores in PEOPLE_SCORES.items():
            for tid, score in zip(ids, scores, strict=True):
                labels.write_score(who, tid, score, "1")
    return db, ids


def report(db, capsys, *extra):
    capsys.readouterr()
    assert main(["judge", "--db", str(db), "--against-people", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_judge_report_on_the_demo_with_the_offline_judge(rated_demo, capsys):
    db, ids = rated_demo
    with Store(db) as store:
        counts = store.claims.claim_counts(r["id"] for r in store.trajectories.list_trajectories(task="a"))
    unchecked = sorted({r for r in ids} - set(counts))  # the demo's control without a checkable claim
    assert main(["judge", "--db", str(db), "--offline", "--task", "a"]) == (1 if unchecked else 0)
    out = capsys.readouterr()
    assert f"judge {OFFLINE_JUDGE} (offline, no model): scored {len(counts)}, failed {13 - len(counts)}" in out.out
    for tid in unchecked:  # named, with the reason, and recorded as the judge's failure
        assert f"{tid}: FAILED (no checked claim stored" in out.err
    with Store(db) as store:
        frame = store.reviews.ratings_frame(rater_kind="llm")
        offline = frame[frame["rater"] == OFFLINE_JUDGE].set_index("trajectory_id")["score"]
        assert [f["trajectory_id"] for f in store.reviews.judge_failures(OFFLINE_JUDGE)] == sorted(
            set(r["id"] for r in store.trajectories.list_trajectories(task="a")) - set(counts))
    scored = [i for i, tid in enumerate(ids) if tid in counts]
    for i in scored:  # each stored score is the policy's on the stored claim checks
        assert offline[ids[i]] == offline_judge(_traj(db, ids[i]), counts[ids[i]]).score
    rows = {r["people"]: r for r in report(db, capsys, "--judge", OFFLINE_JUDGE)}
    assert set(rows) == {PEOPLE, "ann", "bo"} and all(r["n"] == len(scored) for r in rows.values())
    judged = [offline[ids[i]] for i in scored]
    median = np.floor(np.median(list(PEOPLE_SCORES.values()), axis=0) + 0.5)[scored]
    assert rows[PEOPLE]["qwk"] == pytest.approx(qwk_by_pairs(median, judged))
    ann = np.array(PEOPLE_SCORES["ann"])[scored]
    assert rows["ann"]["qwk"] == pytest.approx(qwk_by_pairs(ann, judged))
    assert rows["ann"]["bias"] == pytest.approx(np.mean(np.array(judged) - ann))
    assert np.array(rows[PEOPLE]["confusion"]).sum() == len(scored)
    capsys.readouterr()
    assert main(["judge", "--db", str(db), "--against-people"]) == 0
    text = capsys.readouterr().out
    assert f"{OFFLINE_JUDGE} against {PEOPLE}, reasoning v1: n {len(scored)}, weighted kappa" in text
    assert "people \\ judge" in text


def _traj(db, tid):
    with Store(db) as store:
        return store.trajectories.load_trajectory(tid)


def test_the_judge_report_with_a_model_judge_through_the_local_openai_server(rated_demo, capsys):
    db, ids = rated_demo
    judged = [4, 3, 4, 1, 4, 2]
    with ScriptedOpenAIServer() as server:
        # the trajectories in id order, one at a time: the scripted replies are in order
        server.push(*(Reply.text(f"Sound zooms and lines.\nScore: {s}") for s in judged))
        args = ["judge", "--db", str(db), "--model", "judge-m", "--base-url", server.base_url, "--concurrency", "1"]
        with Store(db) as store:  # only the six people scored: the rest are scored already, by another judge
            for tid in (r["id"] for r in store.trajectories.list_trajectories() if r["id"] not in ids):
                store.labels.add_rating(tid, "llm:judge-m", 3, "1", rater_kind="llm")
        assert main(args) == 0
        assert len(server.requests) == 6 and server.requests[0]["model"] == "judge-m"
    rows = {r["people"]: r for r in report(db, capsys, "--judge", "llm:judge-m")}
    assert rows[PEOPLE]["n"] == 6
    median = np.floor(np.median(list(PEOPLE_SCORES.values()), axis=0) + 0.5)
    assert rows[PEOPLE]["qwk"] == pytest.approx(qwk_by_pairs(median, judged))
    assert rows["bo"]["qwk"] == pytest.approx(qwk_by_pairs(PEOPLE_SCORES["bo"], judged))
    assert rows["bo"]["exact"] == pytest.approx(np.mean(np.array(judged) == PEOPLE_SCORES["bo"]))
    confusion = np.array(rows["ann"]["confusion"])
    assert confusion[5, 4] == 1 and confusion[1, 2] == 1 and confusion.sum() == 6


def test_judge_needs_a_model_or_offline_or_the_report(rated_demo, capsys):
    db, _ = rated_demo
    assert main(["judge", "--db", str(db)]) == 2
    assert "give --model M" in capsys.readouterr().err
    assert main(["judge", "--db", str(db), "--against-people", "--session", "nope"]) == 1
    assert "no audit session named 'nope'" in capsys.readouterr().err
