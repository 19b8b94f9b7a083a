import numpy as np
import pytest
from bokeh.document import Document
from bokeh.models import Range1d

import panel as pn
from reviewer.components.controls import Controls
from reviewer.components.metadata import MetadataPanel
from reviewer.components.spectrum_list import SpectrumList
from reviewer.components.spectrum_plot import SpectrumPlot, robust_y_range


def x_range_of(root):
    ranges = sorted(root.select({"type": Range1d}), key=lambda r: abs(r.end))
    return ranges[-1].start, ranges[-1].end


def test_zoom_updates_the_bokeh_range_in_place(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum)
    root = pn.panel(plot).get_root(Document())
    assert x_range_of(root) == pytest.approx((3800.0, 9000.0))
    plot.zoom_to(6400, 6700)
    assert x_range_of(root) == (6400, 6700)
    assert "6400.0" in plot.status
    plot.previous_zoom()
    assert plot.x_range is None and x_range_of(root) == pytest.approx((3800.0, 9000.0))


def test_zoom_history_reset_and_invalid_ranges(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum)
    plot.zoom_to(4000, 5000)
    plot.zoom_to(4500, 4600)
    plot.reset_zoom()
    assert plot.x_range is None
    plot.previous_zoom()
    assert plot.x_range == (4500, 4600)
    plot.previous_zoom()
    assert plot.x_range == (4000, 5000)
    with pytest.raises(ValueError, match="minimum must be below"):
        plot.zoom_to(6700, 6400)


def test_y_range_ignores_the_spike(synthetic_spectrum):
    lo, hi = robust_y_range(np.asarray(synthetic_spectrum.flux.value))
    assert hi < 1000  # the 1e5 cosmic ray does not set the scale


def test_smoothing_changes_what_is_drawn_and_masks_stay_out(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum)
    raw = plot.drawn_flux()
    assert np.isnan(raw[1500])
    plot.param.update(smoothing="gaussian", sigma_px=5)
    smooth = plot.drawn_flux()
    line = np.argmin(np.abs(synthetic_spectrum.spectral_axis.value - 6564.6))
    assert smooth[line] > raw[line]  # the line core is filled in by smoothing
    assert smooth[1499] < 200  # the masked spike does not leak into its neighbours


def test_rest_frame_and_lines_follow_z(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum, z=0.1, rest_frame=True)
    lo, hi = plot.full_range()
    assert lo == pytest.approx(3800 / 1.1) and hi == pytest.approx(9000 / 1.1)


def test_controls_apply_typed_range_and_report_bad_input(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum)
    controls = Controls(plot=plot)
    controls._min.value, controls._max.value = 6400, 6700
    controls.apply_range()
    assert plot.x_range == (6400, 6700) and controls.message == ""
    controls._min.value, controls._max.value = 7000, 6000
    controls.apply_range()
    assert "minimum must be below" in controls.message and plot.x_range == (6400, 6700)
    controls.apply_preset({"id": "full", "label": "Full", "range": None})
    assert plot.x_range is None


def test_metadata_escapes_and_keeps_ids_as_strings():
    panel = MetadataPanel(record={"object_id": "39633345008634465", "survey": "<script>alert(1)</script>",
                                  "header": {"OBJNAME": "<b>x</b>"}})
    assert "39633345008634465" in panel._table.object
    assert "<script>" not in panel._table.object and "&lt;script&gt;" in panel._table.object
    panel._card.collapsed = False  # the header renders when opened
    assert "&lt;b&gt;x&lt;/b&gt;" in panel._header.object and "<b>x</b>" not in panel._header.object


def test_spectrum_list_next_previous_wraps():
    records = [{"spectrum_id": s, "object_id": s, "survey": "X"} for s in ("a", "b", "c")]
    lst = SpectrumList(records=records)
    lst.step(+1)
    assert lst.selected_id == "a"
    lst.step(-1)
    assert lst.selected_id == "c"
    lst.step(+1)
    assert lst.selected_id == "a"
    assert lst._table.value["object_id"].dtype.name == "string"


def test_agent_zoom_is_shaded_and_follows_the_frame(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum, z=0.0)
    pn.panel(plot).get_root(Document())
    assert plot.shaded_span() is None
    plot.shaded_ranges = [(6500.0, 6600.0)]
    assert plot.shaded_span() == (6500.0, 6600.0)
    plot.shaded_ranges = []
    assert plot.shaded_span() is None
