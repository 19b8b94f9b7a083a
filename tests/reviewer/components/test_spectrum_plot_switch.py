"""What an item switch sends to the browser from the plot: each column set at most once, and nothing
for a hidden legend. Each column set sent is decoded and redrawn in the browser, and BokehJS redraws
every entry of a legend (shown or not) each time one of its renderers' data changes: on the demo
these made most of the browser's work of a switch to another spectrum (bench/bench_ui.py)."""
from __future__ import annotations

from collections import Counter

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent

from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


@pytest.fixture
def state(tmp_path, wait_for_background_renders):
    store = Store(tmp_path / "switch.duckdb")
    seed_demo_if_empty(store)
    state = ReviewState(store, reviewer="ann")
    assert state.open_item(trajectory_id=store.queue.queue_items("ann", limit=1)[0]["trajectory_id"])
    yield state
    wait_for_background_renders()
    store.close()


def shown(plot: SpectrumPlot) -> Document:
    doc = Document()
    doc.add_root(pn.panel(plot).get_root(doc))
    return doc


def sent_during(doc: Document, action) -> list:
    events: list = []
    doc.on_change(events.append)
    action()
    doc.remove_on_change(events.append)
    return events


def test_an_item_switch_sends_each_column_set_once(state):
    plot = SpectrumPlot(state=state)
    doc = shown(plot)
    spectra_seen, switches = set(), 0
    for _ in range(20):
        before = state.item.spectrum_id
        events = sent_during(doc, lambda: state.step_item(+1))
        if state.item.spectrum_id == before:
            continue
        switches += 1
        spectra_seen.add(state.item.spectrum_id)
        sent = Counter(e.model.id for e in events if isinstance(e, ColumnDataChangedEvent)
                       or (isinstance(e, ModelChangedEvent) and e.attr == "data"))
        assert sent and max(sent.values()) == 1, f"a column set sent {max(sent.values())} times in one switch"
    assert switches >= 3 and len(spectra_seen) >= 3


def test_a_hidden_legend_holds_no_entries_and_a_shown_one_lists_them(state):
    plot = SpectrumPlot(state=state)
    doc = shown(plot)
    assert plot.legend.items == [] and not plot.legend.visible
    events = sent_during(doc, lambda: state.step_item(+1))
    assert not [e for e in events if isinstance(e, ModelChangedEvent) and e.model is plot.legend]
    plot.show_legend = True
    labels = [item.label.value for item in plot.legend.items]
    assert plot.legend.visible and labels[:4] == ["flux", "noise", "model", "masked"]
    assert labels == [item.label.value for item in plot.legend_entries()]
    plot.show_legend = False
    assert plot.legend.items == [] and not plot.legend.visible
