"""The Same-object panel, the plot's overlay, the queue filter, Compare with and the links, on a LAMOST
star observed twice (real files of the shared corpus), without a browser."""
from __future__ import annotations

import numpy as np
import pytest

from reviewer.components.metadata import MetadataPanel, links_html
from reviewer.components.preference_form import PreferenceForm
from reviewer.components.queue import QueueView
from reviewer.components.same_object import SameObjectPanel
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.review_state import ReviewState
from reviewer.services.ingest import ingest_paths

FIRST = "lamost_junhui_ccf/spec-55859-F5907_sp03-090.fits.gz"  # 2011-10-24
SECOND = "lamost_junhui_ccf/spec-55915-F5591503_sp09-174.fits.gz"  # 2011-12-19, the same star
OTHER = "lamost_junhui_ccf/spec-55859-F5902_sp03-232.fits.gz"


@pytest.fixture
def pair(store, shared_spectra, make_trajectory, wait_for_background_renders):
    summary = ingest_paths(store, [shared_spectra / f for f in (FIRST, SECOND, OTHER)], progress=False,
                           with_file_ids=True)
    ids = [summary.file_ids[str(shared_spectra / f)][0] for f in (FIRST, SECOND, OTHER)]
    for sid in ids:
        store.trajectories.save_trajectory(make_trajectory(spectrum_id=sid))
    state = ReviewState(store, reviewer="ann")
    assert state.open_item(spectrum_id=ids[0])
    yield state, ids
    wait_for_background_renders()  # the renders an opened item queues, before the store closes


def test_lists_both_epochs_and_overlays_the_second(pair):
    state, (first, second, _) = pair
    panel, plot = SameObjectPanel(state=state), SpectrumPlot(state=state)
    assert [r["spectrum_id"] for r in panel.rows] == [first, second]  # by date
    assert "2011-10-24" in panel._table.object and "2011-12-19" in panel._table.object
    assert panel._table.object.count("a/vet: YES") == 2  # the agents' answers on each
    assert list(panel._overlay.options.values()) == [second]
    panel._overlay.value = [second]
    assert state.frame.overlays == [(second, panel._colours[second])]
    data = plot.overlay_source.data
    assert data["name"] == [second] and len(data["xs"][0]) > 3000
    ref = np.nanmedian(plot.drawn_flux())
    assert np.nanmedian(data["ys"][0]) == pytest.approx(ref, rel=0.1)  # normalised to the spectrum on screen
    observed = np.asarray(data["xs"][0])[0]
    state.frame.param.update(z=0.5, rest_frame=True)
    assert np.asarray(plot.overlay_source.data["xs"][0])[0] == pytest.approx(observed / 1.5, rel=1e-5)
    panel._pick.value = second
    panel._open.clicks += 1  # open the other epoch: its own overlays start empty
    assert state.item.spectrum_id == second and state.frame.overlays == [] and plot.overlay_source.data["xs"] == []
    assert panel._overlay.value == [] and list(panel._overlay.options.values()) == [first]


def test_a_spectrum_alone_says_so(pair):
    state, (_, _, other) = pair
    state.open_item(spectrum_id=other)
    panel = SameObjectPanel(state=state)
    assert panel.rows == [] and "No other spectrum" in panel._table.object and not panel._overlay.visible


def test_queue_filters_objects_with_several_spectra(pair):
    state, (first, second, _) = pair
    queue = QueueView(state=state)
    queue.state.filters.several_spectra = "yes"
    assert queue.total == 2 and {r["spectrum_id"] for r in queue.rows} == {first, second}
    queue.state.filters.several_spectra = "no"
    assert queue.total == 1


def test_compare_with_offers_the_other_epochs_trajectory(pair):
    state, (_, second, _) = pair
    form = PreferenceForm(state=state)
    other = state.store.trajectories.trajectories_on_spectrum(second)[0]["id"]
    assert other in form._other.options.values()
    assert any("other spectrum: LAMOST" in label for label in form._other.options)
    form._other.value = other
    ack = state.writer.save("preference", other_id=other, outcome="win")
    assert ack is not None and state.error == ""


def test_metadata_links_open_in_a_new_tab(pair):
    state, _ = pair
    html = MetadataPanel(state=state)._links.object
    assert html == links_html(state.item.record)
    assert html.count("target='_blank' rel='noopener noreferrer'") == 2  # LAMOST page, Legacy Survey viewer
    assert "https://www.lamost.org/dr8/v2.0/spectrum/view?obsid=203090" in html
