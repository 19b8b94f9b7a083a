"""Step renders: drawn in the render processes, they are the ones the server would draw itself."""
import pytest

from reviewer.review_state import ReviewState
from reviewer.services import renders
from reviewer.services.spectra_cache import LockedLRU


@pytest.fixture
def seeded_db(demo_store):
    return demo_store


@pytest.mark.parametrize("task", ["a", "verify"])
def test_renders_drawn_in_a_render_process_are_those_drawn_in_the_server(seeded_db, task):
    state = ReviewState(seeded_db, reviewer="alice")
    state.open_item(trajectory_id=seeded_db.queue.queue_items(task=task, limit=1)[0]["trajectory_id"])
    item = state.item
    drawn = [st for st in item.trajectory.steps if renders._make(seeded_db, item, st) is not None]
    assert len(drawn) >= 2  # the overview and at least one zoom
    for step in drawn:
        here = renders._make(seeded_db, item, step)
        away = renders._make(seeded_db, item, step, renders.render_process("ahead"))
        assert away[:8] == b"\x89PNG\r\n\x1a\n" and away == here, f"step {step.index} differs"
        marks = renders.step_marks(item, step.index)
        if marks:  # SpecReview's marked copy too
            marked_here = renders._remake(item, step, marks)
            assert renders._remake(item, step, marks, renders.render_process("now")) == marked_here != here
    assert renders.render_process("ahead").renders >= len(drawn)


def test_an_items_renders_are_drawn_from_inputs_made_once(seeded_db, monkeypatch, wait_for_background_renders):
    state = ReviewState(seeded_db, reviewer="alice")
    state.open_item(trajectory_id=seeded_db.queue.queue_items(task="a", limit=1)[0]["trajectory_id"])
    item = state.item
    wait_for_background_renders()  # the item's prefetch is done: from here on only this test draws
    monkeypatch.setattr(renders, "_drawn_from", LockedLRU(renders.DRAWN_FROM_KEPT))  # nothing kept yet
    made = []
    real = renders.tool_for
    monkeypatch.setattr(renders, "tool_for", lambda *a: made.append(a) or real(*a))
    steps = [st for st in item.trajectory.steps if renders._remake(item, st) is not None]
    assert len(steps) >= 2 and len(made) == 1  # one tool for all the item's renders
    again = renders._drawing_inputs(item.trajectory, item.spectrum)
    assert again is renders._drawing_inputs(item.trajectory, item.spectrum)
    import copy

    other = copy.copy(item.spectrum)  # another spectrum object: its own inputs, never a stale one
    assert renders._drawing_inputs(item.trajectory, other) is not again and len(made) == 2


def test_prefetches_run_at_the_lowest_priority_and_what_a_reviewer_waits_for_does_not():
    import os

    assert renders.render_process("ahead").call(os.nice, 0) == min(19, os.nice(0) + 19)
    assert renders.render_process("now").call(os.nice, 0) == os.nice(0)


def test_a_dead_render_process_means_drawing_in_the_server(seeded_db, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    class DeadPool:
        def call(self, *args, **kwargs):
            raise BrokenProcessPool("gone")

        render = call

    state = ReviewState(seeded_db, reviewer="alice")
    state.open_item(trajectory_id=seeded_db.queue.queue_items(task="verify", limit=1)[0]["trajectory_id"])
    step = next(st for st in state.item.trajectory.steps if renders._make(seeded_db, state.item, st) is not None)
    monkeypatch.setitem(renders._processes, "now", DeadPool())
    drawn = renders._in_process("now", lambda pool: renders._make(seeded_db, state.item, step, pool))
    assert drawn == renders._make(seeded_db, state.item, step)
    assert "now" not in renders._processes  # the next render starts a new process
