"""A note and flags on the current step, or on the whole trajectory."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

STEP_FLAGS = {
    "wrong_tool_args": "Wrong tool arguments",
    "claim_not_in_render": "Claim not supported by the render",
    "hallucinated_feature": "Hallucinated feature",
    "physically_inconsistent": "Physically inconsistent",
}


class AnnotationForm(Viewer):
    step_index = param.Integer(default=None, allow_None=True, doc="None = the whole trajectory")
    comment = param.String(default="")
    flags = param.ListSelector(default=[], objects=list(STEP_FLAGS))
    save = param.Callable(default=None, doc="(step_index, comment, flags) -> None")
    status = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self._target = pn.pane.Str("", css_classes=["sr-annotation-target"])
        self._comment = pn.widgets.TextAreaInput.from_param(self.param.comment, label="Note on this step", height=70,
                                                            css_classes=["sr-annotation-comment"])
        self._flags = pn.widgets.CheckBoxGroup(options={v: k for k, v in STEP_FLAGS.items()}, value=[],
                                               css_classes=["sr-annotation-flags"])
        self._flags.param.watch(lambda e: setattr(self, "flags", list(e.new)), "value")
        self._save = pn.widgets.Button(label="Save note", button_type="primary", css_classes=["sr-annotation-save"])
        self._save.on_click(lambda _: self.submit())
        self._status = pn.pane.Str(self.param.status, css_classes=["sr-annotation-status"])
        self._sync_target()

    @param.depends("step_index", watch=True)
    def _sync_target(self):
        self._target.object = "Whole trajectory" if self.step_index is None else f"Step {self.step_index + 1}"

    @param.depends("flags", watch=True)
    def _sync_flags(self):
        if list(self._flags.value) != list(self.flags):
            self._flags.value = list(self.flags)

    def submit(self):
        if self.save:
            self.save(self.step_index, self.comment or None, list(self.flags))

    def load(self, comment: str | None, flags: list[str]):
        self.param.update(comment=comment or "", flags=[f for f in flags if f in STEP_FLAGS], status="")

    def __panel__(self):
        return pn.Column(self._target, self._comment, self._flags, self._save, self._status,
                         sizing_mode="stretch_width")
