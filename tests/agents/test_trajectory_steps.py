"""What a step shows (issue 19, item 11): a FORMA audit verdict shades the feature it is about, or
nothing, never the last analysis' window or render; a Spec-o3 reasoning step keeps the agent's zoom."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from agents.trajectory import ZOOM_TOOLS, Trajectory, verdict_wavelength

DEMO = Path(__file__).resolve().parents[2] / "assets" / "trajectories" / "demo.jsonl.gz"


@pytest.fixture(scope="module")
def demo():
    with gzip.open(DEMO, "rt") as fh:
        return [Trajectory.model_validate(json.loads(line)) for line in fh]


def test_an_audit_verdict_shows_its_own_feature_not_the_last_zoom(demo):
    galaxy = next(t for t in demo if t.task == "verify" and any(s.kind == "verdict" for s in t.steps))
    verdicts = [s for s in galaxy.steps if s.kind == "verdict"]
    assert verdicts
    for step in verdicts:
        where = verdict_wavelength(step)
        window = galaxy.zoom_at(step.index)
        if where is None:
            assert window is None
        else:
            assert window[0] < where < window[1] and window[1] - window[0] <= 200
        owner = galaxy.render_index_at(step.index)
        assert owner is None or owner == step.index  # never an earlier analysis' render


def test_a_spec_o3_reasoning_step_keeps_the_agents_zoom(demo):
    checked = 0
    for vet in (t for t in demo if t.agent.name == "vet"):
        for zoom in (s for s in vet.steps if s.kind == "tool_result" and s.tool_name in ZOOM_TOOLS and not s.is_error):
            after = vet.steps[zoom.index + 1] if zoom.index + 1 < len(vet.steps) else None
            if after is not None and after.kind == "think" and vet.zoom_at(zoom.index) is not None:
                assert vet.zoom_at(after.index) == vet.zoom_at(zoom.index)
                assert vet.render_index_at(after.index) == zoom.index
                checked += 1
    assert checked > 10
