"""One reusable matplotlib figure per figure size that draws a Spec-o3 style spectrum plot.

Why not `plt.subplots` + `tight_layout()` + `savefig(bbox_inches="tight")` per call: creating the
figure, laying it out, drawing twice for the tight box and letting each of ~100 tick objects draw
itself costs 70-150 ms. Here the figure, axes, line and texts are made once and only updated:
- the layout is computed the way tight_layout and bbox_inches="tight" compute it (same start box,
  same margins, same crop), from cached text extents, and the canvas is set to the cropped size
  directly, so the frame is drawn once;
- matplotlib's own axis drawing is switched off; ticks, grid lines and tick labels are drawn by
  a handful of artists at the same places, with the same locators and formatter.
Every call sets every piece of state it draws, so a result never depends on earlier calls.
"""
from __future__ import annotations

import numpy as np
from matplotlib import lines as mlines
from matplotlib import rcParams
from matplotlib import transforms as mtransforms
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import AutoLocator, AutoMinorLocator, MultipleLocator, ScalarFormatter
from matplotlib.transforms import Bbox

from agents.tools import render_style as style
from agents.tools.render_decimate import minmax_decimate
from agents.tools.render_text import FastText, SpriteCanvas, text_extent

_TICK_LABEL_PAD_PT = 3.5  # xtick.major.pad; inward ticks add nothing outside the axes
_AXIS_LABEL_PAD_PT = 4.0  # axes.labelpad
_OFFSET_TEXT_PAD_PT = 3.0  # matplotlib.axis.Axis.OFFSETTEXTPAD
_SUBPLOT_BOX = (0.125, 0.11, 0.9, 0.88)  # figure.subplot.left/bottom/right/top: layout start
_TIGHT_LAYOUT_PAD_PT = 1.08 * 10  # tight_layout(pad=1.08) x font.size
_INITIAL_TICK_LABELS = 16  # per axis; the pool grows when a view needs more


def _within(lo: float, hi: float, value: float) -> bool:
    """Whether a tick at `value` is drawn for the view [lo, hi] (matplotlib's tolerance)."""
    slack = (hi - lo) * 1e-10
    return lo - slack <= value <= hi + slack


class SpectrumFigure:
    """Renders one spectrum view per `draw` call for one figure size of the Spec-o3 tables."""

    def __init__(self, width_in: float, height_in: float):
        self.size_in = (width_in, height_in)  # the table's size, before the tight crop
        self.size_px = (width_in * style.DPI, height_in * style.DPI)
        self.figure = Figure(figsize=(width_in, height_in), dpi=style.DPI)
        self.canvas = SpriteCanvas(self.figure)
        ax = self.axes = self.figure.add_axes((0.125, 0.11, 0.775, 0.77))
        ax.xaxis.set_visible(False)
        ax.yaxis.set_visible(False)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_major_locator(AutoLocator())
        ax.yaxis.set_minor_locator(AutoMinorLocator())
        ax.tick_params(axis="both", which="both", labelsize=style.TICK_LABEL_SIZE)

        (self.line,) = ax.plot([], [], **style.LINE_STYLE)
        grid_color = rcParams["grid.color"]
        self.grids = {}
        for axis_name, transform in (("x", ax.get_xaxis_transform()), ("y", ax.get_yaxis_transform())):
            for which, grid_style in (("major", style.MAJOR_GRID), ("minor", style.MINOR_GRID)):
                grid = mlines.Line2D([], [], color=grid_color, linestyle="-", marker="",
                                     transform=transform, zorder=1.5, **grid_style)
                ax.add_line(grid)
                self.grids[axis_name, which] = grid
        self.tick_marks = {}
        for axis_name, transform, marker in (("x", ax.get_xaxis_transform(), mlines.TICKUP),
                                             ("y", ax.get_yaxis_transform(), mlines.TICKRIGHT)):
            for which in ("major", "minor"):
                size = rcParams[f"{axis_name}tick.{which}.size"]
                width_pt = rcParams[f"{axis_name}tick.{which}.width"]
                color = rcParams[f"{axis_name}tick.color"]
                mark = mlines.Line2D([], [], linestyle="none", marker=marker, color=color,
                                     markeredgecolor=color, markersize=size,
                                     markeredgewidth=width_pt, transform=transform, zorder=1.5)
                ax.add_line(mark)
                self.tick_marks[axis_name, which] = mark

        self.tick_labels = {"x": [], "y": []}
        self._grow_tick_labels("x", _INITIAL_TICK_LABELS)
        self._grow_tick_labels("y", _INITIAL_TICK_LABELS)
        axes_x = mtransforms.blended_transform_factory(ax.transAxes, mtransforms.IdentityTransform())
        axes_y = mtransforms.blended_transform_factory(mtransforms.IdentityTransform(), ax.transAxes)
        self.offset_text = {
            "x": self._add_text(1, 0, "", transform=axes_x, va="top", ha="right",
                                fontsize=style.TICK_LABEL_SIZE),
            "y": self._add_text(0, 0, "", transform=axes_x, va="baseline", ha="left",
                                fontsize=style.TICK_LABEL_SIZE),
        }
        self.x_label = self._add_text(0.5, 0, style.X_LABEL, transform=axes_x, va="top",
                                      ha="center", **style.AXIS_LABEL_FONT)
        self.y_label = self._add_text(0, 0.5, style.Y_LABEL, transform=axes_y, va="bottom",
                                      ha="center", rotation="vertical", rotation_mode="anchor",
                                      **style.AXIS_LABEL_FONT)
        # The axes' own title stays empty; this one sits where set_title(pad=20) puts a title.
        ax.set_title("", pad=style.TITLE_PAD_PT)
        self.title = self._add_text(0.5, 1.0, "", transform=ax.transAxes + ax.titleOffsetTrans,
                                    va="baseline", ha="center", **style.TITLE_FONT)
        self.stats = ax.text(0.02, 0.98, "", transform=ax.transAxes, fontsize=style.STATS_FONT_SIZE,
                             bbox=dict(style.STATS_BOX))
        self._decorations = [*self.offset_text.values(), self.x_label, self.y_label, self.title]
        # Line marks: empty and hidden unless a call asks for them, so an unmarked frame is the
        # same pixels as one drawn without these artists at all.
        self.mark_lines = mlines.Line2D([], [], color=style.MARK_COLOR, linestyle="-", marker="",
                                        transform=ax.get_xaxis_transform(), zorder=style.MARK_ZORDER,
                                        visible=False, **style.MARK_LINE)
        ax.add_line(self.mark_lines)
        self.mark_labels: list[Text] = []

    def _grow_tick_labels(self, axis_name, count):
        """Add invisible tick label texts until the pool holds `count` (they draw nothing unused)."""
        ax = self.axes
        if axis_name == "x":
            transform, va, ha = ax.get_xaxis_text1_transform(_TICK_LABEL_PAD_PT)
        else:
            transform, va, ha = ax.get_yaxis_text1_transform(_TICK_LABEL_PAD_PT)
        pool = self.tick_labels[axis_name]
        while len(pool) < count:
            pool.append(self._add_text(0, 0, "", transform=transform, va=va, ha=ha,
                                       fontsize=style.TICK_LABEL_SIZE, visible=False))

    def _add_text(self, x, y, text, **props) -> FastText:
        label = FastText(x, y, text, clip_on=False, **props)
        self.axes.add_artist(label)
        return label

    # -- layout -------------------------------------------------------------------------------

    def _set_box(self, x0, y0, x1, y1):
        """Place the axes at these canvas pixel coordinates (y up)."""
        width, height = self.figure.bbox.width, self.figure.bbox.height
        self.axes.set_position((x0 / width, y0 / height, (x1 - x0) / width, (y1 - y0) / height))

    def _crop_to(self, content: Bbox) -> tuple[float, float]:
        """Make the canvas `content` plus 0.1 inch all round, with bbox_inches="tight"'s own
        arithmetic (in inches, so the pixel size truncates the same way); returns the display
        offset of the crop's lower left corner."""
        dpi, pad = style.DPI, style.BBOX_PAD_PX / style.DPI
        x0, y0 = content.x0 / dpi - pad, content.y0 / dpi - pad
        x1, y1 = content.x1 / dpi + pad, content.y1 / dpi + pad
        size = (x1 - x0, y1 - y0)
        if tuple(self.figure.get_size_inches()) != size:
            self.figure.set_size_inches(size, forward=False)
        return x0 * dpi, y0 * dpi

    # -- ticks --------------------------------------------------------------------------------

    def _update_axis(self, axis_name, renderer):
        """Place grid lines, tick marks and tick labels as matplotlib's Axis would draw them."""
        axis = self.axes.xaxis if axis_name == "x" else self.axes.yaxis
        view = axis.get_view_interval()
        lo, hi = min(view), max(view)
        major_all = np.asarray(axis.get_majorticklocs(), dtype=float)
        labels = axis.major.formatter.format_ticks(major_all)
        inside = np.array([_within(lo, hi, v) for v in major_all], dtype=bool)
        major = major_all[inside]
        labels = [text for text, keep in zip(labels, inside, strict=True) if keep]
        minor = np.asarray(axis.get_minorticklocs(), dtype=float)
        minor = minor[np.array([_within(lo, hi, v) for v in minor], dtype=bool)]

        for which, locs in (("major", major), ("minor", minor)):
            along = np.repeat(locs, 3)
            along[2::3] = np.nan
            across = np.tile([0.0, 1.0, np.nan], len(locs))
            grid, mark = self.grids[axis_name, which], self.tick_marks[axis_name, which]
            if axis_name == "x":
                grid.set_data(along, across)
                mark.set_data(locs, np.zeros_like(locs))
            else:
                grid.set_data(across, along)
                mark.set_data(np.zeros_like(locs), locs)

        self._grow_tick_labels(axis_name, len(major))
        pool = self.tick_labels[axis_name]
        for i, text in enumerate(pool):
            if i < len(major):
                text.set_text(labels[i])
                if axis_name == "x":
                    text.set_position((major[i], 0))
                else:
                    text.set_position((0, major[i]))
                text.set_visible(True)
            else:
                text.set_visible(False)
        self.offset_text[axis_name].set_text(axis.major.formatter.get_offset())

    def _place_axis_texts(self, renderer, layout_only=False) -> Bbox:
        """Put axis labels and offset texts beside the tick labels (as Axis._update_label_position
        does) and return the union of the axes box and every text around it, in pixels.

        `layout_only`: as Axes.get_tightbbox(for_layout_only=True), which tight_layout uses, the
        title and x label count for their height only and the y label for its width only.
        """
        px_per_pt = style.DPI / 72
        axes_box = self.axes.bbox
        x_boxes = [text_extent(t, renderer) for t in self.tick_labels["x"] if t.get_visible()]
        y_boxes = [text_extent(t, renderer) for t in self.tick_labels["y"] if t.get_visible()]
        x_ticks_bottom = Bbox.union(x_boxes).y0 if x_boxes else axes_box.y0
        self.x_label.set_y(min(x_ticks_bottom, axes_box.y0) - _AXIS_LABEL_PAD_PT * px_per_pt)
        self.offset_text["x"].set_y(x_ticks_bottom - _OFFSET_TEXT_PAD_PT * px_per_pt)
        y_ticks_left = Bbox.union(y_boxes).x0 if y_boxes else axes_box.x0
        self.y_label.set_x(min(y_ticks_left, axes_box.x0) - _AXIS_LABEL_PAD_PT * px_per_pt)
        self.offset_text["y"].set_y(axes_box.y1 + _OFFSET_TEXT_PAD_PT * px_per_pt)
        boxes = [axes_box, *x_boxes, *y_boxes]
        for text in self._decorations:
            if text.get_text():
                box = text_extent(text, renderer)
                if layout_only and text in (self.title, self.x_label):
                    middle = (box.x0 + box.x1) / 2
                    box = Bbox([[middle - 0.5, box.y0], [middle + 0.5, box.y1]])
                elif layout_only and text is self.y_label:
                    middle = (box.y0 + box.y1) / 2
                    box = Bbox([[box.x0, middle - 0.5], [box.x1, middle + 0.5]])
                boxes.append(box)
        return Bbox.union(boxes)

    def _layout(self):
        """Lay out like tight_layout() followed by savefig(bbox_inches="tight").

        tight_layout measures the decorations (tick labels, axis labels, title) around the axes at
        the default subplot box of the table-sized figure, then moves the box so they end 1.08 x 10
        pt from the figure edges; the save crops to everything drawn plus 0.1 inch, even where a
        long title sticks out of the figure. Coordinates below are those of the table-sized
        figure; the crop then becomes the canvas. Returns the renderer to draw with.
        """
        # The previous call cropped the canvas: start again from the table's size, or the axes'
        # height in pixels (and with it how many y ticks AutoLocator places) would depend on the
        # picture drawn before this one.
        if tuple(self.figure.get_size_inches()) != self.size_in:
            self.figure.set_size_inches(self.size_in, forward=False)
        renderer = self.canvas.get_renderer()
        fig_w, fig_h = self.size_px
        left, bottom, right, top = _SUBPLOT_BOX
        box = (left * fig_w, bottom * fig_h, right * fig_w, top * fig_h)
        self._set_box(*box)
        self._update_axis("x", renderer)
        self._update_axis("y", renderer)
        y_space = self.axes.yaxis.get_tick_space()
        tight = self._place_axis_texts(renderer, layout_only=True)
        pad = _TIGHT_LAYOUT_PAD_PT * style.DPI / 72
        margins = (max(box[0] - tight.x0, 0) + pad, max(box[1] - tight.y0, 0) + pad,
                   max(tight.x1 - box[2], 0) + pad, max(tight.y1 - box[3], 0) + pad)
        if margins[0] + margins[2] < fig_w and margins[1] + margins[3] < fig_h:  # else it gives up
            box = (margins[0], margins[1], fig_w - margins[2], fig_h - margins[3])
            self._set_box(*box)
            # The ticks follow the box through their transforms. Their values depend on the view
            # limits and, for y (AutoLocator), on how many fit the axis: x never changes here, y
            # only when the new height holds a different number of tick labels.
            if self.axes.yaxis.get_tick_space() != y_space:
                self._update_axis("y", renderer)
        crop_x, crop_y = self._crop_to(self._place_axis_texts(renderer))
        renderer = self.canvas.get_renderer()
        self._set_box(box[0] - crop_x, box[1] - crop_y, box[2] - crop_x, box[3] - crop_y)
        self._place_axis_texts(renderer)  # ticks are unchanged: same axes size, same limits
        return renderer

    # -- drawing ------------------------------------------------------------------------------

    def _place_marks(self, marks, lo: float, hi: float) -> None:
        """Draw `marks` ((label, x) pairs, most important first) inside [lo, hi], or hide them all.

        Label rows run along the axes edge away from the stats box (top when the box is in a lower
        corner), so the two never cover each other; the spectrum's y range is not changed."""
        ax = self.axes
        placed = style.place_marks(marks or (), lo, hi, ax.get_xlim(), ax.bbox.width) if marks else []
        along = np.repeat([m.x for m in placed], 3).astype(float)
        along[2::3] = np.nan
        self.mark_lines.set_data(along, np.tile([0.0, 1.0, np.nan], len(placed)))
        self.mark_lines.set_visible(bool(placed))
        labelled = [m for m in placed if m.row is not None]
        while len(self.mark_labels) < len(labelled):
            label = Text(0, 0, "", transform=ax.get_xaxis_transform(), ha="center", va="center",
                         color=style.MARK_COLOR, fontsize=style.MARK_FONT_SIZE, parse_math=False,
                         bbox=dict(style.MARK_BOX), zorder=style.MARK_ZORDER + 0.7, clip_on=False)
            ax.add_artist(label)
            self.mark_labels.append(label)
        font_px = style.MARK_FONT_SIZE * style.DPI / 72
        pitch = style.MARK_ROW_EM * font_px / max(ax.bbox.height, 1.0)
        from_top = self.stats.get_verticalalignment() == "bottom"  # the box sits in a lower corner
        for i, label in enumerate(self.mark_labels):
            if i < len(labelled):
                offset = (0.4 + labelled[i].row + 0.5) * pitch
                label.set(text=labelled[i].label, x=labelled[i].label_x,
                          y=1.0 - offset if from_top else offset, visible=True)
            else:
                label.set(text="", visible=False)

    def draw(self, data: style.PlotData, title: str, marks=None, window=(None, None)) -> np.ndarray:
        """Render `data`; returns the (height, width, 4) RGBA uint8 frame itself (not a copy): it
        is valid until the next draw on this figure, so encode or copy it before drawing again.

        `marks`: (label, x) pairs to mark with thin vertical lines, most important first; only
        those inside `window` (the asked range, else the data's ends) are drawn."""
        ax = self.axes
        wavelength, flux = data.wavelength, data.flux
        major, minor = style.x_tick_spacing(data.span)
        ax.xaxis.set_major_locator(MultipleLocator(major))
        ax.xaxis.set_minor_locator(MultipleLocator(minor))
        self.title.set_text(title)
        x, y, ha, va = style.CORNERS[style.stats_corner(wavelength, flux)]
        self.stats.set(text=style.stats_text(wavelength, flux), x=x, y=y, ha=ha, va=va)

        # Autoscale from the data alone (relim() would also count the grid and tick artists).
        ax.dataLim.set_points(np.array([[wavelength[0], flux.min()], [wavelength[-1], flux.max()]]))
        ax.autoscale_view()
        self._layout()
        lo = window[0] if window[0] is not None else wavelength[0]
        hi = window[1] if window[1] is not None else wavelength[-1]
        self._place_marks(marks, max(lo, wavelength[0]), min(hi, wavelength[-1]))
        columns = max(int(ax.bbox.width), 1)
        self.line.set_data(*minmax_decimate(wavelength, flux, columns))
        self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())
