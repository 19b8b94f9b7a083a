"""The step view shows SpecReview's marked copy of a step's render by default, says so, and shows the
picture exactly as the agent saw it (its stored bytes) at the flip of a box bound to the view."""
from __future__ import annotations

import io
import uuid

import pytest
from PIL import Image

from agents.trajectory import Trajectory
from reviewer.components import step_render as render_view
from reviewer.components.step_render import StepRender
from reviewer.review_state import ReviewState
from reviewer.services.renders import step_marks, step_render


@pytest.fixture
def store(demo_store, wait_for_background_renders):
    """The test's own copy of the demo database (stored_picture adds a trajectory to it)."""
    yield demo_store
    wait_for_background_renders()


def _png(colour) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (60, 40), colour).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def stored_picture(store):
    """A demo vet trajectory whose Ca II K zoom keeps the picture its agent saw (an LLM run stores
    it): different bytes from anything SpecReview renders."""
    row = next(r for r in store.queue.queue_items(task="a", limit=200))
    traj = Trajectory.model_validate(store.trajectories.load_trajectory(row["trajectory_id"]).model_dump())
    traj.id = uuid.uuid4().hex
    step = next(s for s in traj.steps if s.kind == "tool_result" and s.label == "Ca II K")
    agent_png = _png((250, 240, 200))
    step.image_sha = traj.add_image(agent_png)
    store.trajectories.save_trajectory(traj)
    return traj.id, step.index, agent_png


def test_marked_by_default_and_the_box_shows_the_agents_own_bytes(store, stored_picture):
    trajectory_id, index, agent_png = stored_picture
    state = ReviewState(store, reviewer="sam")
    view = StepRender(state=state)
    assert state.open_item(trajectory_id=trajectory_id)
    state.go_to_step(index)
    marked = step_render(store, state.item, index, marked=True)
    assert marked is not None and marked != agent_png
    assert view._image.object == marked
    caption = view._caption.object
    assert "marked by SpecReview" in caption and "agent saw this picture without them" in caption
    assert all(name in caption for name, _ in step_marks(state.item, index))
    assert view._agent_view.disabled is False

    view._agent_view.value = True  # the box drives the view's own parameter
    assert view.as_the_agent_saw is True
    assert view._image.object == agent_png and "SpecReview" not in view._caption.object
    state.go_to_step(index + 1)  # a reasoning step shows the render it reasons about, still unmarked
    assert view._image.object == agent_png and f"(step {index + 1})" in view._caption.object

    view._agent_view.value = False
    assert view._image.object == marked and "SpecReview" in view._caption.object


def test_a_step_with_nothing_to_mark_shows_the_plain_render_without_caption(store):
    state = ReviewState(store, reviewer="sam")
    view = StepRender(state=state)
    row = next(r for r in store.queue.queue_items(task="mg", limit=200))
    assert state.open_item(trajectory_id=row["trajectory_id"])
    tio = next(s for s in state.steps if s.kind == "tool_result" and "TiO" in (s.label or ""))
    state.go_to_step(tio.index)
    assert view._image.object == step_render(store, state.item, tio.index) is not None
    assert view._caption.object == "" and view._agent_view.disabled is True


def test_line_names_are_escaped_in_the_caption(store, stored_picture, monkeypatch):
    trajectory_id, index, _ = stored_picture
    hostile = "<img src=x onerror=alert(1)>"
    monkeypatch.setattr(render_view, "step_marks", lambda item, i: ((hostile, 3934.8), ("Ca II H & co", 3969.6)))
    state = ReviewState(store, reviewer="sam")
    view = StepRender(state=state)
    assert state.open_item(trajectory_id=trajectory_id)
    state.go_to_step(index)
    caption = view._caption.object
    assert "<img" not in caption and "&lt;img src=x onerror=alert(1)&gt;" in caption
    assert "Ca II H &amp; co" in caption


def test_a_long_list_of_marks_is_counted_not_spelled_out():
    marks = tuple((f"line {k}", 4000.0 + k) for k in range(render_view.MARKS_NAMED + 3))
    caption = render_view.marks_caption(marks)
    assert "line 0" in caption and f"line {render_view.MARKS_NAMED}" not in caption and "and 3 more" in caption
