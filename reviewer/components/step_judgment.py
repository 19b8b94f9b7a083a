"""Judge the step on screen: correct / partly / incorrect, with failure-mode tags from the taxonomy
(kb/step_failure_modes.yaml, reviewer.services.step_judgments), keyboard first.

`judge(judgment)` and `toggle_tag(number)` are what keys call (the layout binds them: the component
binds no key itself); the buttons and the tag boxes do the same for the pointer. A judgment is stored at
once with the tags ticked; ticking or unticking a tag on a step judged partly or incorrect stores the
judgment again with the new tags (append-only: the latest row wins). A step judged correct carries no tag:
tags ticked there wait for a partly / incorrect judgment. The form shows back the reviewer's current
judgment of each step as the steps change."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.review_state import ReviewState
from reviewer.services import step_judgments

JUDGMENT_WORDS = {"correct": "Correct", "partly": "Partly", "incorrect": "Incorrect"}


class StepJudgmentForm(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        taxonomy = step_judgments.taxonomy()
        self.tags = step_judgments.tag_ids()
        self._target = TextHTML("", css_classes=["sr-step-judgment-target"])
        self._buttons = {}
        for judgment, word in JUDGMENT_WORDS.items():
            button = pn.widgets.Button(label=word, css_classes=["sr-step-judgment", f"sr-step-judgment-{judgment}"],
                                       description=taxonomy["judgments"][judgment])
            button.on_click(lambda _, j=judgment: self.judge(j))
            self._buttons[judgment] = button
        # each tag numbered as the keys number them (1 = the taxonomy's first); its definition is the
        # reviewer's reference, shown under the boxes (the taxonomy is data: escaped like any text)
        self._tag_boxes = pn.widgets.CheckBoxGroup(
            options={f"{i}. {taxonomy['tags'][t]['label']}": t for i, t in enumerate(self.tags, 1)}, value=[],
            css_classes=["sr-step-judgment-tags"])
        self._tag_boxes.param.watch(self._tags_changed, "value")
        self._definitions = pn.pane.HTML(
            "<details><summary>Failure modes</summary><dl>" + "".join(
                f"<dt>{escape(taxonomy['tags'][t]['label'])}</dt><dd>{escape(taxonomy['tags'][t]['definition'])}</dd>"
                for t in self.tags) + "</dl></details>", css_classes=["sr-step-judgment-definitions"])
        self._mine: dict[int, dict] = {}
        self._mine_for = None
        self._loading = False
        self.state.param.watch(self._load, ["item", "step_index", "reviewer", "campaign"])
        self.state.writer.param.watch(self._saved, "ack")
        self._load()

    # ---- what keys and the pointer call ---------------------------------------------------------
    def judge(self, judgment: str):
        """Store the step's judgment with the tags ticked (none for 'correct')."""
        tags = [] if judgment == "correct" else list(self._tag_boxes.value)
        return self.state.writer.save("step_judgment", judgment=judgment, tags=tags)

    def toggle_tag(self, number: int) -> None:
        """Tick or untick the taxonomy's `number`-th tag (from 1); stored at once where the step is judged
        partly or incorrect."""
        if not 1 <= number <= len(self.tags):
            return
        tag = self.tags[number - 1]
        ticked = list(self._tag_boxes.value)
        self._tag_boxes.value = [t for t in ticked if t != tag] if tag in ticked else [*ticked, tag]

    # ---- the form follows the item and step on screen ---------------------------------------------
    @property
    def current(self) -> dict | None:
        """My current judgment of the step on screen (None: not judged)."""
        return self._mine.get(self.state.step_index)

    def _tags_changed(self, event) -> None:
        current = self.current
        if self._loading or current is None or current["judgment"] == "correct":
            return
        self.state.writer.save("step_judgment", judgment=current["judgment"], tags=list(event.new))

    def _load(self, *_) -> None:
        state = self.state
        tid = state.item.trajectory_id if state.item is not None else None
        if (tid, state.reviewer, state.session_id) != self._mine_for:  # one query per item, not per step
            self._mine = state.labels.my_step_judgments(state.reviewer, tid, state.campaign)
            self._mine_for = (tid, state.reviewer, state.session_id)
        current = self.current
        self._loading = True
        try:
            self._tag_boxes.value = [t for t in (current or {}).get("tags") or [] if t in self.tags]
        finally:
            self._loading = False
        for judgment, button in self._buttons.items():
            button.disabled = tid is None
            button.button_type = "primary" if current and current["judgment"] == judgment else "default"
        said = f"judged {current['judgment']}" if current else "not judged yet"
        self._target.object = f"<small>Step {state.step_index + 1}: {said}</small>" if tid else ""

    def _saved(self, event) -> None:
        if event.new is not None and event.new.kind == "step_judgment":
            self._mine_for = None
            self._load()

    def __panel__(self):
        return pn.Column(self._target, pn.Row(*self._buttons.values()), self._tag_boxes, self._definitions,
                         sizing_mode="stretch_width", css_classes=["sr-step-judgment-form"])
