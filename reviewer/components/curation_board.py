"""Curation of cold-start data: the board of trajectory states, revise the current step, audit, vote."""
from __future__ import annotations

import json

import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from reviewer.curation import curation_board
from reviewer.labels import CURATION_KINDS

BOARD_COLUMNS = {"object": "Object", "task": "Task", "answer": "Answer", "state": "State", "reviser": "Reviser",
                 "approvals": "Audits ✓", "change_requests": "Changes", "accepts": "Votes ✓", "rejects": "Votes ✗"}


class CurationBoard(Viewer):
    state = param.Parameter()
    rows = param.List(default=[])

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.widgets.Tabulator(pd.DataFrame(columns=["trajectory_id", *BOARD_COLUMNS]), selectable=1,
                                           disabled=True, show_index=False, height=240, sizing_mode="stretch_width",
                                           hidden_columns=["trajectory_id"], titles=BOARD_COLUMNS,
                                           css_classes=["sr-board"], layout="fit_data_stretch")
        self._table.param.watch(self._on_select, "selection")
        self._text = pn.widgets.TextAreaInput(name="Step text", height=110, css_classes=["sr-revise-text"])
        self._args = pn.widgets.TextInput(name="Tool arguments (JSON)", css_classes=["sr-revise-args"])
        self._comment = pn.widgets.TextInput(name="Comment")
        self._message = pn.pane.HTML("", css_classes=["sr-curation-status"])
        buttons = {
            "Save revision": ("revise", None, "primary"), "Audit: approve": ("audit", "approve", "success"),
            "Audit: request changes": ("audit", "request_changes", "warning"),
            "Vote: accept": ("vote", "accept", "success"), "Vote: reject": ("vote", "reject", "danger"),
        }
        self._buttons = []
        for name, (event, value, kind) in buttons.items():
            btn = pn.widgets.Button(name=name, button_type=kind, css_classes=[f"sr-curate-{event}-{value or 'save'}"])
            btn.on_click(lambda _, e=event, v=value: self.act(e, v))
            self._buttons.append(btn)
        self.state.param.watch(self._load_step, ["item", "step_index"])
        self.state.param.watch(self.refresh, "campaign")
        self.state.param.watch(lambda e: e.new is not None and e.new.kind in CURATION_KINDS and self.refresh(), "ack")
        self._load_step()

    def refresh(self, *_):
        self.rows = curation_board(self.state.store, session=self.state.session_id)

    @param.depends("rows", watch=True)
    def _sync(self):
        frame = [{"trajectory_id": r["trajectory_id"], "object": f"{r.get('object_id') or '?'} · {r.get('survey') or '?'}",
                  **{c: r.get(c) for c in BOARD_COLUMNS if c != "object"}} for r in self.rows]
        self._table.value = pd.DataFrame(frame, columns=["trajectory_id", *BOARD_COLUMNS])

    def _on_select(self, event):
        if event.new and event.new[0] < len(self.rows):
            self.state.open_item(trajectory_id=self.rows[event.new[0]]["trajectory_id"])

    def _load_step(self, *_):
        step = self.state.step
        self._text.value = (step.text or "") if step is not None else ""
        self._args.value = json.dumps(step.tool_args) if step is not None and step.tool_args else ""
        self._message.object = ""

    def act(self, event: str, value: str | None) -> None:
        comment = self._comment.value or None
        if event == "revise":
            args = None
            if self._args.value.strip():
                try:
                    args = json.loads(self._args.value)
                except ValueError as err:
                    self._message.object = f"<span>Tool arguments are not valid JSON: {err.msg}</span>"
                    return
            self.state.save_revision(self._text.value, args, comment)
        else:
            self.state.save_curation_event(event, value, comment)

    def __panel__(self):
        return pn.Column("### Curation board", self._table, "#### Revise the current step", self._text, self._args,
                         self._comment, pn.FlexBox(*self._buttons), self._message, sizing_mode="stretch_width")
