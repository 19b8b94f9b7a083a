"""The review queue: filters, one page of items, my progress, next / previous (n / b)."""
from __future__ import annotations

from typing import ClassVar

import panel as pn

from agents.trajectory import UNJUDGEABLE
from reviewer.components.next_tick import on_labels
from reviewer.components.paged_table import TrajectoryTable
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.queue_filters import FILTERS
from reviewer.services.labels import VERDICT_KINDS

SURVEY_SHORT = {"LAMOST": "LAMOST", "SDSS": "SDSS", "DESI": "DESI"}
# what "Ans." says for an item that has no answer, by how its run ended (agents.trajectory statuses)
STATUS_SHORT = {UNJUDGEABLE: "n/j", "error": "err"}


class QueueView(TrajectoryTable):
    """Trajectories to review, paged from the database; bound to the review state."""

    columns: ClassVar = {"object": "Object", "task": "Task", "answer": "Ans.", "cred": "Cred.", "mine": "Me", "split": "≠",
                         "bad": "✗"}
    widths: ClassVar = {"object": 112, "task": 40, "answer": 44, "cred": 36, "mine": 26, "split": 22, "bad": 24}
    css = "sr-queue"

    def __init__(self, **params):
        super().__init__(**params)
        choices = self.state.queue.choices()
        self.state.filters.choices_from(choices["tasks"], choices["backends"])
        self._filters = pn.Param(self.state.filters, parameters=list(FILTERS),
                                 show_name=False, default_layout=pn.Column, css_classes=["sr-queue-filters"],
                                 widgets={"reviewed_by": {"type": pn.widgets.TextInput,
                                                          "placeholder": "reviewer (yourself, while blind)"}})
        self._prev = pn.widgets.Button(label="◀ Previous (b)", css_classes=["sr-queue-prev"], sizing_mode="stretch_width",
                                       description="Open the previous item of the filtered queue (b).")
        self._next = pn.widgets.Button(label="Next (n) ▶", css_classes=["sr-queue-next"], sizing_mode="stretch_width",
                                       description="Open the next item of the filtered queue (n).")
        self._prev.on_click(lambda _: self._step(-1))
        self._next.on_click(lambda _: self._step(+1))
        self._progress = TextHTML("", css_classes=["sr-progress"], sizing_mode="stretch_width")
        # the items selected in a Stats plot (issue 47, item 7): a chip saying how many, removed by a click
        self._selection = pn.widgets.Button(label="", color="light", css_classes=["sr-queue-selection"],
                                            sizing_mode="stretch_width", visible=False,
                                            description="The queue lists only the items selected in a Stats plot: "
                                                        "click to list every item again.")
        self._selection.on_click(lambda _: self.state.filters.clear_selection())
        self.state.filters.param.watch(self._show_selection, "selected_ids")
        self.state.param.watch(self.refresh, ["reviewer", "campaign"])
        self.state.filters.param.watch(self.refresh, [*FILTERS, "selected_ids"])
        # written elsewhere (the CLI, other reviewers): the same page again, with its new counts and rows
        self.state.param.watch(self.refresh_later, "store_mark")
        # a score or a note changes nothing the queue shows; a verdict changes "Me", "≠" and progress
        on_labels(self.state, VERDICT_KINDS, self.refresh_later)  # read off the page: nothing to wait for
        self.state.param.watch(self._follow_item, "item")
        self.refresh()
        self._follow_item()  # an item opened before the queue was built (by its address): its page

    # ---- PagedTable -----------------------------------------------------------------------------
    def count(self) -> int:
        return self.state.queue.count(self.state.reviewer, **self.state.queue_args())

    def fetch(self, offset: int, limit: int) -> list[dict]:
        return self.state.queue.page(self.state.reviewer, offset, limit, **self.state.queue_args())

    def _step(self, delta: int) -> None:
        with pn.io.hold():  # one patch message per item change (see keyboard.py)
            self.state.step_item(delta)

    def row_values(self, row: dict) -> dict:
        survey = SURVEY_SHORT.get(str(row.get("survey") or "").upper(), row.get("survey") or "")
        answer = row.get("answer")
        answer = STATUS_SHORT.get(row.get("status")) if answer is None else str(answer)[:5]
        values = {"trajectory_id": row["trajectory_id"], "object": f"{row.get('object_id') or '?'} · {survey}",
                  "task": row.get("task"), "answer": answer,
                  "cred": (row.get("credibility") or "")[:3], "mine": "✓" if row.get("my_action") else "",
                  "split": "≠" if row.get("disagreement") else "",
                  "bad": str(row["contradicted"]) if row.get("contradicted") else ""}  # contradicted claims
        if self.state.first_look_campaign:
            values.update(answer="", cred="", split="", bad="")
        return values

    def read(self, page: int) -> dict:
        found = super().read(page)
        return {**found, "progress": self._progress_html(found["total"])}

    def show_read(self, found: dict, page: int) -> None:
        super().show_read(found, page)
        self._progress.object = found["progress"]

    def _show_selection(self, *_) -> None:
        filters = self.state.filters
        n = len(filters.selected_ids or [])
        capped = f" (the first {n:,} of {filters.selected_of:,})" if filters.selected_of > n else ""
        self._selection.label = f"{n:,} items selected in Stats{capped} ✕"
        self._selection.visible = filters.selected_ids is not None

    def _follow_item(self, *_):
        tid = self.current_id()
        if tid is not None and tid not in [r["trajectory_id"] for r in self.rows]:
            position = self.state.position  # known after n / b; else asked of the store
            if position is None:
                position = self.state.queue.position(tid, self.state.reviewer, **self.state.queue_args())
            self.show_position(position)
        self.select_current()

    def _progress_html(self, total: int) -> str:
        """Each reviewer's progress (the campaign's, else the reviewer's own), or how many items the list has."""
        state = self.state
        people = list(state.campaign["reviewers"]) if state.campaign else []
        if state.reviewer and state.reviewer not in people:
            people.insert(0, state.reviewer)
        # blind review: another reviewer's progress moves with their labels (LabelService.sees_reviewer)
        people = [p for p in people if state.labels.sees_reviewer(state.reviewer, p, state.blind)]
        lines = []
        for person in people:
            prog = state.queue.progress(person, state.session_id)
            lines.append(f"{escape(person)}: {prog['done']} / {prog['total']} reviewed")
        head = ""
        if state.campaign:
            closed = ", closed" if state.campaign.get("closed_at") else ""
            head = f"<b>Campaign {escape(state.campaign['name'])}</b> ({escape(state.campaign['mode'])}{closed})<br>"
        return f"<div>{head}{'<br>'.join(lines) or f'{total} items'}</div>"

    def __panel__(self):
        return pn.Column(self._selection, self._table, self.pager(), pn.Row(self._prev, self._next), self._progress,
                         pn.Card(self._filters, title="Filters", collapsed=True, sizing_mode="stretch_width",
                                 css_classes=["sr-queue-filters-card"]),
                         sizing_mode="stretch_width")
