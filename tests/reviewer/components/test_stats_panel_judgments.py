"""The Stats tab's failure modes of judged steps per task and agent, and the judges held against people
(issue 47, items 4 and 5), on a copy of the demo database: the numbers the services and the CLI give,
agent names escaped, and nothing shown before anything is judged or scored."""
from __future__ import annotations

import json

import pytest
from databases import own_copy

from agents.trajectory import AgentInfo
from reviewer.cli import main
from reviewer.components.stats_panel import StatsPanel
from reviewer.review_state import ReviewState
from reviewer.services.labels import LabelService
from reviewer.store import Store

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def judged_db(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    with Store(db) as store:
        ids = sorted(r["id"] for r in store.trajectories.list_trajectories(task="a"))[:4]
        labels = LabelService(store)
        twin = store.trajectories.load_trajectory(ids[0]).model_copy(
            deep=True, update={"id": "twin", "agent": AgentInfo(name="vet", backend="openai", model=HOSTILE)})
        store.trajectories.save_trajectory(twin)
        labels.write_step_judgment("ann", "twin", 1, "incorrect", ["wrong_z", "premature_answer"])
        labels.write_step_judgment("ann", ids[0], 1, "partly", ["wrong_z"])
        for tid, (mine, judged) in zip(ids, ((5, 4), (2, 3), (4, 4), (1, 0)), strict=True):
            labels.write_score("ann", tid, mine, "1")
            store.labels.add_rating(tid, "llm:m", judged, "1", rater_kind="llm")
    return db


def panel_for(store, blind=False) -> StatsPanel:
    panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=blind))
    panel.refresh()  # outside a served page: computed before it returns
    return panel


def test_the_tab_shows_the_failure_modes_and_the_judge_report(judged_db, capsys):
    with Store(judged_db) as store:
        panel = panel_for(store)
        failures, judges, confusions = (panel._failure_modes.object, panel._judges.object,
                                        panel._confusions.object)
        assert panel._failure_block.visible and panel._judges_block.visible
    assert "<img" not in failures and "openai/&lt;img src=x onerror=alert(1)&gt;" in failures
    assert "premature_answer" in failures and "wrong_z" in failures and "tool_misuse" not in failures
    capsys.readouterr()
    assert main(["judge", "--db", str(judged_db), "--against-people", "--json"]) == 0
    report = {r["people"]: r for r in json.loads(capsys.readouterr().out)}
    for row in report.values():  # the tab states the CLI's numbers
        assert f"<td>{row['qwk']:.3f}".rstrip("0") in judges and f"<td>{row['people']}</td>" in judges
    assert confusions.count("<tr") == 1 + 6  # the head and the six people's scores of the one judge


def test_nothing_judged_nothing_shown(demo_template, tmp_path):
    with Store(own_copy(demo_template, tmp_path)) as store:
        panel = panel_for(store)
        assert not panel._failure_block.visible and not panel._judges_block.visible
