"""Pairwise preference: this trajectory against another one of the same task on the same spectrum or
on another spectrum of the same object (win / tie / loss); trajectories of other tasks answer other
questions and are not offered."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.review_state import ReviewState
from reviewer.services.same_object import trajectories_of_object


def describe(row: dict) -> str:
    model = f" / {row['model']}" if row.get("model") else ""
    where = f" · other spectrum: {row['elsewhere']}" if row.get("elsewhere") else ""
    return (f"{row['task']} · {row['agent_name']}/{row['backend']}{model} · {row.get('answer') or '?'} · "
            f"{row['id'][:8]}{where}")


NONE = "(no other trajectory of this task on this spectrum or object)"


class PreferenceForm(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._other = pn.widgets.Select(label="Compare with (same task, this spectrum or object)", options={NONE: None},
                                        sizing_mode="stretch_width", css_classes=["sr-preference-other"])
        self._buttons = []
        for label, outcome, tip in (
                ("This one is better", "win", "Save a preference: the trajectory on screen is better than the chosen one."),
                ("Tie", "tie", "Save a preference: the two trajectories are equally good."),
                ("The other is better", "loss", "Save a preference: the chosen trajectory is better than the one on screen.")):
            btn = pn.widgets.Button(label=label, color="light", css_classes=[f"sr-preference-{outcome}"],
                                    description=tip)
            btn.on_click(lambda _, o=outcome: self.state.writer.save("preference", other_id=self._other.value, outcome=o))
            self._buttons.append(btn)
        self.state.param.watch(self._load, "item")
        self._load()

    def _load(self, *_):
        item = self.state.item
        traj = item.trajectory if item is not None else None
        rows = [r for r in self._candidates(item.spectrum_id) if r["id"] != traj.id and r["task"] == traj.task] \
            if traj is not None else []
        options = {describe(r): r["id"] for r in rows} or {NONE: None}
        self._other.options = options
        self._other.value = next(iter(options.values()))
        for btn in self._buttons:
            btn.disabled = traj is None or not rows

    def _candidates(self, spectrum_id: str) -> list[dict]:
        """Trajectories on this spectrum, then on the object's other spectra (other epochs, surveys)."""
        return trajectories_of_object(self.state.store, spectrum_id)

    def __panel__(self):
        # wrapping: three buttons in one row ran past the right column's edge at 1440x900
        return pn.Column(self._other, pn.FlexBox(*self._buttons, flex_wrap="wrap", sizing_mode="stretch_width"),
                         sizing_mode="stretch_width")
