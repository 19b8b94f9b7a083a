"""Step judgments (issue 47, item 4) on a real DuckDB file seeded from the bundled demo: the rule a
judgment passes, campaign scope, latest-wins, the process-supervision export read back, preference
pairs, and the failure modes per task and agent in Stats."""
import json

import pytest
from databases import own_copy

import kb
from agents.trajectory import AgentInfo
from reviewer.cli import main
from reviewer.services import stats
from reviewer.services.labels import LabelRefused, LabelService
from reviewer.services.step_judgments import agent_of, check_judgment, tag_ids
from reviewer.store import Store


def test_the_taxonomy_defines_every_tag_and_names_its_source():
    taxonomy = kb.load("step_failure_modes")
    assert set(taxonomy["judgments"]) == {"correct", "partly", "incorrect"}
    wanted = {"misread_feature", "wrong_line_identification", "wrong_z", "unsupported_claim", "tool_misuse",
              "premature_answer"}
    assert wanted <= set(tag_ids())
    for tag, entry in taxonomy["tags"].items():
        assert entry["label"] and len(entry["definition"]) > 40 and entry["source"], tag


@pytest.mark.parametrize("judgment, tags, why", [
    ("right", [], "judged correct, partly, incorrect"),
    ("incorrect", ["wrong_z", "made_up"], "Unknown failure mode 'made_up'"),
    ("correct", ["wrong_z"], "judged correct has no failure mode"),
])
def test_check_judgment_refuses_what_the_taxonomy_does_not_hold(judgment, tags, why):
    with pytest.raises(ValueError, match=why):
        check_judgment(judgment, tags)


def test_check_judgment_keeps_tags_in_order_once_and_clear_keeps_none():
    assert check_judgment("partly", ["wrong_z", "tool_misuse", "wrong_z"]) == ("partly", ["wrong_z", "tool_misuse"])
    assert check_judgment("clear", ["wrong_z"]) == ("clear", [])


def vet_and_verify(store):
    rows = store.trajectories.list_trajectories()
    return next(r for r in rows if r["task"] == "a"), next(r for r in rows if r["task"] == "verify")


def test_a_judgment_is_stored_latest_wins_and_clear_withdraws_it(demo_store):
    labels = LabelService(demo_store)
    vet, _ = vet_and_verify(demo_store)
    tid = vet["id"]
    ack = labels.write_step_judgment("ann", tid, 1, "incorrect", ["misread_feature", "premature_answer"])
    assert ack.kind == "step_judgment" and "step 2 judged incorrect (misread_feature, premature_answer)" in ack.what
    labels.write_step_judgment("ann", tid, 1, "partly", ["misread_feature"])
    labels.write_step_judgment("bo", tid, 1, "correct")
    mine = labels.my_step_judgments("ann", tid)
    assert list(mine) == [1] and (mine[1]["judgment"], mine[1]["tags"]) == ("partly", ["misread_feature"])
    assert mine[1]["taxonomy_version"] == str(kb.load("step_failure_modes")["version"])
    assert len(demo_store.labels.label_history("step_judgments", trajectory_id=tid)) == 3  # nothing lost
    labels.write_step_judgment("ann", tid, 1, "clear")
    assert labels.my_step_judgments("ann", tid) == {}
    assert [r["reviewer"] for r in demo_store.step_judgments.step_judgments_for(tid)] == ["bo"]


def test_a_judgment_is_refused_with_its_reason_and_nothing_is_stored(demo_store):
    labels = LabelService(demo_store)
    vet, _ = vet_and_verify(demo_store)
    for args, why in (((vet["id"], 0, "correct", ["wrong_z"]), "no failure mode"),
                      ((vet["id"], vet["n_steps"], "incorrect", []), f"Step {vet['n_steps']} is not a step"),
                      ((vet["id"], 0, "incorrect", ["nonsense"]), "Unknown failure mode")):
        with pytest.raises(LabelRefused, match=why):
            labels.write_step_judgment("ann", *args)
    with pytest.raises(LabelRefused, match="name is needed"):
        labels.write_step_judgment("", vet["id"], 0, "correct")
    assert demo_store.labels.count_labels("step_judgments") == 0


def test_judgments_in_a_campaign_are_its_own_and_frozen_when_it_closes(demo_store):
    labels = LabelService(demo_store)
    vet, verify = vet_and_verify(demo_store)
    sid = demo_store.sessions.create_session("steps", "verdicts", [vet["id"]], reviewers=["ann"])
    campaign = demo_store.sessions.get_session(sid)
    labels.write_step_judgment("ann", vet["id"], 2, "incorrect", ["wrong_z"], campaign=campaign)
    labels.write_step_judgment("ann", verify["id"], 0, "correct")  # outside the campaign
    with pytest.raises(LabelRefused, match="not part of campaign"):
        labels.write_step_judgment("ann", verify["id"], 0, "correct", campaign=campaign)
    with pytest.raises(LabelRefused, match="not assigned"):
        labels.write_step_judgment("bo", vet["id"], 2, "correct", campaign=campaign)
    assert [r["trajectory_id"] for r in demo_store.step_judgments.judged_steps(session="steps")] == [vet["id"]]
    demo_store.sessions.close_session(sid)
    with pytest.raises(LabelRefused, match="closed"):
        labels.write_step_judgment("ann", vet["id"], 2, "correct", campaign=campaign)
    demo_store.step_judgments.add_step_judgment(vet["id"], "ann", 2, "correct", session_id=sid)  # after close
    frozen = demo_store.step_judgments.judged_steps(session="steps")
    assert [(r["judgment"], r["tags"]) for r in frozen] == [("incorrect", ["wrong_z"])]
    assert len(demo_store.step_judgments.judged_steps()) == 2


def twin_of(store, tid, model):
    """Another agent's trajectory of the same task on the same spectrum (a preference compares those)."""
    traj = store.trajectories.load_trajectory(tid)
    twin = traj.model_copy(deep=True, update={"id": f"{model}-{tid[:8]}",
                                              "agent": AgentInfo(name="vet", backend="openai", model=model)})
    store.trajectories.save_trajectory(twin)
    return twin


def judged_demo(path):
    """A copy of the demo database with step judgments: one vet trajectory and two other agents' runs on its
    spectrum (all correct / one step incorrect), a verify trajectory judged partly."""
    with Store(path) as store:
        labels = LabelService(store)
        vet, verify = vet_and_verify(store)
        good, bad = twin_of(store, vet["id"], "m-good"), twin_of(store, vet["id"], "m-bad")
        for step in (0, 1):
            labels.write_step_judgment("ann", good.id, step, "correct")
        labels.write_step_judgment("ann", bad.id, 0, "correct")
        labels.write_step_judgment("ann", bad.id, 1, "incorrect", ["wrong_line_identification", "premature_answer"],
                                   comment="Mg b is not H-beta\u2028at all")
        labels.write_step_judgment("bo", bad.id, 1, "incorrect", ["premature_answer"])
        labels.write_step_judgment("ann", vet["id"], 1, "partly", ["unsupported_claim"])
        labels.write_step_judgment("bo", verify["id"], 0, "partly", ["tool_misuse"])
        return {"vet": vet["id"], "good": good.id, "bad": bad.id, "verify": verify["id"], "spectrum": vet["spectrum_id"]}


def read_jsonl(path):
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and "\u2028" not in text  # one row a line, whatever reads the lines
    return [json.loads(line) for line in text.splitlines()]


def test_export_steps_round_trips_every_judged_step_and_the_preference_pairs(demo_template, tmp_path, capsys):
    db = own_copy(demo_template, tmp_path)
    ids = judged_demo(db)
    out = tmp_path / "steps-out"
    assert main(["export", "steps", "--db", str(db), "--out", str(out)]) == 0
    assert "steps.jsonl 7 rows, preference_pairs.jsonl 1 rows" in capsys.readouterr().out
    rows = read_jsonl(out / "steps.jsonl")
    with Store(db) as store:
        stored = store.step_judgments.judged_steps()
        steps = {tid: store.trajectories.load_trajectory(tid).steps for key, tid in ids.items() if key != "spectrum"}
    assert len(rows) == len(stored) == 7
    for row, want in zip(rows, stored, strict=True):
        step = steps[want["trajectory_id"]][want["step_idx"]]
        assert row == {
            "trajectory_id": want["trajectory_id"], "step_idx": want["step_idx"], "spectrum_id": want["spectrum_id"],
            "task": want["task"], "agent": agent_of(want), "judgment": want["judgment"], "tags": want["tags"],
            "taxonomy_version": "1", "reviewer": want["reviewer"], "comment": want["comment"],
            "step_kind": step.kind, "step_text": step.text, "tool_name": step.tool_name, "tool_args": step.tool_args,
            "session_id": None, "judged_at": want["created_at"].isoformat()}
    bad = [r for r in rows if r["trajectory_id"] == ids["bad"] and r["judgment"] == "incorrect"]
    assert [(r["reviewer"], r["tags"], r["agent"]) for r in bad] == [
        ("ann", ["wrong_line_identification", "premature_answer"], "vet/openai/m-bad"),
        ("bo", ["premature_answer"], "vet/openai/m-bad")]
    assert bad[0]["comment"] == "Mg b is not H-beta\u2028at all"
    pairs = read_jsonl(out / "preference_pairs.jsonl")
    # the vet run judged partly takes no side; the verify run has no other agent on its spectrum
    assert pairs == [{"task": "a", "spectrum_id": ids["spectrum"], "chosen": ids["good"], "chosen_agent": "vet/openai/m-good",
                      "rejected": ids["bad"], "rejected_agent": "vet/openai/m-bad",
                      "rejected_steps": [{"step_idx": 1, "tags": ["premature_answer"]},
                                         {"step_idx": 1, "tags": ["wrong_line_identification", "premature_answer"]}],
                      "n_judged_chosen": 2, "n_judged_rejected": 3}]
    assert main(["export", "steps", "--db", str(db), "--out", str(out)]) == 1  # no overwrite without --force
    assert "use --force" in capsys.readouterr().err


def test_failure_modes_per_task_and_agent_in_stats(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    ids = judged_demo(db)
    with Store(db) as store:
        table = stats.review_stats(store)["failure_modes"]
        vet_agent = agent_of(store.trajectories.trajectory_summary(ids["vet"]))
    rows = {(r["task"], r["agent"]): r for r in table.to_dict("records")}
    assert set(rows) == {("a", "vet/openai/m-bad"), ("a", "vet/openai/m-good"), ("a", vet_agent),
                         ("verify", "verify/rules/forma-rules-0.1.0")}
    bad = rows[("a", "vet/openai/m-bad")]
    assert (bad["judged"], bad["correct"], bad["partly"], bad["incorrect"]) == (3, 1, 0, 2)
    assert (bad["premature_answer"], bad["wrong_line_identification"], bad["tool_misuse"]) == (2, 1, 0)
    assert rows[("verify", "verify/rules/forma-rules-0.1.0")]["tool_misuse"] == 1
    assert rows[("a", vet_agent)]["unsupported_claim"] == 1
    assert list(table.columns[:6]) == ["task", "agent", "judged", "correct", "partly", "incorrect"]


def test_under_blind_review_the_failure_modes_are_the_reviewers_own(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    ids = judged_demo(db)
    with Store(db) as store:
        data = stats.review_stats(store)
        labels = LabelService(store)
        blind = labels.visible_stats("bo", data, blind=True)["failure_modes"]
        open_view = labels.visible_stats("bo", data, blind=False)["failure_modes"]
    assert blind["judged"].sum() == 2 and open_view["judged"].sum() == 7  # bo judged two steps, everyone seven
    bo_bad = blind[blind["agent"] == "vet/openai/m-bad"].iloc[0]
    assert (bo_bad["incorrect"], bo_bad["premature_answer"]) == (1, 1)
    assert "wrong_line_identification" not in blind.columns and ids["bad"]


def test_the_readme_lists_every_tag_of_the_taxonomy():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Judging steps, and the judges against people"):]
    for tag, entry in kb.load("step_failure_modes")["tags"].items():
        assert f"| `{tag}` | {entry['definition']} |" in section, tag
