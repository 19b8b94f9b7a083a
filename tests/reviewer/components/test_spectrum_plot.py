import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import Range1d

from reviewer.components.spectrum_plot import SpectrumPlot, label_candidates, robust_y_range
from reviewer.view_frame import Frame


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
    plot = SpectrumPlot(spectrum=shifted, frame=Frame(z=0.1))
    root = pn.panel(plot).get_root(Document())
    for rest in (False, True):
        plot.frame.rest_frame = rest
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
    """The agent's zoom (observed wavelengths) is shaded where those pixels are drawn: in the rest frame
    at 1/(1+z) of them, and back when the frame is observed again."""
    plot = SpectrumPlot(spectrum=synthetic_spectrum, frame=Frame(z=0.0))
    pn.panel(plot).get_root(Document())
    assert plot.shaded_span() is None
    plot.shaded_ranges = [(6500.0, 6600.0)]
    assert plot.shaded_span() == (6500.0, 6600.0)
    plot.frame.param.update(z=0.25, rest_frame=True)
    assert plot.shaded_span() == pytest.approx((6500.0 / 1.25, 6600.0 / 1.25))
    plot.frame.rest_frame = False
    assert plot.shaded_span() == pytest.approx((6500.0, 6600.0))
    plot.shaded_ranges = []
    assert plot.shaded_span() is None


def test_a_new_z_in_the_observed_frame_moves_the_markers_and_leaves_the_flux_unsent(synthetic_spectrum):
    """An item switch to another task on the same spectrum changes z only: the line markers follow
    it, the flux columns (most of the bytes) are not sent again; in the rest frame they are."""
    plot = SpectrumPlot(spectrum=synthetic_spectrum, frame=Frame(z=0.0))
    root = pn.panel(plot).get_root(Document())
    flux = source_of(root, "flux")
    before_data, before_marker = flux.data, source_of(root, "text", "H-alpha")
    marker = before_marker.data["x"][list(before_marker.data["text"]).index("H-alpha")]
    plot.frame.z = 0.001
    labels = source_of(root, "text", "H-alpha")
    assert labels.data["x"][list(labels.data["text"]).index("H-alpha")] == pytest.approx(marker * 1.001)
    assert flux.data is before_data
    plot.frame.rest_frame = True
    wave = np.asarray(flux.data["wave"], float)
    plot.frame.z = 0.002
    assert flux.data is not before_data
    assert np.asarray(flux.data["wave"], float)[0] == pytest.approx(wave[0] * 1.001 / 1.002, rel=1e-6)


# ---- the instrument (issue 19: y range, units, labels by class, zoom keys) ----------------------
from pathlib import Path  # noqa: E402

import astropy.units as u  # noqa: E402
from astropy.nddata import InverseVariance  # noqa: E402
from bokeh.models import LogScale  # noqa: E402
from specutils import Spectrum  # noqa: E402

from agents.spectra import read_spectrum  # noqa: E402
from reviewer.components.spectrum_plot import LABEL_CHAR_PX  # noqa: E402

DEMO = Path(__file__).resolve().parents[3] / "assets" / "demo"


def narrow_line_spectrum(peak=32.0):
    """A flat continuum of ~1 with a 3-pixel emission line of `peak` near 9000 Å: 0.1 % of the pixels
    in a 600 Å window, far above its 99th percentile."""
    wave = np.linspace(3600.0, 9800.0, 6200)
    flux = 1.0 + 0.05 * np.sin(wave / 50.0)
    line = np.argmin(np.abs(wave - 8980.0))
    flux[line - 1:line + 2] = [peak / 2, peak, peak / 2]
    return Spectrum(spectral_axis=wave * u.AA, flux=flux * u.Unit("1e-17 erg / (s cm2 Angstrom)"),
                    uncertainty=InverseVariance(np.full_like(flux, 100.0)))


def test_auto_y_range_keeps_the_strongest_line_in_view_at_any_zoom():
    plot = SpectrumPlot(spectrum=narrow_line_spectrum())
    for window in (None, (8700.0, 9300.0), (8950.0, 9010.0)):
        if window:
            plot.zoom_to(*window)
        assert plot.y_axis_range.end >= 32.0, (window, plot.y_axis_range.end)
        assert plot.y_axis_range.end < 60.0  # and not padded into nothing
    plot.zoom_to(4000.0, 5000.0)  # no line in view: the continuum fills the plot
    assert plot.y_axis_range.end < 2.0


def test_a_one_pixel_spike_does_not_set_the_scale_but_a_line_does():
    spike = np.ones(1000)
    spike[500] = 1e5
    assert robust_y_range(spike)[1] < 10
    line = np.ones(1000)
    line[499:502] = [5.0, 10.0, 5.0]
    assert robust_y_range(line)[1] >= 10.0


def test_fixed_and_log_flux_axes():
    plot = SpectrumPlot(spectrum=narrow_line_spectrum())
    plot.set_y_range(-1.0, 5.0)
    plot.zoom_to(8700.0, 9300.0)
    assert (plot.y_axis_range.start, plot.y_axis_range.end) == (-1.0, 5.0)  # fixed survives a zoom
    with pytest.raises(ValueError):
        plot.set_y_range(3.0, 1.0)
    plot.y_mode = "log"
    assert isinstance(plot.figure.y_scale, LogScale)
    assert 0 < plot.y_axis_range.start < 1.0 and plot.y_axis_range.end >= 32.0
    plot.y_mode = "auto"
    assert not isinstance(plot.figure.y_scale, LogScale)


def test_the_flux_axis_names_each_spectrums_own_unit():
    plot = SpectrumPlot()
    labels = []
    for name in ("coadd-4-80613-thru20210324.fits", "spec-55859-F5902_sp07-209.fits.gz", "m5iii.dat",
                 "coadd-4-80613-thru20210324.fits"):
        target = {"target": "39633345008634465"} if name.startswith("coadd") else {}
        plot.spectrum = read_spectrum(DEMO / name, **target)
        labels.append(plot.figure.yaxis[0].axis_label)
    assert labels[0] == labels[3] == "Flux (1e-17 erg / (Angstrom s cm2))"
    assert labels[1] == labels[2] and "relative" in labels[1]


@pytest.mark.parametrize(("name", "cls", "target"), [
    ("spec-58575-HD103621N361936B01_sp03-030.fits", "STAR", None),
    ("coadd-4-80613-thru20210324.fits", "GALAXY", "39633345008634465"),
    ("spec-0853-52374-0240.fits", "QSO", None)])
def test_line_labels_never_overlap_or_leave_the_frame(name, cls, target):
    plot = SpectrumPlot(spectrum=read_spectrum(DEMO / name, **({"target": target} if target else {})),
                        object_class=cls, line_kinds=["emission", "absorption", "sky"])
    full = plot.full_range()
    for window in (full, (full[0] + 0.3 * (full[1] - full[0]), full[1]), (6400.0, 6800.0)):
        plot.zoom_to(*window)
        lo, hi = plot.x_range
        data = plot.sources["labels"].data
        per_px = (hi - lo) / plot.width_px
        boxes = [(x - 0.5 * len(t) * LABEL_CHAR_PX * per_px, x + 0.5 * len(t) * LABEL_CHAR_PX * per_px, y)
                 for x, y, t in zip(data["x"], data["y"], data["text"], strict=True)]
        assert boxes, (name, window)
        for a0, a1, ay in boxes:
            assert lo <= a0 and a1 <= hi, (name, window)
            for b0, b1, by in boxes:
                if (a0, ay) != (b0, by) and ay == by:
                    assert a1 <= b0 or b1 <= a0, (name, window)
        stellar = {"TiO 7054", "Ca II 8498", "Ca II 8542", "Ca II 8662", "He I 4026", "He I 4471"}
        if cls != "STAR":
            assert not stellar & set(data["text"])


def test_zoom_keys_zoom_about_the_centre(synthetic_spectrum):
    plot = SpectrumPlot(spectrum=synthetic_spectrum)
    plot.zoom_to(6000.0, 7000.0)
    plot.zoom_by(0.5)
    assert plot.x_range == (6250.0, 6750.0)
    plot.zoom_by(2.0)
    assert plot.x_range == (6000.0, 7000.0)
    plot.zoom_by(100.0)
    assert plot.x_range is None  # out to the whole spectrum
