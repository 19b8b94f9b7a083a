"""The Conflicts tab: items where reviewers disagree (the same stored consensus the queue's ≠ shows),
each reviewer's label, and the merger's resolution with a corrected label from the task's answer set."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.next_tick import refresh_after_labels
from reviewer.components.panes import TextHTML
from reviewer.components.row_table import RowTable
from reviewer.components.safe_text import escape
from reviewer.components.z_input import ZInput
from reviewer.review_state import ReviewState
from reviewer.services.conflicts import disputed_choices
from reviewer.services.consensus import describe_label
from reviewer.services.labels import VERDICT_KINDS, VERIFY_TYPES, LabelRefused

CONFLICT_COLUMNS = {"object": "Object", "kind": "Kind", "task": "Task", "reviewers": "Reviewers", "why": "Why"}
# blind review (LabelService.sees_others): a conflict is listed only to a reviewer who labelled its item
BLIND_SCOPE = " among the items you have labelled (blind review)"
CONFLICT_WIDTHS = {"object": 150, "kind": 70, "task": 50, "reviewers": 70}
# conflicts shown at once, oldest first: a merger works from the oldest, and a table of every
# conflict of a million trajectories is neither read nor sent to a browser
CONFLICT_PAGE = 200


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


def comment_given(value: str, typed: str) -> bool:
    return bool((typed or value or "").strip())


class ConflictQueue(Viewer):
    state = param.ClassSelector(class_=ReviewState)
    items = param.List(default=[], doc="the conflicts of the page shown")
    page = param.Integer(default=0, bounds=(0, None), doc="which CONFLICT_PAGE conflicts, oldest first")
    total = param.Integer(default=0, doc="how many conflicts there are")
    selected = param.Integer(default=None, allow_None=True)
    choices = param.List(default=[],
                         doc="the disputed labels of the conflict shown (reviewer.services.conflicts.disputed_choices)")

    def __init__(self, **params):
        super().__init__(**params)
        self._table = RowTable(columns=[{"key": k, "title": t, "width": CONFLICT_WIDTHS.get(k)}
                                        for k, t in CONFLICT_COLUMNS.items()],
                               key_column="key", sizing_mode="stretch_width", height=220,
                               css_classes=["sr-conflict-table"])
        self._table.on_click(self._choose)
        self._detail = TextHTML("", sizing_mode="stretch_width", css_classes=["sr-conflict-detail"])
        self._open = pn.widgets.Button(label="Open in the Review tab", color="light", css_classes=["sr-conflict-open"],
                                       description="Open this conflict's item in the Review tab (to see it, or to "
                                                   "save your own label on it first).")
        self._open.on_click(lambda _: self.open_current())
        self._who = TextHTML("", css_classes=["sr-resolve-who"], sizing_mode="stretch_width")
        self._start = pn.widgets.Select(label="Start from a disputed label", options={}, sizing_mode="stretch_width",
                                        css_classes=["sr-resolve-start"])
        self._start.param.watch(lambda e: self._apply_choice(e.new), "value")
        self._action = pn.widgets.RadioButtonGroup(options=["approve", "override", "reject"], value="approve",
                                                   color="light", css_classes=["sr-resolve-action"])
        self._answer = pn.widgets.RadioButtonGroup(options=["YES", "NO"], value=None, color="light",
                                                   label="Corrected answer", css_classes=["sr-resolve-answer"])
        self._type = pn.widgets.Select(options=list(VERIFY_TYPES), label="Corrected type", width=130,
                                       css_classes=["sr-resolve-type"])
        self._z = ZInput(label="Corrected z", format="0.00000", width=120, start=-0.01, end=12,
                                        css_classes=["sr-resolve-z"])
        self._action.param.watch(lambda _: self._show_fields(), "value")
        self._comment = pn.widgets.TextAreaInput(label="Merger's comment (required)", height=60, max_length=2000,
                                                 placeholder="Why this label wins", css_classes=["sr-merger-comment"])
        # Resolve waits for a comment (the label service refuses a resolution without one)
        self._button = pn.widgets.Button(
            label="Resolve", color="primary", css_classes=["sr-resolve"],
            disabled=pn.bind(lambda value, typed: not comment_given(value, typed), self._comment.param.value,
                             self._comment.param.value_input),
            description="Store the merger's resolution: the label above, with your comment saying why it wins.")
        self._button.on_click(lambda _: self.submit())
        self._count = TextHTML("", css_classes=["sr-conflict-count"], sizing_mode="stretch_width")
        self._newer = pn.widgets.Button(label="Newer ›", color="light", css_classes=["sr-conflict-newer"],
                                        disabled=True, description="The next conflicts, less old.")
        self._older = pn.widgets.Button(label="‹ Older", color="light", css_classes=["sr-conflict-older"],
                                        disabled=True, description="The conflicts before these, older.")
        self._newer.on_click(lambda _: setattr(self, "page", self.page + 1))
        self._older.on_click(lambda _: setattr(self, "page", max(0, self.page - 1)))
        self.param.watch(self.refresh, "page")
        self.state.param.watch(self.refresh, ["campaign", "reviewer", "blind"])
        # after a verdict while the tab is on screen (a hidden tab re-reads when it is opened again: at
        # 1M trajectories a refresh is ~0.2 s of the server's time, after every `a` in the Review tab)
        refresh_after_labels(self.state, VERDICT_KINDS, self._refresh_if_shown)
        self._show()  # "no open conflicts" (and, blind, among which items) before the first read finds none

    def _refresh_if_shown(self) -> None:
        if self.state.main_tab in (None, "conflicts"):
            self.refresh()

    def refresh(self, *_):
        state = self.state
        # the conflicts this reviewer may see (blind review: only those they have labelled, counted as such)
        found, total = state.labels.conflict_page(state.reviewer, state.blind, session=state.session_id,
                                                  offset=self.page * CONFLICT_PAGE, limit=CONFLICT_PAGE)
        last = max(0, (total - 1) // CONFLICT_PAGE)
        if self.page > last:  # resolved down to fewer pages: the last one (its watcher reads it)
            self.page = last
            return
        first = self.page * CONFLICT_PAGE
        self.total = total
        self._count.object = (f"<small>{first + 1:,}-{first + len(found):,} of {total:,} open conflicts, oldest "
                              f"first{BLIND_SCOPE if state.blind else ''}</small>" if total else "")
        self._older.disabled, self._newer.disabled = self.page == 0, self.page >= last
        self.items = found

    def _rows(self) -> list[dict[str, str]]:
        return [{"key": _key(i), "object": f"{i.get('object_id') or '?'} · {i.get('survey') or '?'}",
                 "kind": i["kind"], "task": i.get("task") or "", "reviewers": str(i["n_labels"]),
                 "why": "; ".join(i.get("reasons") or [])} for i in self.items]

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
        self.choices = disputed_choices(item) if item is not None else []
        self._start_form(item)
        self._who.object = self._who_text(item)
        if item is None:
            self._detail.object = f"<p><em>No open conflicts{BLIND_SCOPE if self.state.blind else ''}.</em></p>"
            return
        head = (f"<div><b>{escape(item.get('object_id') or item['item_id'])}</b> "
                f"({escape(item.get('survey') or '?')}, {escape(item.get('task') or item['kind'])})<br>")
        self._detail.object = (head + f"<small>{escape('; '.join(item.get('reasons') or []))}</small>"
                               f"{describe_labels(item.get('labels') or [])}</div>")

    # ---- the resolution form ------------------------------------------------------------------
    def _start_form(self, item) -> None:
        """The form starts from the disputed labels: the first one chosen (its action), and the corrected
        label fields at the first disputed correction (else the agent's answer), never at a default."""
        self._start.options = {c["text"]: i for i, c in enumerate(self.choices)}
        self._start.visible = bool(self.choices)
        self._action.visible = item is not None and item["kind"] == "trajectory"
        if self.choices:
            self._start.value = 0
            self._apply_choice(0)
            correction = next((c for c in self.choices if c["action"] == "override"), None)
            if correction is not None:
                self._fill(correction["label"])
        else:
            self._action.value = "approve"
            self._fill({})
        self._show_fields()

    def _fill(self, label: dict) -> None:
        self._answer.value = label.get("answer")
        self._type.value = label.get("type") if label.get("type") in VERIFY_TYPES else None
        self._z.value = label.get("z")

    def _apply_choice(self, index) -> None:
        if index is None or not 0 <= index < len(self.choices):
            return
        choice = self.choices[index]
        if choice["label"]:
            self._fill(choice["label"])
        self._action.value = choice["action"]

    def _show_fields(self) -> None:
        item = self.current
        override = item is not None and item["kind"] == "trajectory" and self._action.value == "override"
        verify = item is not None and item.get("task") == "verify"
        self._answer.visible = override and not verify
        self._type.visible = self._z.visible = override and verify

    def _who_text(self, item) -> str:
        state = self.state
        rule = state.labels.who_may_resolve(state.campaign, state.blind)
        mine = ""
        if item is not None:
            try:
                state.labels.check_resolver(state.reviewer, item, state.campaign, state.blind)
                mine = "You may resolve this one."
            except LabelRefused as err:
                mine = f"You cannot resolve this one yet: {err}"
        return f"<small class='sr-resolve-rule'>{escape(rule)} <b>{escape(mine)}</b></small>"

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
            return None
        action, label = self._action.value, None
        if item["kind"] == "spectrum":  # the merged VI fields: the first reviewer's, as a starting point
            first = (item.get("labels") or [{}])[0]
            action, label = None, {k: first.get(k) for k in ("quality", "issues", "z", "spectype")}
        elif action == "override":
            label = {"type": self._type.value, "z": self._z.value} if item.get("task") == "verify" \
                else {"answer": self._answer.value}
        comment = (self._comment.value_input or self._comment.value or "").strip() or None
        ack = self.state.writer.save("resolution", item=item, action=action, label=label, comment=comment)
        if ack is not None:
            self._comment.param.update(value="", value_input="")
        return ack

    def __panel__(self):
        return pn.Column("### Conflicts", pn.Row(self._count, self._older, self._newer, sizing_mode="stretch_width"),
                         self._table, self._detail, self._open, "#### Resolve", self._who,
                         self._start, self._action, self._answer, pn.Row(self._type, self._z), self._comment,
                         self._button, sizing_mode="stretch_width")
