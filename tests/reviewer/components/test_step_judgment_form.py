"""The step judgment form (issue 47, item 4) bound to a review state on a copy of the demo database:
what `judge` and `toggle_tag` (the keys' actions) store, that the form follows the step on screen, and
that a refused judgment says why and stores nothing."""
from __future__ import annotations

from reviewer.components.step_judgment import StepJudgmentForm
from reviewer.review_state import ReviewState
from reviewer.services.step_judgments import tag_ids


def form_on(store, name="ann"):
    state = ReviewState(store, reviewer=name, blind=False)
    assert state.open_first()
    state.go_to_step(1)
    return state, StepJudgmentForm(state=state)


def stored(state):
    return {i: (j["judgment"], j["tags"]) for i, j in
            state.labels.my_step_judgments(state.reviewer, state.item.trajectory_id).items()}


def test_keys_judge_and_tag_the_step_on_screen(demo_store):
    state, form = form_on(demo_store)
    tags = tag_ids()
    form.toggle_tag(3)  # ticked before a judgment: stored with it
    ack = form.judge("incorrect")
    assert ack is not None and ack.kind == "step_judgment" and stored(state) == {1: ("incorrect", [tags[2]])}
    form.toggle_tag(1)  # on a step judged incorrect: stored at once
    assert stored(state) == {1: ("incorrect", [tags[2], tags[0]])}
    form.toggle_tag(3)
    assert stored(state) == {1: ("incorrect", [tags[0]])}
    form.toggle_tag(len(tags) + 1)  # no such tag: nothing
    assert stored(state) == {1: ("incorrect", [tags[0]])}
    state.next_step()  # the form follows the step: nothing judged there yet
    assert form.current is None and form._tag_boxes.value == [] and "not judged yet" in form._target.object
    form.judge("correct")
    state.previous_step()
    assert form.current["judgment"] == "incorrect" and form._tag_boxes.value == [tags[0]]
    assert form._buttons["incorrect"].button_type == "primary" and "judged incorrect" in form._target.object
    form.judge("correct")  # a correct step carries no tag
    assert stored(state) == {1: ("correct", []), 2: ("correct", [])} and form._tag_boxes.value == []
    form.toggle_tag(2)  # ticked on a correct step: waits for a partly / incorrect judgment
    assert stored(state)[1] == ("correct", [])
    form.judge("partly")
    assert stored(state)[1] == ("partly", [tags[1]])
    assert len(demo_store.labels.label_history("step_judgments")) == 6  # every change a row: nothing lost


def test_a_refused_judgment_says_why_and_stores_nothing(demo_store):
    state, form = form_on(demo_store, name="")  # no reviewer name yet
    assert form.judge("incorrect") is None and "name is needed" in state.error
    assert demo_store.labels.count_labels("step_judgments") == 0

