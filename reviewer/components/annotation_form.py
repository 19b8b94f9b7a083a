"""A note and flags on the current step (mine, reloaded whenever the item or the step changes), and
the step's contradicted claims as prefilled flags to confirm or dismiss (claims_view.ClaimFlags)."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.claims_view import ClaimFlags
from reviewer.components.panes import TextHTML
from reviewer.review_state import ReviewState

STEP_FLAGS = {
    "wrong_tool_args": "Wrong tool arguments",
    "claim_not_in_render": "Claim not supported by the render",
    "hallucinated_feature": "Hallucinated feature",
    "physically_inconsistent": "Physically inconsistent",
}


class AnnotationForm(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._target = TextHTML("", css_classes=["sr-annotation-target"])
        self.claim_flags = ClaimFlags(state=self.state)
        self._comment = pn.widgets.TextAreaInput(label="Note on this step", height=70, max_length=5000,
                                                 css_classes=["sr-annotation-comment"])
        self._flags = pn.widgets.CheckBoxGroup(options={v: k for k, v in STEP_FLAGS.items()}, value=[],
                                               css_classes=["sr-annotation-flags"])
        self._save = pn.widgets.Button(label="Save note", color="primary", css_classes=["sr-annotation-save"],
                                       description="Save the note and the flags on the step on screen.")
        self._save.on_click(lambda _: self.state.writer.save("note", comment=self._comment.value or "",
                                                             flags=list(self._flags.value)))
        self._notes: dict = {}
        self._notes_for = None
        self.state.param.watch(self._load, ["item", "step_index", "reviewer"])
        self.state.writer.param.watch(self._saved, "ack")
        self._load()

    def _load(self, *_):
        state = self.state
        tid = state.item.trajectory_id if state.item is not None else None
        if (tid, state.reviewer) != self._notes_for:  # one query per item, not per step
            self._notes = state.labels.my_notes(state.reviewer, tid)
            self._notes_for = (tid, state.reviewer)
        note = self._notes.get(state.step_index) or {}
        self._target.object = f"<small>Step {state.step_index + 1}</small>" if tid else ""
        self._comment.value = note.get("comment") or ""
        self._flags.value = [f for f in note.get("flags") or [] if f in STEP_FLAGS]
        self._save.disabled = tid is None

    def _saved(self, event):
        if event.new is not None and event.new.kind == "note":
            self._notes_for = None  # re-read on the next step change

    def __panel__(self):
        return pn.Column(self._target, self.claim_flags, self._comment, self._flags, self._save,
                         sizing_mode="stretch_width")
