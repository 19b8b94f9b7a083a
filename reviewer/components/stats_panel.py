"""The Stats tab: rating distributions and CDFs per rater, Spearman between raters, Cohen's kappa on
verdicts, accuracy and F1 per task, accuracy versus coverage by credibility, and the calibrated
abstention of the triage (reviewer.services.triage): the accuracy of each agent's answers against their review
priority with its bootstrap interval as an area, and, for the target accuracy in the widget, the share
of the unreviewed queue that could be accepted without review and its estimated accuracy: the numbers
of `specreview triage --target T --json` (the same `triage_report`). Built when first opened and re-read
on Refresh; fixed-size plots, so they draw even when built in a hidden tab, one per row of the centre
column at 1440 px, legends beside the frame (never over the data) and tables as wide as their columns."""
from __future__ import annotations

import threading

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.palettes import Category10_10
from panel.viewable import Viewer

from reviewer.components.safe_text import escape
from reviewer.review_state import ReviewState
from reviewer.services import stats, triage

hv.extension("bokeh", logo=False)
W, H = 560, 250  # the plot's frame and its legend: the centre column is ~640 px at 1440x900
OUTSIDE = {"legend_position": "right", "legend_opts": {"label_text_font_size": "8pt", "padding": 4}}


def _plot(obj) -> pn.pane.HoloViews:
    return pn.pane.HoloViews(obj, backend="bokeh", width=W + 20, height=H + 20, css_classes=["sr-stats-plot"])


def rating_plots(distributions: dict) -> list:
    if not distributions:
        return [pn.pane.Markdown("*No ratings yet.*")]
    bars = pd.DataFrame([{"rater": r, "score": str(s), "count": c} for r, d in distributions.items()
                         for s, c in d["counts"].items()])
    hist = hv.Bars(bars, ["score", "rater"], "count").opts(title="Rating distribution per rater", width=W, height=H,
                                                           multi_level=False, tools=["hover"], xlabel="score",
                                                           **OUTSIDE)
    cdf = hv.Overlay([hv.Curve((d["cdf"]["x"], d["cdf"]["y"]), "score", "fraction ≤ score", label=r).opts(
        interpolation="steps-post", line_width=2) for r, d in distributions.items()]).opts(
        title="Rating CDF per rater", width=W, height=H, **OUTSIDE)
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
    return pn.Column("**Cohen's kappa on verdicts**", _table(kappas.round(3)), width=W + 20)


def scores_plot(scores: pd.DataFrame):
    if scores.empty:
        return pn.pane.Markdown("*No approved or overridden labels yet: accuracy needs human labels.*", width=W)
    long = scores.melt(id_vars=["task"], value_vars=["accuracy", "f1"], var_name="metric")
    return _plot(hv.Bars(long, ["task", "metric"], "value").opts(
        title="Accuracy and F1 per task (vs human labels)", width=W, height=H, ylim=(0, 1), tools=["hover"],
        multi_level=False, **OUTSIDE))


def coverage_plot(curve: pd.DataFrame):
    if curve.empty or curve["n_kept"].sum() == 0:
        return pn.pane.Markdown("*No verification results with human labels yet.*", width=W)
    return _plot((hv.Curve(curve, "coverage", "accuracy") * hv.Scatter(curve, "coverage", ["accuracy", "tier"]).opts(
        size=8, tools=["hover"])).opts(title="Accuracy versus coverage by credibility tier", width=W, height=H,
                                       xlim=(0, 1.02), ylim=(0, 1.02)))


CALIBRATION_TITLE = "Accuracy by review priority (95% interval)"
NO_VERDICTS = ("*No human verdicts yet: the accuracy of the agents' answers by review priority, and the share "
               "of the queue that could be accepted without review, need approved, overridden or rejected "
               "answers.*")


def _f(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def calibration_plot(report: dict):
    """Accuracy of each task's and agent's answers per priority bin (report["bins"] of
    reviewer.services.triage.triage_report) against the bin's median priority, the bootstrap interval as an
    area, and the target accuracy as a line."""
    bins = pd.DataFrame(report.get("bins") or [])
    if bins.empty:
        return pn.pane.Markdown(NO_VERDICTS, width=W)
    bins = bins.rename(columns={"priority_mid": "priority"})
    layers = []
    for i, ((task, agent), group) in enumerate(bins.groupby(["task", "agent"], sort=True)):
        group = group.sort_values("priority")
        label, color = f"{task}: {agent_name(agent)}", Category10_10[i % len(Category10_10)]
        layers.append(hv.Area(group, "priority", ["ci_low", "ci_high"], label=label).opts(
            color=color, alpha=0.15, line_alpha=0))
        layers.append(hv.Curve(group, "priority", ["accuracy", "n", "ci_low", "ci_high"], label=label).opts(
            color=color, line_width=2, tools=["hover"]))
        layers.append(hv.Scatter(group, "priority", ["accuracy", "n"], label=label).opts(
            color=color, size=6, tools=["hover"]))
    layers.append(hv.HLine(report["target"]).opts(color="grey", line_dash="dashed", line_width=1))
    # the legend under the frame (beside it, its long labels would squeeze the frame), two entries a row
    rows = -(-bins.groupby(["task", "agent"]).ngroups // 2)
    return pn.pane.HoloViews(hv.Overlay(layers).opts(
        title=CALIBRATION_TITLE, width=W, height=H + 20 * rows, ylim=(0, 1.05), legend_position="bottom",
        legend_cols=2, legend_opts={"label_text_font_size": "8pt", "spacing": 0, "padding": 2},
        xlabel="review priority (estimated P(override or reject))", ylabel="accuracy vs human verdicts"),
        backend="bokeh", width=W + 20, height=H + 20 * rows + 20, css_classes=["sr-stats-plot"])


def agent_name(agent: str) -> str:
    """An agent without its task kind ("vet/rules/rules-4" -> "rules/rules-4"): the task is beside it."""
    return agent.split("/", 1)[-1]


def abstention_text(report: dict) -> str:
    """The pooled row of the abstention table in words (reviewer.services.triage.abstention: 'all')."""
    if not report.get("bins"):
        return NO_VERDICTS
    row = next((g for g in report["groups"] if g["task"] == "all"), None)
    target = f"target accuracy {report['target']:g}"
    if row is None or not row["n_unreviewed"]:
        return f"At {target}: no unreviewed answers in the queue."
    share = f"{row['n_accept']} of {row['n_unreviewed']} unreviewed answers ({row['fraction_accept']:.0%})"
    if row["estimated_accuracy"] is None:
        return (f"At {target}: {share} could be accepted without review: no priority threshold reaches it "
                f"over at least {triage.MIN_ACCEPT} labelled answers of one task and agent yet "
                f"({row['n_labelled']} labelled, accuracy {_f(row['labelled_accuracy'])}).")
    ci = f" [{_f(row['ci_low'])}, {_f(row['ci_high'])}]" if row["ci_low"] is not None else ""
    return (f"At {target}: {share} could be accepted without review, at an estimated accuracy "
            f"{_f(row['estimated_accuracy'])}{ci} (from the {row['n_labelled_accepted']} labelled answers below "
            f"the thresholds; {row['n_labelled']} labelled in all).")


def abstention_table(report: dict):
    groups = [g for g in report.get("groups") or [] if g["task"] != "all"]
    if not report.get("bins") or not groups:
        return None
    frame = pd.DataFrame([{"task": g["task"], "agent": agent_name(g["agent"]), "labelled": g["n_labelled"],
                           "threshold": g["threshold"], "est. accuracy": g["estimated_accuracy"],
                           "accept": g["n_accept"], "unreviewed": g["n_unreviewed"]} for g in groups])
    return _table(frame.round(3), css_classes=["sr-abstention-table"])


def _table(frame: pd.DataFrame, **params) -> pn.widgets.Tabulator:
    """Every row and column in view: as tall as its rows, as wide as its data (Tabulator's fit_data_table),
    headers that do not sort (the tables are a few rows; the arrows would widen every column)."""
    return pn.widgets.Tabulator(frame.replace({np.nan: None}), disabled=True, show_index=False, sortable=False,
                                layout="fit_data_table", max_width=W + 20, **params)


class StatsPanel(Viewer):
    """Everything is re-read on `refresh`: in a served page on a thread of its own (at 100k
    trajectories the triage signals take seconds; the tab answers at once and says it is computing),
    elsewhere (tests, notebooks) before `refresh` returns. A new target reuses the last signals."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._refresh = pn.widgets.Button(label="Refresh", color="light", css_classes=["sr-stats-refresh"],
                                          description="Compute the statistics again from the labels stored now.")
        self._refresh.on_click(lambda _: self.refresh())
        self._status = pn.pane.HTML("", css_classes=["sr-stats-status"])
        self._body = pn.FlexBox(css_classes=["sr-stats"], sizing_mode="stretch_width")
        self.target = pn.widgets.FloatInput(label="Target accuracy", value=0.98, start=0.5, end=1.0, step=0.005,
                                            width=140, css_classes=["sr-abstention-target"])
        self.target.param.watch(lambda _: self.refresh_abstention(), "value")
        self._statement = pn.pane.Markdown("", width=W, css_classes=["sr-abstention"])
        self.calibration = pn.Column(sizing_mode="fixed", width=W + 20, css_classes=["sr-calibration"])
        self.triage: dict = {}
        self._inputs: triage.TriageInputs | None = None
        self._ticket = 0  # the latest refresh; an older one's result is dropped

    @property
    def abstention_text(self) -> str:
        return self._statement.object

    def refresh_abstention(self):
        """The triage report at the widget's target (reviewer.services.triage.triage_report, as the CLI), plotted
        and stated, from the signals the last refresh read."""
        if self._inputs is None:
            return  # the first refresh is still computing; it reads the target when it is done
        self.triage = triage.triage_report(self.state.store, float(self.target.value), inputs=self._inputs)
        self._statement.object = abstention_text(self.triage)
        table = abstention_table(self.triage)
        self.calibration.objects = [calibration_plot(self.triage), self.target, self._statement,
                                    *([table] if table is not None else [])]

    # Two parts, shown as each is ready: the reviewers' statistics (grow with the labels), then the
    # triage's signals (grow with the trajectories: seconds at 100k).
    def _review_stats(self) -> dict | Exception:
        try:
            return stats.review_stats(self.state.store, session=self.state.session_id)
        except Exception as exc:  # said in the tab; the server keeps serving
            return exc

    def _triage_inputs(self) -> triage.TriageInputs | Exception:
        try:
            return triage.triage_inputs(self.state.store)
        except Exception as exc:
            return exc

    def _failed(self, exc: Exception) -> None:
        self._status.object = f"<p>Statistics could not be computed: {escape(type(exc).__name__)}: {escape(exc)}</p>"

    def _show_review_stats(self, data, pending: bool) -> None:
        if isinstance(data, Exception):
            self._failed(data)
            return
        self._status.object = "<p><em>Estimating the abstention over every trajectory…</em></p>" if pending else ""
        self._body.objects = [*rating_plots(data["distributions"]), correlation_plot(data["correlations"]),
                              kappa_table(data["kappas"]), scores_plot(data["scores"]), coverage_plot(data["coverage"]),
                              self.calibration]

    def _show_triage(self, inputs) -> None:
        if isinstance(inputs, Exception):
            self._failed(inputs)
            return
        self._inputs = inputs
        self.refresh_abstention()
        if "Estimating" in self._status.object:
            self._status.object = ""

    def refresh(self):
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            self._show_review_stats(self._review_stats(), pending=False)
            self._show_triage(self._triage_inputs())
            return
        self._ticket += 1
        ticket = self._ticket
        self._status.object = "<p><em>Computing the statistics…</em></p>"

        def work():
            # Bokeh documents take changes from other threads only through add_next_tick_callback
            data = self._review_stats()
            doc.add_next_tick_callback(lambda: ticket == self._ticket and self._show_review_stats(data, True))
            inputs = self._triage_inputs()
            doc.add_next_tick_callback(lambda: ticket == self._ticket and self._show_triage(inputs))

        threading.Thread(target=work, name="specreview-stats", daemon=True).start()

    def __panel__(self):
        return pn.Column(pn.Row("### Statistics", self._refresh), self._status, self._body,
                         sizing_mode="stretch_width")
