"""The conflict queue: items where reviewers disagree, and the merger's resolution with a comment."""
from __future__ import annotations

import json

import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.safe_text import escape


def describe_labels(labels: list[dict]) -> str:
    items = []
    for row in labels:
        who = row.get("reviewer", "?")
        if "action" in row:
            what = row["action"] + (f" {json.dumps(row['label'])}" if row.get("label") else "")
        else:
            what = f"quality {row.get('quality')}, {row.get('spectype') or '-'}, z {row.get('z')}"
        items.append(f"<li><b>{escape(who)}</b>: {escape(what)}"
                     f"{' – ' + escape(row['comment']) if row.get('comment') else ''}</li>")
    return "<ul>" + "".join(items) + "</ul>"


class ConflictQueue(Viewer):
    items = param.List(default=[], doc="store.conflict_queue() rows")
    selected = param.Integer(default=None, allow_None=True)
    action = param.Selector(default="approve", objects=["approve", "override", "reject"])
    override_label = param.String(default="", doc='the corrected label as JSON, e.g. {"answer": "YES"}')
    merger_comment = param.String(default="")
    resolve = param.Callable(default=None, doc="(item, action, label, merger_comment) -> None")
    status = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self._table = pn.widgets.Tabulator(self._frame(), selectable=1, disabled=True, show_index=False,
                                           sizing_mode="stretch_width", height=220, css_classes=["sr-conflict-table"],
                                           layout="fit_data_stretch")
        self._table.param.watch(lambda e: setattr(self, "selected", e.new[0] if e.new else None), "selection")
        self._detail = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["sr-conflict-detail"])
        self._action = pn.widgets.RadioButtonGroup.from_param(self.param.action, button_type="light")
        self._label = pn.widgets.TextInput.from_param(self.param.override_label, label="Corrected label (JSON)")
        self._comment = pn.widgets.TextAreaInput.from_param(self.param.merger_comment, label="Merger's comment",
                                                            height=60, css_classes=["sr-merger-comment"])
        self._button = pn.widgets.Button(label="Resolve", button_type="primary", css_classes=["sr-resolve"])
        self._button.on_click(lambda _: self.submit())
        self._status = pn.pane.Str(self.param.status, css_classes=["sr-conflict-status"])

    def _frame(self) -> pd.DataFrame:
        rows = [{"kind": i["kind"], "item": i["item_id"], "task": i.get("task"),
                 "reviewers": len(i.get("labels") or []), "why": "; ".join(i.get("reasons") or [])}
                for i in self.items]
        return pd.DataFrame(rows, columns=["kind", "item", "task", "reviewers", "why"])

    @param.depends("items", watch=True)
    def _sync(self):
        self._table.value = self._frame()
        self.selected = 0 if self.items else None
        self._table.selection = [0] if self.items else []
        self._show()

    @param.depends("selected", watch=True)
    def _show(self):
        item = self.current
        if item is None:
            self._detail.object = "<p><em>No open conflicts.</em></p>"
            return
        self._detail.object = (f"<div><b>{escape(item['kind'])} {escape(item['item_id'])}</b><br>"
                               f"<small>{escape('; '.join(item.get('reasons') or []))}</small>"
                               f"{describe_labels(item.get('labels') or [])}</div>")

    @property
    def current(self):
        if self.selected is None or not (0 <= self.selected < len(self.items)):
            return None
        return self.items[self.selected]

    def submit(self):
        item = self.current
        if item is None or self.resolve is None:
            return
        label = None
        if self.override_label.strip():
            try:
                label = json.loads(self.override_label)
            except ValueError as err:
                self.status = f"The corrected label is not valid JSON: {err}"
                return
        self.resolve(item, self.action, label, self.merger_comment or None)

    def __panel__(self):
        return pn.Column("### Conflicts", self._table, self._detail, self._action, self._label, self._comment,
                         self._button, self._status, sizing_mode="stretch_width")
