"""Pairwise preference: this trajectory against another one of the same spectrum (win / tie / loss)."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer


def describe(row: dict) -> str:
    model = f" / {row['model']}" if row.get("model") else ""
    return f"{row['task']} · {row['agent_name']}/{row['backend']}{model} · {row.get('answer') or '?'} · {row['id'][:8]}"


class PreferenceForm(Viewer):
    other = param.Selector(default=None, objects=[None], allow_None=True, doc="id of the other trajectory")
    save = param.Callable(default=None, doc="(other_id, outcome) -> None")
    status = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self._other = pn.widgets.Select(label="Compare with", options={"(no other trajectory)": None},
                                        sizing_mode="stretch_width", css_classes=["sr-preference-other"])
        self._other.param.watch(lambda e: setattr(self, "other", e.new), "value")
        self._buttons = []
        for label, outcome in (("This one is better", "win"), ("Tie", "tie"), ("The other is better", "loss")):
            btn = pn.widgets.Button(label=label, button_type="light", css_classes=[f"sr-preference-{outcome}"])
            btn.on_click(lambda _, o=outcome: self.submit(o))
            self._buttons.append(btn)
        self._status = pn.pane.Str(self.param.status)

    def set_candidates(self, rows: list[dict], prefer_task: str | None = None) -> None:
        rows = sorted(rows, key=lambda r: (r["task"] != prefer_task, r["task"], str(r["created_at"])))
        options = {describe(r): r["id"] for r in rows} or {"(no other trajectory)": None}
        self.param.other.objects = list(options.values())
        self._other.options = options
        self._other.value = next(iter(options.values()))
        self.other = self._other.value
        self.status = ""

    def submit(self, outcome: str) -> None:
        if self.other and self.save:
            self.save(self.other, outcome)

    def __panel__(self):
        return pn.Column(self._other, pn.Row(*self._buttons), self._status, sizing_mode="stretch_width")
