"""DESI visual-inspection fields for the spectrum on screen (prospect's form)."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

import kb

STANDARD_COMMENTS = ["Broad absorption line quasar (BAL)", "Damped Lyman-alpha system (DLA)",
                     "Two objects in spectrum", "Blazar"]


class VIForm(Viewer):
    quality = param.Integer(default=None, allow_None=True, bounds=(0, 4))
    issues = param.ListSelector(default=[], objects=["R", "C", "S"])
    z = param.Number(default=None, allow_None=True)
    spectype = param.Selector(default=None, objects=[None, "STAR", "GALAXY", "QSO"], allow_None=True)
    comment = param.String(default="")
    save = param.Callable(default=None, doc="(quality, issues, z, spectype, comment) -> None")
    status = param.String(default="")
    pipeline_z = param.Number(default=None, allow_None=True)

    def __init__(self, **params):
        super().__init__(**params)
        rubric = kb.load("rubrics")
        self._quality = pn.widgets.RadioButtonGroup(options=[0, 1, 2, 3, 4], value=None, button_type="light",
                                                    css_classes=["sr-vi-quality"])
        self._quality.param.watch(lambda e: setattr(self, "quality", e.new), "value")
        self._quality_help = pn.pane.HTML("<br>".join(f"<b>{k}</b> {v}" for k, v in rubric["vi_quality"].items()),
                                          styles={"font-size": "11px"})
        self._issues = pn.widgets.CheckButtonGroup(options={f"{k}: {v}": k for k, v in rubric["vi_issues"].items()},
                                                   value=[], button_type="light", css_classes=["sr-vi-issues"])
        self._issues.param.watch(lambda e: setattr(self, "issues", list(e.new)), "value")
        self._z = pn.widgets.FloatInput.from_param(self.param.z, label="VI z", format="0.00000")
        self._copy_z = pn.widgets.Button(label="Copy pipeline z", button_type="light")
        self._copy_z.on_click(lambda _: self.pipeline_z is not None and setattr(self, "z", self.pipeline_z))
        self._type = pn.widgets.Select.from_param(self.param.spectype, label="VI spectype")
        self._standard = pn.widgets.Select(options=[""] + STANDARD_COMMENTS, value="", label="Standard comment")
        self._standard.param.watch(lambda e: e.new and setattr(self, "comment", e.new), "value")
        self._comment = pn.widgets.TextInput.from_param(self.param.comment, label="Comment (≤ 100 characters)",
                                                        max_length=100)
        self._save = pn.widgets.Button(label="Save VI", button_type="primary", css_classes=["sr-vi-save"])
        self._save.on_click(lambda _: self.submit())
        self._status = pn.pane.Str(self.param.status)

    def load(self, row: dict | None):
        row = row or {}
        self.param.update(quality=row.get("quality"), issues=list(row.get("issues") or ""), z=row.get("z"),
                          spectype=row.get("spectype"), comment=row.get("comment") or "", status="")
        self._quality.value = self.quality
        self._issues.value = list(self.issues)

    def submit(self):
        if self.save:
            self.save(self.quality, "".join(self.issues), self.z, self.spectype, self.comment or None)

    def __panel__(self):
        return pn.Column("#### Quality (0-4)", self._quality, self._quality_help, "#### Issues", self._issues,
                         pn.Row(self._z, self._copy_z), self._type, self._standard, self._comment, self._save,
                         self._status, sizing_mode="stretch_width")
