"""Which lines SpecReview marks on a step's render (real demo trajectories), and that the marked copy
is the reviewer's alone: the agent's picture and the store are untouched."""
from __future__ import annotations

import io

import pytest
from PIL import Image

import kb
from agents.claims.lexicon import kb_lines, task_lines
from agents.tools.lines import lines_in_window
from agents.trajectory import HYPOTHESIS_TOOL, call_window, image_sha
from agents.verify.analysis import class_lines
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.services.renders import MARKED, step_marks, step_render
from reviewer.services.spectra_cache import peek_render
from reviewer.store import Store


@pytest.fixture(scope="module")
def state(tmp_path_factory, wait_for_background_renders):
    store = Store(tmp_path_factory.mktemp("marks") / "marks.duckdb")
    seed_demo_if_empty(store)
    yield ReviewState(store, reviewer="mara")
    wait_for_background_renders()
    store.close()


def _open(state, task: str):
    row = next(r for r in state.store.queue.queue_items(task=task, limit=200))
    assert state.open_item(trajectory_id=row["trajectory_id"])
    return state.item


def _by_rest(names_and_x, z=0.0):
    return {round(x / (1 + z), 1) for _, x in names_and_x}


@pytest.mark.parametrize("window_id", ["ca_k", "balmer_blue"])
def test_a_vet_zoom_marks_the_tasks_diagnostic_lines_in_its_window(state, window_id):
    item = _open(state, "a")
    traj = item.trajectory
    window = next(w for w in kb.task("a")["windows"] if w["id"] == window_id)
    step = next(s for s in traj.steps if s.kind == "tool_result" and s.label == window["label"])
    lo, hi = call_window(step.tool_args)
    expected = {name for name in task_lines("a") if lo <= kb_lines()[name]["wave"] <= hi}
    marks = step_marks(item, step.index)
    assert {name for name, _ in marks} == expected and expected
    # stars: the lines sit at their rest (vacuum) wavelengths
    assert all(x == pytest.approx(kb_lines()[name]["wave"]) for name, x in marks)
    if window_id == "balmer_blue":  # the window holds kb lines task a does not diagnose: not marked
        others = {ln["name"] for ln in lines_in_window(lo, hi, kinds=("emission", "absorption"))} - expected
        assert {"G band", "He I 4026"} <= others
        assert not others & {name for name, _ in marks}


def test_the_vet_overview_marks_every_task_line_and_a_band_window_none(state):
    item = _open(state, "mg")
    traj = item.trajectory
    overview = step_marks(item, 0)
    assert {name for name, _ in overview} == set(task_lines("mg"))  # all inside the demo's coverage
    tio = next(s for s in traj.steps if s.kind == "tool_result" and "TiO" in (s.label or ""))
    assert step_marks(item, tio.index) == ()  # a band: no line of the task in the window
    assert step_render(state.store, item, tio.index, marked=True) is None


def _hypothesis_call(traj, index):
    """The analyse_hypothesis call whose analysis step `index` is part of (None outside one)."""
    for step in reversed(traj.steps[:index]):
        if step.tool_name == HYPOTHESIS_TOOL:
            return step if step.kind == "tool_call" else None
    return None


def test_a_verify_hypothesis_render_marks_that_hypothesis_lines_at_its_z(state):
    item = _open(state, "verify")
    traj = item.trajectory
    answer_z = item.agent_label["z"]
    renders = [s for s in traj.steps if s.kind == "tool_result" and s.tool_name == "render"
               and _hypothesis_call(traj, s.index) is not None]
    assert len(renders) >= 2
    rivals = 0
    for render in renders:
        call = _hypothesis_call(traj, render.index)
        z, spectype = call.tool_args["z"], call.tool_args["class"]
        lo, hi = call_window(render.tool_args)
        expected = {round(ln["rest"], 1) for ln in class_lines(spectype) if lo <= ln["rest"] * (1 + z) <= hi}
        marks = step_marks(item, render.index)
        assert _by_rest(marks, z) == expected and expected
        if abs(z - answer_z) > 0.01:  # a rival hypothesis: marked at its own z, not the answer's
            rivals += 1
            assert _by_rest(marks, answer_z) != expected
    assert rivals >= 1


def test_the_verify_overview_marks_the_answers_lines(state):
    item = _open(state, "verify")
    traj = item.trajectory
    overview = next(s for s in traj.steps if s.kind == "tool_result" and s.tool_name == "render"
                    and call_window(s.tool_args) is None)
    z, spectype = item.agent_label["z"], item.agent_label["type"]
    wave = item.spectrum.spectral_axis.to_value("Angstrom")
    expected = {round(ln["rest"], 1) for ln in class_lines(spectype) if wave.min() <= ln["rest"] * (1 + z) <= wave.max()}
    marks = step_marks(item, overview.index)
    assert _by_rest(marks, z) == expected
    assert len({x for _, x in marks}) == len(marks)  # one mark per wavelength (emission + absorption twins)


def test_the_marked_copy_is_made_for_the_reviewer_only(state):
    item = _open(state, "a")
    traj = item.trajectory
    step = next(s for s in traj.steps if s.kind == "tool_result" and step_marks(item, s.index))
    plain = step_render(state.store, item, step.index)
    marked = step_render(state.store, item, step.index, marked=True)
    assert plain is not None and marked is not None and marked != plain
    sizes = [Image.open(io.BytesIO(png)).size for png in (plain, marked)]
    assert sizes[0] == sizes[1]  # same window, same figure
    # the agent's picture is what the agent's own code makes, unchanged by the marked copy
    from agents.vet.renders import render_step
    assert plain == render_step(traj, step, item.spectrum)
    assert peek_render((traj.id, step.index, MARKED)) == (True, marked)  # cached under its own key
    assert not state.store.images.has_image(image_sha(marked))  # never stored
    stored = state.store.trajectories.load_trajectory(traj.id)
    assert [s.image_sha for s in stored.steps] == [s.image_sha for s in traj.steps]
