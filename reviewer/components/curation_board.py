"""Curation of cold-start data: the board of trajectory states, revise the current step, audit, vote."""
from __future__ import annotations

import json
from typing import ClassVar

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.next_tick import refresh_after_labels
from reviewer.components.paged_table import TrajectoryTable
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.review_state import ReviewState
from reviewer.services.curation import BOARD_FILTERS, curation_page, status_text, trajectory_curation_status
from reviewer.services.labels import CURATION_KINDS

BOARD_COLUMNS = {"object": "Object", "task": "Task", "answer": "Answer", "state": "State", "reviser": "Reviser",
                 "approvals": "Audits ✓", "change_requests": "Changes", "accepts": "Votes ✓", "rejects": "Votes ✗"}


class CurationTable(TrajectoryTable):
    """The board of curation states, one page at a time from the database, limited to one state if asked;
    a click opens the trajectory."""

    curation_state = param.Selector(default="all", objects=list(BOARD_FILTERS), label="State")

    columns: ClassVar = BOARD_COLUMNS
    widths: ClassVar = {"object": 150, "task": 50, "answer": 70, "state": 130, "reviser": 80}
    css = "sr-board"

    def __init__(self, **params):
        params.setdefault("page_size", 15)
        super().__init__(**params)
        self._filter = pn.widgets.Select.from_param(self.param.curation_state, css_classes=["sr-board-filter"],
                                                    width=180)
        self.param.watch(self._filter_changed, "curation_state")
        self.state.param.watch(self.select_current, "item")

    def _filter_changed(self, *_):
        self.page = 0
        self.refresh()

    def refresh(self, *_) -> None:
        # the page and the count of the whole (filtered) board in one call
        rows, self.total = self._page(self.page * self.page_size)
        last = max(0, (self.total - 1) // self.page_size)
        if self.page > last:
            self.page = last
            rows, self.total = self._page(self.page * self.page_size)
        self.rows = rows

    def _page(self, offset: int) -> tuple[list[dict], int]:
        return curation_page(self.state.store, session=self.state.session_id, state=self.curation_state,
                             offset=offset, limit=self.page_size)

    def count(self) -> int:
        return self._page(0)[1]

    def fetch(self, offset: int, limit: int) -> list[dict]:
        return curation_page(self.state.store, session=self.state.session_id, state=self.curation_state,
                             offset=offset, limit=limit)[0]

    def row_values(self, row: dict) -> dict:
        shown = lambda v: ", ".join(map(str, v)) if isinstance(v, list) else v  # noqa: E731
        values = {"trajectory_id": row["trajectory_id"],
                  "object": f"{row.get('object_id') or '?'} · {row.get('survey') or '?'}",
                  **{c: shown(row.get(c)) for c in BOARD_COLUMNS if c != "object"}}
        if self.state.first_look_campaign:
            values["answer"] = ""
        return values

    def __panel__(self):
        return pn.Column(self._filter, self._table, self.pager(), sizing_mode="stretch_width")


class CurationBoard(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self.table = CurationTable(state=self.state)
        self._text = pn.widgets.TextAreaInput(label="Step text", height=110, css_classes=["sr-revise-text"])
        self._args = pn.widgets.TextInput(label="Tool arguments (JSON)", css_classes=["sr-revise-args"])
        self._comment = pn.widgets.TextInput(label="Comment")
        self._message = TextHTML("", css_classes=["sr-curation-status"])
        # which item and step the form edits, and where its curation stands (what counts next)
        self._target = TextHTML(pn.bind(lambda *_: f"<b>{escape(self.target_text())}</b>", self.state.param.item,
                                        self.state.param.step_index),
                                css_classes=["sr-revise-target"], sizing_mode="stretch_width", margin=(5, 10, 0, 10))
        self._now = TextHTML(pn.bind(self._status_html, self.state.param.item, self.state.writer.param.ack),
                             css_classes=["sr-curation-now"], sizing_mode="stretch_width", margin=(0, 10))
        buttons = {
            "Save revision": ("revise", None, "primary", "Store the step text and tool arguments above as a revision "
                              "of this step (a new round: audits and votes start again)."),
            "Audit: approve": ("audit", "approve", "success", "Approve the latest revision as an independent auditor "
                               "(counts after a revision, not by its reviser)."),
            "Audit: request changes": ("audit", "request_changes", "warning", "Send the latest revision back for "
                                       "changes (counts after a revision, not by its reviser)."),
            "Vote: accept": ("vote", "accept", "success", "Vote to accept the trajectory into the training data "
                             "(counts once two auditors approved the latest revision)."),
            "Vote: reject": ("vote", "reject", "danger", "Vote to discard the trajectory (counts once two auditors "
                             "approved the latest revision)."),
        }
        self._buttons = []
        for name, (event, value, kind, tip) in buttons.items():
            btn = pn.widgets.Button(label=name, color=kind, css_classes=[f"sr-curate-{event}-{value or 'save'}"],
                                    description=tip)
            btn.on_click(lambda _, e=event, v=value: self.act(e, v))
            self._buttons.append(btn)
        self.state.param.watch(self._load_step, ["item", "step_index"])
        self.state.param.watch(self.refresh, "campaign")
        refresh_after_labels(self.state, CURATION_KINDS, self.refresh)
        self._load_step()

    def refresh(self, *_):
        self.table.refresh()

    def target_text(self) -> str:
        """Which item and step "Revise" edits, as the reviewer reads it."""
        state, step = self.state, self.state.step
        if state.item is None or step is None:
            return "No trajectory on screen: open an item to revise its steps."
        return f"Revise step {step.index + 1} of {len(state.steps)} ({step.kind}) of {state.item.subject}"

    def _status_html(self, item, _ack) -> str:
        """Where the trajectory on screen stands in its curation (re-read after each label)."""
        if item is None or item.trajectory is None:
            return ""
        status = trajectory_curation_status(self.state.store, item.trajectory_id, self.state.session_id)
        return f"<small>This trajectory: {escape(status_text(status))}</small>"

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
            ack = self.state.writer.save("revision", text=self._text.value, tool_args=args, comment=comment)
        else:
            ack = self.state.writer.save("curation_event", event=event, value=value, comment=comment)
        # the outcome beside the buttons too: a refusal says why the action would not count
        self._message.object = f"<span class='sr-curation-refused'>{escape(self.state.error)}</span>" \
            if ack is None and self.state.error else ""
        if ack is not None:
            self._comment.value = ""

    def __panel__(self):
        return pn.Column("### Curation board", self.table, self._target, self._now, self._text, self._args,
                         self._comment, pn.FlexBox(*self._buttons), self._message, sizing_mode="stretch_width")
