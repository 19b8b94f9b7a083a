import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import Range1d

from reviewer.components.spectrum_plot import SpectrumPlot, label_candidates, robust_y_range


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
    _lo, hi = robust_y_range(np.asarray(synthetic_spectrum.flux.value))
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


def source_of(root, column, value=None):
    from bokeh.models import ColumnDataSource

    found = [src for src in root.select({"type": ColumnDataSource})
             if column in src.data and (value is None or value in list(src.data[column]))]
    assert found, f"no source with {column}={value}"
    return max(found, key=lambda src: len(src.data[column]))  # the flux curve, not the masked points


def test_rest_frame_divides_the_axis_and_lines_stay_on_their_pixels(synthetic_spectrum):
    """A z = 0.1 spectrum whose absorption sits at 6564.6 x 1.1 observed: in both frames the H-alpha
    marker is drawn where the flux has its minimum, and the axis label says which frame."""
    wave = synthetic_spectrum.spectral_axis.value * 1.1
    shifted = synthetic_spectrum.__class__(spectral_axis=wave * synthetic_spectrum.spectral_axis.unit,
                                           flux=synthetic_spectrum.flux, uncertainty=synthetic_spectrum.uncertainty)
    plot = SpectrumPlot(spectrum=shifted, z=0.1)
    root = pn.panel(plot).get_root(Document())
    for rest in (False, True):
        plot.rest_frame = rest
        flux = source_of(root, "flux")
        x, y = np.asarray(flux.data["wave"], float), np.asarray(flux.data["flux"], float)
        core = x[np.nanargmin(y)]
        labels = source_of(root, "text", "H-alpha")
        marker = labels.data["x"][list(labels.data["text"]).index("H-alpha")]
        assert marker == pytest.approx(core, abs=3.0), (rest, marker, core)
        assert ("Rest-frame" in plot.axis_label()) == rest
    assert plot.full_range()[0] == pytest.approx(3800 * 1.1 / 1.1)


def test_one_label_per_wavelength_major_lines_first():
    lines = [{"name": "H-alpha", "kind": "emission", "rest": 6564.6, "x": 6564.6, "major": True},
             {"name": "H-alpha", "kind": "absorption", "rest": 6564.6, "x": 6564.6, "major": True},
             {"name": "[N II] 6550", "kind": "emission", "rest": 6549.9, "x": 6549.9, "major": False}]
    named = label_candidates(lines)
    assert [ln["name"] for ln in named] == ["H-alpha", "[N II] 6550"]


def test_agent_zoom_is_shaded_and_follows_the_frame(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum, z=0.0)
    pn.panel(plot).get_root(Document())
    assert plot.shaded_span() is None
    plot.shaded_ranges = [(6500.0, 6600.0)]
    assert plot.shaded_span() == (6500.0, 6600.0)
    plot.shaded_ranges = []
    assert plot.shaded_span() is None


def test_a_new_z_in_the_observed_frame_moves_the_markers_and_leaves_the_flux_unsent(synthetic_spectrum):
    """An item switch to another task on the same spectrum changes z only: the line markers follow
    it, the flux columns (most of the bytes) are not sent again; in the rest frame they are."""
    plot = SpectrumPlot(spectrum=synthetic_spectrum, z=0.0)
    root = pn.panel(plot).get_root(Document())
    flux = source_of(root, "flux")
    before_data, before_marker = flux.data, source_of(root, "text", "H-alpha")
    marker = before_marker.data["x"][list(before_marker.data["text"]).index("H-alpha")]
    plot.z = 0.001
    labels = source_of(root, "text", "H-alpha")
    assert labels.data["x"][list(labels.data["text"]).index("H-alpha")] == pytest.approx(marker * 1.001)
    assert flux.data is before_data
    plot.rest_frame = True
    wave = np.asarray(flux.data["wave"], float)
    plot.z = 0.002
    assert flux.data is not before_data
    assert np.asarray(flux.data["wave"], float)[0] == pytest.approx(wave[0] * 1.001 / 1.002, rel=1e-6)
