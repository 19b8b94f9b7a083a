"""Curation of cold-start data: the board of trajectory states, revise the current step, audit, vote."""
from __future__ import annotations

import json

import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

BOARD_COLUMNS = ["trajectory_id", "task", "answer", "state", "reviser", "approvals", "change_requests", "accepts",
                 "rejects"]


class CurationBoard(Viewer):
    rows = param.List(default=[], doc="store.curation_board() rows")
    step_text = param.String(default="", doc="edited text of the current step")
    step_args = param.String(default="", doc="edited tool arguments of the current step, as JSON")
    comment = param.String(default="")
    revise = param.Callable(default=None, doc="(text, tool_args|None, comment) -> None")
    curate = param.Callable(default=None, doc="(event, value, comment) -> None")
    open_item = param.Callable(default=None, doc="(trajectory_id) -> None")
    status = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.widgets.Tabulator(pd.DataFrame(columns=BOARD_COLUMNS), selectable=1, disabled=True,
                                           show_index=False, height=240, sizing_mode="stretch_width",
                                           hidden_columns=["trajectory_id"], css_classes=["sr-board"],
                                           layout="fit_data_stretch")
        self._table.param.watch(self._on_select, "selection")
        self._text = pn.widgets.TextAreaInput.from_param(self.param.step_text, label="Step text", height=110,
                                                         css_classes=["sr-revise-text"])
        self._args = pn.widgets.TextInput.from_param(self.param.step_args, label="Tool arguments (JSON)",
                                                     css_classes=["sr-revise-args"])
        self._comment = pn.widgets.TextInput.from_param(self.param.comment, label="Comment")
        buttons = {
            "Save revision": ("revise", None, "primary"), "Audit: approve": ("audit", "approve", "success"),
            "Audit: request changes": ("audit", "request_changes", "warning"),
            "Vote: accept": ("vote", "accept", "success"), "Vote: reject": ("vote", "reject", "danger"),
        }
        self._buttons = []
        for name, (event, value, kind) in buttons.items():
            btn = pn.widgets.Button(label=name, button_type=kind, css_classes=[f"sr-curate-{event}-{value or 'save'}"])
            btn.on_click(lambda _, e=event, v=value: self.act(e, v))
            self._buttons.append(btn)
        self._status = pn.pane.Str(self.param.status, css_classes=["sr-curation-status"])

    @param.depends("rows", watch=True)
    def _sync(self):
        self._table.value = pd.DataFrame([{c: r.get(c) for c in BOARD_COLUMNS} for r in self.rows],
                                         columns=BOARD_COLUMNS)

    def _on_select(self, event):
        if event.new and self.open_item and event.new[0] < len(self.rows):
            self.open_item(self.rows[event.new[0]]["trajectory_id"])

    def load_step(self, step) -> None:
        """Fill the editor with the step on screen."""
        self.step_text = (step.text or "") if step is not None else ""
        self.step_args = json.dumps(step.tool_args) if step is not None and step.tool_args else ""

    def act(self, event: str, value: str | None) -> None:
        if event == "revise":
            args = None
            if self.step_args.strip():
                try:
                    args = json.loads(self.step_args)
                except ValueError as err:
                    self.status = f"Tool arguments are not valid JSON: {err}"
                    return
            if self.revise:
                self.revise(self.step_text, args, self.comment or None)
        elif self.curate:
            self.curate(event, value, self.comment or None)

    def __panel__(self):
        return pn.Column("### Curation board", self._table, "#### Revise the current step", self._text, self._args,
                         self._comment, pn.FlexBox(*self._buttons), self._status, sizing_mode="stretch_width")
