"""The screen's per-item state (issue 46, items 2, 3 and 6), on the demo's real DESI galaxy and its verify
trajectory: the plot follows the agent's zoom step by step (and stays put when told not to); the z
nudge keys move the frame by a velocity and make it the reviewer's candidate; a claim chip clicked
again takes its shading off; "Which line is it?" starts empty on each item."""
from __future__ import annotations

import pytest

from layouts.audit import keyboard_for
from reviewer.components.candidates_view import CandidatesView
from reviewer.components.claims_view import ClaimList

C_KMS = 299_792.458


def zoom_steps(state) -> list[int]:
    traj = state.item.trajectory
    return [i for i in range(len(traj.steps)) if traj.zoom_at(i) is not None]


def test_the_plot_follows_the_agents_zoom_and_stays_put_when_told_not_to(desi_galaxy):
    state, plot = desi_galaxy
    assert state.frame.follow_zoom  # on by default
    steps = zoom_steps(state)
    assert steps, "the galaxy's verify trajectory has zoom steps"
    for step in steps:  # every zoom step, as playing goes through them
        state.go_to_step(step)
        assert plot.x_range == pytest.approx(state.zoom_window()), step
    whole = next(i for i in range(len(state.steps)) if state.item.trajectory.zoom_at(i) is None)
    state.go_to_step(whole)
    assert plot.x_range is None  # a step on the whole spectrum: the whole spectrum
    state.go_to_step(steps[0])
    state.frame.follow_zoom = False
    plot.zoom_to(6000.0, 7000.0)
    state.go_to_step(steps[-1])
    assert plot.x_range == (6000.0, 7000.0)  # the reviewer's range: only shaded, not followed
    state.go_to_step(steps[0])
    state.frame.follow_zoom = True  # on again, at the same step: the plot goes to the agent's window at once
    assert plot.x_range == pytest.approx(state.zoom_window())


def test_the_z_nudge_keys_move_the_frame_by_a_velocity_and_make_it_the_correction(desi_galaxy):
    state, plot = desi_galaxy
    keys = keyboard_for(state, plot)
    z0 = state.frame.z
    keys.press("]")
    assert (1 + state.frame.z) / (1 + z0) - 1 == pytest.approx(50.0 / C_KMS, rel=1e-3)
    assert plot.frame.z == pytest.approx(state.frame.z)  # the line markers and the frame follow
    # within DESI's merge tolerance (consensus.DZ_MAX, ~1,000 km/s) the z is the agent's answer: no correction
    assert not state.draft.label
    for _ in range(3):
        keys.press("}")
    shift = ((1 + state.frame.z) / (1 + z0) - 1) * C_KMS
    assert shift == pytest.approx(((1 + 50 / C_KMS) * (1 + 500 / C_KMS) ** 3 - 1) * C_KMS, rel=1e-6)
    assert state.draft.label["z"] == pytest.approx(state.frame.z) and state.draft.label["type"] == "GALAXY"
    state.draft.label = {"type": "QSO", "z": state.frame.z}  # the reviewer's class, chosen in the form
    keys.press("]")
    assert state.draft.label["type"] == "QSO"  # a nudge moves the z, never the class back to the agent's
    keys.press("o")
    assert state.writer.ack is not None and "override" in state.writer.ack.text(), state.error
    saved = state.labels.my_review("ann", state.item.trajectory_id)
    assert saved["label"]["z"] == pytest.approx(state.frame.z, abs=1e-6)


def test_a_claim_chip_clicked_again_takes_its_shading_off(desi_galaxy):
    state, _plot = desi_galaxy
    claims = ClaimList(state=state)
    step = next((r.step_index for r in state.claims() if r.window), None)
    assert step is not None, "a claim with a measured window on the galaxy"
    state.go_to_step(step)
    index = next(i for i, r in enumerate(claims._results()) if r.window)
    claims._buttons.value = index
    assert state.frame.focus_window is not None
    claims._buttons.value = None  # the chip clicked again (ButtonStrip toggles; tests/ui clicks it)
    assert state.frame.focus_window is None
    without = next((i for i, r in enumerate(claims._results()) if not r.window), None)
    if without is not None:  # a claim measured nowhere in particular: the previous chip's shading goes
        claims._buttons.value = index
        claims._buttons.value = without
        assert state.frame.focus_window is None


def test_which_line_starts_empty_on_each_item(desi_galaxy):
    state, plot = desi_galaxy
    view = CandidatesView(state=state, plot=plot)
    assert view._line.value is None and view._set_z.disabled
    view._line.value = next(v for k, v in view._line.options.items() if k.startswith("H-alpha"))
    plot.marked_x = 8985.0
    assert not view._set_z.disabled
    state.step_item(+1)
    assert view._line.value is None and view._set_z.disabled


def test_the_window_size_a_browser_reports_is_bounded(desi_galaxy):
    """The window's size comes from the client: forged messages never make a huge (or negative) figure."""
    from layouts.audit import PLOT_CHROME_PX, PLOT_HEIGHT_PX
    from reviewer.components.keyboard import WINDOW_MAX_PX

    state, plot = desi_galaxy
    keys = keyboard_for(state, plot)
    keys._handle_msg({"window": [1440, 900]})
    assert plot.figure.height == 900 - PLOT_CHROME_PX
    for forged in ({"window": [10**9, 10**9]}, {"window": [True, True]}, {"window": [-5, -5]},
                   {"window": "1440x900"}, {"window": [1.5e3, 9e2]}, {"window": [1, 2, 3]}, ["window"]):
        keys._handle_msg(forged)
        assert PLOT_HEIGHT_PX <= plot.figure.height <= WINDOW_MAX_PX, forged
    keys._handle_msg({"full_window": True})
    assert keys.full_window and plot.figure.height > PLOT_HEIGHT_PX
