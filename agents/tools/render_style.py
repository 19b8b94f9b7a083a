"""The Spec-o3 plot recipe as data and pure functions (reference.md section 1.2).

No matplotlib here: what to plot (cleaned data, figure size, tick spacing, the stats box text and
its corner) is decided from numbers alone, so it is easy to test and shared by every renderer.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.tools.lines import stagger_labels

DPI = 80
# savefig(bbox_inches="tight") pads the content by 0.1 inch; tight_layout() by 1.08 x 10 pt.
BBOX_PAD_PX = 0.1 * DPI

LINE_STYLE = {"color": "blue", "linewidth": 1.0, "alpha": 0.8}
AXIS_LABEL_FONT = {"fontsize": 12, "fontweight": "bold"}
TITLE_FONT = {"fontsize": 14, "fontweight": "bold"}
TITLE_PAD_PT = 20
TICK_LABEL_SIZE = 10
STATS_FONT_SIZE = 9
STATS_BOX = {"boxstyle": "round", "facecolor": "white", "alpha": 0.8}
MAJOR_GRID = {"alpha": 0.3, "linewidth": 0.5}
MINOR_GRID = {"alpha": 0.1, "linewidth": 0.3}
# Line marks (reviewer-side copies only, never in what an agent is shown): thin vertical lines under
# the spectrum with short labels in rows along the axes edge away from the stats box.
MARK_COLOR = "#c0392b"
MARK_LINE = {"linewidth": 0.9, "alpha": 1.0}  # 1 px at 80 dpi
MARK_ZORDER = 1.8  # above the grid (1.5), below the spectrum (2): the data stays fully visible
MARK_FONT_SIZE = 8
MARK_BOX = {"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
# Label width estimate for the thinning (agents.tools.lines.stagger_labels): DejaVu Sans glyphs are
# at most ~0.7 em wide on average over a line name, so estimated boxes never undercut drawn ones.
MARK_CHAR_EM = 0.7
MARK_ROW_EM = 1.5  # row pitch: the text plus its box
X_LABEL = "Wavelength (Å)"
Y_LABEL = "Flux"
DEFAULT_TITLE = "Spectrum"

# (span threshold in Å, major spacing, minor spacing): first row whose threshold the span reaches.
X_TICK_TABLE = (
    (5000, 1000, 200), (1000, 200, 50), (500, 100, 20), (300, 100, 25), (150, 50, 25),
    (100, 25, 5), (50, 10, 2), (20, 5, 1), (5, 2, 0.5), (0, 1, 0.2),
)
# Zoom views: (span upper bound, exclusive; size in inches); the last row has no bound.
ZOOM_SIZES = ((50, (6.0, 4.0)), (200, (7.0, 4.5)), (1000, (8.0, 5.0)), (float("inf"), (9.0, 5.5)))
# Full views: (span lower bound, exclusive; size in inches); the last row catches the rest.
FULL_SIZES = ((3000, (10.0, 6.0)), (1000, (8.0, 5.0)), (200, (7.0, 4.5)), (float("-inf"), (6.0, 4.0)))
MANY_POINTS, MANY_POINTS_WIDTH = 10_000, 1.05
FEW_POINTS, FEW_POINTS_WIDTH = 50, 0.95

# Stats box anchors (axes fraction x, y, horizontal and vertical alignment), in tie-break order.
CORNERS = {
    "upper left": (0.02, 0.98, "left", "top"),
    "upper right": (0.98, 0.98, "right", "top"),
    "lower left": (0.02, 0.02, "left", "bottom"),
    "lower right": (0.98, 0.02, "right", "bottom"),
}


@dataclass(frozen=True)
class PlotData:
    """The points to draw (finite, sorted by wavelength, inside the range) and how they were asked for."""

    wavelength: np.ndarray
    flux: np.ndarray
    zoom: bool  # a range was asked for (figure size uses the zoom table)

    @property
    def span(self) -> float:
        return float(self.wavelength[-1] - self.wavelength[0])


def prepare_data(wavelength, flux, wave_min=None, wave_max=None, mask=None) -> PlotData:
    """Drop masked (`mask` True, or masked entries of numpy masked arrays) and non-finite pixels,
    sort by wavelength, keep wave_min <= λ <= wave_max.

    Raises ValueError("no data points in range ...") when nothing is left to draw.
    """
    wavelength = getattr(wavelength, "value", wavelength)  # a Quantity gives its numbers
    flux = getattr(flux, "value", flux)
    masked = np.ma.getmaskarray(wavelength).ravel() | np.ma.getmaskarray(flux).ravel()
    wavelength = np.ma.getdata(wavelength).astype(float, copy=False).ravel()
    flux = np.ma.getdata(flux).astype(float, copy=False).ravel()
    if wavelength.shape != flux.shape:
        raise ValueError(f"wavelength and flux differ in length ({wavelength.size} vs {flux.size})")
    keep = np.isfinite(wavelength) & np.isfinite(flux) & ~masked
    if mask is not None:
        mask = np.asarray(mask, dtype=bool).ravel()
        if mask.shape != keep.shape:
            raise ValueError(f"mask length {mask.size} differs from the data ({keep.size})")
        keep &= ~mask
    if wave_min is not None:
        keep &= wavelength >= wave_min
    if wave_max is not None:
        keep &= wavelength <= wave_max
    if not keep.any():
        raise ValueError(f"no data points in range {_range_text(wavelength, wave_min, wave_max)}")
    wavelength, flux = wavelength[keep], flux[keep]
    if np.any(np.diff(wavelength) < 0):
        order = np.argsort(wavelength, kind="stable")
        wavelength, flux = wavelength[order], flux[order]
    return PlotData(wavelength, flux, zoom=wave_min is not None or wave_max is not None)


def _range_text(wavelength, wave_min, wave_max) -> str:
    finite = wavelength[np.isfinite(wavelength)]
    lo = wave_min if wave_min is not None else (finite.min() if finite.size else float("nan"))
    hi = wave_max if wave_max is not None else (finite.max() if finite.size else float("nan"))
    return f"[{float(lo):.1f}, {float(hi):.1f}] Å"


def x_tick_spacing(span: float) -> tuple[float, float]:
    """(major, minor) x tick spacing in Å for a plotted span in Å."""
    for threshold, major, minor in X_TICK_TABLE:
        if span >= threshold:
            return major, minor
    return X_TICK_TABLE[-1][1:]


def figure_size(span: float, n_points: int, zoom: bool) -> tuple[float, float]:
    """Figure (width, height) in inches, before the tight bounding box trims the margins."""
    if zoom:
        width, height = next(size for bound, size in ZOOM_SIZES if span < bound)
    else:
        width, height = next(size for bound, size in FULL_SIZES if span > bound)
    if n_points > MANY_POINTS:
        width *= MANY_POINTS_WIDTH
    elif n_points < FEW_POINTS:
        width *= FEW_POINTS_WIDTH
    return width, height


def nominal_pixels(span: float, n_points: int, zoom: bool) -> tuple[int, int]:
    """(width, height) of the PNG in pixels, give or take a pixel (more where a long title sticks
    out of a narrow figure).

    tight_layout() fills the figure up to 1.08 x 10 pt = 12 px from each edge, then
    bbox_inches="tight" crops to the content plus 0.1 inch = 8 px: 8 px less per dimension.
    """
    width, height = figure_size(span, n_points, zoom)
    shrink = 2 * (1.08 * 10 / 72 * DPI) - 2 * BBOX_PAD_PX
    return round(width * DPI - shrink), round(height * DPI - shrink)


def stats_text(wavelength: np.ndarray, flux: np.ndarray) -> str:
    """The three-line stats box of the Spec-o3 plot."""
    return (f"Data points: {wavelength.size}\n"
            f"λ range: {wavelength.min():.1f} - {wavelength.max():.1f} Å\n"
            f"Flux range: {flux.min():.2e} - {flux.max():.2e}")


def stats_corner(wavelength: np.ndarray, flux: np.ndarray) -> str:
    """The quadrant (split at mid-λ and mid-flux of the data) holding the fewest points."""
    mid_w = (wavelength.min() + wavelength.max()) / 2
    mid_f = (flux.min() + flux.max()) / 2
    left, low = wavelength < mid_w, flux < mid_f
    counts = {
        "upper left": np.count_nonzero(left & ~low),
        "upper right": np.count_nonzero(~left & ~low),
        "lower left": np.count_nonzero(left & low),
        "lower right": np.count_nonzero(~left & low),
    }
    return min(counts, key=counts.get)  # dict order breaks ties: upper left first


def plot_title(title: str | None, label: str | None) -> str:
    """The title line; a zoom label (e.g. "Hα") follows the title. [REVIEW: label placement inferred]"""
    title = title or DEFAULT_TITLE
    return f"{title} - {label}" if label else title


@dataclass(frozen=True)
class PlacedMark:
    """A line mark: the line at `x`; its label centred at `label_x` on row `row` (0 next to the
    axes edge) or not drawn (`row` None: no room, the line still is)."""

    label: str
    x: float
    label_x: float
    row: int | None


def place_marks(marks: Sequence[tuple[str, float]], lo: float, hi: float, view: tuple[float, float],
                width_px: float) -> list[PlacedMark]:
    """The marks inside [lo, hi] (and the axes' view), their labels kept inside the axes and thinned
    by the project's one rule (agents.tools.lines.stagger_labels), in the order given: earlier marks
    are the more important ones and keep their labels first."""
    v0, v1 = view
    inside = [(str(label), float(x)) for label, x in marks
              if np.isfinite(x) and lo <= x <= hi and v0 <= x <= v1]
    if not inside:
        return []
    span = v1 - v0
    per_px = span / max(width_px, 1.0)
    char_px = MARK_CHAR_EM * MARK_FONT_SIZE * DPI / 72
    centres = []
    for label, x in inside:  # the half width as stagger_labels estimates it, so the box stays inside
        half = min(0.5 * (len(label) * char_px + 6) * per_px, span / 2)
        centres.append(min(max(x, v0 + half), v1 - half))
    rows = stagger_labels(centres, [label for label, _ in inside], x_span=span, width_px=round(width_px),
                          char_px=char_px)
    return [PlacedMark(label, x, centre, row)
            for (label, x), centre, row in zip(inside, centres, rows, strict=True)]
