"""The override of a verify item (issue 46 item 5): `o` and the override button lead to a corrected answer, the
z tab's chosen or marked candidate, or ask for one; never the agent's own answer. On the demo's real DESI
galaxy (z = 0.3689) and its verify trajectory."""
from __future__ import annotations

import pytest

from layouts.audit import keyboard_for
from reviewer.components.candidates_view import CandidatesView
from reviewer.components.review_form import ReviewForm
from reviewer.services.consensus import describe_label

TRUE_Z = 0.368744  # DESI's Redrock z of the target (assets/demo/MANIFEST.csv)


def test_override_on_a_verify_item_proposes_the_chosen_candidate_never_the_agents_answer(desi_galaxy):
    """Issue 46 item 5: `o` and the override button on a verify item lead to a corrected answer: the z tab's
    chosen (or marked) candidate, or a request for one, never the agent's own answer."""
    state, plot = desi_galaxy
    view = CandidatesView(state=state, plot=plot)
    tid, own = state.item.trajectory_id, dict(state.item.agent_label)
    form = ReviewForm(state=state)
    keys = keyboard_for(state, plot)  # the page's keys
    assert describe_label(own) not in form._override.label  # nothing proposed yet: the button asks for a candidate
    assert "z tab" in form._override.label
    keys.press("o")
    assert "z tab" in state.error and "must differ" not in state.error
    assert state.labels.my_review("ann", tid) is None
    view.choose(view.candidates[0]["key"])  # the agent's own answer, chosen in the z tab: still no override
    assert describe_label(own) not in form._override.label and not state.draft.label
    other = next(c for c in view.candidates if abs(c["z"] - TRUE_Z) > 0.01)
    view.choose(other["key"])
    proposed = describe_label({"type": other["class"], "z": other["z"]})
    assert proposed in form._override.label
    keys.press("o")
    saved = state.labels.my_review("ann", tid)
    assert saved["action"] == "override" and saved["label"]["z"] == pytest.approx(other["z"])
    assert state.error == "" and f"verdict 'override' to {proposed}" in state.writer.ack.text()
