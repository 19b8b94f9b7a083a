"""Stats that lead to items (issue 47, item 7), on a copy of the demo's real DuckDB file, no browser: a
selection event on a Stats plot's Selection1D stream (what HoloViews sends when points are box-selected or
tapped) sets the queue's filter to those items' ids, the queue lists exactly them with a chip saying how
many, and the chip removes the filter. (a) one reviewer's misses on a campaign's gold items; (b) low
credibility with judge-human disagreement."""
from __future__ import annotations

import panel as pn
from bokeh.document import Document
from bokeh.models import HoverTool

from reviewer.components.queue import QueueView
from reviewer.components.stats_panel import StatsPanel
from reviewer.review_state import ReviewState
from reviewer.services.campaigns import create_campaign
from reviewer.services.items import find_campaign, trajectory
from reviewer.services.labels import LabelService

HOSTILE = "<img src=x onerror=alert(1)>"


def models(panel: StatsPanel) -> Document:
    """The panel's Bokeh models in a document, as a page opening the tab makes them."""
    doc = Document()
    pn.panel(panel).get_root(doc)
    return doc


def queue_ids(queue: QueueView) -> list[str]:
    return [r["trajectory_id"] for r in queue.fetch(0, 1000)]


def select(plot, where) -> list[str]:
    """Fire the plot's selection stream with the points `where(row)` keeps; their trajectory ids."""
    frame = plot.frame
    index = [i for i, row in enumerate(frame.to_dict("records")) if where(row)]
    plot.selection.event(index=index)
    return [frame["trajectory_id"].iat[i] for i in index]


def gold_campaign(store, tmp_path) -> tuple[dict, list[dict]]:
    """A campaign "cal" of ann and bo whose gold items are six answered items of task a, every known answer the
    agent's own; the campaign and those items' rows."""
    names = {s["spectrum_id"]: s["file_name"] for s in store.spectra.list_spectra(limit=100)}
    rows = sorted((r for r in store.trajectories.list_trajectories(task="a") if r["answer"] in ("YES", "NO")),
                  key=lambda r: r["id"])[:6]
    gold = tmp_path / "gold.csv"
    gold.write_text("file,task,answer\n" + "".join(f"{names[r['spectrum_id']]},a,{r['answer']}\n" for r in rows))
    create_campaign(store, "cal", task="a", reviewers=["ann", "bo"], gold_file=str(gold), gold_rate=0.99)
    return find_campaign(store, "cal"), rows


def test_selecting_one_reviewers_misses_on_gold_lists_those_items(demo_store, tmp_path):
    store, labels = demo_store, LabelService(demo_store)
    campaign, rows = gold_campaign(store, tmp_path)
    flip = {"YES": "NO", "NO": "YES"}
    for i, r in enumerate(rows):  # ann misses the first two and the last; bo misses the third only
        for who, wrong in (("ann", i in (0, 1, 5)), ("bo", i == 2)):
            if wrong:
                labels.write_verdict(who, trajectory(store, r["id"]), "override", {"answer": flip[r["answer"]]},
                                     campaign=campaign)
            else:
                labels.write_verdict(who, trajectory(store, r["id"]), "approve", campaign=campaign)
    state = ReviewState(store, reviewer="ann", blind=False)
    assert state.open_campaign("cal")
    panel, queue = StatsPanel(state=state), QueueView(state=state)
    panel.refresh()
    models(panel)
    plot = panel.selection.gold
    assert plot.pane.visible and len(plot.frame) == 12
    everything = queue.count()

    chosen = select(plot, lambda row: row["reviewer"] == "ann" and row["outcome"] == "missed")
    assert sorted(chosen) == sorted(rows[i]["id"] for i in (0, 1, 5))
    assert sorted(state.filters.selected_ids) == sorted(chosen)
    assert sorted(queue_ids(queue)) == sorted(chosen) and queue.count() == 3
    assert queue._selection.visible and queue._selection.label.startswith("3 items selected in Stats")

    plot.selection.event(index=[])  # a click beside the points leaves the queue's filter as it is
    assert queue.count() == 3
    queue._selection.clicks += 1  # the chip removes it
    assert state.filters.selected_ids is None and not queue._selection.visible
    assert queue.count() == everything
    assert set(plot.frame["reviewer"]) == {"ann", "bo"}


def test_selecting_low_credibility_with_judge_disagreement_lists_those_items(demo_store):
    store, labels = demo_store, LabelService(demo_store)
    verify = sorted(store.trajectories.list_trajectories(task="verify"), key=lambda r: r["id"])
    low = [r["id"] for r in verify if r["credibility"] == "LOW"][:4]
    high = [r["id"] for r in verify if r["credibility"] in ("HIGH", "MEDIUM")][:2]
    # people and the judge: far apart on low[0], low[1] and high[0]; close on low[2], low[3] and high[1]
    for tid, person, judged in ((low[0], 5, 1), (low[1], 0, 4), (low[2], 3, 3), (low[3], 4, 3),
                                (high[0], 5, 0), (high[1], 2, 2)):
        labels.write_score("ann", tid, person, "1")
        store.labels.add_rating(tid, HOSTILE, judged, "1", rater_kind="llm")  # a judge is named by anyone
    state = ReviewState(store, reviewer="ann", blind=False)
    panel, queue = StatsPanel(state=state), QueueView(state=state)
    panel.refresh()
    models(panel)
    plot = panel.selection.judge
    assert plot.pane.visible and len(plot.frame) == 6
    # a box over the LOW row (y from -2.5 to -1.5), right of a disagreement of 2
    chosen = select(plot, lambda row: row["x"] >= 2 and -2.5 <= row["y"] <= -1.5)
    assert sorted(chosen) == sorted(low[:2])
    assert sorted(queue_ids(queue)) == sorted(low[:2]) and queue.count() == 2
    assert queue._selection.label.startswith("2 items selected in Stats")
    assert set(plot.frame["judge"]) == {HOSTILE}  # on the page only as a hover field, which Bokeh escapes
    hover = str(plot.pane.get_root().select_one({"type": HoverTool}).tooltips)
    assert "{safe}" not in hover and "judge" in hover


def test_a_selection_beyond_the_cap_keeps_the_first_ids_and_says_so(demo_store):
    from reviewer.store.queue import MAX_SELECTED_IDS

    state = ReviewState(demo_store, reviewer="ann", blind=False)
    queue = QueueView(state=state)
    every = queue_ids(queue)
    state.filters.select(every[:2] + [f"gone-{i}" for i in range(MAX_SELECTED_IDS)])
    assert len(state.filters.selected_ids) == MAX_SELECTED_IDS and queue.count() == 2
    assert queue._selection.label == (f"{MAX_SELECTED_IDS:,} items selected in Stats (the first "
                                      f"{MAX_SELECTED_IDS:,} of {MAX_SELECTED_IDS + 2:,}) ✕")


def test_nothing_to_select_no_plot(demo_store):
    panel = StatsPanel(state=ReviewState(demo_store, reviewer="ann", blind=False))
    panel.refresh()
    models(panel)  # empty plots make their models too
    assert not panel.selection.gold.pane.visible and not panel.selection.judge.pane.visible


def test_blind_review_shows_only_ones_own_gold_verdicts(demo_store, tmp_path):
    store, labels = demo_store, LabelService(demo_store)
    campaign, rows = gold_campaign(store, tmp_path)
    labels.write_verdict("ann", trajectory(store, rows[0]["id"]), "approve", campaign=campaign)
    labels.write_verdict("bo", trajectory(store, rows[1]["id"]), "approve", campaign=campaign)  # not ann's to see
    state = ReviewState(store, reviewer="ann", blind=True)
    assert state.open_campaign("cal") and state.blind
    panel = StatsPanel(state=state)
    panel.refresh()
    assert list(panel.selection.gold.frame["trajectory_id"]) == [rows[0]["id"]]
