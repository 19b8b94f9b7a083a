"""Line marks on a render (the reviewer's marked copy): absent, the render is byte for byte the
agent's; present, thin lines at the lines' columns and labels that never overlap, nothing else moved."""
from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib import colors as mcolors
from PIL import Image

from agents.tools import render_style as style
from agents.tools.render import _figure, render_arrays
from agents.tools.render_style import place_marks

MARK_RGB = np.array([round(255 * c) for c in mcolors.to_rgb(style.MARK_COLOR)], dtype=float)


def _spectrum(lo=3800.0, hi=4600.0, n=2000, seed=3):
    """A noisy stellar-like spectrum with Balmer absorption (the kind a vet zoom shows)."""
    wave = np.linspace(lo, hi, n)
    rng = np.random.default_rng(seed)
    flux = 10.0 + rng.normal(0, 0.2, n)
    for centre in (3971.2, 4102.9, 4341.7):
        flux -= 4.0 * np.exp(-0.5 * ((wave - centre) / 6.0) ** 2)
    return wave, flux


def _rgb(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def _axes_box(wave, flux, lo, hi):
    """The last render's axes as (left, right, top, bottom) pixel columns/rows of the PNG (the
    pixels its frame touches), and its figure."""
    data = style.prepare_data(wave, flux, lo, hi)
    figure = _figure(*style.figure_size(data.span, data.wavelength.size, data.zoom))
    box = figure.axes.bbox
    height = figure.figure.bbox.height
    return (int(np.floor(box.x0)), int(np.ceil(box.x1)), int(np.floor(height - box.y1)),
            int(np.ceil(height - box.y0))), figure


def _mark_coloured(rgb: np.ndarray) -> np.ndarray:
    return np.abs(rgb - MARK_RGB).max(axis=2) < 40


@pytest.mark.parametrize("lo, hi", [(None, None), (4000.0, 4420.0)])
def test_without_marks_the_render_is_the_agents_byte_for_byte(lo, hi):
    wave, flux = _spectrum()
    plain = render_arrays(wave, flux, lo, hi, label="H-delta")
    assert render_arrays(wave, flux, lo, hi, label="H-delta", marks=None) == plain
    assert render_arrays(wave, flux, lo, hi, label="H-delta", marks=[]) == plain
    # marks outside the window draw nothing
    assert render_arrays(wave, flux, lo, hi, label="H-delta", marks=[("Ly-alpha", 1216.0), ("H-alpha", 6564.6)]) == plain
    marked = render_arrays(wave, flux, lo, hi, label="H-delta", marks=[("H-delta", 4102.9)])
    assert marked != plain
    # the figure is reused: a marked render leaves nothing behind for the next plain one
    assert render_arrays(wave, flux, lo, hi, label="H-delta") == plain


def test_marks_change_nothing_outside_the_axes():
    """Same size, title, ticks, labels and stats box: only the inside of the axes differs."""
    wave, flux = _spectrum()
    plain = _rgb(render_arrays(wave, flux, 4000.0, 4420.0, label="Balmer"))
    marked = _rgb(render_arrays(wave, flux, 4000.0, 4420.0, label="Balmer",
                                marks=[("H-delta", 4102.9), ("H-gamma", 4341.7)]))
    (left, right, top, bottom), _ = _axes_box(wave, flux, 4000.0, 4420.0)
    assert marked.shape == plain.shape
    differs = np.abs(marked - plain).max(axis=2) > 0
    rows, cols = np.nonzero(differs)
    assert rows.size > 0
    assert rows.min() >= top and rows.max() <= bottom and cols.min() >= left and cols.max() <= right


def test_marks_are_drawn_at_the_lines_columns_and_nowhere_else():
    wave, flux = _spectrum()
    lines = {"H-delta": 4102.9, "H-gamma": 4341.7}
    png = render_arrays(wave, flux, 4000.0, 4420.0, marks=list(lines.items()))
    (left, right, top, bottom), figure = _axes_box(wave, flux, 4000.0, 4420.0)
    expected = {name: figure.axes.transData.transform((x, 0.0))[0] for name, x in lines.items()}
    coloured = _mark_coloured(_rgb(png))[top:bottom, left:right]
    # a full-height line: a column coloured over most of the axes' height
    full = np.flatnonzero(coloured.sum(axis=0) > 0.6 * coloured.shape[0]) + left
    assert full.size > 0
    for column in full:
        assert min(abs(column + 0.5 - x) for x in expected.values()) <= 1.5, (column, expected)
    for x in expected.values():
        assert any(abs(column + 0.5 - x) <= 1.5 for column in full), (x, full)
    # the colour appears only near the lines (their labels are centred on them)
    label_half = max(len(n) for n in lines) * style.MARK_CHAR_EM * style.MARK_FONT_SIZE * style.DPI / 72
    far = np.array([min(abs(c + left + 0.5 - x) for x in expected.values()) > label_half + 4
                    for c in range(coloured.shape[1])])
    assert not coloured[:, far].any()


def test_crowded_labels_are_thinned_and_never_overlap():
    wave, flux = _spectrum()
    # a dozen lines within 40 Å of a 420 Å window: they cannot all be labelled
    marks = [(f"Line {k} {4100 + 3.5 * k:.1f}", 4100 + 3.5 * k) for k in range(12)]
    render_arrays(wave, flux, 4000.0, 4420.0, marks=marks)
    _, figure = _axes_box(wave, flux, 4000.0, 4420.0)
    axes = figure.axes.bbox
    renderer = figure.canvas.get_renderer()
    shown = [t for t in figure.mark_labels if t.get_visible() and t.get_text()]
    assert 0 < len(shown) < len(marks)
    assert shown[0].get_text() == marks[0][0]  # the first (most important) mark keeps its label
    boxes = [t.get_bbox_patch().get_window_extent(renderer) for t in shown]
    for i, a in enumerate(boxes):
        assert axes.x0 - 1 <= a.x0 and a.x1 <= axes.x1 + 1 and axes.y0 <= a.y0 and a.y1 <= axes.y1  # inside
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
    xs = np.asarray(figure.mark_lines.get_xdata(), dtype=float)
    assert sorted(set(xs[np.isfinite(xs)])) == sorted(x for _, x in marks)  # every line is drawn


def test_labels_take_the_edge_away_from_the_stats_box():
    wave, flux = _spectrum()
    render_arrays(wave, flux, 4000.0, 4420.0, marks=[("H-gamma", 4341.7)])
    _, figure = _axes_box(wave, flux, 4000.0, 4420.0)
    label = next(t for t in figure.mark_labels if t.get_visible())
    stats_on_top = figure.stats.get_verticalalignment() == "top"
    assert (label.get_position()[1] < 0.5) == stats_on_top


def test_place_marks_keeps_window_order_and_labels_inside():
    placed = place_marks([("B", 4100.0), ("A", 4101.0), ("out", 5000.0), ("edge", 3981.0)],
                         3980.0, 4420.0, (3980.0, 4440.0), 400.0)
    assert [m.label for m in placed] == ["B", "A", "edge"]
    assert placed[0].row == 0  # the first keeps the first row
    assert placed[1].row != 0  # its neighbour cannot share it
    edge = placed[2]
    assert edge.x == 3981.0 and edge.label_x > edge.x  # the label is moved inside the axes, not the line
    assert place_marks([("H", float("nan"))], 4000.0, 4420.0, (3980.0, 4440.0), 400.0) == []
