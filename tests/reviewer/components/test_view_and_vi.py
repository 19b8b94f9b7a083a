"""The View tab (arm toggles, smoothing unit, a title on every button) and the VI form's prefill
(issue 19 items 3 and 4), on the demo's real DESI galaxy and its verify trajectory."""
from __future__ import annotations

import math
import re

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


def label(widget) -> str:
    return widget.name or getattr(widget, "label", "") or type(widget).__name__


def test_every_button_on_the_view_tab_has_a_title_of_its_own(galaxy):
    """A title (the hover text) for each, which says more than the button's label and is no other
    button's title."""
    state, plot = galaxy
    found = widgets(Controls(plot=plot, state=state))
    assert len(found) >= 12
    untitled = [label(w) for w in found if not w.description]
    assert not untitled, f"buttons without a title: {untitled}"
    bare = [label(w) for w in found if w.description.strip().lower() == label(w).lower() or len(w.description.split()) < 3]
    assert not bare, f"titles that only repeat the label: {bare}"
    titles = [w.description for w in found]
    assert len(set(titles)) == len(titles), "two buttons share a title"


ZOOM_TITLE = re.compile(r"^Zoom to (?P<line>.+): (?P<lo>\d+)-(?P<hi>\d+) Å in the rest frame, \(1\+z\) x that as observed$")


def test_each_line_zoom_goes_where_its_title_says_and_full_range_comes_back(galaxy):
    """'Zoom to H-alpha: 6400-6700 Å in the rest frame, (1+z) x that as observed': clicked in the observed
    frame, the x range is (1+z) times the range its title states, z the item's; 'Full range' and 'Reset'
    show the whole spectrum again."""
    state, plot = galaxy
    buttons = [w for w in widgets(Controls(plot=plot, state=state)) if isinstance(w, pn.widgets.Button)]
    by_name = {w.name: w for w in buttons}
    by_name["Reset"].clicks += 1
    whole = (plot.figure.x_range.start, plot.figure.x_range.end)
    factor = 1 + float(state.item.agent_label["z"])
    zooms = [(w, ZOOM_TITLE.match(w.description)) for w in buttons if w.description.startswith("Zoom to ")
             and w.name != "Apply"]
    assert len(zooms) >= 6 and all(m for _, m in zooms), [w.description for w, m in zooms if not m]
    for button, title in zooms:
        assert title["line"] == button.name
        button.clicks += 1
        shown = (plot.figure.x_range.start, plot.figure.x_range.end)
        assert shown == pytest.approx((factor * int(title["lo"]), factor * int(title["hi"])), rel=1e-4), button.name
        by_name["Full range"].clicks += 1
        assert (plot.figure.x_range.start, plot.figure.x_range.end) == pytest.approx(whole)
    assert whole[1] - whole[0] > 5000  # the whole DESI spectrum, 3600-9824 Å


def test_arm_toggles_follow_the_item_and_set_the_review_state(galaxy):
    state, plot = galaxy
    controls = Controls(plot=plot, state=state)
    arms = controls._arms
    assert arms.visible and list(arms.options.values()) == ["B", "R", "Z"] and arms.value == ["B", "R", "Z"]
    arms.value = ["B", "Z"]
    assert state.frame.hidden_arms == ["R"] and list(plot.arm_source.data["arm"]) == ["B", "Z"]
    state.frame.hidden_arms = []
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
    assert state.writer.ack is not None and state.writer.ack.kind == "vi"
    view = CandidatesView(state=state, plot=plot)
    view.choose(view.candidates[-1]["key"])
    fresh = VIForm(state=state)
    assert fresh.z == pytest.approx(0.5) and fresh.spectype == "QSO"
    state.choose_candidate(None)
