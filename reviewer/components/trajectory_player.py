"""Plays a trajectory back: step list, player buttons (first / previous / play / next / last, speed),
the current step, and the whole trajectory as one scrolling transcript."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.safe_text import escape
from reviewer.components.step_view import StepView, step_html


def step_summary(step) -> str:
    if step.tool_name:
        return f"{step.tool_name} {step.tool_args or ''}"[:80]
    if step.verdict is not None:
        return f"{step.verdict.who}: {step.verdict.value}"[:80]
    if step.answer is not None:
        return ", ".join(f"{k}={v}" for k, v in step.answer.items() if k != "report")[:80]
    return (step.text or "").strip().replace("\n", " ")[:80]


class TrajectoryPlayer(Viewer):
    trajectory = param.Parameter(default=None, doc="agents.trajectory.Trajectory or None")
    step_index = param.Integer(default=0, bounds=(0, None))
    image_for = param.Callable(default=None, doc="(step) -> PNG bytes or None")

    def __init__(self, **params):
        super().__init__(**params)
        self._player = pn.widgets.Player(start=0, end=1, value=0, interval=1200, loop_policy="once",
                                         show_loop_controls=False, show_value=False, width=420,
                                         visible_buttons=["slower", "first", "previous", "pause", "play",
                                                          "next", "last", "faster"],
                                         css_classes=["sr-player"])
        self._player.param.watch(lambda e: self.go(e.new), "value")
        self._steps = pn.widgets.Tabulator(None, disabled=True, selectable=1, show_index=False, height=260,
                                           sizing_mode="stretch_width", css_classes=["sr-step-list"],
                                           layout="fit_data_stretch")
        self._steps.param.watch(self._on_step_click, "selection")
        self.view = StepView(image_for=self._image_in_view)
        self._header = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["sr-trajectory-head"])
        self._transcript = pn.Column(sizing_mode="stretch_width", css_classes=["sr-transcript"])
        self._tabs = pn.Tabs(("Step", pn.Column(self.view)), ("Transcript", self._transcript), dynamic=True,
                             sizing_mode="stretch_width")
        self._tabs.param.watch(self._maybe_fill_transcript, "active")
        self._load()

    def _image(self, step):
        return self.image_for(step) if self.image_for else None

    def _image_in_view(self, step):
        """The step's own render, else the latest render before it (what the agent is reasoning
        about), with the index of the step it belongs to. Keeping a picture on screen also keeps the
        page layout still from step to step."""
        for earlier in reversed(self.steps[: step.index + 1]):
            png = self._image(earlier)
            if png is not None:
                return png, earlier.index
        return None, None

    @property
    def steps(self):
        return self.trajectory.steps if self.trajectory is not None else []

    @property
    def current(self):
        steps = self.steps
        return steps[self.step_index] if steps else None

    # ---- navigation ---------------------------------------------------------------------------
    def go(self, index: int) -> None:
        n = len(self.steps)
        if n:
            self.step_index = max(0, min(int(index), n - 1))

    def next(self) -> None:
        self.go(self.step_index + 1)

    def previous(self) -> None:
        self.go(self.step_index - 1)

    def _on_step_click(self, event):
        if event.new:
            self.go(event.new[0])

    @param.depends("trajectory", watch=True)
    def _load(self):
        import pandas as pd
        steps = self.steps
        rows = [{"#": s.index + 1, "kind": s.kind, "summary": step_summary(s)} for s in steps]
        self._steps.value = pd.DataFrame(rows, columns=["#", "kind", "summary"])
        self._player.end = max(1, len(steps) - 1)
        self._player.disabled = len(steps) < 2
        traj = self.trajectory
        if traj is None:
            self._header.object = "<p><em>No trajectory for this spectrum.</em></p>"
        else:
            outcome = traj.outcome or {}
            shown = ", ".join(f"{escape(k)}: {escape(v)}" for k, v in outcome.items()
                              if k in ("answer", "prediction", "type", "redshift", "credibility", "format_correct",
                                       "status"))
            self._header.object = (f"<div><b>{escape(traj.task)}</b> · {escape(traj.agent.name)} / "
                                   f"{escape(traj.agent.backend)}{' / ' + escape(traj.agent.model) if traj.agent.model else ''}"
                                   f" · {len(steps)} steps<br><small>{shown}</small></div>")
        self._transcript.objects = []
        self.step_index = 0
        self._show()

    @param.depends("step_index", watch=True)
    def _show(self):
        steps = self.steps
        self.view.param.update(step=self.current, total=len(steps))
        if steps:
            if self._player.value != self.step_index:
                self._player.value = self.step_index
            if self._steps.selection != [self.step_index]:
                self._steps.selection = [self.step_index]

    def _maybe_fill_transcript(self, event=None):
        # Built only when opened: a long trajectory with many renders costs nothing until read.
        if self._tabs.active == 1 and not self._transcript.objects and self.steps:
            items = []
            for step in self.steps:
                items.append(pn.pane.HTML(step_html(step, len(self.steps)), sizing_mode="stretch_width"))
                png = self._image(step)
                if png is not None:
                    items.append(pn.pane.PNG(png, sizing_mode="scale_width", max_width=720))
            self._transcript.objects = items

    def __panel__(self):
        return pn.Column(self._header, self._player, self._steps, self._tabs, sizing_mode="stretch_width")
