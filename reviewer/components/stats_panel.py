"""The Stats tab: rating distributions and CDFs per rater, Spearman between raters, Cohen's kappa on
verdicts, accuracy and F1 per task, accuracy versus coverage by credibility. Built when first opened
and re-read on Refresh; fixed-size plots, so they draw even when built in a hidden tab."""
from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from reviewer import stats

W, H = 400, 250


def _plot(obj) -> pn.pane.HoloViews:
    return pn.pane.HoloViews(obj, backend="bokeh", width=W + 20, height=H + 20, css_classes=["sr-stats-plot"])


def rating_plots(distributions: dict) -> list:
    if not distributions:
        return [pn.pane.Markdown("*No ratings yet.*")]
    bars = pd.DataFrame([{"rater": r, "score": str(s), "count": c} for r, d in distributions.items()
                         for s, c in d["counts"].items()])
    hist = hv.Bars(bars, ["score", "rater"], "count").opts(title="Rating distribution per rater", width=W, height=H,
                                                           multi_level=False, tools=["hover"], xlabel="score")
    cdf = hv.Overlay([hv.Curve((d["cdf"]["x"], d["cdf"]["y"]), "score", "fraction ≤ score", label=r).opts(
        interpolation="steps-post", line_width=2) for r, d in distributions.items()]).opts(
        title="Rating CDF per rater", width=W, height=H, legend_position="bottom_right")
    return [_plot(hist), _plot(cdf)]


def correlation_plot(corr: pd.DataFrame):
    if corr.empty or corr["spearman"].isna().all():
        return pn.pane.Markdown("*Spearman needs two raters with at least three shared trajectories.*", width=W)
    both = pd.concat([corr.rename(columns={"rater_a": "a", "rater_b": "b"}),
                      corr.rename(columns={"rater_a": "b", "rater_b": "a"})])
    return _plot(hv.HeatMap(both, ["a", "b"], ["spearman", "n_shared"]).opts(
        title="Spearman correlation between raters", cmap="RdBu", clim=(-1, 1), colorbar=True, width=W, height=H,
        tools=["hover"]))


def kappa_table(kappas: pd.DataFrame):
    if kappas.empty:
        return pn.pane.Markdown("*Cohen's kappa needs two reviewers with shared verdicts.*", width=W)
    return pn.Column("**Cohen's kappa on verdicts**",
                     pn.widgets.Tabulator(kappas.replace({np.nan: None}), disabled=True, show_index=False, height=200,
                                          width=W))


def scores_plot(scores: pd.DataFrame):
    if scores.empty:
        return pn.pane.Markdown("*No approved or overridden labels yet: accuracy needs human labels.*", width=W)
    long = scores.melt(id_vars=["task"], value_vars=["accuracy", "f1"], var_name="metric")
    return _plot(hv.Bars(long, ["task", "metric"], "value").opts(
        title="Accuracy and F1 per task (vs human labels)", width=W, height=H, ylim=(0, 1), tools=["hover"]))


def coverage_plot(curve: pd.DataFrame):
    if curve.empty or curve["n_kept"].sum() == 0:
        return pn.pane.Markdown("*No verification results with human labels yet.*", width=W)
    return _plot((hv.Curve(curve, "coverage", "accuracy") * hv.Scatter(curve, "coverage", ["accuracy", "tier"]).opts(
        size=8, tools=["hover"])).opts(title="Accuracy versus coverage by credibility tier", width=W, height=H,
                                       xlim=(0, 1.02), ylim=(0, 1.02)))


class StatsPanel(Viewer):
    state = param.Parameter()

    def __init__(self, **params):
        super().__init__(**params)
        self._refresh = pn.widgets.Button(name="Refresh", button_type="light", css_classes=["sr-stats-refresh"])
        self._refresh.on_click(lambda _: self.refresh())
        self._body = pn.FlexBox(css_classes=["sr-stats"], sizing_mode="stretch_width")

    def refresh(self):
        data = stats.review_stats(self.state.store, session=self.state.session_id)
        self._body.objects = [*rating_plots(data["distributions"]), correlation_plot(data["correlations"]),
                              kappa_table(data["kappas"]), scores_plot(data["scores"]), coverage_plot(data["coverage"])]

    def __panel__(self):
        return pn.Column(pn.Row("### Statistics", self._refresh), self._body, sizing_mode="stretch_width")
