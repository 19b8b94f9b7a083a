"""Stats plots whose points are items (issue 47, item 7): a box (or a click) over points filters the queue to
those items. Two plots of reviewer.services.stats_selection: each gold verdict of the campaign by reviewer
and outcome (a box over one reviewer's "missed" row: their misses on gold), and each trajectory a judge and
people scored by how far apart they are and the trajectory's credibility (a box over the LOW row, right of
2: low credibility with judge-human disagreement).

HoloViews earns its place here: a Points element in a DynamicMap fed by a Pipe stream, with a Selection1D
stream on it (HoloViews links the Bokeh box-select and tap tools to it), rendered by Panel's HoloViews pane with
the Bokeh backend; new data goes through the pipe, which patches the plot's source (the figure is made once).
A selection sets `QueueFilters.select` with the selected points' trajectory ids (at most
reviewer.store.queue.MAX_SELECTED_IDS); an empty selection (a click beside the points, new data) leaves the
queue's filter as it is: the queue's chip removes it. Reviewer and judge names reach the page as Bokeh
text (tick labels, drawn) and hover fields (escaped by Bokeh)."""
from __future__ import annotations

import zlib

import holoviews as hv
import holoviews.plotting.bokeh  # the Bokeh backend HoloViews renders with
import pandas as pd
import panel as pn
from holoviews import streams

from reviewer.components.next_tick import held
from reviewer.components.stats_figures import H, W
from reviewer.services.stats_selection import CREDIBILITY_ROWS, GOLD_OUTCOMES

JITTER = 0.3  # half the width of a row or column the points of one cell spread over
OUTCOME_COLORS = {"right": "#2ca02c", "missed": "#d62728", "rejected": "#7f7f7f"}
CREDIBILITY_COLORS = {"HIGH": "#1f77b4", "MEDIUM": "#ff7f0e", "LOW": "#d62728", "none": "#7f7f7f"}
GOLD_TITLE = "Gold verdicts per reviewer: select to list"  # short: the title is cut at the frame's width
JUDGE_TITLE = "Judge against people, by credibility: select to list"


def jitter(trajectory_id: str, axis: str) -> float:
    """A point's fixed offset in its cell along `axis`, from its id: the same place at every refresh and on
    every page."""
    return (zlib.crc32(f"{axis}:{trajectory_id}".encode()) / 0xFFFFFFFF - 0.5) * 2 * JITTER


def _offsets(frame: pd.DataFrame, axis: str) -> pd.Series:
    return frame["trajectory_id"].map(lambda t: jitter(t, axis)).astype(float)


class SelectablePoints:
    """One plot of points, each an item: `show(frame)` replaces its points (the frame needs x, y, color and
    trajectory_id), `selection` is its Selection1D stream, and a selection calls `on_select(ids)`."""

    def __init__(self, title: str, hover: list[str], xlabel: str, ylabel: str, on_select):
        self.frame = pd.DataFrame(columns=["x", "y", "color", "trajectory_id", *hover])
        self._hover, self._labels, self._title = hover, (xlabel, ylabel), title
        self._ticks: dict = {}
        self._pipe = streams.Pipe(data=self.frame)
        self.dmap = hv.DynamicMap(self._points, streams=[self._pipe])
        self.selection = streams.Selection1D(source=self.dmap)
        self.selection.add_subscriber(self._selected)
        self._on_select = on_select
        self.pane = pn.pane.HoloViews(self.dmap, backend="bokeh", css_classes=["sr-stats-plot", "sr-stats-select"],
                                      visible=False)

    def _points(self, data: pd.DataFrame):
        points = hv.Points(data, kdims=["x", "y"], vdims=["color", "trajectory_id", *self._hover])
        return points.opts(color="color", size=7, width=W, height=H, title=self._title, xlabel=self._labels[0],
                           ylabel=self._labels[1], tools=["box_select", "tap", "hover"], active_tools=["box_select"],
                           nonselection_alpha=0.25, toolbar="above", **self._ticks)

    def show(self, frame: pd.DataFrame, xticks: list, yticks: list, xlim: tuple, ylim: tuple) -> bool:
        """The points of `frame` on the plot (the previous ones replaced); whether there were any."""
        self.frame = frame.reset_index(drop=True)
        # no ticks given (no points): HoloViews' own (an empty list of ticks is not one it takes)
        self._ticks = {"xlim": xlim, "ylim": ylim, **({"xticks": xticks} if xticks else {}),
                       **({"yticks": yticks} if yticks else {})}
        self._pipe.send(self.frame)
        self.pane.visible = not self.frame.empty
        return not self.frame.empty

    def _selected(self, index: list[int]) -> None:
        ids = [self.frame["trajectory_id"].iat[i] for i in index if 0 <= i < len(self.frame)]
        if ids:
            self._on_select(ids)


class SelectionPlots:
    """The two plots, bound to the review state's queue filters."""

    def __init__(self, state):
        self.state = state
        self.gold = SelectablePoints(GOLD_TITLE, ["reviewer", "outcome", "task", "nth"], "reviewer", "",
                                     self._select)
        self.judge = SelectablePoints(JUDGE_TITLE, ["judge", "judge_score", "people", "credibility"],
                                      "|judge - people's median| (0-5 rubric)", "credibility", self._select)

    @held
    def _select(self, ids: list[str]) -> None:
        self.state.filters.select(ids)

    def show(self, gold: list[dict], judged: list[dict]) -> tuple[bool, bool]:
        """The points of reviewer.services.stats_selection (gold_points, judge_points); whether each plot has any."""
        return self._show_gold(gold), self._show_judge(judged)

    def _show_gold(self, points: list[dict]) -> bool:
        frame = pd.DataFrame(points, columns=["reviewer", "trajectory_id", "task", "outcome", "nth"])
        people = sorted(frame["reviewer"].unique())
        column, row = {p: i for i, p in enumerate(people)}, {o: -i for i, o in enumerate(GOLD_OUTCOMES)}
        frame = frame.assign(x=frame["reviewer"].map(column) + _offsets(frame, "x"),
                             y=frame["outcome"].map(row) + _offsets(frame, "y"), color=frame["outcome"].map(OUTCOME_COLORS))
        return self.gold.show(frame, [(i, p) for p, i in column.items()], [(y, o) for o, y in row.items()],
                              (-0.5, max(len(people), 1) - 0.5), (-len(GOLD_OUTCOMES) + 0.5, 0.5))

    def _show_judge(self, points: list[dict]) -> bool:
        frame = pd.DataFrame(points, columns=["trajectory_id", "judge", "judge_score", "people", "disagreement",
                                              "credibility"])
        row = {c: -i for i, c in enumerate(CREDIBILITY_ROWS)}
        frame = frame.assign(x=frame["disagreement"].astype(float) + _offsets(frame, "x") * 0.25,
                             y=frame["credibility"].map(row) + _offsets(frame, "y"),
                             color=frame["credibility"].map(CREDIBILITY_COLORS))
        return self.judge.show(frame, [0, 1, 2, 3, 4, 5], [(y, c) for c, y in row.items()], (-0.25, 5.25),
                               (-len(CREDIBILITY_ROWS) + 0.5, 0.5))
