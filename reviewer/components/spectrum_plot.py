"""The interactive flux-vs-wavelength plot: Bokeh via HoloViews, updated in place.

HoloViews draws the figure once (one overlay whose members never change: flux, noise, masked
pixels, three line kinds, their labels, shaded ranges). Hooks keep the Bokeh data sources and
ranges of that figure, and later changes (a new spectrum, a zoom, smoothing, line settings) patch
only the sources that changed. That is what keeps a click in the list, or a step of a playback,
well under the 100-150 ms a reviewer notices; a full HoloViews re-render costs ~75 ms of server
time alone. Before the figure exists (or when the axis itself changes, observed <-> rest frame)
the DynamicMap re-renders as usual.

The plot binds to the review state: the item's spectrum, the step's zoom window (shaded), the frame
(rest frame divides the wavelength axis; flux stays with its pixels) and z. Zoom, smoothing and line
settings are this view's own.
"""
from __future__ import annotations

import weakref

import holoviews as hv
import numpy as np
import panel as pn
import param
from bokeh.models import BoxAnnotation
from panel.viewable import Viewer

from agents.tools.lines import LINE_KINDS, label_candidates, lines_in_window, stagger_labels
from agents.tools.smoothing import SMOOTHING_MODES, smooth_flux

hv.extension("bokeh", logo=False)
# Canvas, not WebGL: a few thousand points draw in a millisecond either way, but on machines without
# a GPU (VMs, headless browsers) WebGL runs in software and compositing it cost ~450 ms per update.
hv.renderer("bokeh").webgl = False

LINE_COLOURS = {"emission": "#1f9d55", "absorption": "#c0392b", "sky": "#7f8c8d"}
Y_AXIS_ROOM_PX = 80  # y axis label + tick labels of up to ~7 characters
PLOT_WIDTH_PX = 640  # typical drawn width in the three-column layout; used to space line labels
ELEMENT_TYPES = ("Curve", "Scatter", "VLines", "Labels")
# which overlay members depend on which parameters (everything depends on the spectrum)
DATA_PARAMS = {"spectrum", "smoothing", "sigma_px", "rest_frame", "z"}
VIEW_PARAMS = {"x_range", "line_kinds", "major_only", "shaded_ranges", "show_legend"}


def robust_y_range(flux: np.ndarray, *, lo_pct=1.0, hi_pct=99.0):
    """A y-range that ignores cosmic rays and dead pixels: percentiles of the finite flux, padded.

    Padding leaves room at the top for the line labels.
    """
    finite = flux[np.isfinite(flux)]
    if finite.size == 0:
        return (0.0, 1.0)
    lo, hi = np.percentile(finite, [lo_pct, hi_pct])
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    return (float(lo - 0.08 * span), float(hi + 0.30 * span))


def _same_columns(old: dict, new: dict) -> bool:
    if old.keys() != new.keys():
        return False
    for key, value in new.items():
        a, b = np.asarray(old[key]), np.asarray(value)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            return False
    return True


def weak_method(method):
    """`method`, called only while its object lives. HoloViews keeps plot hooks in its global option
    trees and stream subscribers in a registry keyed weakly by their source; holding the plot there
    strongly kept every closed session's review state and figures alive."""
    ref = weakref.WeakMethod(method)

    def call(*args, **kwargs):
        bound = ref()
        return None if bound is None else bound(*args, **kwargs)

    return call


class SpectrumPlot(Viewer):
    """Flux with noise (1/sqrt(ivar)), masked pixels, line overlays, smoothing and zoom history."""

    spectrum = param.Parameter(default=None, doc="specutils Spectrum (or None)")
    x_range = param.Tuple(default=None, length=2, allow_None=True, doc="visible range on the x axis (Å)")
    smoothing = param.Selector(default="none", objects=list(SMOOTHING_MODES))
    sigma_px = param.Number(default=2.0, bounds=(0.5, 26.0), step=0.5, doc="Gaussian sigma in pixels")
    line_kinds = param.ListSelector(default=["emission", "absorption"], objects=list(LINE_KINDS))
    major_only = param.Boolean(default=False)
    rest_frame = param.Boolean(default=False, doc="x axis in the rest frame (observed / (1+z))")
    z = param.Number(default=0.0, doc="redshift used for line positions and the rest frame")
    shaded_ranges = param.List(default=[], doc="(min, max) ranges to shade, observed frame (the first is drawn)")
    show_legend = param.Boolean(default=False, doc="the legend, drawn outside the data")
    state = param.Parameter(default=None, doc="the ReviewState this plot shows (None: driven directly)")
    status = param.String(default="No spectrum", doc="what is shown, as text")
    history = param.List(default=[], doc="previous x ranges, for 'previous zoom'")

    def __init__(self, **params):
        super().__init__(**params)
        self._arrays = None
        self._sources: dict = {}  # overlay member label -> its Bokeh ColumnDataSource
        self._ranges: dict = {}  # "x" / "y" -> Bokeh Range1d
        self._box = None  # BoxAnnotation showing the agent's current zoom
        self._redraw = hv.streams.Stream.define("Redraw", tick=0)()
        hooks = [weak_method(self._capture)]
        # framewise: each HoloViews frame sets the axis ranges (the fallback path) in place.
        self._dmap = hv.DynamicMap(self._overlay, streams=[self._redraw]).opts(
            *(getattr(hv.opts, name)(framewise=True, hooks=hooks) for name in ELEMENT_TYPES))
        self._range_stream = hv.streams.RangeX(source=self._dmap)
        self._range_stream.add_subscriber(weak_method(self._on_user_range))
        self._pane = pn.pane.HoloViews(self._dmap, sizing_mode="stretch_width", height=300, linked_axes=False,
                                       css_classes=["sr-plot"])
        self._axis = None  # the Bokeh x axis: its label says which frame
        self._legend = None
        self.param.watch(self._on_change, sorted(DATA_PARAMS | VIEW_PARAMS))
        if self.state is not None:
            self.state.param.watch(self._follow_item, "item")
            self.state.param.watch(self._follow_step, ["step_index", "item", "focus_window"])
            self.state.param.watch(self._follow_frame, ["rest_frame", "z"])
            self._follow_item()
            self._follow_step()
            self._follow_frame()
        self._frame()  # status text for the initial state

    # ---- bound to the review state ------------------------------------------------------------
    def _follow_item(self, *_):
        item = self.state.item
        spectrum = item.spectrum if item is not None else None
        if spectrum is not self.spectrum:
            self.param.update(spectrum=spectrum, x_range=None)

    def _follow_step(self, *_):
        window = self.state.focus_window or self.state.zoom_window()
        shaded = [window] if window else []
        if shaded != self.shaded_ranges:
            self.shaded_ranges = shaded

    def _follow_frame(self, *_):
        z, rest = float(self.state.z or 0.0), bool(self.state.rest_frame)
        if (z, rest) == (self.z, self.rest_frame):
            return
        old = 1.0 + self.z if self.rest_frame else 1.0
        new = 1.0 + z if rest else 1.0
        # the same piece of spectrum stays in view when the axis changes frame
        x_range = None if self.x_range is None else (self.x_range[0] * old / new, self.x_range[1] * old / new)
        self.param.update(z=z, rest_frame=rest, x_range=x_range, history=[])

    def frame_scale(self) -> float:
        """Axis wavelength per observed wavelength: 1/(1+z) in the rest frame, else 1."""
        return 1.0 / (1.0 + self.z) if self.rest_frame else 1.0

    def axis_label(self) -> str:
        return f"Rest-frame wavelength (Å, z = {self.z:.4f})" if self.rest_frame else "Observed wavelength (Å)"

    # ---- zoom actions -------------------------------------------------------------------------
    def zoom_to(self, lo: float, hi: float) -> None:
        lo, hi = float(lo), float(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
            raise ValueError(f"invalid wavelength range {lo}-{hi}: the minimum must be below the maximum")
        self.history = [*self.history, self.x_range]
        self.x_range = (lo, hi)

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
        wave = arrays["wave"] / (1.0 + self.z) if self.rest_frame else arrays["wave"]
        return float(wave[0]), float(wave[-1])

    def _on_user_range(self, x_range=None, **_):
        # Box zoom / pan in the browser: remember it so labels and y-range follow the view.
        if x_range is None or self.spectrum is None:
            return
        lo, hi = (float(v) for v in x_range)
        current = self.x_range or self.full_range()
        if current and abs(current[0] - lo) < 1e-6 * abs(lo) + 1e-3 and abs(current[1] - hi) < 1e-6 * abs(hi) + 1e-3:
            return
        self.zoom_to(lo, hi)

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
                            "unit": spec.flux.unit.to_string() or "arbitrary"}
        return self._arrays

    def drawn_flux(self) -> np.ndarray | None:
        """The flux as drawn: smoothed per the current settings, NaN at bad pixels."""
        a = self._get_arrays()
        if a is None:
            return None
        return smooth_flux(a["flux"], a["ivar"], a["mask"], mode=self.smoothing, sigma_px=self.sigma_px)

    def _frame(self, parts=("data", "view")) -> dict:
        """Everything the figure shows, as plain columns (one dict per overlay member)."""
        a = self._get_arrays()
        if a is None:
            self.status = "No spectrum"
            empty = np.array([], dtype=float)
            return {"flux": {"wave": empty, "flux": empty}, "noise": {"wave": empty, "noise": empty},
                    "masked": {"wave": empty, "flux": empty}, **{k: {"x": empty} for k in LINE_KINDS},
                    "labels": {"x": empty, "y": empty, "text": []}, "shaded": None,
                    "xlim": (0.0, 1.0), "ylim": (0.0, 1.0), "unit": ""}
        scale = self.frame_scale()
        wave = a["wave"] * scale
        flux = self.drawn_flux()
        lo, hi = self.x_range if self.x_range is not None else (float(wave[0]), float(wave[-1]))
        in_view = (wave >= lo) & (wave <= hi)
        ylo, yhi = robust_y_range(flux[in_view] if in_view.any() else flux)
        out = {"xlim": (lo, hi), "ylim": (ylo, yhi), "unit": a["unit"]}
        if "data" in parts:  # float32 halves what goes to the browser; 7 digits are plenty on screen
            wave32 = wave.astype(np.float32)
            out["flux"] = {"wave": wave32, "flux": flux.astype(np.float32)}
            out["noise"] = {"wave": wave32, "noise": a["noise"].astype(np.float32)}
        if "view" in parts:
            # masked pixels are drawn at their flux, clipped into view so spikes stay visible
            masked = a["mask"]
            out["masked"] = {"wave": wave[masked],
                             "flux": np.clip(np.nan_to_num(a["flux"][masked], nan=ylo), ylo, yhi)}
            lines = lines_in_window(lo, hi, z=self.z, kinds=self.line_kinds, rest_frame=self.rest_frame,
                                    major_only=self.major_only)
            for kind in LINE_KINDS:
                out[kind] = {"x": np.array([ln["x"] for ln in lines if ln["kind"] == kind], dtype=float)}
            named = label_candidates(lines)
            levels = stagger_labels([ln["x"] for ln in named], [ln["name"] for ln in named],
                                    x_span=hi - lo, width_px=PLOT_WIDTH_PX)
            step = 0.055 * (yhi - ylo)
            placed = [(ln, lvl) for ln, lvl in zip(named, levels, strict=True) if lvl is not None]
            out["labels"] = {"x": np.array([ln["x"] for ln, _ in placed], dtype=float),
                             "y": np.array([yhi - step * (0.6 + lvl) for _, lvl in placed], dtype=float),
                             "text": [ln["name"] for ln, _ in placed]}
            spans = [(s[0] * scale, s[1] * scale) for s in self.shaded_ranges]
            out["shaded"] = spans[0] if spans else None
        self.status = f"Showing {lo:.1f} – {hi:.1f} Å ({'rest' if self.rest_frame else 'observed'} frame)"
        return out

    # ---- drawing ------------------------------------------------------------------------------
    def _capture(self, plot, element):
        source = plot.handles.get("source")
        if source is not None and element.label:
            self._sources[element.label] = source
        if element.label == "flux" and self._box is None:
            # The agent's zoom is a BoxAnnotation on the overlay layer: moving it repaints only that
            # layer, not the thousands of points below (a glyph change repaints everything).
            self._box = BoxAnnotation(fill_color="#f1c40f", fill_alpha=0.22, line_alpha=0, level="overlay",
                                      visible=False, name="agent-zoom")
            plot.state.add_layout(self._box)
            self._place_box(self._frame(("view",))["shaded"])
        for axis in ("x", "y"):
            rng = plot.handles.get(f"{axis}_range")
            if rng is not None:
                self._ranges[axis] = rng
        # room for the y tick labels of any spectrum: a y axis that widens with the next spectrum's
        # labels resized the frame and sent its new width back to the server on every such switch
        plot.state.min_border_left = Y_AXIS_ROOM_PX
        if plot.state.xaxis:
            self._axis = plot.state.xaxis[0]
            self._axis.axis_label = self.axis_label()
        if plot.state.legend and self._legend is None:
            self._legend = plot.state.legend[0]
            self._legend.visible = self.show_legend

    def _overlay(self, **_):
        f = self._frame()
        kdims = [hv.Dimension("wave", label=self.axis_label())]
        vdim = hv.Dimension("flux", label=f"Flux ({f['unit']})" if f["unit"] else "Flux")
        curve = hv.Curve(f["flux"], kdims, [vdim], label="flux").opts(color="#1f4e9c", line_width=1.0,
                                                                      tools=["hover"])
        noise = hv.Curve(f["noise"], kdims, ["noise"], label="noise").opts(color="#f39c12", line_width=0.8, alpha=0.8)
        bad = hv.Scatter(f["masked"], kdims, [vdim], label="masked").opts(color="#e74c3c", marker="x", size=5)
        vlines = [hv.VLines(f[kind]["x"], label=kind).opts(color=LINE_COLOURS[kind], line_dash="dashed",
                                                           line_width=1, alpha=0.7) for kind in LINE_KINDS]
        labels = hv.Labels(f["labels"], ["x", "y"], ["text"], label="labels").opts(
            text_font_size="8pt", text_color="#333333", text_baseline="middle")
        return (curve * noise * bad * vlines[0] * vlines[1] * vlines[2] * labels).opts(
            hv.opts.Overlay(xlim=f["xlim"], ylim=f["ylim"], responsive=True, height=300, show_legend=True,
                            legend_position="right", active_tools=["box_zoom"], toolbar="above"))

    def _on_change(self, *events):
        changed = {e.name for e in events}
        if "spectrum" in changed:
            self._arrays = None
            self.history = []
        members = {"flux", "noise", "masked", *LINE_KINDS, "labels"}
        if not self._ranges or not members <= set(self._sources):
            self._redraw.event()  # nothing is drawn yet
            return
        if changed == {"shaded_ranges"}:
            # Bokeh models edited directly must be edited under hold(): outside it, a change made in a
            # widget's callback reaches the server session without its document lock (RuntimeError
            # "_pending_writes should be non-None") and never reaches the browser.
            with pn.io.hold():
                self._place_box(self._frame(("view",))["shaded"])
            return
        # In the observed frame z only moves the line markers: the flux and noise columns (most of the
        # bytes of an item switch) are re-sent only when they change.
        data_changed = changed & DATA_PARAMS
        if not self.rest_frame and "rest_frame" not in changed:
            data_changed -= {"z"}
        f = self._frame(("data", "view") if data_changed else ("view",))
        with pn.io.hold():
            for name in members:
                # an equal column set is not sent: each one sent is decoded and redrawn in the browser
                if name in f and not _same_columns(self._sources[name].data, f[name]):
                    self._sources[name].data = dict(f[name])
            self._ranges["x"].update(start=f["xlim"][0], end=f["xlim"][1])
            self._ranges["y"].update(start=f["ylim"][0], end=f["ylim"][1])
            self._place_box(f["shaded"])
            if self._axis is not None and self._axis.axis_label != self.axis_label():
                self._axis.axis_label = self.axis_label()
            if self._legend is not None and self._legend.visible != self.show_legend:
                self._legend.visible = self.show_legend

    def _place_box(self, span) -> None:
        if self._box is None:
            return
        if span is None:
            if self._box.visible:
                self._box.visible = False
        else:
            self._box.update(left=float(span[0]), right=float(span[1]), visible=True)

    def shaded_span(self) -> tuple[float, float] | None:
        """Where the agent-zoom box is drawn (None: hidden)."""
        if self._box is None or not self._box.visible:
            return None
        return (self._box.left, self._box.right)

    def __panel__(self):
        return self._pane
