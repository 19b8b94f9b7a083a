"""The Stats tab: rating distributions and CDFs per rater, Spearman between raters, Cohen's kappa on
verdicts, accuracy and F1 per task, accuracy versus coverage by credibility, the failure modes of the
judged steps per task and agent, the judges held against people (weighted kappa, Spearman, confusion
table: `specreview judge --against-people`), and the calibrated
abstention of the triage (reviewer.services.triage): the accuracy of each agent's answers against their review
priority with its bootstrap interval as an area, and, for the target accuracy in the widget, the share
of the unreviewed queue that could be accepted without review and its estimated accuracy: the numbers
of `specreview triage --target T --json` (the same `triage_report`). Built when first opened (in a
served page, hidden, a moment after the page loaded: `prepare`) and re-read on opening and on Refresh:
the plots (reviewer.components.stats_figures) are made once and refilled in place, the tables' values
replaced; fixed-size plots, so they draw even when built in a hidden tab, one per row of the centre
column at 1440 px, legends beside the frame (never over the data) and tables as wide as
their columns. Rater, reviewer and agent names reach the page only as Bokeh text (drawn, not parsed),
escaped tooltip fields and table cells."""
from __future__ import annotations

import threading

import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.next_tick import NewestReads, held
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.components.stats_figures import (
    CALIBRATION_TITLE,
    CalibrationFigure,
    CorrelationFigure,
    CoverageFigure,
    RatingFigures,
    ScoresFigure,
    W,
    agent_name,
)
from reviewer.components.stats_selection import SelectionPlots
from reviewer.components.styles import STYLESHEETS
from reviewer.review_state import ReviewState
from reviewer.services import stats, stats_selection, stats_snapshots, triage
from reviewer.services.labels import BLIND_TRIAGE_NOTE

__all__ = ["CALIBRATION_TITLE", "StatsPanel", "abstention_text"]


class Plot:
    """A figure in the tab, or in its place the note saying why there is nothing to draw."""

    def __init__(self, fig, note: str = ""):
        self.fig = fig
        self.pane = pn.pane.Bokeh(fig, css_classes=["sr-stats-plot"], visible=False)  # the figure's own size
        self.note = pn.pane.Markdown(note, width=W, visible=False)

    def show(self, drawn: bool) -> None:
        self.pane.visible, self.note.visible = drawn, not drawn and bool(self.note.object)

    @property
    def parts(self) -> tuple:
        return self.pane, self.note


NO_VERDICTS = ("*No human verdicts yet: the accuracy of the agents' answers by review priority, and the share "
               "of the queue that could be accepted without review, need approved, overridden or rejected "
               "answers.*")


def _f(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


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


def abstention_frame(report: dict) -> pd.DataFrame | None:
    """The abstention table per task and agent (None before any verdict)."""
    groups = [g for g in report.get("groups") or [] if g["task"] != "all"]
    if not report.get("bins") or not groups:
        return None
    return pd.DataFrame([{"task": g["task"], "agent": agent_name(g["agent"]), "labelled": g["n_labelled"],
                          "threshold": g["threshold"], "est. accuracy": g["estimated_accuracy"],
                          "accept": g["n_accept"], "unreviewed": g["n_unreviewed"]} for g in groups]).round(3)


def judges_frames(rows: list[dict]) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The judge report (reviewer.services.stats.judge_report) as two tables: one row per judge and reference
    (the people's median, each person), and each judge's confusion against the people's median, stacked
    (None, None before any trajectory is scored by a judge and a person)."""
    if not rows:
        return None, None
    summary = pd.DataFrame([{"judge": r["judge"], "against": r["people"], "rubric": f"{r['criterion']} v{r['rubric_version']}",
                             "n": r["n"], "weighted kappa": r["qwk"], "Spearman": r["spearman"], "exact": r["exact"],
                             "bias": r["bias"]} for r in rows]).round(3)
    confusion = pd.DataFrame([{"judge": r["judge"], "people": score, **{str(j): n for j, n in enumerate(counts)}}
                              for r in rows if r["people"] == stats.PEOPLE for score, counts in enumerate(r["confusion"])])
    return summary, confusion


def _table(css_class: str) -> TextHTML:
    """A table of a few rows as plain HTML, every row and column in view and as wide as its data: two
    Tabulators (a grid library, shadow roots, a layout pass of their own) cost the tab ~0.25 s of its
    first paint (docs/benchmarks.md, issue 22)."""
    return TextHTML("", css_classes=["sr-stats-table", css_class], stylesheets=STYLESHEETS, max_width=W + 20,
                    visible=False)


def _fill(table: TextHTML, frame: pd.DataFrame | None) -> None:
    """The frame as an HTML table, its text escaped (reviewer names are anyone's)."""
    if frame is not None:
        shown = frame.astype(object).where(frame.notna(), "")  # no value: an empty cell, not "None"
        table.object = shown.to_html(index=False, escape=True, border=0, classes="sr-data-table")
    table.visible = frame is not None


class StatsPanel(Viewer):
    """Everything is re-read on `refresh`: in a served page on a thread of its own (at 100k
    trajectories the triage signals take seconds; the tab answers at once and says it is computing),
    elsewhere (tests, notebooks) before `refresh` returns. A new target reuses the last signals. The
    plots are made once (reviewer.components.stats_figures) and refilled by each refresh."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._refresh = pn.widgets.Button(label="Refresh", color="light", css_classes=["sr-stats-refresh"],
                                          description="Compute the statistics again from the labels stored now.")
        self._refresh.on_click(lambda _: self.refresh())
        self._status = TextHTML("", css_classes=["sr-stats-status"])
        self._body = pn.FlexBox(css_classes=["sr-stats"], sizing_mode="stretch_width")
        self.target = pn.widgets.FloatInput(label="Target accuracy", value=stats_snapshots.TARGET, start=0.5, end=1.0,
                                            step=0.005, width=140, css_classes=["sr-abstention-target"])
        self.target.param.watch(lambda _: self.refresh_abstention(), "value")
        self._statement = pn.pane.Markdown("", width=W, css_classes=["sr-abstention"])
        self._ratings, self._correlation = RatingFigures(), CorrelationFigure()
        self._scores, self._coverage, self._calibration = ScoresFigure(), CoverageFigure(), CalibrationFigure()
        self._plots = {"bars": Plot(self._ratings.bars, "*No ratings yet.*"), "cdf": Plot(self._ratings.cdf),
                       "correlation": Plot(self._correlation.fig, "*Spearman needs two raters with at least three "
                                                                  "shared trajectories.*"),
                       "scores": Plot(self._scores.fig, "*No approved or overridden labels yet: accuracy needs "
                                                        "human labels.*"),
                       "coverage": Plot(self._coverage.fig, "*No verification results with human labels yet.*"),
                       "calibration": Plot(self._calibration.fig, NO_VERDICTS)}
        self._kappa_note = pn.pane.Markdown("*Cohen's kappa needs two reviewers with shared verdicts.*", width=W,
                                            visible=False)
        self._kappa = _table("sr-kappa-table")
        self._kappa_block = pn.Column("**Cohen's kappa on verdicts**", self._kappa, width=W + 20, visible=False)
        self._failure_modes = _table("sr-failure-modes-table")
        self._failure_block = pn.Column("**Failure modes of the judged steps, per task and agent**",
                                        self._failure_modes, width=W + 20, visible=False)
        self._judges = _table("sr-judges-table")
        self._confusions = _table("sr-judge-confusion-table")
        self._judges_block = pn.Column("**The judges against people (0-5 rubric)**", self._judges,
                                       "*People's whole score (rows) against the judge's (columns), per judge:*",
                                       self._confusions, width=W + 20, visible=False)
        self._abstention = _table("sr-abstention-table")
        self.selection = SelectionPlots(self.state)  # points that select items for the queue (issue 47, item 7)
        self.calibration = pn.Column(*self._plots["calibration"].parts, self.target, self._statement,
                                     self._abstention, sizing_mode="fixed", width=W + 20,
                                     css_classes=["sr-calibration"], visible=False)
        self.triage: dict = {}
        self._inputs: triage.TriageInputs | None = None
        self._refreshes = NewestReads()  # an older refresh's result is dropped
        self._pending: set[str] = set()  # the parts of the latest refresh not computed yet
        self._as_of = None  # when the figures shown while those are computed were (None: they are current)
        self._failure = False  # the latest refresh failed (the status says why)
        p = self._plots  # the blocks in their order, each hidden until it has something to show
        self._blind_note = pn.pane.Markdown("", width=W, visible=False, css_classes=["sr-stats-blind"])
        self._body.objects = [self._blind_note, *p["bars"].parts, *p["cdf"].parts, *p["correlation"].parts,
                              self._kappa_block, self._kappa_note, *p["scores"].parts, *p["coverage"].parts,
                              self._failure_block, self._judges_block, self.calibration]

    def _attach_selection(self) -> None:
        """The plots whose points select items, in the tab from its first opening on: two HoloViews figures
        sent with a prepared (hidden) tab weigh on every key of the review screen until then (bench_ui:
        `n` and `j` p95, docs/benchmarks.md)."""
        selection = [self.selection.gold.pane, self.selection.judge.pane]
        if selection[0] not in self._body.objects:
            objects = list(self._body.objects)
            self._body.objects = objects[:-1] + selection + objects[-1:]

    @property
    def abstention_text(self) -> str:
        return self._statement.object

    def refresh_abstention(self):
        """The triage report at the widget's target (reviewer.services.triage.triage_report, as the CLI), plotted
        and stated, from the signals the last refresh read."""
        if self._inputs is None:
            return  # the first refresh is still computing; it reads the target when it is done
        self._show_report(triage.triage_report(self.state.store, float(self.target.value), inputs=self._inputs))

    @held
    def _show_report(self, report: dict) -> None:
        state = self.state  # blind review: read from everyone's labels, withheld if they hold an item not theirs
        if not state.labels.sees_team_figures(state.reviewer, state.blind):
            self.triage = {}
            self._plots["calibration"].show(False)
            self._statement.object, self._abstention.visible = BLIND_TRIAGE_NOTE, False
            self.target.visible = False
            self.calibration.visible = True
            return
        self.triage = report
        self.target.visible = True
        self._plots["calibration"].show(self._calibration.update(self.triage))
        self._statement.object = abstention_text(self.triage)
        _fill(self._abstention, abstention_frame(self.triage))
        self.calibration.visible = True

    # Two parts, each shown when ready and remembered for every page of the process
    # (reviewer.services.stats_snapshots): the reviewers' statistics of the campaign (grow with the
    # labels) and the triage's signals with the report at the target (grow with the trajectories).
    def _parts(self) -> tuple:
        store, session = self.state.store, self.state.session_id
        return (("stats", session, stats_snapshots.part_work(store, "stats", session), self._show_review_stats),
                ("triage", None, stats_snapshots.part_work(store, "triage", None), self._show_triage))

    def _compute(self, part: str, session: str | None, work) -> stats_snapshots.Snapshot | Exception:
        try:
            return stats_snapshots.compute(self.state.store, part, session, work)
        except Exception as exc:  # said in the tab; the server keeps serving
            return exc

    def _failed(self, exc: Exception) -> None:
        shown = f" The figures shown are as of {self._as_of:%H:%M:%S} UTC." if self._as_of is not None else ""
        self._failure = True
        self._status.object = (f"<p>Statistics could not be computed: {escape(type(exc).__name__)}: {escape(exc)}."
                               f"{shown}</p>")

    @held
    def _show_review_stats(self, data: dict) -> None:
        state = self.state  # what this reviewer may see of them (blind review: their own labels' figures)
        data = state.labels.visible_stats(state.reviewer, data, state.blind, state.session_id)
        self._blind_note.object, self._blind_note.visible = data["blind_note"] or "", bool(data["blind_note"])
        rated = self._ratings.update(data["distributions"])
        self._plots["bars"].show(rated)
        self._plots["cdf"].show(rated)
        self._plots["correlation"].show(self._correlation.update(data["correlations"]))
        kappas = data["kappas"]
        _fill(self._kappa, None if kappas.empty else kappas.round(3))
        self._kappa_block.visible, self._kappa_note.visible = not kappas.empty, kappas.empty
        self._plots["scores"].show(self._scores.update(data["scores"]))
        self._plots["coverage"].show(self._coverage.update(data["coverage"]))
        failures = data.get("failure_modes")
        shown = failures is not None and not failures.empty
        _fill(self._failure_modes, failures.assign(agent=failures["agent"].map(agent_name)) if shown else None)
        self._failure_block.visible = shown
        judges, confusions = judges_frames(data.get("judges") or [])
        _fill(self._judges, judges)
        _fill(self._confusions, confusions)
        self._judges_block.visible = judges is not None
        self._show_selectable(data)

    def _show_selectable(self, data: dict) -> None:
        """The plots whose points select items (stats_selection), as this reviewer may see them: under blind
        review, while others' labels are hidden, their own gold verdicts only, and the judges against their
        own scores (as the judge report above)."""
        state = self.state
        gold, judged = data.get("gold_points") or [], data.get("judge_points") or []
        if state.blind:
            name = (state.reviewer or "").strip()
            judged = stats_selection.judge_points(state.store, state.session_id, people=[name])
            if not state.labels.sees_team_figures(state.reviewer, state.blind, state.session_id):
                gold = [p for p in gold if p["reviewer"] == name]
        self.selection.show(gold, judged)

    def _show_triage(self, computed: tuple) -> None:
        self._inputs, report = computed
        if report["target"] == float(self.target.value):
            self._show_report(report)
        else:  # the target was changed since the report was computed
            self.refresh_abstention()

    def _shown(self, part: str, show, got, final: bool = True) -> None:
        """A part's figures (or its failure) on the page; the status says what is still computed."""
        if final:
            self._pending.discard(part)
        if isinstance(got, Exception):
            self._failed(got)
            return
        try:  # what this reviewer may see of them is read from the store here (blind review)
            show(got.value)
        except Exception as exc:  # said in the tab, never a status left at "Computing…"
            self._failed(exc)
            return
        if self._failure:
            return
        if not self._pending:
            self._status.object = ""
        elif self._as_of is not None:
            self._status.object = (f"<p><em>Figures as of {self._as_of:%H:%M:%S} UTC: labels or trajectories were "
                                   "written since, computing them again…</em></p>")
        else:
            self._status.object = ("<p><em>Estimating the abstention over every trajectory…</em></p>"
                                   if self._pending == {"triage"} else "<p><em>Computing the statistics…</em></p>")

    def prepare(self) -> None:
        """The figures as this process last computed them, if it did (nothing computed), marked with their
        time until an opening has checked that nothing was written since: a tab sent to the page before it
        is opened (layouts.audit.LazyTab.prepare) then changes, when opened, only what was written since."""
        kept = [(stats_snapshots.remembered(self.state.store, part, session, shown=False), show)
                for part, session, _, show in self._parts()]
        for snapshot, show in kept:
            if snapshot is not None:
                show(snapshot.value)
        computed = [snapshot.computed_at for snapshot, _ in kept if snapshot is not None]
        if computed:
            self._status.object = (f"<p><em>Figures as of {min(computed):%H:%M:%S} UTC: looking for labels or "
                                   "trajectories written since…</em></p>")

    def refresh(self):
        self._attach_selection()
        parts = self._parts()
        # the status line is set once below, never emptied first: figures that may be old (a prepared tab's)
        # never stand on the page without their time
        self._as_of, self._failure = None, False
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:  # tests, notebooks: computed before refresh returns
            self._status.object = ""
            self._pending = {part for part, *_ in parts}
            for part, session, work, show in parts:
                self._shown(part, show, self._compute(part, session, work))
            return
        ticket, store = self._refreshes.begin(), self.state.store
        # what any page computed last is shown at once; a part is computed again when something it is
        # read from was written since (or it never was)
        kept = [stats_snapshots.remembered(store, part, session) for part, session, _, _ in parts]
        try:
            mark = stats_snapshots.mark(store) if any(k is not None for k in kept) else None
        except Exception:  # the store cannot be read: computing again says why, in the tab
            mark = None
        stale = [p for p, k in zip(parts, kept, strict=True) if k is None or k.mark != mark]
        self._pending = {part for part, *_ in stale}
        self._as_of = min((k.computed_at for k in kept if k is not None and k.mark != mark), default=None)
        for (part, _, _, show), snapshot in zip(parts, kept, strict=True):
            if snapshot is not None:
                self._shown(part, show, snapshot, final=False)
        if self._pending and not any(kept):
            self._status.object = "<p><em>Computing the statistics…</em></p>"

        def computed(part, session, work, show):
            got = self._compute(part, session, work)
            self._refreshes.put_in_later(doc, ticket, lambda: self._shown(part, show, got))

        # the two parts at once: most of either is DuckDB's (which leaves the GIL), so the triage's read
        # overlaps the reviewers' statistics and their drawing (docs/benchmarks.md, issue 22)
        for args in stale:
            threading.Thread(target=computed, args=args, name="specreview-stats", daemon=True).start()

    def __panel__(self):
        return pn.Column(pn.Row("### Statistics", self._refresh), self._status, self._body,
                         sizing_mode="stretch_width")
