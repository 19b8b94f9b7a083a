"""The Stats tab's plots, each a Bokeh figure made once and refilled in place: a refresh replaces the
data of its sources (and the factors of its categorical axes), so the browser redraws data instead
of receiving new plots. Building the plots anew on every refresh (through HoloViews) cost ~1 s of the
tab's first second at 100k trajectories (docs/benchmarks.md, issue 22). Fixed-size frames, legends
beside or under the frame (never over the data), one plot per row of the centre column at 1440 px.

Each figure's `update` takes the numbers of reviewer.services.stats / triage and returns whether there
was anything to draw; the tab says why in the plot's place when there was not."""
from __future__ import annotations

import numpy as np
import pandas as pd
from bokeh.models import ColorBar, ColumnDataSource, FactorRange, HoverTool, Legend, LegendItem, LinearColorMapper, Range1d, Span
from bokeh.palettes import Category10_10, RdBu11
from bokeh.plotting import figure

W, H = 560, 250  # the plot's frame and its legend: the centre column is ~640 px at 1440x900
LEGEND_ROW_PX = 20  # the calibration plot grows by this per row of its legend (under the frame)
CALIBRATION_TITLE = "Accuracy by review priority (95% interval)"


def _figure(title: str, **kw):
    fig = figure(title=title, width=W, height=H, toolbar_location="above", tools="pan,wheel_zoom,box_zoom,reset,save",
                 **kw)
    fig.xgrid.grid_line_color = None
    return fig


def _legend(fig, renderer, field_name: str, place: str = "right", columns: int = 1) -> None:
    """A legend with one entry per value of the source's column, beside (or under) the frame."""
    legend = Legend(items=[LegendItem(label={"field": field_name}, renderers=[renderer])],
                    label_text_font_size="8pt", padding=4, spacing=0, location="top_left",
                    **({"ncols": columns} if columns > 1 else {}))
    fig.add_layout(legend, place)


def _colors(keys) -> dict:
    return {k: Category10_10[i % len(Category10_10)] for i, k in enumerate(keys)}


def _hover(fig, renderer, tooltips) -> None:
    fig.add_tools(HoverTool(renderers=[renderer], tooltips=tooltips))


def _columns(frame: pd.DataFrame) -> dict:
    return {c: frame[c].tolist() for c in frame.columns}


class RatingFigures:
    """Rating distribution per rater (grouped bars) and its CDF per rater (steps)."""

    def __init__(self):
        self.bars = _figure("Rating distribution per rater", x_range=FactorRange(), y_range=Range1d(0, 1))
        self._bars = ColumnDataSource({"x": [], "count": [], "rater": [], "color": []})
        r = self.bars.vbar(x="x", top="count", width=0.9, fill_color="color", line_color=None, source=self._bars)
        _legend(self.bars, r, "rater")
        _hover(self.bars, r, [("rater", "@rater"), ("count", "@count")])
        self.bars.xaxis.axis_label, self.bars.yaxis.axis_label = "score", "count"
        self.bars.xaxis.major_label_text_font_size = "0pt"  # the rater under each bar: the legend says it
        self.cdf = _figure("Rating CDF per rater", x_range=Range1d(-0.25, 5.25), y_range=Range1d(0, 1.02))
        self._cdf = ColumnDataSource({"xs": [], "ys": [], "rater": [], "color": []})
        r = self.cdf.multi_line(xs="xs", ys="ys", line_color="color", line_width=2, source=self._cdf)
        _legend(self.cdf, r, "rater")
        self.cdf.xaxis.axis_label, self.cdf.yaxis.axis_label = "score", "fraction ≤ score"

    def update(self, distributions: dict) -> bool:
        colors = _colors(distributions)
        rank = {r: i for i, r in enumerate(distributions)}
        rows = sorted(((str(s), r, c) for r, d in distributions.items() for s, c in d["counts"].items()),
                      key=lambda t: (float(t[0]), rank[t[1]]))
        self.bars.x_range.factors = [(s, r) for s, r, _ in rows]
        self.bars.y_range.end = max([c for *_, c in rows], default=0) * 1.08 + 1
        self._bars.data = {"x": [(s, r) for s, r, _ in rows], "count": [c for *_, c in rows],
                           "rater": [r for _, r, _ in rows], "color": [colors[r] for _, r, _ in rows]}
        xs, ys = [], []
        for d in distributions.values():  # a step after each score ("steps-post")
            x, y = np.asarray(d["cdf"]["x"], float), np.asarray(d["cdf"]["y"], float)
            xs.append([*np.repeat(x, 2)[1:].tolist(), float(x[-1]) + 0.25])
            ys.append(np.repeat(y, 2).tolist())
        self._cdf.data = {"xs": xs, "ys": ys, "rater": list(distributions), "color": [colors[r] for r in distributions]}
        return bool(rows)


class CorrelationFigure:
    """Spearman's rho between raters, a heat map over every ordered pair."""

    def __init__(self):
        self.fig = _figure("Spearman correlation between raters", x_range=FactorRange(), y_range=FactorRange())
        self._source = ColumnDataSource({"a": [], "b": [], "spearman": [], "n_shared": []})
        mapper = LinearColorMapper(palette=RdBu11, low=-1, high=1, nan_color="lightgrey")
        r = self.fig.rect(x="a", y="b", width=1, height=1, source=self._source, line_color="white",
                          fill_color={"field": "spearman", "transform": mapper})
        self.fig.add_layout(ColorBar(color_mapper=mapper, width=10), "right")
        _hover(self.fig, r, [("raters", "@a / @b"), ("Spearman", "@spearman{0.000}"), ("shared", "@n_shared")])

    def update(self, corr: pd.DataFrame) -> bool:
        if corr.empty or corr["spearman"].isna().all():
            return False
        both = pd.concat([corr.rename(columns={"rater_a": "a", "rater_b": "b"}),
                          corr.rename(columns={"rater_a": "b", "rater_b": "a"})])[["a", "b", "spearman", "n_shared"]]
        raters = sorted(set(both["a"]) | set(both["b"]))
        self.fig.x_range.factors, self.fig.y_range.factors = raters, raters
        self._source.data = _columns(both.astype({"spearman": float}))
        return True


class ScoresFigure:
    """Accuracy and F1 per task against the human labels, grouped bars."""

    METRICS = ("accuracy", "f1")

    def __init__(self):
        self.fig = _figure("Accuracy and F1 per task (vs human labels)", x_range=FactorRange(),
                           y_range=Range1d(0, 1))
        self._source = ColumnDataSource({"x": [], "value": [], "metric": [], "color": []})
        r = self.fig.vbar(x="x", top="value", width=0.9, fill_color="color", line_color=None, source=self._source)
        _legend(self.fig, r, "metric")
        _hover(self.fig, r, [("task, metric", "@x"), ("value", "@value{0.000}")])
        self.fig.xaxis.major_label_text_font_size = "0pt"  # the metric under each bar: the legend says it
        self.fig.xaxis.axis_label = "task"

    def update(self, scores: pd.DataFrame) -> bool:
        if scores.empty:
            return False
        colors = _colors(self.METRICS)
        x = [(str(t), m) for t in scores["task"] for m in self.METRICS]
        values = [float(v) if pd.notna(v) else np.nan for _, row in scores.iterrows() for v in row[list(self.METRICS)]]
        self.fig.x_range.factors = x
        self._source.data = {"x": x, "value": values, "metric": [m for _, m in x], "color": [colors[m] for _, m in x]}
        return True


class CoverageFigure:
    """Accuracy of the verification results kept, as credibility tiers are added (a curve, the tiers as points)."""

    def __init__(self):
        self.fig = _figure("Accuracy versus coverage by credibility tier", x_range=Range1d(0, 1.02),
                           y_range=Range1d(0, 1.02))
        self._source = ColumnDataSource({"coverage": [], "accuracy": [], "tier": []})
        self.fig.line(x="coverage", y="accuracy", line_width=2, source=self._source)
        r = self.fig.scatter(x="coverage", y="accuracy", size=8, source=self._source)
        _hover(self.fig, r, [("tier", "@tier"), ("coverage", "@coverage{0.00}"), ("accuracy", "@accuracy{0.000}")])
        self.fig.xaxis.axis_label, self.fig.yaxis.axis_label = "coverage", "accuracy"

    def update(self, curve: pd.DataFrame) -> bool:
        if curve.empty or curve["n_kept"].sum() == 0:
            return False
        self._source.data = _columns(curve[["coverage", "accuracy", "tier"]].astype({"coverage": float,
                                                                                     "accuracy": float}))
        return True


def agent_name(agent: str) -> str:
    """An agent without its task kind ("vet/rules/rules-4" -> "rules/rules-4"): the task is beside it."""
    return agent.split("/", 1)[-1]


class CalibrationFigure:
    """Accuracy of each task's and agent's answers per priority bin (report["bins"] of
    reviewer.services.triage.triage_report) against the bin's median priority: the bootstrap interval
    as an area (a patch per group), the accuracy as a line with its bins as points, the target as a
    dashed line. The legend sits under the frame, two entries a row (beside it, its long labels would
    squeeze the frame), and the figure grows with its rows."""

    def __init__(self):
        self.fig = _figure(CALIBRATION_TITLE, x_range=Range1d(0, 1), y_range=Range1d(0, 1.05))
        self.fig.xaxis.axis_label = "review priority (estimated P(override or reject))"
        self.fig.yaxis.axis_label = "accuracy vs human verdicts"
        self._areas = ColumnDataSource({"xs": [], "ys": [], "color": []})
        self._lines = ColumnDataSource({"xs": [], "ys": [], "label": [], "color": []})
        self._points = ColumnDataSource({"priority": [], "accuracy": [], "n": [], "ci_low": [], "ci_high": [],
                                         "label": [], "color": []})
        self.fig.patches(xs="xs", ys="ys", fill_color="color", fill_alpha=0.15, line_alpha=0, source=self._areas)
        lines = self.fig.multi_line(xs="xs", ys="ys", line_color="color", line_width=2, source=self._lines)
        points = self.fig.scatter(x="priority", y="accuracy", size=6, color="color", source=self._points)
        _hover(self.fig, points, [("", "@label"), ("priority", "@priority{0.000}"), ("accuracy", "@accuracy{0.000}"),
                                  ("95% interval", "@ci_low{0.000} - @ci_high{0.000}"), ("n", "@n")])
        _legend(self.fig, lines, "label", place="below", columns=2)
        self.target = Span(location=0.98, dimension="width", line_color="grey", line_dash="dashed", line_width=1)
        self.fig.add_layout(self.target)

    def update(self, report: dict) -> bool:
        bins = pd.DataFrame(report.get("bins") or [])
        self.target.location = report.get("target", self.target.location)
        if bins.empty:
            return False
        bins = bins.rename(columns={"priority_mid": "priority"}).sort_values(["task", "agent", "priority"])
        groups = list(bins.groupby(["task", "agent"], sort=True))
        colors = [Category10_10[i % len(Category10_10)] for i in range(len(groups))]
        labels = [f"{task}: {agent_name(agent)}" for (task, agent), _ in groups]
        self._areas.data = {"xs": [g["priority"].tolist() + g["priority"].tolist()[::-1] for _, g in groups],
                            "ys": [g["ci_low"].tolist() + g["ci_high"].tolist()[::-1] for _, g in groups],
                            "color": colors}
        self._lines.data = {"xs": [g["priority"].tolist() for _, g in groups],
                            "ys": [g["accuracy"].tolist() for _, g in groups], "label": labels, "color": colors}
        sizes = [len(g) for _, g in groups]
        self._points.data = {**_columns(pd.concat([g for _, g in groups])[["priority", "accuracy", "n", "ci_low",
                                                                            "ci_high"]].astype(float)),
                             "label": np.repeat(labels, sizes).tolist(), "color": np.repeat(colors, sizes).tolist()}
        lo, hi = float(bins["priority_lo"].min()), float(bins["priority_hi"].max())
        pad = max((hi - lo) * 0.05, 0.01)
        self.fig.x_range.start, self.fig.x_range.end = max(lo - pad, 0.0), min(hi + pad, 1.0)
        self.fig.height = H + LEGEND_ROW_PX * -(-len(groups) // 2)
        return True
