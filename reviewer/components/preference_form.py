"""Pairwise preference: this trajectory against another one of the same task on the same spectrum
(win / tie / loss); trajectories of other tasks answer other questions and are not offered."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer


def describe(row: dict) -> str:
    model = f" / {row['model']}" if row.get("model") else ""
    return f"{row['task']} · {row['agent_name']}/{row['backend']}{model} · {row.get('answer') or '?'} · {row['id'][:8]}"


NONE = "(no other trajectory of this task on this spectrum)"


class PreferenceForm(Viewer):
    state = param.Parameter()

    def __init__(self, **params):
        super().__init__(**params)
        self._other = pn.widgets.Select(label="Compare with (same task)", options={NONE: None},
                                        sizing_mode="stretch_width", css_classes=["sr-preference-other"])
        self._buttons = []
        for label, outcome, tip in (
                ("This one is better", "win", "Save a preference: the trajectory on screen is better than the chosen one."),
                ("Tie", "tie", "Save a preference: the two trajectories are equally good."),
                ("The other is better", "loss", "Save a preference: the chosen trajectory is better than the one on screen.")):
            btn = pn.widgets.Button(label=label, button_type="light", css_classes=[f"sr-preference-{outcome}"],
                                    description=tip)
            btn.on_click(lambda _, o=outcome: self.state.save_preference(self._other.value, o))
            self._buttons.append(btn)
        self.state.param.watch(self._load, "item")
        self._load()

    def _load(self, *_):
        item = self.state.item
        traj = item.trajectory if item is not None else None
        rows = [r for r in self.state.store.trajectories.trajectories_on_spectrum(item.spectrum_id)
                if r["id"] != traj.id and r["task"] == traj.task] if traj is not None else []
        options = {describe(r): r["id"] for r in rows} or {NONE: None}
        self._other.options = options
        self._other.value = next(iter(options.values()))
        for btn in self._buttons:
            btn.disabled = traj is None or not rows

    def __panel__(self):
        return pn.Column(self._other, pn.Row(*self._buttons), sizing_mode="stretch_width")
