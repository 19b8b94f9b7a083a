"""Issue 45, item 4: one blind rule (LabelService.sees_others) really everywhere. A reviewer with no label
of their own walks every tab and filter of the page's components while other reviewers' labels conflict
(verdicts, VI labels, scores, in the whole queue and in a blind campaign): the Conflicts tab (verdict and
VI conflicts), the queue (≠, its filters, "Reviewed by", progress), the Review tab's other reviewers, the
Stats tab's tables and figures, and the exports the page offers. Nothing of the others shows: no name,
no count, no disagreement mark, and no figure moves when another reviewer adds a label on an item the
walker has not labelled. In an open (not blind) review everything shows."""
from __future__ import annotations

import json

import numpy as np
import pytest
from bokeh.models import ColumnDataSource, FactorRange, Range1d, Span

from reviewer.components.conflicts import ConflictQueue
from reviewer.components.controls import Controls
from reviewer.components.feedback import OthersView
from reviewer.components.queue import QueueView
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.components.stats_panel import StatsPanel
from reviewer.review_state import ReviewState
from reviewer.services.conflicts import sync_verdict_states

OTHERS = ("annwyl", "bodhran")  # names found nowhere else in the page (not in the demo's words)
WALKER = "cyprian"
RUBRIC = "v1"


@pytest.fixture
def disputed(demo_store, wait_for_background_renders):
    """annwyl and bodhran disagree on vet items (verdicts), on a verify item, on a spectrum's VI class, and
    score trajectories; the walker has labelled nothing."""
    store = demo_store
    rows = store.queue.queue_items(limit=200)
    vet = [r for r in rows if r["task"] != "verify" and r["answer"] in ("YES", "NO")][:4]
    verify = next(r for r in rows if r["task"] == "verify" and r["answer"])
    a, b = OTHERS
    for r in vet[:3]:
        store.labels.add_review(r["trajectory_id"], a, "approve")
        store.labels.add_review(r["trajectory_id"], b, "override",
                                label={"answer": "NO" if r["answer"] == "YES" else "YES"}, comment="zq-why-not")
    store.labels.add_review(verify["trajectory_id"], a, "approve")
    store.labels.add_review(verify["trajectory_id"], b, "reject", comment="zq-bad-data")
    for n, r in enumerate(vet):
        store.labels.add_rating(r["trajectory_id"], a, n % 5, RUBRIC)
        store.labels.add_rating(r["trajectory_id"], b, (n * 2) % 5 + 1, RUBRIC)
    spectrum = verify["spectrum_id"]
    store.labels.add_vi_label(spectrum, a, quality=4, spectype="STAR", z=0.0, comment="zq-m-dwarf")
    store.labels.add_vi_label(spectrum, b, quality=4, spectype="QSO", z=1.2, comment="zq-broad-lines")
    sync_verdict_states(store)
    yield store, vet, verify
    wait_for_background_renders()


def figure_data(fig) -> list:
    """What a figure draws: its sources' columns, its factors, ranges and spans (as plain lists)."""
    out = []
    for model in fig.select({"type": ColumnDataSource}):
        out.append({k: np.asarray(v, dtype=object).tolist() for k, v in sorted(model.data.items())})
    for model in fig.select({"type": FactorRange}):
        out.append(list(model.factors))
    for model in fig.select({"type": Range1d}):
        out.append((model.start, model.end))
    for model in fig.select({"type": Span}):
        out.append(model.location)
    return out


def stats_shown(panel: StatsPanel) -> dict:
    """Everything the Stats tab shows: each visible figure's data, each visible table and note."""
    shown = {name: figure_data(p.fig) if p.pane.visible else None for name, p in panel._plots.items()}
    shown.update({name: p.note.object if p.note.visible else None for name, p in
                  ((f"{n} note", p) for n, p in panel._plots.items())})
    for name, pane in (("kappa", panel._kappa), ("kappa note", panel._kappa_note), ("statement", panel._statement),
                       ("abstention", panel._abstention), ("blind", getattr(panel, "_blind_note", None)),
                       ("status", panel._status)):
        shown[name] = pane.object if pane is not None and pane.visible else None
    shown["kappa block"] = panel._kappa_block.visible
    return shown


def text_of(*values) -> str:
    return json.dumps(values, default=str)


def assert_nothing_of_others(text: str, where: str) -> None:
    for secret in (*OTHERS, "zq-"):
        assert secret not in text, f"{where} shows {secret!r}"


def walk(store, state: ReviewState, vet, verify) -> str:
    """Every tab and filter of the page, as `state`'s reviewer: all the text it shows, joined."""
    seen = []
    # Conflicts (verdict and VI conflicts): listed, counted, detailed, resolvable
    conflicts = ConflictQueue(state=state)
    conflicts.refresh()
    seen += [conflicts._table.rows, conflicts._count.object, conflicts._detail.object, conflicts._who.object,
             conflicts.total, len(conflicts.items)]
    # the queue: its rows (≠), progress, each filter that names or counts others' labels
    queue = QueueView(state=state)
    seen += [queue._table.rows, queue._progress.object]
    for choice in ("yes", "no"):
        state.filters.disagreement = choice
        seen += [queue.count(), queue._table.rows]
    state.filters.disagreement = "any"
    for other in OTHERS:
        state.filters.reviewed_by = other
        seen += [state.queue_args()["reviewed_by"], queue.count(), queue._table.rows, state.filters.reviewed_by]
    state.filters.reviewed_by = ""
    # the Review tab's other reviewers, on every disputed item
    for r in [*vet, verify]:
        state.open_item(trajectory_id=r["trajectory_id"])
        seen.append(OthersView(state=state)._pane.object)
    # the exports of the item on screen (the spectrum's arrays)
    state.open_item(trajectory_id=verify["trajectory_id"])
    controls = Controls(plot=SpectrumPlot(state=state), state=state)
    seen += [controls.export_csv().decode(errors="replace"), controls.export_fits().decode(errors="replace")]
    return text_of(*seen)


def test_an_unlabelled_reviewer_finds_nothing_of_others_anywhere(disputed):
    store, vet, verify = disputed
    state = ReviewState(store, reviewer=WALKER)
    text = walk(store, state, vet, verify)
    assert_nothing_of_others(text, "the page")
    conflicts = ConflictQueue(state=state)
    conflicts.refresh()
    assert conflicts.items == [] and conflicts.total == 0 and not conflicts._table.rows  # not listed, not counted
    assert "blind review" in conflicts._detail.object
    assert "≠" not in text
    assert store.queue.queue_count(WALKER, **{**state.queue_args(), "disagreement": True}) == 0
    # "Reviewed by" another reviewer is refused, said, and cleared; the walker's own name is allowed
    state.filters.reviewed_by = OTHERS[0]
    assert state.filters.reviewed_by == "" and "blind review" in state.error.lower()
    assert state.queue_args()["reviewed_by"] is None
    state.filters.reviewed_by = WALKER
    assert state.queue_args()["reviewed_by"] == WALKER
    assert store.queue.queue_count(WALKER, **state.queue_args()) == 0


def test_the_priority_order_is_refused_while_it_would_move_with_hidden_labels(disputed):
    """The triage priority counts each item's reviewers and is weighted by a fit on every verdict: items
    others labelled would sink or rise in it (review of issue 45). Refused while blind review hides those
    labels, said, and set back to the queue order; allowed once nothing is hidden (an open review)."""
    store, _vet, _verify = disputed
    state = ReviewState(store, reviewer=WALKER)
    state.filters.sort = "likely errors first (priority)"
    assert state.filters.sort == "queue order" and "priority order" in state.error
    assert state.queue_args()["order"] == "default"
    open_review = ReviewState(store, reviewer=WALKER, blind=False)
    open_review.filters.sort = "likely errors first (priority)"
    assert open_review.queue_args()["order"] == "priority"


def test_the_stats_tab_shows_nothing_that_moves_with_anothers_label(disputed):
    store, vet, _ = disputed
    panel = StatsPanel(state=ReviewState(store, reviewer=WALKER))
    panel.refresh()
    before = stats_shown(panel)
    assert_nothing_of_others(text_of(before), "the Stats tab")
    assert before["blind"] and "blind review" in before["blind"].lower()
    # another reviewer labels more items the walker has not labelled: a verdict, an override, a score
    a, b = OTHERS
    rows = store.queue.queue_items(limit=200)
    fresh = [r for r in rows if r["answer"] in ("YES", "NO") and r["trajectory_id"] not in
             {v["trajectory_id"] for v in vet}][:2]
    store.labels.add_review(fresh[0]["trajectory_id"], b, "override",
                            label={"answer": "NO" if fresh[0]["answer"] == "YES" else "YES"})
    store.labels.add_review(fresh[1]["trajectory_id"], a, "approve")
    store.labels.add_review(fresh[1]["trajectory_id"], b, "reject")
    store.labels.add_rating(fresh[0]["trajectory_id"], a, 5, RUBRIC)
    store.labels.add_rating(fresh[0]["trajectory_id"], b, 0, RUBRIC)
    sync_verdict_states(store)
    panel.refresh()
    assert stats_shown(panel) == before


def test_a_labelled_reviewer_sees_only_pairs_with_themselves_and_their_own_accuracy(disputed):
    store, vet, _ = disputed
    tid = vet[0]["trajectory_id"]
    store.labels.add_review(tid, WALKER, "approve")
    store.labels.add_rating(tid, WALKER, 3, RUBRIC)
    sync_verdict_states(store)
    state = ReviewState(store, reviewer=WALKER)
    conflicts = ConflictQueue(state=state)
    conflicts.refresh()
    assert [i["item_id"] for i in conflicts.items] == [tid] and conflicts.total == 1  # the one they labelled
    assert OTHERS[1] in conflicts._detail.object  # and, there, who said what
    panel = StatsPanel(state=state)
    panel.refresh()
    kappa = panel._kappa.object
    assert WALKER in kappa and OTHERS[0] in kappa and OTHERS[1] in kappa  # two pairs, each with the walker
    assert kappa.count(WALKER) == 2
    raters = set(panel._ratings._bars.data["rater"])
    assert raters == {WALKER}  # their own scores' distribution only
    assert set(panel._correlation._source.data["a"]) | set(panel._correlation._source.data["b"]) <= {WALKER, *OTHERS}
    before = stats_shown(panel)
    other = next(r for r in store.queue.queue_items(limit=200)
                 if r["answer"] in ("YES", "NO") and r["trajectory_id"] != tid)
    store.labels.add_review(other["trajectory_id"], OTHERS[1], "override",
                            label={"answer": "NO" if other["answer"] == "YES" else "YES"})
    sync_verdict_states(store)
    panel.refresh()
    assert stats_shown(panel) == before  # another's label elsewhere moves nothing the walker sees


def test_a_blind_campaign_shows_no_member_progress_but_ones_own(disputed):
    store, vet, verify = disputed
    ids = [r["trajectory_id"] for r in vet]
    sid = store.sessions.create_session("zq-walk", "verdicts", ids, [*OTHERS, WALKER], blind=True)
    for tid in ids[:2]:
        store.labels.add_review(tid, OTHERS[0], "approve", session_id=sid)
        store.labels.add_review(tid, OTHERS[1], "reject", session_id=sid)
    state = ReviewState(store, reviewer=WALKER)
    assert state.open_campaign("zq-walk") and state.blind
    text = walk(store, state, vet, verify)
    # who may resolve names the campaign's assigned reviewers (its set-up, not anyone's label): nothing else does
    members = f"({', '.join([*OTHERS, WALKER])})"
    assert members in text
    assert_nothing_of_others(text.replace("zq-walk", "").replace(members, ""), "the campaign's page")
    queue = QueueView(state=state)
    assert f"{WALKER}: 0 / 4 reviewed" in queue._progress.object  # their own progress, no one else's
    panel = StatsPanel(state=state)
    panel.refresh()
    assert_nothing_of_others(text_of(stats_shown(panel)).replace("zq-walk", ""), "the campaign's Stats tab")


def test_an_open_review_shows_everything(disputed):
    store = disputed[0]
    state = ReviewState(store, reviewer=WALKER, blind=False)
    conflicts = ConflictQueue(state=state)
    conflicts.refresh()
    assert conflicts.total == 5  # three vet items, the verify item, the spectrum
    state.filters.reviewed_by = OTHERS[0]
    assert state.filters.reviewed_by == OTHERS[0] and state.queue_args()["reviewed_by"] == OTHERS[0]
    panel = StatsPanel(state=state)
    panel.refresh()
    assert OTHERS[0] in panel._kappa.object and OTHERS[1] in panel._kappa.object
    assert set(panel._ratings._bars.data["rater"]) == set(OTHERS)
    assert not stats_shown(panel)["blind"]


def test_a_reviewer_alone_sees_every_figure_until_another_labels_an_item_they_have_not(demo_store,
                                                                                          wait_for_background_renders):
    """Blind review hides only what is others': the default single-user page (the whole queue blind, one
    reviewer) shows the team's figures, the triage's calibration and abstention included, since they hold
    nobody else's label; once another reviewer labels an item the first has not, the blind view applies. A
    label of the other on an item both labelled alone leaves everything shown."""
    store = demo_store
    rows = [r for r in store.queue.queue_items(limit=200) if r["answer"] in ("YES", "NO")]
    mine, theirs = rows[:3], rows[3]
    for n, r in enumerate(mine):
        store.labels.add_review(r["trajectory_id"], WALKER, "approve" if n else "reject")
        store.labels.add_rating(r["trajectory_id"], WALKER, n + 2, RUBRIC)
    sync_verdict_states(store)
    state = ReviewState(store, reviewer=WALKER)
    assert state.blind and state.labels.sees_team_figures(WALKER, state.blind)
    panel = StatsPanel(state=state)
    panel.refresh()
    alone = stats_shown(panel)
    assert alone["blind"] is None  # no blind note: nothing is held back
    assert alone["calibration"] is not None and panel.triage  # the calibration plotted from the labels
    assert alone["statement"] and "blind review" not in alone["statement"].lower()
    assert set(panel._ratings._bars.data["rater"]) == {WALKER}
    open_review = StatsPanel(state=ReviewState(store, reviewer=WALKER, blind=False))
    open_review.refresh()
    unordered = {k: sorted(map(repr, v)) if isinstance(v, list) else v for k, v in alone.items()}  # models' order
    assert {k: sorted(map(repr, v)) if isinstance(v, list) else v for k, v in stats_shown(open_review).items()} \
        == unordered  # exactly what an open review shows
    # another reviewer on an item the walker labelled: still nothing the walker may not see
    store.labels.add_review(mine[0]["trajectory_id"], OTHERS[0], "approve")
    store.labels.add_rating(mine[0]["trajectory_id"], OTHERS[0], 1, RUBRIC)
    sync_verdict_states(store)
    assert state.labels.sees_team_figures(WALKER, state.blind)
    panel.refresh()
    shared = stats_shown(panel)
    assert shared["blind"] is None and shared["calibration"] is not None
    assert OTHERS[0] in panel._kappa.object  # the pair the two share
    # ... and on an item the walker has not labelled: the blind view, the calibration withheld
    store.labels.add_review(theirs["trajectory_id"], OTHERS[0], "override",
                            label={"answer": "NO" if theirs["answer"] == "YES" else "YES"})
    sync_verdict_states(store)
    assert not state.labels.sees_team_figures(WALKER, state.blind)
    panel.refresh()
    reduced = stats_shown(panel)
    assert reduced["blind"] and "blind review" in reduced["blind"].lower()
    assert reduced["calibration"] is None and not panel.triage
    assert "blind review" in reduced["statement"].lower() and reduced["abstention"] is None
    # a score alone (no verdict) of another on an item the walker has not scored is theirs too
    store.labels.add_review(theirs["trajectory_id"], OTHERS[0], "clear")  # the verdict withdrawn
    sync_verdict_states(store)
    assert state.labels.sees_team_figures(WALKER, state.blind)  # withdrawn: nothing of theirs left unseen
    store.labels.add_rating(theirs["trajectory_id"], OTHERS[1], 4, RUBRIC)
    assert not state.labels.sees_team_figures(WALKER, state.blind)
    assert state.labels.sees_team_figures(WALKER, False)  # an open review shows everything


def test_the_team_figures_rule_reads_each_scope_and_resolutions(demo_store):
    """`sees_team_figures` in a blind campaign reads the campaign's labels (its figures are of those), and a
    merger's resolution on an item the reviewer has no verdict on counts as another's label."""
    store = demo_store
    rows = [r for r in store.queue.queue_items(limit=200) if r["answer"] in ("YES", "NO")]
    ids = [r["trajectory_id"] for r in rows[:4]]
    labels = ReviewState(store, reviewer=WALKER).labels
    sid = store.sessions.create_session("zq-scope", "verdicts", ids, [WALKER, *OTHERS], blind=True)
    store.labels.add_review(ids[0], WALKER, "approve", session_id=sid)
    store.labels.add_review(ids[1], OTHERS[0], "approve")  # outside the campaign
    assert labels.sees_team_figures(WALKER, True, sid) and not labels.sees_team_figures(WALKER, True)
    store.labels.add_review(ids[0], OTHERS[0], "reject", session_id=sid)  # where the walker labelled
    assert labels.sees_team_figures(WALKER, True, sid)
    store.labels.add_rating(ids[2], OTHERS[1], 3, RUBRIC, session_id=sid)  # a score where the walker has none
    assert not labels.sees_team_figures(WALKER, True, sid)
    assert labels.sees_team_figures(WALKER, False, sid)
    store.labels.add_review(ids[1], WALKER, "approve")  # the whole store: the walker labelled and scored them too
    store.labels.add_rating(ids[2], WALKER, 2, RUBRIC)
    assert labels.sees_team_figures(WALKER, True)
    store.reviews.add_resolution("trajectory", ids[3], OTHERS[1], "approve", merger_comment="zq-settled")
    assert not labels.sees_team_figures(WALKER, True)
    store.labels.add_review(ids[3], WALKER, "approve")
    assert labels.sees_team_figures(WALKER, True)
