"""The stats page: plots of ratings, agreement between raters, and accuracy of the agents."""
from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer


def rating_plots(distributions: dict) -> hv.Layout | pn.pane.Markdown:
    if not distributions:
        return pn.pane.Markdown("*No ratings yet.*")
    bars = pd.DataFrame([{"rater": r, "score": s, "count": c} for r, d in distributions.items()
                         for s, c in d["counts"].items()])
    hist = hv.Bars(bars, ["score", "rater"], "count").opts(title="Rating distribution per rater", width=420,
                                                           height=260, multi_level=False, tools=["hover"])
    cdf = hv.Overlay([hv.Curve((d["cdf"]["x"], d["cdf"]["y"]), "score", "fraction ≤ score", label=r).opts(
        interpolation="steps-post") for r, d in distributions.items()]).opts(
        title="Rating CDF per rater", width=420, height=260, legend_position="bottom_right")
    return hist + cdf


def correlation_plot(corr: pd.DataFrame):
    if corr.empty or corr["spearman"].isna().all():
        return pn.pane.Markdown("*Spearman needs two raters with at least three shared trajectories.*")
    both = pd.concat([corr.rename(columns={"rater_a": "a", "rater_b": "b"}),
                      corr.rename(columns={"rater_a": "b", "rater_b": "a"})])
    return hv.HeatMap(both, ["a", "b"], ["spearman", "n_shared"]).opts(
        title="Spearman correlation between raters", cmap="RdBu", clim=(-1, 1), colorbar=True, width=420,
        height=300, tools=["hover"])


def scores_plot(scores: pd.DataFrame):
    if scores.empty:
        return pn.pane.Markdown("*No approved or overridden labels yet: accuracy needs human labels.*")
    long = scores.melt(id_vars=["task"], value_vars=["accuracy", "f1"], var_name="metric")
    return hv.Bars(long, ["task", "metric"], "value").opts(title="Accuracy and F1 per task (vs approved labels)",
                                                           width=420, height=260, ylim=(0, 1), tools=["hover"])


def coverage_plot(curve: pd.DataFrame):
    if curve.empty or curve["n_kept"].sum() == 0:
        return pn.pane.Markdown("*No verification results with human labels yet.*")
    return (hv.Curve(curve, "coverage", "accuracy") * hv.Scatter(curve, "coverage", ["accuracy", "tier"]).opts(
        size=8, tools=["hover"])).opts(title="Accuracy versus coverage by credibility tier", width=420, height=260,
                                       xlim=(0, 1.02), ylim=(0, 1.02))


class StatsPanel(Viewer):
    """`load()` returns a dict of the frames (ratings distributions, correlations, kappas, scores, coverage)."""

    load = param.Callable(default=None)

    def __init__(self, **params):
        super().__init__(**params)
        self._refresh = pn.widgets.Button(label="Refresh", button_type="light", css_classes=["sr-stats-refresh"])
        self._refresh.on_click(lambda _: self.refresh())
        self._body = pn.Column(sizing_mode="stretch_width", css_classes=["sr-stats"])

    def refresh(self):
        data = self.load() if self.load else {}
        kappas = data.get("kappas", pd.DataFrame())
        self._body.objects = [
            pn.Row(rating_plots(data.get("distributions", {}))),
            pn.Row(correlation_plot(data.get("correlations", pd.DataFrame(columns=["spearman"]))),
                   pn.Column("#### Cohen's kappa on verdicts",
                             pn.widgets.Tabulator(kappas.replace({np.nan: None}), disabled=True, show_index=False,
                                                  height=200, width=380) if not kappas.empty
                             else pn.pane.Markdown("*Needs two reviewers with shared verdicts.*"))),
            pn.Row(scores_plot(data.get("scores", pd.DataFrame())), coverage_plot(data.get("coverage", pd.DataFrame()))),
        ]

    def __panel__(self):
        return pn.Column(pn.Row("### Statistics", self._refresh), self._body, sizing_mode="stretch_width")
