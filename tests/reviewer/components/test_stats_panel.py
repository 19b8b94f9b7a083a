"""The Stats tab's calibrated abstention, on the demo store: the accuracy-by-priority plot with its
bootstrap interval as an area, and, for the target accuracy in its widget, the share of the unreviewed
queue that could be accepted without review and its estimated accuracy: the very numbers
`specreview triage --target T --json` prints. Before any verdict it says so instead of a blank plot.
These figures are read from every reviewer's labels, so they are shown in an open review (blind=False);
under blind review the tab withholds them while another reviewer has labelled an item the reviewer has not
(tests/security/test_blind_walk.py)."""
from __future__ import annotations

import json
import shutil

import pytest
from bokeh.embed import json_item
from databases import own_copy
from panel.io.state import set_curdoc
from served_doc import ServedDoc

from reviewer.cli import main
from reviewer.components.stats_figures import CalibrationFigure
from reviewer.components.stats_panel import StatsPanel
from reviewer.review_state import ReviewState
from reviewer.services import stats_snapshots, triage
from reviewer.store import Store


@pytest.fixture
def demo_db(demo_template, tmp_path):
    """This test's own copy of the seeded demo database (a path: the tests open it themselves)."""
    return own_copy(demo_template, tmp_path)


def label_most(path, n: int = 45, n_errors: int = 6) -> None:
    """One reviewer labels the n items nearest their decision threshold (the first n_errors wrong);
    the rest of the queue stays unreviewed."""
    with Store(path) as store:
        signals = triage.compute_signals(store).sort_values("closeness", ascending=False)
        for i, tid in enumerate(signals.index[:n]):
            answer = signals.at[tid, "answer"]
            if i >= n_errors:
                store.labels.add_review(tid, "ann", "approve")
            elif answer in ("YES", "NO"):
                store.labels.add_review(tid, "ann", "override", label={"answer": "NO" if answer == "YES" else "YES"})
            else:
                store.labels.add_review(tid, "ann", "reject")


@pytest.fixture
def labelled_db(demo_db, tmp_path):
    path = tmp_path / "labelled.duckdb"
    shutil.copyfile(demo_db, path)
    label_most(path)
    return path


def cli_report(capsys, db, target: float) -> dict:
    capsys.readouterr()
    assert main(["triage", "--db", str(db), "--target", f"{target:g}", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def pooled(report: dict) -> dict:
    return next(g for g in report["groups"] if g["task"] == "all")


@pytest.mark.parametrize("target", [0.9, 0.8])
def test_the_stated_numbers_are_the_clis(labelled_db, capsys, target):
    cli = cli_report(capsys, labelled_db, target)
    with Store(labelled_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        assert panel.target.value == 0.98  # the default target
        panel.target.value = target
        panel.refresh()
        report = panel.triage
    assert report["target"] == target
    assert report["groups"] == cli["groups"] and report["bins"] == cli["bins"]
    all_ = pooled(report)
    assert all_["n_unreviewed"] == 20 and all_["n_accept"] > 0 and all_["estimated_accuracy"] is not None
    text = panel.abstention_text
    assert f"{all_['n_accept']} of {all_['n_unreviewed']} unreviewed answers ({all_['fraction_accept']:.0%})" in text
    assert f"estimated accuracy {all_['estimated_accuracy']:.3f}" in text
    assert f"[{all_['ci_low']:.3f}, {all_['ci_high']:.3f}]" in text
    assert f"target accuracy {target:g}" in text


def test_changing_the_target_restates_the_numbers(labelled_db, capsys):
    strict = pooled(cli_report(capsys, labelled_db, 0.999))
    with Store(labelled_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        panel.refresh()
        panel.target.value = 0.999  # no refresh: the widget alone restates
        assert pooled(panel.triage) == strict
        assert "target accuracy 0.999" in panel.abstention_text


def test_the_calibration_plot_has_the_interval_as_an_area(labelled_db):
    with Store(labelled_db) as store:
        report = triage.triage_report(store, 0.9, n_boot=200)
    plot = CalibrationFigure()
    assert plot.update(report)
    glyphs = {type(r.glyph).__name__: r.data_source.data for r in plot.fig.renderers}
    groups = sorted({(b["task"], b["agent"]) for b in report["bins"]})
    areas, lines, points = glyphs["Patches"], glyphs["MultiLine"], glyphs["Scatter"]
    assert len(areas["xs"]) == len(lines["xs"]) == len(groups)
    # per group, the area runs along the bins' lower bounds and back along their upper bounds; the
    # line is the accuracy; each bin is a point
    for i, (task, agent) in enumerate(groups):
        rows = sorted((b for b in report["bins"] if (b["task"], b["agent"]) == (task, agent)),
                      key=lambda b: b["priority_mid"])
        mids = [b["priority_mid"] for b in rows]
        assert areas["xs"][i] == mids + mids[::-1]
        assert areas["ys"][i] == [b["ci_low"] for b in rows] + [b["ci_high"] for b in rows][::-1]
        assert lines["ys"][i] == [b["accuracy"] for b in rows]
        assert lines["label"][i].startswith(f"{task}: ")
    assert len(points["priority"]) == len(report["bins"])
    assert all(lo <= hi for lo, hi in zip(points["ci_low"], points["ci_high"], strict=True))
    assert plot.target.location == 0.9  # the target as a line
    json_item(plot.fig)  # it serialises to the page


def test_a_refresh_refills_the_same_figures(labelled_db):
    """The plots are made once and refilled: a second refresh sends data, not new figures."""
    with Store(labelled_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        panel.refresh()
        figures = [p.fig for p in panel._plots.values()]
        body = list(panel._body.objects)
        store.labels.add_review(triage.compute_signals(store).index[-1], "bob", "approve")
        panel.refresh()
    assert [p.fig for p in panel._plots.values()] == figures and list(panel._body.objects) == body
    assert all(p.pane.object is p.fig for p in panel._plots.values())


def test_before_any_verdict_it_says_so_instead_of_a_blank_plot(demo_db):
    with Store(demo_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        panel.refresh()
    assert panel.triage["bins"] == []
    assert "No human verdicts yet" in panel.abstention_text
    calibration = panel._plots["calibration"]
    assert not calibration.pane.visible and calibration.note.visible
    assert "No human verdicts yet" in calibration.note.object
    assert not CalibrationFigure().update(panel.triage)


def test_a_failed_computation_is_said_in_the_tab_escaped(demo_db, monkeypatch):
    def broken(*_, **__):
        raise ValueError("<b>table missing</b>")

    monkeypatch.setattr("reviewer.services.stats.review_stats", broken)
    with Store(demo_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        panel.refresh()
    assert panel._status.object == "<p>Statistics could not be computed: ValueError: &lt;b&gt;table missing&lt;/b&gt;.</p>"
    failed = [panel._plots[name] for name in ("bars", "cdf", "correlation", "scores", "coverage")]
    assert not any(part.visible for plot in failed for part in plot.parts)  # the reviewers' part: nothing drawn
    assert not panel._kappa_block.visible and not panel._kappa_note.visible


def test_a_prepared_panel_shows_what_the_process_remembers_without_computing_or_asking_for_it(labelled_db,
                                                                                            monkeypatch):
    """A served page sends the tab, hidden, before it is opened (layouts.audit.LazyTab.prepare), filled
    with the figures this process computed last: nothing is computed, and the parts are not counted as
    shown (the figures of a tab nobody opened are not computed again after each write)."""
    with Store(labelled_db) as store:
        empty = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        empty.prepare()  # nothing remembered yet: nothing shown
        assert not any(part.visible for plot in empty._plots.values() for part in plot.parts)
        assert not empty.calibration.visible and empty._status.object == ""

        first = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        first.refresh()  # computed, and remembered for the process
        broken = lambda *_, **__: 1 / 0  # noqa: E731
        monkeypatch.setattr("reviewer.services.stats.review_stats", broken)
        monkeypatch.setattr("reviewer.services.triage.triage_inputs", broken)
        prepared = StatsPanel(state=ReviewState(store, reviewer="bob", blind=False))
        prepared.prepare()
        shown = lambda panel: {name: plot.pane.visible for name, plot in panel._plots.items()}  # noqa: E731
        assert shown(prepared) == shown(first) and sum(shown(first).values()) >= 3
        assert prepared._scores._source.data == first._scores._source.data
        assert prepared.triage == first.triage and prepared.abstention_text == first.abstention_text
        assert prepared.calibration.visible and "Figures as of" in prepared._status.object  # until opened
        prepared.refresh()  # the opening: nothing was written since
        assert prepared._status.object == "" and prepared.triage == first.triage
        assert not any(key[0] == str(store.db.path) for key in stats_snapshots._shown)


def test_the_signals_are_read_once_per_refresh_not_per_target(labelled_db, monkeypatch):
    reads = []
    compute = triage.triage_inputs  # every trajectory's stored signals (issue 22)
    monkeypatch.setattr("reviewer.services.triage.triage_inputs",
                        lambda store, *a, **k: reads.append(1) or compute(store, *a, **k))
    with Store(labelled_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        panel.refresh()
        for target in (0.9, 0.95, 0.999):
            panel.target.value = target
    assert len(reads) == 1 and panel.triage["target"] == 0.999


def test_the_tables_are_plain_html_with_every_text_escaped():
    """The kappa and abstention tables are HTML tables (no grid widget to load and lay out); a
    reviewer's name is anyone's text, so it reaches the page escaped."""
    import pandas as pd

    from reviewer.components.stats_panel import _fill, _table

    table = _table("sr-kappa-table")
    _fill(table, pd.DataFrame({"reviewer a": ["<img src=x onerror=alert(1)>"], "kappa": [float("nan")], "n": [None]}))
    assert table.visible and "<table" in table.object
    assert "<img" not in table.object and "&lt;img src=x onerror=alert(1)&gt;" in table.object
    assert "nan" not in table.object.lower() and "<td></td>" in table.object  # no value: an empty cell
    _fill(table, None)
    assert not table.visible


def served_refresh(store, doc: ServedDoc) -> StatsPanel:
    panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
    with set_curdoc(doc):
        panel.refresh()
    return panel


def test_pages_share_what_one_computed_and_show_it_marked_while_what_was_written_since_is_computed(labelled_db,
                                                                                                  monkeypatch):
    """Issue 22: one page's figures serve the next page at once while nothing they are read from was
    written; after a write the next page shows them at once marked with their time, computes both
    parts again, and then shows the new figures (never stuck on the old ones)."""
    with Store(labelled_db) as store:
        doc = ServedDoc()
        first = served_refresh(store, doc)
        assert first._pending == {"stats", "triage"} and "Computing the statistics" in first._status.object
        doc.run(2)  # both parts computed (in threads) and shown
        assert first._pending == set() and first._status.object == ""
        raters = lambda panel: {r for _, r in panel._ratings._bars.data["x"]}  # noqa: E731 (the bars' raters)
        assert "zed" not in raters(first)

        second = served_refresh(store, doc)  # nothing written since: shown at once, nothing computed
        assert second._pending == set() and second._status.object == "" and doc.ticks.empty()
        assert second.triage == first.triage and second._plots["scores"].pane.visible

        tid = triage.compute_signals(store).index[0]
        store.labels.add_rating(tid, "zed", 2, "1")
        third = served_refresh(store, doc)
        assert third._pending == {"stats", "triage"}
        assert "Figures as of" in third._status.object and "computing them again" in third._status.object
        assert third._plots["scores"].pane.visible and "zed" not in raters(third)  # the remembered ones, while the new compute
        doc.run(2)
        assert third._status.object == "" and third._pending == set()
        assert "zed" in raters(third) and stats_snapshots.remembered(store, "stats").value["distributions"]["zed"]["n"] == 1

        # a page sent the tab before it was opened (filled, marked with its time): opened after a write, its
        # status goes from that mark to the one saying they are computed again, never through nothing
        prepared = StatsPanel(state=ReviewState(store, reviewer="bob", blind=False))
        prepared.prepare()
        statuses = []
        prepared._status.param.watch(lambda e: statuses.append(e.new), "object")
        store.labels.add_rating(tid, "xia", 1, "1")
        with set_curdoc(doc):
            prepared.refresh()
        assert len(statuses) == 1 and "labels or trajectories were written since" in statuses[0]
        doc.run(2)
        assert statuses[-1] == "" and "xia" in raters(prepared)

        # a computation that fails after the remembered figures were shown says so, and how old they are
        store.labels.add_rating(tid, "yan", 4, "1")
        monkeypatch.setattr("reviewer.services.stats.review_stats", lambda *_, **__: 1 / 0)
        fourth = served_refresh(store, doc)
        doc.run(2)
        assert "could not be computed: ZeroDivisionError" in fourth._status.object
        assert "The figures shown are as of" in fourth._status.object and "yan" not in raters(fourth)


def test_a_failure_to_read_what_the_reviewer_may_see_is_said_in_the_tab(labelled_db, monkeypatch):
    """The blind rule's reads happen as the figures are shown (review of issue 45): one that fails is said
    in the status, as a failed computation is, never left at "Computing…"."""
    with Store(labelled_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann"))

        def unreadable(*_args, **_kwargs):
            raise OSError("the store is gone")

        monkeypatch.setattr(panel.state.labels, "visible_stats", unreadable)
        panel.refresh()
        assert "could not be computed" in panel._status.object and "the store is gone" in panel._status.object


def test_a_prepared_tab_holds_the_selection_plots_back_until_it_is_opened(labelled_db):
    """Sent hidden with the page (prepare), the tab carries no HoloViews figure: those weigh on every key of
    the review screen (docs/benchmarks.md); its first opening (refresh) puts them in, once."""
    with Store(labelled_db) as store:
        panel = StatsPanel(state=ReviewState(store, reviewer="ann", blind=False))
        panes = [panel.selection.gold.pane, panel.selection.judge.pane]
        panel.prepare()
        assert not any(p in panel._body.objects for p in panes)
        panel.refresh()
        panel.refresh()
    body = list(panel._body.objects)
    assert [body.count(p) for p in panes] == [1, 1] and body[-1] is panel.calibration
