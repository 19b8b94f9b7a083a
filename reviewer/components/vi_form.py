"""DESI visual-inspection fields for the spectrum on screen (prospect's form).

Until the reviewer has saved a VI on the item, its z and type start from the reviewer's own z (the
candidate chosen or the line marked: `ReviewState.candidate`, which also sets the corrected label),
else the agent's answer; a saved VI is shown as saved. Without a finite z the box is empty, never NaN.
"""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

import kb
from reviewer.components.z_input import ZInput
from reviewer.review_state import ReviewState
from reviewer.services.candidates import finite_or_none

SPECTYPES = ("STAR", "GALAXY", "QSO")
STANDARD_COMMENTS = ["Broad absorption line quasar (BAL)", "Damped Lyman-alpha system (DLA)",
                     "Two objects in spectrum", "Blazar"]


def prefill(state) -> tuple[float | None, str | None]:
    """(z, spectype) a new VI starts from: the reviewer's chosen z and class, else the agent's answer."""
    item = state.item
    agent = (item.agent_label or {}) if item is not None else {}
    chosen = state.frame.candidate or {}
    z = finite_or_none(chosen.get("z"))
    z = z if z is not None else finite_or_none(agent.get("z"))
    kinds = [str(k or "").upper() for k in ((chosen.get("class") if chosen else None), agent.get("type"))]
    return z, next((k for k in kinds if k in SPECTYPES), None)


class VIForm(Viewer):
    quality = param.Integer(default=None, allow_None=True, bounds=(0, 4))
    issues = param.ListSelector(default=[], objects=["R", "C", "S"])
    z = param.Number(default=None, allow_None=True)
    spectype = param.Selector(default=None, objects=[None, "STAR", "GALAXY", "QSO"], allow_None=True)
    comment = param.String(default="")
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        rubric = kb.load("rubrics")
        self._quality = pn.widgets.RadioButtonGroup(options=[0, 1, 2, 3, 4], value=None, color="light",
                                                    css_classes=["sr-vi-quality"])
        self._quality.param.watch(lambda e: setattr(self, "quality", e.new), "value")
        self._quality_help = pn.pane.HTML("<br>".join(f"<b>{k}</b> {v}" for k, v in rubric["vi_quality"].items()),
                                          styles={"font-size": "11px"})
        self._issues = pn.widgets.CheckButtonGroup(options={f"{k}: {v}": k for k, v in rubric["vi_issues"].items()},
                                                   value=[], color="light", css_classes=["sr-vi-issues"],
                                                   orientation="vertical")  # one row ran past the column
        self._issues.param.watch(lambda e: setattr(self, "issues", list(e.new)), "value")
        # empty, not NaN, without a z; narrow enough that "Copy pipeline z" stays in the right column
        self._z = ZInput.from_param(self.param.z, label="VI z", format="0.00000", width=150)
        self._copy_z = pn.widgets.Button(label="Copy pipeline z", color="light",
                                         description="Put the survey pipeline's redshift into the VI z field.")
        self._copy_z.on_click(lambda _: self._copy_pipeline_z())
        self._type = pn.widgets.Select.from_param(self.param.spectype, label="VI spectype")
        self._standard = pn.widgets.Select(options=["", *STANDARD_COMMENTS], value="", label="Standard comment")
        self._standard.param.watch(lambda e: e.new and setattr(self, "comment", e.new), "value")
        self._comment = pn.widgets.TextInput.from_param(self.param.comment, label="Comment (≤ 100 characters)",
                                                        max_length=100)
        self._save = pn.widgets.Button(label="Save VI", color="primary", css_classes=["sr-vi-save"],
                                       description="Save this visual-inspection label for the spectrum on screen.")
        self._save.on_click(lambda _: self.submit())
        self._saved = False  # a VI of mine on the item: shown as saved, not prefilled
        self.state.param.watch(self.load, ["item", "reviewer"])
        self.state.frame.param.watch(self._follow_reviewer_z, "candidate")
        self.load()

    def _copy_pipeline_z(self):
        item = self.state.item
        if item is not None and item.record.get("pipeline_z") is not None:
            self.z = float(item.record["pipeline_z"])

    def load(self, *_):
        state = self.state
        row = state.labels.my_vi(state.reviewer, state.item.spectrum_id if state.item is not None else None)
        self._saved = bool(row)
        row = row or {}
        z, spectype = (row.get("z"), row.get("spectype")) if self._saved else prefill(state)
        self.param.update(quality=row.get("quality"), issues=list(row.get("issues") or ""), z=z,
                          spectype=spectype, comment=row.get("comment") or "")
        self._quality.value = self.quality
        self._issues.value = list(self.issues)

    def _follow_reviewer_z(self, *_):
        if not self._saved:
            z, spectype = prefill(self.state)
            self.param.update(z=z, spectype=spectype)

    def submit(self):
        ack = self.state.writer.save("vi", quality=self.quality, issues="".join(self.issues), z=self.z, spectype=self.spectype,
                              comment=self.comment or None)
        self._saved = self._saved or ack is not None

    def __panel__(self):
        return pn.Column("#### Quality (0-4)", self._quality, self._quality_help, "#### Issues", self._issues,
                         pn.Row(self._z, self._copy_z), self._type, self._standard, self._comment, self._save,
                         sizing_mode="stretch_width")
