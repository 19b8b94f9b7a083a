"""The View tab (arm toggles, smoothing unit, a title on every button) and the VI form's prefill
(issue 19 items 3 and 4), on the demo's real DESI galaxy and its verify trajectory."""
from __future__ import annotations

import math

import panel as pn
import pytest

from reviewer.components.candidates_view import CandidatesView
from reviewer.components.controls import Controls
from reviewer.components.vi_form import VIForm

BUTTONS = (pn.widgets.Button, pn.widgets.Toggle, pn.widgets.FileDownload, pn.widgets.RadioButtonGroup,
           pn.widgets.CheckButtonGroup)


@pytest.fixture
def galaxy(desi_galaxy):
    return desi_galaxy


def widgets(viewable):
    return [w for w in pn.panel(viewable).select(pn.widgets.Widget) if isinstance(w, BUTTONS)]


def test_every_button_on_the_view_tab_says_what_it_does(galaxy):
    state, plot = galaxy
    found = widgets(Controls(plot=plot, state=state))
    assert len(found) >= 12
    untitled = [w.name or getattr(w, "label", "") or type(w).__name__ for w in found if not w.description]
    assert not untitled, f"buttons without a title: {untitled}"


def test_arm_toggles_follow_the_item_and_set_the_review_state(galaxy):
    state, plot = galaxy
    controls = Controls(plot=plot, state=state)
    arms = controls._arms
    assert arms.visible and list(arms.options.values()) == ["B", "R", "Z"] and arms.value == ["B", "R", "Z"]
    arms.value = ["B", "Z"]
    assert state.hidden_arms == ["R"] and list(plot.arm_source.data["arm"]) == ["B", "Z"]
    state.hidden_arms = []
    assert arms.value == ["B", "R", "Z"]


def test_the_smoothing_width_is_typed_in_pixels_or_angstrom(galaxy):
    state, plot = galaxy
    controls = Controls(plot=plot, state=state)
    assert controls._sigma.visible and not controls._sigma_aa.visible
    plot.smooth_unit = "Å"
    assert controls._sigma_aa.visible and not controls._sigma.visible
    plot.smooth_unit = "pixels"


def test_vi_prefills_the_reviewers_z_else_the_agents(galaxy):
    state, plot = galaxy
    form = VIForm(state=state)
    agent = state.item.agent_label
    assert form.z == pytest.approx(float(agent["z"])) and form.spectype == str(agent["type"]).upper()
    view = CandidatesView(state=state, plot=plot)
    other = next(c for c in view.candidates if abs(c["z"] - float(agent["z"])) > 0.01)
    view.choose(other["key"])
    assert form.z == pytest.approx(other["z"])
    if other["class"] in ("STAR", "GALAXY", "QSO"):
        assert form.spectype == other["class"]
    state.choose_candidate(None)  # the reviewer's z withdrawn: the agent's again
    assert form.z == pytest.approx(float(agent["z"]))
    assert not math.isnan(form.z)


def test_a_saved_vi_is_not_overwritten_by_a_candidate(galaxy):
    state, plot = galaxy
    form = VIForm(state=state)
    form.param.update(quality=3, z=0.5, spectype="QSO")
    form.submit()
    assert state.ack is not None and state.ack.kind == "vi"
    view = CandidatesView(state=state, plot=plot)
    view.choose(view.candidates[-1]["key"])
    fresh = VIForm(state=state)
    assert fresh.z == pytest.approx(0.5) and fresh.spectype == "QSO"
    state.choose_candidate(None)
