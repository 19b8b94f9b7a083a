"""The verdict on the item on screen: approve / override with a corrected label from the task's answer
set / reject, undo, the 0-5 reasoning score with its rubric, and what I have saved.

Every value comes from and goes to the review state: the corrected label is the state's draft, which
starts afresh on each item (a yes/no task's other answer; on a verify item none, until a candidate is
chosen or a line marked in the z tab, never the agent's own answer), so nothing carries over from the
previous one.
Keys (a / o / r / u / 0-5) call the same state methods as the buttons.
"""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

import kb
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.components.styles import STYLESHEETS
from reviewer.components.z_input import ZInput
from reviewer.label_writer import LABEL_FIELDS
from reviewer.review_state import ReviewState
from reviewer.services.consensus import describe_label, normalise_label
from reviewer.services.labels import VERIFY_TYPES, VET_ANSWERS, verdict_words

REJECT_LABEL = "Reject: unusable, no label (r)"
# a verdict button's label on one line, cut with an ellipsis (its tooltip says it whole)
ONE_LINE = ".bk-btn { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }"


def undo_label(undoable, item) -> str:
    """What `u` and the undo button withdraw, on which item (the item on screen only)."""
    if undoable is not None:
        return f"Undo {undoable.what.removeprefix('verdict ')} on {undoable.subject or item.subject} (u)"
    return f"Nothing to undo on {item.subject}" if item is not None and item.trajectory is not None else "Nothing to undo"


class ReviewForm(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        rubric = kb.load("rubrics")["reasoning"]
        self.rubric_version = str(rubric["version"])
        self._rubric = {int(k): v for k, v in rubric["scores"].items()}
        self._reason = TextHTML("", css_classes=["sr-form-disabled"], sizing_mode="stretch_width")
        self._approve = pn.widgets.Button(color="success", css_classes=["sr-approve"], margin=(2, 2),
                                          sizing_mode="stretch_width", stylesheets=[ONE_LINE],
                                          description="Save the verdict 'approve': the agent's answer is right (a).")
        self._override = pn.widgets.Button(color="warning", css_classes=["sr-override"], margin=(2, 2),
                                           sizing_mode="stretch_width", stylesheets=[ONE_LINE],
                                           description="Save the verdict 'override' with the corrected label chosen "
                                                       "below (on a verify item: the candidate chosen or the line "
                                                       "marked in the z tab), which must differ from the agent's "
                                                       "answer (o).")
        self._reject = pn.widgets.Button(label=REJECT_LABEL, color="danger", css_classes=["sr-reject"],
                                         margin=(2, 2), sizing_mode="stretch_width", stylesheets=[ONE_LINE],
                                         description="Save the verdict 'reject': this trajectory is "
                                         "unusable (its reasoning cannot be trusted); no corrected label is saved (r).")
        # what `u` would withdraw on the item on screen, and nothing when it would withdraw nothing
        state = self.state
        self._undo = pn.widgets.Button(
            label=pn.bind(undo_label, state.writer.param.undoable, state.param.item), color="light",
            disabled=pn.bind(lambda undoable: undoable is None, state.writer.param.undoable), css_classes=["sr-undo"],
            margin=(2, 2), sizing_mode="stretch_width", stylesheets=[".bk-btn { white-space: normal; }"],
            description="Withdraw my last verdict on the item on screen (u): a new row restores the verdict "
                        "before it; nothing is deleted.")
        self._approve.on_click(lambda _: self.state.writer.save("verdict", action="approve"))
        self._override.on_click(lambda _: self.state.writer.save("verdict", action="override"))
        self._reject.on_click(lambda _: self.state.writer.save("verdict", action="reject"))
        self._undo.on_click(lambda _: self.state.writer.undo())
        # a first-look campaign: the reviewer's own answer first (the fields below), before the agent's is shown
        self._first_look = pn.widgets.Button(label="Record my first look", color="primary", visible=False,
                                             css_classes=["sr-first-look"], margin=(2, 2), sizing_mode="stretch_width",
                                             description="Record your own answer (the fields below); the agent's "
                                                         "answer, its steps and the pipeline's labels are shown then. "
                                                         "On a yes/no task: Shift+Y / Shift+N.")
        self._first_look.on_click(lambda _: self.state.writer.save("first_look", label=self.state.draft.label))
        # the corrected label's fields, each bound both ways to its own parameter of the draft
        draft = state.draft
        self._answer = pn.widgets.RadioButtonGroup.from_param(draft.param.answer, options=list(VET_ANSWERS), color="light",
                                                              css_classes=["sr-override-answer"], label="Corrected answer")
        # "(none)" until a class is chosen: a browser select shows its first option when its value is none of
        # them, and would send it back as the reviewer's choice (the agent's own class, on a star)
        self._type = pn.widgets.Select.from_param(draft.param.type, options={"(none)": None, **{t: t for t in VERIFY_TYPES}},
                                                  label="Corrected type", width=130, css_classes=["sr-override-type"])
        self._z = ZInput.from_param(draft.param.z, label="Corrected z", format="0.00000", width=120, start=-0.01, end=12,
                                    css_classes=["sr-override-z"])
        self._comment = pn.widgets.TextAreaInput.from_param(draft.param.comment, label="Comment", height=50,
                                                            css_classes=["sr-review-comment"], max_length=2000)
        self._score = pn.widgets.RadioButtonGroup(options=[0, 1, 2, 3, 4, 5], value=None, color="light",
                                                  css_classes=["sr-score"])
        self._score.param.watch(self._rate, "value")
        self._score_heading = pn.pane.HTML("<b>Reasoning score (0-5)</b>", margin=(0, 5))
        self._rubric_text = TextHTML("", css_classes=["sr-rubric"], stylesheets=STYLESHEETS,
                                     sizing_mode="stretch_width")
        self._saved = TextHTML("", css_classes=["sr-saved"], sizing_mode="stretch_width")
        self.state.param.watch(self._sync_item, ["item", "campaign"])
        draft.param.watch(self._sync_buttons, list(LABEL_FIELDS))
        self.state.param.watch(self._sync_saved, ["item", "reviewer"])
        state.writer.param.watch(self._sync_saved, "ack")
        self._sync_item()
        self._sync_saved()

    # ---- from the state -----------------------------------------------------------------------
    def _sync_item(self, *_):
        item, campaign = self.state.item, self.state.campaign
        traj = item.trajectory if item is not None else None
        first_look = item is not None and item.first_look_task is not None
        verdicts = not (campaign and campaign.get("mode") == "rating") and not first_look
        reviewable = traj is not None
        self._reason.object = "" if reviewable else \
            f"<p class='sr-why'><em>{escape(item.why_not_reviewable if item else 'Open an item from the queue.')}</em></p>"
        for widget in (self._approve, self._override, self._reject, self._comment, self._score):
            widget.disabled = not reviewable
        for widget in (self._approve, self._override, self._reject):
            widget.visible = verdicts
        for widget in (self._undo, self._score, self._score_heading, self._rubric_text):
            widget.visible = not first_look
        self._first_look.visible = first_look
        verify = item is not None and item.task == "verify"
        self._answer.visible = (verdicts or first_look) and not verify
        self._type.visible = self._z.visible = (verdicts or first_look) and verify
        self._sync_buttons()  # also when the new item's draft equals the old one (no draft event then)

    def _sync_buttons(self, *_):
        draft, own = self.state.draft.label or {}, (self.state.item.agent_label if self.state.item else {})
        self._approve.label = f"Approve: {describe_label(own)} (a)" if own else "Approve (a)"
        verify = self.state.item is not None and self.state.item.trajectory is not None \
            and self.state.item.trajectory.task == "verify"
        if normalise_label(draft):
            self._override.label = f"Override → {describe_label(draft)} (o)"
        else:  # a verify item's corrected answer comes from the z tab (never the agent's own answer)
            self._override.label = "Override → choose z in the z tab (o)" if verify else "Override (o)"

    def _sync_saved(self, *_):
        state = self.state
        tid = state.item.trajectory_id if state.item is not None else None
        mine = state.labels.my_review(state.reviewer, tid)
        rating = state.labels.my_rating(state.reviewer, tid, self.rubric_version)
        score = int(rating["score"]) if rating else None
        if self._score.value != score:
            self._score.value = score
        parts = []
        if mine:  # with the label it stands for: approve (the agent's answer), override → the correction
            parts.append(f"Your verdict: {verdict_words(mine['action'], mine.get('label'), state.item.agent_label)}")
        if rating:
            parts.append(f"your score: {score}")
        self._saved.object = f"<div class='sr-saved-text'>{escape('; '.join(parts))}</div>" if parts else ""
        rows = "".join(f"<tr class='{'sr-rubric-current' if s == score else ''}'><th>{s}</th><td>{escape(t)}</td></tr>"
                       for s, t in self._rubric.items())
        self._rubric_text.object = f"<table class='sr-rubric-table'>{rows}</table>"

    # ---- to the store -------------------------------------------------------------------------
    def _rate(self, event):
        if event.new is None:
            return
        tid = self.state.item.trajectory_id if self.state.item else None
        saved = self.state.labels.my_rating(self.state.reviewer, tid, self.rubric_version)
        if saved is None or int(saved["score"]) != event.new:
            self.state.writer.save("score", score=int(event.new))

    def __panel__(self):
        return pn.Column(
            self._reason,
            # one button a line, each its own height whatever its label says: a label that changes with
            # the draft never re-wraps the row and moves the buttons under the pointer
            pn.Column(self._approve, self._override, self._reject, sizing_mode="stretch_width", margin=0),
            self._answer, pn.Row(self._type, self._z), self._first_look, self._comment, self._undo,
            self._score_heading, self._score, self._rubric_text, self._saved,
            sizing_mode="stretch_width",
        )
