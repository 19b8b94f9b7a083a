"""The interactive flux-vs-wavelength plot: one Bokeh figure this view builds and owns.

The figure is made once, with one ColumnDataSource per member (flux, noise, masked pixels, three
line kinds, their labels) and its own ranges; every later change (a new spectrum, a zoom, smoothing,
line settings, the frame, the y scale) patches only the sources and properties that changed. That
keeps a click in the list, or a step of a playback, well under the 100-150 ms a reviewer notices.
Nothing here depends on a plotting layer's private handles: the sources, ranges, axes and legend
are the view's own attributes.

The plot binds to the review state: the item's spectrum and its object class (which lines are
labelled), the step's zoom window (shaded), the frame (rest frame divides the wavelength axis; flux
stays with its pixels) and z, and the arms the reviewer hid. Zoom, y scale, smoothing and line settings
are this view's own.

A spectrum merged from several arms (DESI b/r/z, LAMOST MRS blue/red; agents.spectra.arm_ids) is
drawn once more, arm by arm in prospect's colours, in one multi-line of its own source ('spectrum-
arms'); the merged flux line stays (hover, exports, the y range) but is drawn transparent under it.
A hidden arm's pixels are NaN in the flux and noise columns and absent from the arms source.
"""
from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.events import RangesUpdate, Tap
from bokeh.models import (
    BasicTicker,
    BasicTickFormatter,
    BoxAnnotation,
    ColumnDataSource,
    CustomJS,
    HoverTool,
    Legend,
    LegendItem,
    LinearScale,
    LogScale,
    LogTicker,
    LogTickFormatter,
    Range1d,
    SaveTool,
)
from bokeh.plotting import figure
from panel.viewable import Viewer

from agents.spectra import arm_ids
from agents.tools.lines import LINE_KINDS, label_candidates, lines_in_window, stagger_labels
from agents.tools.model_overlay import template_model
from agents.tools.smoothing import SMOOTHING_MODES, sigma_in_pixels, smooth_flux
from reviewer.review_state import ReviewState
from reviewer.services.overlays import normalised_overlay
from reviewer.view_frame import Frame

LINE_COLOURS = {"emission": "#1f9d55", "absorption": "#c0392b", "sky": "#7f8c8d"}
Y_AXIS_ROOM_PX = 80  # y axis label + tick labels of up to ~7 characters
PLOT_WIDTH_PX = 640  # drawn width assumed until the browser reports the figure's own
LABEL_FONT = "8pt"
LABEL_CHAR_PX = 6.6  # average width of a character of the 8 pt sans-serif labels (Chromium, DejaVu/Helvetica)
Y_MODES = ("auto", "fixed", "log")
# prospect's camera colours (desihub/prospect plotframes: b '#1f77b4', r '#d62728', z 'maroon');
# LAMOST MRS's blue and red arms take b's and r's
ARM_COLOURS = {"B": "#1f77b4", "R": "#d62728", "Z": "maroon"}
ARM_COLOUR_NAMES = {"B": "blue", "R": "red", "Z": "maroon"}  # what the arm toggles call them
SMOOTH_UNITS = ("pixels", "Å")
MEMBERS = ("flux", "noise", "model", "masked", *LINE_KINDS, "labels")
# which members depend on which parameters (everything depends on the spectrum)
# BokehJS has no public call that hides a hover tooltip: HoverToolView._clear() is private (docs/upgrades.md)
CLEAR_TOOLTIP_JS = """
const view = Bokeh.index.find_one(hover);
if (view != null && typeof view._clear === "function") view._clear();
"""
FRAME_DRAWN = ("z", "rest_frame", "hidden_arms")  # the frame's parameters the figure is drawn in
DATA_PARAMS = {"spectrum", "smoothing", "sigma_px", "smooth_unit", "sigma_aa", "model_of", *FRAME_DRAWN}
VIEW_PARAMS = {"x_range", "line_kinds", "major_only", "shaded_ranges", "y_mode", "y_fixed",
               "object_class", "spectral_type", "width_px"}
# what the plot follows (_follow_state): the review state's item and step, and its frame's windows and model
NOT_FOLLOWING = ("not following",)  # no window: the x range is the reviewer's
FOLLOWED_STATE = ("item", "step_index")
FOLLOWED_FRAME = ("focus_window", "candidate", "follow_zoom")


def _supported_peak(values: np.ndarray) -> float:
    """The highest flux that a neighbouring pixel supports: each pixel counts up to 3x the higher of
    its two neighbours. A line sampled at two or more pixels per FWHM has neighbours at >= 1/3 of its
    core (a Gaussian's value one pixel off at FWHM = 2 px is 0.5); a one-pixel cosmic ray or hot
    pixel has none."""
    if values.size < 3:
        return float(np.max(values))
    neighbour = np.maximum(values[:-2], values[2:])
    core = values[1:-1]
    return float(np.max(np.where(neighbour > 0, np.minimum(core, 3.0 * neighbour), np.minimum(core, neighbour))))


def robust_y_range(flux: np.ndarray, *, lo_pct=1.0, hi_pct=99.0, log: bool = False):
    """A y-range that ignores cosmic rays and dead pixels but never clips a line: from the percentiles
    of the finite flux, raised to its highest supported peak (a real line is wider
    than a pixel; a cosmic ray is not: `_supported_peak`), padded with room at the top for the line
    labels. With `log`,
    from the positive flux only, padded by factors."""
    finite = flux[np.isfinite(flux)]
    if log:
        finite = finite[finite > 0]
    if finite.size == 0:
        return (0.1, 10.0) if log else (0.0, 1.0)
    lo, hi = np.percentile(finite, [lo_pct, hi_pct])
    hi = max(hi, _supported_peak(finite))
    if log:
        return (float(lo) / 1.5, float(hi) * 3.0)
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    return (float(lo - 0.08 * span), float(hi + 0.30 * span))


def flux_axis_label(unit: str) -> str:
    """The flux axis names the spectrum's own unit; a dimensionless flux is relative (normalised or
    in arbitrary units), which the axis says rather than inventing a unit."""
    return f"Flux ({unit})" if unit else "Flux (relative: normalised or arbitrary units)"


def _same_columns(old: dict, new: dict) -> bool:
    if old.keys() != new.keys():
        return False
    for key, value in new.items():
        a, b = np.asarray(old[key]), np.asarray(value)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            return False
    return True


class SpectrumPlot(Viewer):
    """Flux with noise (1/sqrt(ivar)), masked pixels, line overlays, smoothing and zoom history."""

    spectrum = param.Parameter(default=None, doc="specutils Spectrum (or None)")
    x_range = param.Tuple(default=None, length=2, allow_None=True, doc="visible range on the x axis (Å)")
    y_mode = param.Selector(default="auto", objects=list(Y_MODES),
                            doc="auto: from the flux in view; fixed: y_fixed; log: logarithmic, from the flux in view")
    y_fixed = param.Tuple(default=None, length=2, allow_None=True, doc="the fixed y range")
    smoothing = param.Selector(default="none", objects=list(SMOOTHING_MODES))
    sigma_px = param.Number(default=2.0, bounds=(0.5, 26.0), step=0.5, doc="Gaussian sigma in pixels")
    smooth_unit = param.Selector(default="pixels", objects=list(SMOOTH_UNITS),
                                 doc="the smoothing width in pixels (sigma_px) or in Å (sigma_aa, converted to pixels "
                                     "by the local dispersion)")
    sigma_aa = param.Number(default=2.0, bounds=(0.2, 20.0), step=0.2, doc="Gaussian sigma in Å")
    line_kinds = param.ListSelector(default=["emission", "absorption"], objects=list(LINE_KINDS))
    major_only = param.Boolean(default=False)
    object_class = param.String(default="", doc="STAR / GALAXY / QSO: which lines are labelled ('': all)")
    spectral_type = param.String(default="", doc="a star's type (the pipeline's subclass: M5III, DA, Carbon...): "
                                                 "which stellar lines and bands are labelled ('': unknown)")
    shaded_ranges = param.List(default=[], doc="(min, max) ranges to shade, observed frame (the first is drawn)")
    show_legend = param.Boolean(default=False, doc="the legend, drawn beside the data (never over it)")
    model_of = param.Dict(default=None, allow_None=True, doc="{class, z}: draw that class's best template at z")
    marked_x = param.Number(default=None, allow_None=True, doc="a shift-clicked wavelength, observed frame (Å)")
    width_px = param.Integer(default=PLOT_WIDTH_PX, doc="the drawn width of the data area, as the browser reports it")
    state = param.ClassSelector(class_=ReviewState, doc="the ReviewState this plot shows (None: driven directly)")
    frame = param.ClassSelector(class_=Frame, doc="the frame it is drawn in (z, rest frame, hidden arms): the "
                                "state's, or its own when driven directly")
    status = param.String(default="No spectrum", doc="what is shown, as text")
    history = param.List(default=[], doc="previous x ranges, for 'previous zoom'")

    def __init__(self, height: int = 300, **params):
        if params.get("frame") is None:
            state = params.get("state")
            params["frame"] = state.frame if state is not None else Frame()
        super().__init__(**params)
        self._arrays = None
        self._drawn_frame = self._frame_key()  # the frame the figure was last drawn in
        self._followed = NOT_FOLLOWING  # the agent's zoom window the x range was last put on (follow_zoom)
        self.figure = self._build_figure(height)
        # the pane takes the figure's height: set_height changes the figure's alone
        self._pane = pn.Column(pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
                               sizing_mode="stretch_width", css_classes=["sr-plot"], margin=0)
        self.param.watch(self._on_change, sorted((DATA_PARAMS | VIEW_PARAMS) - set(FRAME_DRAWN)))
        self.param.watch(self._show_legend, "show_legend")
        self.frame.param.watch(self._on_frame, list(FRAME_DRAWN))
        if self.state is not None:
            # an item switch changes the item, its frame and its step together (ReviewState.open_item
            # defers the frame's events): drawn once, at the item's event (each draw sends its columns)
            self.state.param.watch(self._follow_state, list(FOLLOWED_STATE))
            self.frame.param.watch(self._follow_state, list(FOLLOWED_FRAME))
            self.frame.param.watch(self._draw_overlays, ["overlays", "rest_frame", "z"])
            self.param.watch(self._draw_overlays, "spectrum")
            self._follow_state()
        self._draw(set(DATA_PARAMS | VIEW_PARAMS))

    # ---- the figure ---------------------------------------------------------------------------
    def _build_figure(self, height: int):
        # named, so that a browser test finds each member's data in the page
        self.sources = {name: ColumnDataSource(data=self._empty(name), name=f"spectrum-{name}") for name in MEMBERS}
        self.x_axis_range, self.y_axis_range = Range1d(0, 1), Range1d(0, 1)
        fig = figure(x_range=self.x_axis_range, y_range=self.y_axis_range, height=height, sizing_mode="stretch_width",
                     tools="xbox_zoom,xpan,xwheel_zoom,reset", active_drag="xbox_zoom", toolbar_location="above",
                     output_backend="canvas", min_border_left=Y_AXIS_ROOM_PX, x_axis_label=self.axis_label(),
                     y_axis_label=flux_axis_label(""), name="spectrum-figure")
        # Canvas, not WebGL: a few thousand points draw in a millisecond either way, but on machines
        # without a GPU (VMs, headless browsers) WebGL runs in software (~450 ms per update).
        src = self.sources
        flux = fig.line("wave", "flux", source=src["flux"], color="#1f4e9c", line_width=1.0)
        self.flux_renderer = flux
        # one line per arm, each in its arm's colour, over the merged (then transparent) flux line
        self.arm_source = ColumnDataSource(data=self._no_arms())
        self.arm_renderer = fig.multi_line("xs", "ys", line_color="color", source=self.arm_source, line_width=1.0,
                                           name="spectrum-arms")
        noise = fig.line("wave", "noise", source=src["noise"], color="#f39c12", line_width=0.8, alpha=0.8)
        model = fig.line("wave", "model", source=src["model"], color="#8e44ad", line_width=1.2, alpha=0.85)
        masked = fig.scatter("wave", "flux", source=src["masked"], color="#e74c3c", marker="x", size=5)
        spans = {kind: fig.vspan(x="x", source=src[kind], line_color=LINE_COLOURS[kind], line_dash="dashed",
                                 line_width=1, line_alpha=0.7) for kind in LINE_KINDS}
        fig.text("x", "y", text="text", source=src["labels"], text_font_size=LABEL_FONT, text_color="#333333",
                 text_baseline="middle", text_align="center")
        # other spectra of the object (Same-object panel): one multi-line, each its own colour
        self.overlay_source = ColumnDataSource(data={"xs": [], "ys": [], "color": [], "name": []})
        fig.multi_line("xs", "ys", line_color="color", source=self.overlay_source, line_width=1.0, line_alpha=0.8,
                       name="same-object-overlay")
        self.save_tool = SaveTool(filename="view")
        hover = HoverTool(renderers=[flux], tooltips=[("λ", "@wave{0.0} Å"), ("flux", "@flux{0.000}")], mode="vline")
        fig.add_tools(self.save_tool, hover)
        # a tooltip belongs to the spectrum it was read from: new data clears it (until the pointer moves)
        src["flux"].js_on_change("data", CustomJS(args={"hover": hover}, code=CLEAR_TOOLTIP_JS))
        items = [LegendItem(label=name, renderers=[r]) for name, r in
                 (("flux", flux), ("noise", noise), ("model", model), ("masked", masked), *spans.items())]
        # beside the data, so that it never covers a line label
        self._legend_items = items
        self._arm_items: list[LegendItem] = []  # one per arm shown (_set_arms)
        self.legend = Legend(items=self.legend_entries() if self.show_legend else [], visible=self.show_legend,
                             location="top_left", label_text_font_size="8pt")
        fig.add_layout(self.legend, "right")
        # The agent's zoom is a BoxAnnotation on the overlay layer: moving it repaints only that
        # layer, not the thousands of points below (a glyph change repaints everything).
        self.zoom_box = BoxAnnotation(fill_color="#f1c40f", fill_alpha=0.22, line_alpha=0, level="overlay",
                                      visible=False, name="agent-zoom")
        fig.add_layout(self.zoom_box)
        fig.on_event(RangesUpdate, self._on_user_range)
        fig.on_event(Tap, self._on_tap)
        fig.on_change("inner_width", self._on_width)
        return fig

    @staticmethod
    def _no_arms() -> dict:
        return {"xs": [], "ys": [], "color": [], "arm": []}

    @staticmethod
    def _empty(name: str) -> dict:
        empty = np.array([], dtype=float)
        return {"flux": {"wave": empty, "flux": empty}, "noise": {"wave": empty, "noise": empty},
                "model": {"wave": empty, "model": empty},
                "masked": {"wave": empty, "flux": empty}, "labels": {"x": empty, "y": empty, "text": []}
                }.get(name, {"x": empty})

    # ---- bound to the frame and the review state -----------------------------------------------
    def _frame_key(self) -> tuple:
        return float(self.frame.z or 0.0), bool(self.frame.rest_frame), tuple(self.frame.hidden_arms)

    def _on_frame(self, *_):
        """The frame changed: drawn in it, with the same piece of spectrum in view when the axis changes
        frame. Nothing to do when the figure already shows it (an item switch drew it)."""
        (z0, rest0, _), (z, rest, _) = self._drawn_frame, self._frame_key()
        if self._frame_key() == self._drawn_frame:
            return
        if (z, rest) != (z0, rest0):
            update: dict = {"history": []}
            if self.x_range is not None:
                old, new = (1.0 + z0 if rest0 else 1.0), (1.0 + z if rest else 1.0)
                update["x_range"] = (self.x_range[0] * old / new, self.x_range[1] * old / new)
            self.param.update(**update)
            if "x_range" in update:
                return  # drawn by the x range's change, in the new frame
        self._draw(set())

    def _follow_state(self, *_):
        """The plot's parameters from the review state and its frame, set in one update (one draw)."""
        state, frame, update = self.state, self.frame, {}
        item = state.item
        spectrum = item.spectrum if item is not None else None
        if spectrum is not self.spectrum:
            update.update(spectrum=spectrum, x_range=None)
        cls = str(item.agent_label.get("type") or item.record.get("pipeline_class") or "").upper() if item else ""
        if cls != self.object_class:
            update["object_class"] = cls
        record = item.record if item else {}
        sub = str(record.get("pipeline_subclass") or "") if str(record.get("pipeline_class") or "").upper() == "STAR" else ""
        if sub != self.spectral_type:
            update["spectral_type"] = sub
        window = frame.focus_window or state.zoom_window()
        if ([window] if window else []) != self.shaded_ranges:
            update["shaded_ranges"] = [window] if window else []
        following = frame.follow_zoom and not frame.focus_window
        agent = state.zoom_window() if following else None
        if not following:
            self._followed = NOT_FOLLOWING  # following again puts the plot on the window at once
        elif agent != self._followed or "spectrum" in update:
            # the plot shows what the agent was looking at (the shading alone is lost on a whole spectrum)
            scale = frame.scale()
            update["x_range"] = None if agent is None else (agent[0] * scale, agent[1] * scale)
            self._followed = agent
        wanted = frame.model_of()
        if wanted != self.model_of:
            update["model_of"] = wanted
        if update:
            self.param.update(**update)

    def _draw_overlays(self, *_):
        """The state's overlays, normalised to the spectrum on screen, in its frame."""
        data: dict = {"xs": [], "ys": [], "color": [], "name": []}
        if self.spectrum is not None:
            for record, spec, colour in self.state.overlay_spectra():
                curve = normalised_overlay(self.spectrum, spec)
                if curve is None:  # said, not silently left out
                    self.state.error = (f"Cannot overlay {record.get('object_id') or record['spectrum_id']}: it shares "
                                        "too few usable wavelengths with the spectrum on screen.")
                else:
                    data["xs"].append((curve[0] * self.frame_scale()).astype(np.float32))
                    data["ys"].append(curve[1].astype(np.float32))
                    data["color"].append(colour)
                    data["name"].append(record["spectrum_id"])
        if not data["xs"] and not len(self.overlay_source.data["xs"]):
            return  # nothing drawn, nothing to draw: no message to the browser
        with pn.io.hold():
            self.overlay_source.data = data

    def frame_scale(self) -> float:
        """Axis wavelength per observed wavelength: 1/(1+z) in the rest frame, else 1."""
        return self.frame.scale()

    def axis_label(self) -> str:
        return (f"Rest-frame wavelength (Å, z = {self.frame.z:.4f})" if self.frame.rest_frame
                else "Observed wavelength (Å)")

    def set_height(self, height: int) -> None:
        """The plot's height in px (the page fits it to the window: layouts.audit.fit_plot_to_window)."""
        if height != self.figure.height:
            self.figure.height = int(height)

    # ---- zoom actions -------------------------------------------------------------------------
    def zoom_to(self, lo: float, hi: float) -> None:
        lo, hi = float(lo), float(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
            raise ValueError(f"invalid wavelength range {lo}-{hi}: the minimum must be below the maximum")
        self.history = [*self.history, self.x_range]
        self.x_range = (lo, hi)

    def zoom_by(self, factor: float) -> None:
        """Zoom in (factor < 1) or out (> 1) about the centre of the view, within the spectrum."""
        full = self.full_range()
        if full is None:
            return
        lo, hi = self.x_range or full
        centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * factor
        lo, hi = max(full[0], centre - half), min(full[1], centre + half)
        if (lo, hi) == full:
            self.reset_zoom()
        elif hi > lo:
            self.zoom_to(lo, hi)

    def set_y_range(self, lo: float, hi: float) -> None:
        lo, hi = float(lo), float(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
            raise ValueError(f"invalid flux range {lo} to {hi}: the minimum must be below the maximum")
        self.param.update(y_fixed=(lo, hi), y_mode="fixed")

    def previous_zoom(self) -> None:
        if self.history:
            *rest, last = self.history
            self.history = rest
            self.x_range = last

    def reset_zoom(self) -> None:
        if self.x_range is not None:
            self.history = [*self.history, self.x_range]
            self.x_range = None

    def full_range(self) -> tuple[float, float] | None:
        arrays = self._get_arrays()
        if arrays is None:
            return None
        wave = arrays["wave"] * self.frame_scale()
        return float(wave[0]), float(wave[-1])

    def _on_user_range(self, event):
        # Box zoom / pan / wheel in the browser: remember it so labels and the y range follow the view.
        if event.x0 is None or event.x1 is None or self.spectrum is None:
            return
        lo, hi = float(event.x0), float(event.x1)
        current = self.x_range or self.full_range()
        if current and abs(current[0] - lo) < 1e-6 * abs(lo) + 1e-3 and abs(current[1] - hi) < 1e-6 * abs(hi) + 1e-3:
            return
        self.zoom_to(lo, hi)

    def _on_tap(self, event):
        # shift-click marks a feature (Marz): the reviewer then says which line it is
        if event.x is not None and getattr(event, "modifiers", None) and event.modifiers.get("shift"):
            self.marked_x = float(event.x) / self.frame_scale()

    def _on_width(self, _attr, _old, new):
        if isinstance(new, int) and new > 50 and abs(new - self.width_px) > 4:
            self.width_px = new

    # ---- data ---------------------------------------------------------------------------------
    def _get_arrays(self):
        if self._arrays is None and self.spectrum is not None:
            spec = self.spectrum
            wave = np.asarray(spec.spectral_axis.to_value("Angstrom"), dtype=float)
            flux = np.asarray(spec.flux.value, dtype=float)
            ivar = np.asarray(spec.uncertainty.array, dtype=float) if spec.uncertainty is not None else None
            mask = np.zeros(flux.shape, bool) if spec.mask is None else np.asarray(spec.mask, bool)
            mask = mask | ~np.isfinite(flux)
            noise = np.full_like(flux, np.nan)
            if ivar is not None:
                good = ivar > 0
                noise[good] = 1.0 / np.sqrt(ivar[good])
            self._arrays = {"wave": wave, "flux": flux, "ivar": ivar, "mask": mask, "noise": noise,
                            "unit": spec.flux.unit.to_string(), "arms": arm_ids(spec)}
        return self._arrays

    def arms(self) -> tuple[str, ...]:
        """The arms of the spectrum on screen, blue to red (() for a single-arm spectrum)."""
        a = self._get_arrays()
        return a["arms"][0] if a is not None and a["arms"] is not None else ()

    def _hidden_pixels(self, a) -> np.ndarray | None:
        hidden_arms = self.frame.hidden_arms
        if a["arms"] is None or not hidden_arms:
            return None
        names, ids = a["arms"]
        return np.isin(ids, [k for k, name in enumerate(names) if name in hidden_arms])

    def drawn_flux(self) -> np.ndarray | None:
        """The flux as drawn: smoothed per the current settings (a width in Å is a width in pixels at
        each pixel's own dispersion), NaN at bad pixels and at the pixels of hidden arms."""
        a = self._get_arrays()
        if a is None:
            return None
        sigma = self.sigma_px if self.smooth_unit == "pixels" else sigma_in_pixels(a["wave"], self.sigma_aa)
        flux = smooth_flux(a["flux"], a["ivar"], a["mask"], mode=self.smoothing, sigma_px=sigma)
        hidden = self._hidden_pixels(a)
        if hidden is not None:
            flux[hidden] = np.nan
        return flux

    def _arm_lines(self, wave32: np.ndarray, flux: np.ndarray, a) -> dict:
        """The arms source: one line per shown arm, its own pixels only."""
        data = self._no_arms()
        if a["arms"] is None:
            return data
        names, ids = a["arms"]
        for k, name in enumerate(names):
            if name not in self.frame.hidden_arms:
                own = ids == k
                data["xs"].append(wave32[own])
                data["ys"].append(flux[own].astype(np.float32))
                data["color"].append(ARM_COLOURS.get(name, "#555555"))
                data["arm"].append(name)
        return data

    def _model(self) -> np.ndarray | None:
        """The chosen candidate's template model on the data's pixels (made once per spectrum and
        candidate)."""
        a = self._get_arrays()
        if a is None or not self.model_of:
            return None
        key = (self.model_of["class"], round(self.model_of["z"], 6))
        cache = a.setdefault("models", {})
        if key not in cache:
            fit = template_model(a["wave"], np.where(a["mask"], np.nan, a["flux"]),
                                 None if a["ivar"] is None else np.where(a["mask"], 0.0, a["ivar"]), *key)
            cache[key] = None if fit is None else fit.flux
        return cache[key]

    def _y_limits(self, flux_in_view: np.ndarray) -> tuple[float, float]:
        if self.y_mode == "fixed" and self.y_fixed is not None:
            return self.y_fixed
        return robust_y_range(flux_in_view, log=self.y_mode == "log")

    def _frame(self, parts=("data", "view")) -> dict:
        """Everything the figure shows, as plain columns (one dict per member)."""
        a = self._get_arrays()
        if a is None:
            self.status = "No spectrum"
            return {**{name: self._empty(name) for name in MEMBERS}, "shaded": None,
                    "xlim": (0.0, 1.0), "ylim": (0.0, 1.0), "unit": ""}
        scale = self.frame_scale()
        wave = a["wave"] * scale
        flux = self.drawn_flux()
        lo, hi = self.x_range if self.x_range is not None else (float(wave[0]), float(wave[-1]))
        in_view = (wave >= lo) & (wave <= hi)
        ylo, yhi = self._y_limits(flux[in_view] if in_view.any() else flux)
        out = {"xlim": (lo, hi), "ylim": (ylo, yhi), "unit": a["unit"]}
        if "data" in parts:  # float32 halves what goes to the browser; 7 digits are plenty on screen
            wave32 = wave.astype(np.float32)
            out["flux"] = {"wave": wave32, "flux": flux.astype(np.float32)}
            hidden = self._hidden_pixels(a)
            noise = a["noise"] if hidden is None else np.where(hidden, np.nan, a["noise"])
            out["noise"] = {"wave": wave32, "noise": noise.astype(np.float32)}
            out["arms"] = self._arm_lines(wave32, flux, a)
            model = self._model()
            out["model"] = ({"wave": wave32, "model": model.astype(np.float32)} if model is not None
                            else self._empty("model"))
        if "view" in parts:
            # masked pixels are drawn at their flux, clipped into view so spikes stay visible
            masked = a["mask"]
            out["masked"] = {"wave": wave[masked],
                             "flux": np.clip(np.nan_to_num(a["flux"][masked], nan=ylo), ylo, yhi)}
            lines = lines_in_window(lo, hi, z=self.frame.z, kinds=self.line_kinds, rest_frame=self.frame.rest_frame,
                                    major_only=self.major_only, object_class=self.object_class or None,
                                    spectral_type=self.spectral_type or None)
            for kind in LINE_KINDS:
                out[kind] = {"x": np.array([ln["x"] for ln in lines if ln["kind"] == kind], dtype=float)}
            out["labels"] = self._labels(lines, lo, hi, ylo, yhi)
            spans = [(s[0] * scale, s[1] * scale) for s in self.shaded_ranges]
            out["shaded"] = spans[0] if spans else None
        self.status = f"Showing {lo:.1f} – {hi:.1f} Å ({'rest' if self.frame.rest_frame else 'observed'} frame)"
        return out

    def _labels(self, lines, lo, hi, ylo, yhi) -> dict:
        """Line labels thinned by priority so that none overlap and none leave the frame, stacked
        downwards from the top of the view (in steps of the y scale, linear or logarithmic)."""
        named = label_candidates(lines)
        levels = stagger_labels([ln["x"] for ln in named], [ln["name"] for ln in named], x_span=hi - lo,
                                width_px=self.width_px, char_px=LABEL_CHAR_PX, frame=(lo, hi))
        placed = [(ln, lvl) for ln, lvl in zip(named, levels, strict=True) if lvl is not None]
        if self.y_mode == "log" and ylo > 0:
            ratio = (yhi / ylo) ** 0.055
            ys = [yhi / ratio ** (0.6 + lvl) for _, lvl in placed]
        else:
            step = 0.055 * (yhi - ylo)
            ys = [yhi - step * (0.6 + lvl) for _, lvl in placed]
        return {"x": np.array([ln["x"] for ln, _ in placed], dtype=float), "y": np.array(ys, dtype=float),
                "text": [ln["name"] for ln, _ in placed]}

    # ---- drawing ------------------------------------------------------------------------------
    def _on_change(self, *events):
        self._draw({e.name for e in events})

    def _draw(self, changed: set[str]) -> None:
        drawn, self._drawn_frame = self._drawn_frame, self._frame_key()
        changed = set(changed) | {name for name, a, b in zip(FRAME_DRAWN, drawn, self._drawn_frame, strict=True)
                                  if a != b}
        if "spectrum" in changed:
            self._arrays = None
            self.history = []
        # In the observed frame z only moves the line markers: the flux and noise columns (most of the
        # bytes of an item switch) are re-sent only when they change.
        data_changed = changed & DATA_PARAMS
        if not self.frame.rest_frame and "rest_frame" not in changed:
            data_changed -= {"z"}
        f = self._frame(("data", "view") if data_changed else ("view",))
        # Bokeh models edited directly must be edited under hold(): outside it, a change made in a
        # widget's callback reaches the server session without its document lock and never reaches
        # the browser; and one patch message goes out for all of it.
        with pn.io.hold():
            for name in MEMBERS:
                # an equal column set is not sent: each one sent is decoded and redrawn in the browser
                if name in f and not _same_columns(self.sources[name].data, f[name]):
                    self.sources[name].data = dict(f[name])
            if "arms" in f:
                self._set_arms(f["arms"])
            self._set(self.x_axis_range, start=f["xlim"][0], end=f["xlim"][1])
            self._set(self.y_axis_range, start=f["ylim"][0], end=f["ylim"][1])
            self._place_box(f["shaded"])
            self._set(self.figure.xaxis[0], axis_label=self.axis_label())
            self._set(self.figure.yaxis[0], axis_label=flux_axis_label(f["unit"]))
            if "y_mode" in changed:
                self._set_y_scale(self.y_mode == "log")

    def _set_arms(self, data: dict) -> None:
        old = self.arm_source.data
        same = list(old["arm"]) == data["arm"] and all(
            np.array_equal(np.asarray(x), y, equal_nan=True) for x, y in zip(old["ys"], data["ys"], strict=True)) and all(
            np.array_equal(np.asarray(x), y) for x, y in zip(old["xs"], data["xs"], strict=True))
        if not same:
            self.arm_source.data = data
        if [item.label.value for item in self._arm_items] != [f"{a} arm" for a in data["arm"]]:
            # one entry per arm shown, drawn in its colour (`index`: that row of the multi-line)
            self._arm_items = [LegendItem(label=f"{arm} arm", renderers=[self.arm_renderer], index=i)
                               for i, arm in enumerate(data["arm"])]
            self._show_legend()
        # the merged line stays for hover and exports, transparent while the arms draw the data
        self._set(self.flux_renderer.glyph, line_alpha=0.0 if data["arm"] else 1.0)

    def legend_entries(self) -> list[LegendItem]:
        """What the legend lists: the data, noise, model, masked pixels, line kinds, and each arm shown."""
        return [*self._legend_items, *self._arm_items]

    def _show_legend(self, *_) -> None:
        # A hidden legend holds no entries: BokehJS redraws every entry of a legend, shown or not, each
        # time one of its renderers' data changes (~50 ms per item switch in Chromium).
        entries = self.legend_entries() if self.show_legend else []
        with pn.io.hold():
            if [id(e) for e in self.legend.items] != [id(e) for e in entries]:
                self.legend.items = entries
            self._set(self.legend, visible=self.show_legend)

    @staticmethod
    def _set(model, **props) -> None:
        """Set only what differs: each property sent is a message and a redraw in the browser."""
        changed = {k: v for k, v in props.items() if getattr(model, k) != v}
        if changed:
            model.update(**changed)

    def _set_y_scale(self, log: bool) -> None:
        axis = self.figure.yaxis[0]
        if log and not isinstance(self.figure.y_scale, LogScale):
            self.figure.y_scale = LogScale()
            axis.update(ticker=LogTicker(), formatter=LogTickFormatter())
        elif not log and isinstance(self.figure.y_scale, LogScale):
            self.figure.y_scale = LinearScale()
            axis.update(ticker=BasicTicker(), formatter=BasicTickFormatter())

    def _place_box(self, span) -> None:
        if span is None:
            self._set(self.zoom_box, visible=False)
        else:
            self._set(self.zoom_box, left=float(span[0]), right=float(span[1]), visible=True)

    def shaded_span(self) -> tuple[float, float] | None:
        """Where the agent-zoom box is drawn (None: hidden)."""
        if not self.zoom_box.visible:
            return None
        return (self.zoom_box.left, self.zoom_box.right)

    def __panel__(self):
        return self._pane
