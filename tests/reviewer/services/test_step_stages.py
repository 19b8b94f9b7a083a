"""FORMA steps grouped by stage for the player's strip (reviewer/services/step_stages.py), on the demo's
longest verify trajectory."""
from __future__ import annotations

import gzip

from agents.trajectory import Trajectory
from reviewer.services.demo import DEMO_DIR
from reviewer.services.step_stages import STAGES, stage_groups


def longest_verify() -> Trajectory:
    path = DEMO_DIR.parent / "trajectories" / "demo.jsonl.gz"
    with gzip.open(path, "rt") as fh:
        trajs = [Trajectory.from_json(line) for line in fh]
    return max((t for t in trajs if t.task == "verify"), key=lambda t: len(t.steps))


def test_a_forma_trajectory_runs_through_the_five_stages_in_order():
    traj = longest_verify()
    groups = stage_groups(traj.task, traj.steps)
    assert [name for _, name in groups] == list(STAGES)
    starts = [at for at, _ in groups]
    assert starts[0] == 0 and starts == sorted(starts)
    first = dict((name, at) for at, name in groups)
    assert traj.steps[first["hypotheses"]].tool_name == "redshift_hypotheses"
    assert traj.steps[first["lines"]].verdict.who == "feature_auditor"
    assert traj.steps[first["report"]].kind == "answer"


def test_other_tasks_are_not_grouped():
    traj = longest_verify()
    assert stage_groups("a", traj.steps) == []
    assert stage_groups("verify", []) == []
