"""Redshift candidates and the marked line: a list of the item's candidates (reviewer.services.candidates) to
choose from, and Marz's way to set z (shift-click a feature on the plot, say which line it is).
Choosing sets the review state's candidate: the frame follows its z, the plot draws its template, a
verify item's corrected label starts from it."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from agents.tools.lines import lines_for
from reviewer.components.panes import TextHTML
from reviewer.components.row_table import RowTable
from reviewer.components.safe_text import escape
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.review_state import ReviewState
from reviewer.services.candidates import redshift_candidates, z_from_marked_line

SCORE_HELP = ("FORMA's score of a hypothesis: 100 / (1 + Δχ²), Δχ² being its χ² above the best template "
              "fit's (scaled by that fit's reduced χ²). 100: the best fit; 50: Δχ² = 1; 1: Δχ² ≈ 99. A line-match "
              "hypothesis (no template) scores at most 1. The agent's answer and the pipeline's have none.")
DCHI2_HELP = "Δχ²: the hypothesis's χ² above the best template fit (0 for the best; a few units or more is a clear loser)"
COLUMNS = [{"key": "z", "title": "z", "width": 70}, {"key": "class", "title": "Class", "width": 62},
           {"key": "score", "title": "Score", "width": 48, "description": SCORE_HELP},
           {"key": "dchi2", "title": "Δχ²", "width": 52, "description": DCHI2_HELP},
           {"key": "source", "title": "From", "width": None}]


def dchi2_text(value) -> str:
    return "" if value is None else f"{float(value):.0f}" if float(value) >= 10 else f"{float(value):.1f}"


class CandidatesView(Viewer):
    state = param.ClassSelector(class_=ReviewState)
    plot = param.ClassSelector(class_=SpectrumPlot)
    candidates = param.List(default=[])

    def __init__(self, **params):
        super().__init__(**params)
        self._table = RowTable(columns=COLUMNS, key_column="key", sizing_mode="stretch_width", height=170,
                               css_classes=["sr-candidates"])
        self._table.on_click(self.choose)
        self._detail = TextHTML("", sizing_mode="stretch_width", css_classes=["sr-candidate-detail"])
        self._hide = pn.widgets.Button(label="Hide the model", color="light", css_classes=["sr-candidate-hide"],
                                       description="Stop drawing the template (the frame keeps its z)")
        self._hide.on_click(lambda _: self.state.choose_candidate(None))
        self._marked = TextHTML("<em>Shift-click a feature on the plot to mark it.</em>",
                                sizing_mode="stretch_width", css_classes=["sr-marked"])
        self._line = pn.widgets.Select(label="Which line is it?", options={}, css_classes=["sr-mark-line"], width=220)
        self._set_z = pn.widgets.Button(label="Set z from this line", color="primary", disabled=True,
                                        css_classes=["sr-mark-apply"], description="z = marked / rest - 1")
        self._set_z.on_click(lambda _: self.set_z_from_mark())
        self.state.param.watch(self._refresh, "item")
        self.state.frame.param.watch(self._show_chosen, "candidate")
        self.plot.param.watch(self._show_mark, "marked_x")
        self._line.param.watch(self._show_mark, "value")
        self._refresh()

    def object_class(self) -> str:
        chosen = self.state.frame.candidate or {}
        item = self.state.item
        label = item.agent_label if item is not None else {}
        record = item.record if item is not None else {}
        return str(chosen.get("class") or label.get("type") or record.get("pipeline_class") or "").upper()

    def _refresh(self, *_):
        self.candidates = redshift_candidates(self.state.item)
        self._table.rows = [{"key": c["key"], "z": f"{c['z']:.5f}", "class": c["class"],
                             "score": "" if c.get("score") is None else f"{float(c['score']):.0f}",
                             "dchi2": dchi2_text(c.get("dchi2")), "source": c["source"]} for c in self.candidates]
        cls = self.object_class()
        sub = str((self.state.item.record or {}).get("pipeline_subclass") or "") if self.state.item else ""
        # no line chosen on a new item: the previous item's choice would name a line of another spectrum
        self._line.param.update(options={"(choose the line)": None, **{
            f"{ln['name']} ({ln['wave']:.1f} Å)": ln["wave"] for ln in lines_for(cls, sub) if ln["kind"] != "sky"}},
            value=None)
        self.plot.marked_x = None
        self._show_chosen()

    def choose(self, key: str) -> None:
        found = next((c for c in self.candidates if c["key"] == key), None)
        if found is not None:
            self.state.choose_candidate(found)

    def _show_chosen(self, *_):
        chosen = self.state.frame.candidate
        keys = [c["key"] for c in self.candidates]
        self._table.selected = keys.index(chosen["key"]) if chosen and chosen.get("key") in keys else None
        if not chosen:
            self._detail.object = "<em>Choose a candidate to draw its template and take its z.</em>"
            return
        lines = f"<br>{escape(chosen['lines'])}" if chosen.get("lines") else ""
        if chosen.get("score") is not None:
            dchi2 = f", Δχ² {dchi2_text(chosen['dchi2'])}" if chosen.get("dchi2") is not None else ""
            lines = f"<br>score {float(chosen['score']):.0f} (100 / (1 + Δχ²)){dchi2}{lines}"
        self._detail.object = (f"<b>{escape(chosen['class'])} at z = {float(chosen['z']):.5f}</b> "
                               f"({escape(chosen['source'])}): the model is drawn, the frame uses this z{lines}")

    def _show_mark(self, *_):
        x = self.plot.marked_x
        self._set_z.disabled = x is None or self._line.value is None
        self._marked.object = ("<em>Shift-click a feature on the plot to mark it.</em>" if x is None else
                               f"Marked <b>{x:.1f} Å</b> (observed): which line is it?")

    def set_z_from_mark(self) -> None:
        x, rest = self.plot.marked_x, self._line.value
        if x is None or rest is None:
            return
        z = z_from_marked_line(x, rest)
        name = next((k for k, v in self._line.options.items() if v == rest), "line")
        self.state.choose_candidate({"key": f"marked:{z:.6f}", "z": z, "class": self.object_class() or "GALAXY",
                                     "source": f"marked {name} at {x:.1f} Å"})

    def __panel__(self):
        return pn.Column("### Redshift candidates", self._table, self._detail, self._hide,
                         "### Mark a line", self._marked, self._line, self._set_z, sizing_mode="stretch_width")
