"""The reviewer's verdict, rubric score and comment for the trajectory on screen.

Persistence is the session's job: the form calls `save_review(action, label, comment)` and
`save_rating(score)`, and shows what was saved. Keys (a / o / r / 0-5) call the same methods.
"""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

import kb
from reviewer.components.safe_text import escape
from reviewer.components.styles import STYLESHEETS

VERIFY_TYPES = ["STAR", "GALAXY", "QSO", "UNKNOWN"]


class ReviewForm(Viewer):
    mode = param.Selector(default="vet", objects=["vet", "verify"], doc="which corrected label an override takes")
    override_answer = param.Selector(default="NO", objects=["YES", "NO"])
    override_type = param.Selector(default="GALAXY", objects=VERIFY_TYPES)
    override_z = param.Number(default=None, allow_None=True)
    comment = param.String(default="")
    score = param.Integer(default=None, allow_None=True, bounds=(0, 5))
    saved = param.String(default="", doc="what this reviewer has saved on this item, as text")
    show_verdicts = param.Boolean(default=True, doc="False in a rating-only campaign")
    save_review = param.Callable(default=None)
    save_rating = param.Callable(default=None)

    def __init__(self, **params):
        super().__init__(**params)
        rubric = kb.load("rubrics")["reasoning"]
        self.rubric_version = str(rubric["version"])
        self._rubric = {int(k): v for k, v in rubric["scores"].items()}
        self._approve = pn.widgets.Button(label="Approve (a)", button_type="success", css_classes=["sr-approve"])
        self._override = pn.widgets.Button(label="Override (o)", button_type="warning", css_classes=["sr-override"])
        self._reject = pn.widgets.Button(label="Reject (r)", button_type="danger", css_classes=["sr-reject"])
        self._approve.on_click(lambda _: self.approve())
        self._override.on_click(lambda _: self.override())
        self._reject.on_click(lambda _: self.reject())
        self._answer = pn.widgets.RadioButtonGroup.from_param(self.param.override_answer, label="Corrected answer",
                                                              button_type="light", css_classes=["sr-override-answer"])
        self._type = pn.widgets.Select.from_param(self.param.override_type, label="Corrected type")
        self._z = pn.widgets.FloatInput.from_param(self.param.override_z, label="Corrected z", format="0.00000")
        self._comment = pn.widgets.TextAreaInput.from_param(self.param.comment, label="Comment", height=70,
                                                            css_classes=["sr-review-comment"])
        self._score = pn.widgets.RadioButtonGroup(options=[0, 1, 2, 3, 4, 5], value=None, button_type="light",
                                                  css_classes=["sr-score"])
        self._score.param.watch(lambda e: e.new is not None and e.new != self.score and self.rate(e.new), "value")
        self._rubric_text = pn.pane.HTML("", css_classes=["sr-rubric"], stylesheets=STYLESHEETS, sizing_mode="stretch_width")
        self._saved = pn.pane.HTML("", css_classes=["sr-saved"], sizing_mode="stretch_width")
        self._sync_mode()
        self._sync_score()
        self._sync_saved()

    @param.depends("mode", "show_verdicts", watch=True)
    def _sync_mode(self):
        for widget in (self._approve, self._override, self._reject, self._comment):
            widget.visible = self.show_verdicts
        self._answer.visible = self.show_verdicts and self.mode == "vet"
        self._type.visible = self._z.visible = self.show_verdicts and self.mode == "verify"

    @param.depends("score", watch=True)
    def _sync_score(self):
        if self._score.value != self.score:
            self._score.value = self.score
        rows = "".join(
            f"<tr class='{'sr-rubric-current' if s == self.score else ''}'><th>{s}</th><td>{escape(t)}</td></tr>"
            for s, t in self._rubric.items())
        self._rubric_text.object = f"<table class='sr-rubric-table'>{rows}</table>"

    @param.depends("saved", watch=True)
    def _sync_saved(self):
        self._saved.object = f"<div class='sr-saved-text'>{escape(self.saved)}</div>" if self.saved else ""

    # ---- actions (buttons and keys) -----------------------------------------------------------
    def corrected_label(self) -> dict:
        if self.mode == "vet":
            return {"answer": self.override_answer}
        return {"type": self.override_type, "z": self.override_z}

    def approve(self):
        self._send("approve", None)

    def override(self):
        self._send("override", self.corrected_label())

    def reject(self):
        self._send("reject", None)

    def _send(self, action, label):
        if self.save_review:
            self.save_review(action, label, self.comment or None)

    def rate(self, score: int):
        self.score = int(score)
        if self.save_rating:
            self.save_rating(int(score))

    def clear(self):
        """A new item: forget the form's inputs (saved labels are reloaded by the session)."""
        self.param.update(comment="", score=None, saved="", override_z=None)

    def __panel__(self):
        return pn.Column(
            "#### Verdict", pn.Row(self._approve, self._override, self._reject),
            self._answer, self._type, self._z, self._comment,
            "#### Reasoning score (0-5)", self._score, self._rubric_text, self._saved,
            sizing_mode="stretch_width",
        )
