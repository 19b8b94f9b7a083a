"""Redshift candidates, the model overlay and the marked line (issue 19 items 2 and 3), on the demo's
real DESI galaxy (z = 0.3689) and its verify trajectory."""
from __future__ import annotations

import numpy as np
import pytest

from reviewer.components.candidates_view import CandidatesView

TRUE_Z = 0.368744  # DESI's Redrock z of the target (assets/demo/MANIFEST.csv)


@pytest.fixture
def galaxy(desi_galaxy):
    state, plot = desi_galaxy
    return state, plot, CandidatesView(state=state, plot=plot)


def test_candidates_come_from_the_hypotheses_the_answer_and_the_pipeline(galaxy):
    _, _, view = galaxy
    sources = [c["source"] for c in view.candidates]
    assert sources[0].startswith("agent's answer = hypothesis") and any(s.startswith("hypothesis") for s in sources)
    best = view.candidates[0]  # the answer, and the hypothesis it stands for: its score and lines
    assert best["class"] == "GALAXY" and best["z"] == pytest.approx(TRUE_Z, abs=0.001)
    assert best["score"] == 100.0 and "lines likely" in best["lines"]
    assert len(view._table.rows) == len(view.candidates)


def test_choosing_a_candidate_draws_its_template_and_sets_the_frame_not_the_answer(galaxy):
    state, plot, view = galaxy
    answer = dict(state.item.agent_label)
    other = next(c for c in view.candidates if abs(c["z"] - TRUE_Z) > 0.01)
    view.choose(other["key"])
    assert state.frame.z == pytest.approx(other["z"]) and state.draft.label["z"] == pytest.approx(other["z"])
    model = np.asarray(plot.sources["model"].data["model"], float)
    assert np.isfinite(model).sum() > 1000
    assert state.item.agent_label == answer
    view.choose(view.candidates[0]["key"])
    assert plot.model_of["z"] == pytest.approx(view.candidates[0]["z"])
    state.choose_candidate(None)
    assert len(plot.sources["model"].data["model"]) == 0


def test_marking_h_alpha_on_the_galaxy_sets_z_within_0_001(galaxy):
    state, plot, view = galaxy
    flux = np.asarray(plot.sources["flux"].data["flux"], float)
    wave = np.asarray(plot.sources["flux"].data["wave"], float)
    near = (wave > 8960) & (wave < 9010)  # where H-alpha of a z ~ 0.37 galaxy is observed
    peak = float(wave[near][np.nanargmax(flux[near])])
    plot.marked_x = peak  # what a shift-click there sends
    assert view._set_z.disabled  # which line it is: not chosen yet on this item
    view._line.value = next(v for k, v in view._line.options.items() if k.startswith("H-alpha"))
    assert not view._set_z.disabled
    view.set_z_from_mark()
    assert state.frame.z == pytest.approx(TRUE_Z, abs=0.001)
    assert state.frame.candidate["source"].startswith("marked H-alpha")


def test_the_pipelines_row_shows_beside_the_answer_and_the_score_is_explained(galaxy):
    _, _, view = galaxy
    rows = view._table.rows
    pipeline = [r for r in rows if r["source"] == "survey pipeline"]
    assert len(pipeline) == 1 and float(pipeline[0]["z"]) == pytest.approx(TRUE_Z, abs=1e-4)  # near the answer
    assert abs(float(rows[0]["z"]) - TRUE_Z) < 0.001 and rows[0]["source"] != "survey pipeline"
    score = next(c for c in view._table.columns if c["key"] == "score")
    assert "100 / (1 + Δχ²)" in score["description"]
    assert rows[0]["score"] == "100" and rows[0]["dchi2"] == "0.0"
    view.choose(view.candidates[0]["key"])
    assert "Δχ² 0.0" in view._detail.object
