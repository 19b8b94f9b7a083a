"""Pairwise preference: this trajectory against another one of the same spectrum (win / tie / loss)."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer


def describe(row: dict) -> str:
    model = f" / {row['model']}" if row.get("model") else ""
    return f"{row['task']} · {row['agent_name']}/{row['backend']}{model} · {row.get('answer') or '?'} · {row['id'][:8]}"


class PreferenceForm(Viewer):
    state = param.Parameter()

    def __init__(self, **params):
        super().__init__(**params)
        self._other = pn.widgets.Select(label="Compare with", options={"(no other trajectory)": None},
                                        sizing_mode="stretch_width", css_classes=["sr-preference-other"])
        self._buttons = []
        for label, outcome in (("This one is better", "win"), ("Tie", "tie"), ("The other is better", "loss")):
            btn = pn.widgets.Button(label=label, button_type="light", css_classes=[f"sr-preference-{outcome}"])
            btn.on_click(lambda _, o=outcome: self.state.save_preference(self._other.value, o))
            self._buttons.append(btn)
        self.state.param.watch(self._load, "item")
        self._load()

    def _load(self, *_):
        item = self.state.item
        traj = item.trajectory if item is not None else None
        rows = [r for r in self.state.store.trajectories.trajectories_on_spectrum(item.spectrum_id)
                if traj is None or r["id"] != traj.id] if item is not None else []
        task = traj.task if traj is not None else None
        rows = sorted(rows, key=lambda r: (r["task"] != task, r["task"], str(r["created_at"])))
        options = {describe(r): r["id"] for r in rows} or {"(no other trajectory)": None}
        self._other.options = options
        self._other.value = next(iter(options.values()))
        for btn in self._buttons:
            btn.disabled = traj is None or not rows

    def __panel__(self):
        return pn.Column(self._other, pn.Row(*self._buttons), sizing_mode="stretch_width")
