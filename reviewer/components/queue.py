"""The review queue: filters, the items, this reviewer's progress, next / previous."""
from __future__ import annotations

import pandas as pd
import panel as pn
import param

from reviewer.components.row_navigator import RowNavigator

ANY = "any"
COLUMNS = {"object_id": "Object", "task": "Task", "backend": "Agent", "answer": "Answer", "credibility": "Cred.",
           "my_action": "Mine", "n_reviews": "#", "disagreement": "≠"}


class Queue(RowNavigator):
    """Trajectories to review; the app fills `items` from the store whenever a filter changes."""

    id_key = "trajectory_id"
    wrap = False

    items = param.List(default=[], doc="queue rows from the store (dicts with trajectory_id)")
    task = param.Selector(default=ANY, objects=[ANY])
    backend = param.Selector(default=ANY, objects=[ANY])
    agent_name = param.Selector(default=ANY, objects=[ANY, "vet", "verify"])
    state = param.Selector(default="all", objects=["all", "todo", "done"])
    credibility = param.Selector(default=ANY, objects=[ANY, "HIGH", "MEDIUM", "LOW"])
    disagreement = param.Selector(default=ANY, objects=[ANY, "yes", "no"])
    reviewed_by = param.String(default="")
    progress = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self._filters = pn.Param(self, parameters=["task", "agent_name", "backend", "state", "credibility",
                                                   "disagreement", "reviewed_by"],
                                 show_name=False, default_layout=pn.Column, css_classes=["sr-queue-filters"],
                                 widgets={"reviewed_by": {"type": pn.widgets.TextInput, "placeholder": "reviewer"}})
        self._table = pn.widgets.Tabulator(self._frame(), selectable=1, disabled=True, show_index=False,
                                           pagination="local", page_size=12, sizing_mode="stretch_width",
                                           hidden_columns=["trajectory_id"], titles=COLUMNS,
                                           css_classes=["sr-queue-table"], layout="fit_data_stretch")
        self._table.param.watch(self._on_selection, "selection")
        self._prev = pn.widgets.Button(label="◀ Previous (b)", css_classes=["sr-queue-prev"], sizing_mode="stretch_width")
        self._next = pn.widgets.Button(label="Next (n) ▶", css_classes=["sr-queue-next"], sizing_mode="stretch_width")
        self._prev.on_click(lambda _: self.step(-1))
        self._next.on_click(lambda _: self.step(+1))
        self._progress = pn.pane.Str(self.param.progress, css_classes=["sr-progress"])

    def set_choices(self, tasks: list[str], backends: list[str]) -> None:
        self.param.task.objects = [ANY, *tasks]
        self.param.backend.objects = [ANY, *backends]

    def filters(self) -> dict:
        """The filters as store arguments (None = any)."""
        pick = lambda v: None if v == ANY else v  # noqa: E731
        return {"task": pick(self.task), "agent_name": pick(self.agent_name), "backend": pick(self.backend),
                "credibility": pick(self.credibility), "state": self.state,
                "disagreement": None if self.disagreement == ANY else self.disagreement == "yes",
                "reviewed_by": self.reviewed_by or None}

    def _frame(self) -> pd.DataFrame:
        cols = ["trajectory_id", *COLUMNS]
        return pd.DataFrame([{c: r.get(c) for c in cols} for r in self.items], columns=cols).astype(
            {"object_id": "string"})

    @param.depends("items", watch=True)
    def _sync_table(self):
        self._table.value = self._frame()
        self._select_row_of(self.selected_id)

    def _records(self) -> list[dict]:
        return self.items

    def __panel__(self):
        return pn.Column(self._table, pn.Row(self._prev, self._next), self._progress,
                         pn.Card(self._filters, title="Filters", collapsed=True, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width")
