"""The Conflicts tab: items where reviewers disagree (the same stored consensus the queue's ≠ shows),
each reviewer's label, and the merger's resolution with a corrected label from the task's answer set."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.next_tick import refresh_after_labels
from reviewer.components.row_table import RowTable
from reviewer.components.safe_text import escape
from reviewer.conflicts import conflict_queue
from reviewer.consensus import describe_label
from reviewer.labels import VERDICT_KINDS, VERIFY_TYPES

CONFLICT_COLUMNS = {"object": "Object", "kind": "Kind", "task": "Task", "reviewers": "Reviewers", "why": "Why"}
BLIND_WHY = "hidden until you label it (blind review)"
CONFLICT_WIDTHS = {"object": 150, "kind": 70, "task": 50, "reviewers": 70}


def _key(item: dict) -> str:
    """A conflict's key in the table: trajectories and spectra have ids of their own kinds."""
    return f"{item['kind']}:{item['item_id']}"


def describe_labels(labels: list[dict]) -> str:
    items = []
    for row in labels:
        if "action" in row:
            what = row["action"] + (f" {describe_label(row['label'])}" if row.get("label") else "")
        else:
            what = f"quality {row.get('quality')}, {row.get('spectype') or '-'}, z {row.get('z')}"
        items.append(f"<li><b>{escape(row.get('reviewer', '?'))}</b>: {escape(what)}"
                     f"{' – ' + escape(row['comment']) if row.get('comment') else ''}</li>")
    return "<ul>" + "".join(items) + "</ul>"


class ConflictQueue(Viewer):
    state = param.Parameter()
    items = param.List(default=[])
    selected = param.Integer(default=None, allow_None=True)

    def __init__(self, **params):
        super().__init__(**params)
        self._table = RowTable(columns=[{"key": k, "title": t, "width": CONFLICT_WIDTHS.get(k)}
                                        for k, t in CONFLICT_COLUMNS.items()],
                               key_column="key", sizing_mode="stretch_width", height=220,
                               css_classes=["sr-conflict-table"])
        self._table.on_click(self._choose)
        self._detail = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["sr-conflict-detail"])
        self._open = pn.widgets.Button(name="Open in the Review tab", button_type="light", css_classes=["sr-conflict-open"])
        self._open.on_click(lambda _: self.open_current())
        self._action = pn.widgets.RadioButtonGroup(options=["approve", "override", "reject"], value="approve",
                                                   button_type="light", css_classes=["sr-resolve-action"])
        self._answer = pn.widgets.RadioButtonGroup(options=["YES", "NO"], value=None, button_type="light",
                                                   name="Corrected answer", css_classes=["sr-resolve-answer"])
        self._type = pn.widgets.Select(options=list(VERIFY_TYPES), name="Corrected type", width=130)
        self._z = pn.widgets.FloatInput(name="Corrected z", format="0.00000", width=120)
        self._comment = pn.widgets.TextAreaInput(name="Merger's comment", height=60, css_classes=["sr-merger-comment"])
        self._button = pn.widgets.Button(name="Resolve", button_type="primary", css_classes=["sr-resolve"])
        self._button.on_click(lambda _: self.submit())
        self.state.param.watch(self.refresh, ["campaign", "reviewer", "blind"])
        refresh_after_labels(self.state, VERDICT_KINDS, self.refresh)

    def refresh(self, *_):
        state = self.state
        self.items = state.labels.visible_conflicts(state.reviewer, conflict_queue(state.store, session=state.session_id),
                                                    state.blind)

    def _rows(self) -> list[dict[str, str]]:
        return [{"key": _key(i), "object": f"{i.get('object_id') or '?'} · {i.get('survey') or '?'}",
                 "kind": i["kind"], "task": i.get("task") or "", "reviewers": str(i["n_labels"]),
                 "why": BLIND_WHY if i["hidden"] else "; ".join(i.get("reasons") or [])} for i in self.items]

    def _choose(self, key: str) -> None:
        found = next((n for n, i in enumerate(self.items) if _key(i) == key), None)
        if found is not None:
            self.selected = found

    @param.depends("items", watch=True)
    def _sync(self):
        self._table.rows = self._rows()
        self.selected = 0 if self.items else None
        self._show()

    @param.depends("selected", watch=True)
    def _show(self):
        self._table.selected = self.selected
        item = self.current
        if item is None:
            self._detail.object = "<p><em>No open conflicts.</em></p>"
            return
        verify = item.get("task") == "verify"
        self._answer.visible = item["kind"] == "trajectory" and not verify
        self._type.visible = self._z.visible = item["kind"] == "trajectory" and verify
        head = (f"<div><b>{escape(item.get('object_id') or item['item_id'])}</b> "
                f"({escape(item.get('survey') or '?')}, {escape(item.get('task') or item['kind'])})<br>")
        if item["hidden"]:  # blind review (LabelService.sees_others): no label is seen before one's own
            where = "the Review tab" if item["kind"] == "trajectory" else "the VI form of the Review tab"
            self._detail.object = (head + f"<em>Reviewers disagree here. Their labels appear once you have "
                                   f"saved yours on this item (blind review): open it in {where}.</em></div>")
            return
        self._detail.object = (head + f"<small>{escape('; '.join(item.get('reasons') or []))}</small>"
                               f"{describe_labels(item.get('labels') or [])}</div>")

    @property
    def current(self):
        if self.selected is None or not (0 <= self.selected < len(self.items)):
            return None
        return self.items[self.selected]

    def open_current(self) -> None:
        item = self.current
        if item is not None and item["kind"] == "trajectory":
            self.state.open_item(trajectory_id=item["item_id"])
        elif item is not None:  # a VI conflict: the spectrum, whose VI form takes my label
            self.state.open_item(spectrum_id=item["item_id"])

    def submit(self):
        item = self.current
        if item is None:
            return
        action, label = self._action.value, None
        if item["kind"] == "spectrum":  # the merged VI fields: the first reviewer's, as a starting point
            first = (item.get("labels") or [{}])[0]
            action, label = None, {k: first.get(k) for k in ("quality", "issues", "z", "spectype")}
        elif action == "override":
            label = {"type": self._type.value, "z": self._z.value} if item.get("task") == "verify" \
                else {"answer": self._answer.value}
        if self.state.resolve_conflict(item, action, label, self._comment.value or None) is not None:
            self._comment.value = ""

    def __panel__(self):
        return pn.Column("### Conflicts", self._table, self._detail, self._open, self._action, self._answer,
                         pn.Row(self._type, self._z), self._comment, self._button, sizing_mode="stretch_width")
