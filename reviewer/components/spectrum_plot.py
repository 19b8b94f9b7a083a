"""The interactive flux-vs-wavelength plot: Bokeh via HoloViews, updated in place.

One DynamicMap whose overlay always has the same members (flux, noise, masked pixels, three line
kinds, their labels, shaded ranges), so a new spectrum or a new range patches the existing Bokeh
figure instead of rebuilding it: that is what keeps a click in the list fast.
"""
from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param
from panel.viewable import Viewer

from agents.tools.lines import LINE_KINDS, lines_in_window, stagger_labels
from agents.tools.smoothing import SMOOTHING_MODES, smooth_flux

hv.extension("bokeh", logo=False)

LINE_COLOURS = {"emission": "#1f9d55", "absorption": "#c0392b", "sky": "#7f8c8d"}
PLOT_WIDTH_PX = 640  # typical drawn width in the three-column layout; used to space line labels


def robust_y_range(flux: np.ndarray, noise: np.ndarray | None = None, *, lo_pct=1.0, hi_pct=99.0):
    """A y-range that ignores cosmic rays and dead pixels: percentiles of the finite flux, padded.

    Padding leaves room at the top for the line labels.
    """
    finite = flux[np.isfinite(flux)]
    if finite.size == 0:
        return (0.0, 1.0)
    lo, hi = np.percentile(finite, [lo_pct, hi_pct])
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    return (float(lo - 0.08 * span), float(hi + 0.30 * span))


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
    shaded_ranges = param.List(default=[], doc="(min, max[, label]) ranges to shade, observed frame")
    status = param.String(default="No spectrum", doc="what is shown, as text")
    history = param.List(default=[], doc="previous x ranges, for 'previous zoom'")

    def __init__(self, **params):
        super().__init__(**params)
        self._arrays = None
        self._dmap = hv.DynamicMap(self._overlay, streams=[hv.streams.Params(
            self, ["spectrum", "x_range", "smoothing", "sigma_px", "line_kinds", "major_only",
                   "rest_frame", "z", "shaded_ranges"])])
        # framewise: each new frame sets the axis ranges (typed range, new spectrum) in place.
        self._dmap = self._dmap.opts(*(getattr(hv.opts, name)(framewise=True) for name in
                                       ("Curve", "Scatter", "VLines", "Labels", "VSpans")))
        self._range_stream = hv.streams.RangeX(source=self._dmap)
        self._range_stream.add_subscriber(self._on_user_range)
        self._pane = pn.pane.HoloViews(self._dmap, sizing_mode="stretch_both", min_height=420,
                                       linked_axes=False)

    # ---- zoom actions -------------------------------------------------------------------------
    def zoom_to(self, lo: float, hi: float) -> None:
        lo, hi = float(lo), float(hi)
        if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
            raise ValueError(f"invalid wavelength range {lo}-{hi}: the minimum must be below the maximum")
        self.history = self.history + [self.x_range]
        self.x_range = (lo, hi)

    def previous_zoom(self) -> None:
        if self.history:
            *rest, last = self.history
            self.history = rest
            self.x_range = last

    def reset_zoom(self) -> None:
        if self.x_range is not None:
            self.history = self.history + [self.x_range]
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
    @param.depends("spectrum", watch=True)
    def _reset_for_new_spectrum(self):
        self._arrays = None
        self.history = []

    def _get_arrays(self):
        if self._arrays is None and self.spectrum is not None:
            spec = self.spectrum
            wave = np.asarray(spec.spectral_axis.to_value("Angstrom"), dtype=float)
            flux = np.asarray(spec.flux.value, dtype=float)
            ivar = None
            if spec.uncertainty is not None:
                ivar = np.asarray(spec.uncertainty.array, dtype=float)
            mask = np.zeros(flux.shape, bool) if spec.mask is None else np.asarray(spec.mask, bool)
            mask = mask | ~np.isfinite(flux)
            with np.errstate(divide="ignore", invalid="ignore"):
                noise = np.where((ivar is not None) & (ivar > 0), 1.0 / np.sqrt(ivar), np.nan) if ivar is not None else None
            self._arrays = {"wave": wave, "flux": flux, "ivar": ivar, "mask": mask, "noise": noise,
                            "unit": spec.flux.unit.to_string() or "arbitrary"}
        return self._arrays

    def drawn_flux(self) -> np.ndarray | None:
        """The flux as drawn: smoothed per the current settings, NaN at bad pixels."""
        a = self._get_arrays()
        if a is None:
            return None
        return smooth_flux(a["flux"], a["ivar"], a["mask"], mode=self.smoothing, sigma_px=self.sigma_px)

    # ---- plot ---------------------------------------------------------------------------------
    def _overlay(self, **_):
        a = self._get_arrays()
        kdims = [hv.Dimension("wave", label="Rest wavelength (Å)" if self.rest_frame else "Wavelength (Å)")]
        vdim = hv.Dimension("flux", label=f"Flux ({a['unit']})" if a else "Flux")
        if a is None:
            empty = hv.Curve([], kdims, [vdim])
            self.status = "No spectrum"
            return (empty * hv.Curve([], kdims, ["noise"]) * hv.Scatter([], kdims, [vdim])
                    * hv.VLines([]) * hv.VLines([]) * hv.VLines([]) * hv.Labels([], ["x", "y"], ["text"])
                    * hv.VSpans([]))
        scale = 1.0 / (1.0 + self.z) if self.rest_frame else 1.0
        wave = a["wave"] * scale
        flux = self.drawn_flux()
        lo, hi = self.x_range if self.x_range is not None else (float(wave[0]), float(wave[-1]))
        in_view = (wave >= lo) & (wave <= hi)
        ylo, yhi = robust_y_range(flux[in_view] if in_view.any() else flux)
        masked = a["mask"] & in_view
        masked_y = np.clip(np.where(np.isfinite(a["flux"][masked]), a["flux"][masked], ylo), ylo, yhi)

        curve = hv.Curve((wave, flux), kdims, [vdim], label="flux").opts(
            color="#1f4e9c", line_width=1.0, tools=["hover"])
        noise_y = a["noise"] if a["noise"] is not None else np.full_like(flux, np.nan)
        noise = hv.Curve((wave, noise_y), kdims, ["noise"], label="noise").opts(color="#f39c12", line_width=0.8, alpha=0.8)
        bad = hv.Scatter((wave[masked], masked_y), kdims, [vdim], label="masked").opts(
            color="#e74c3c", marker="x", size=5)

        lines = lines_in_window(lo, hi, z=self.z, kinds=self.line_kinds, rest_frame=self.rest_frame,
                                major_only=self.major_only)
        vlines = []
        for kind in LINE_KINDS:
            xs = [ln["x"] for ln in lines if ln["kind"] == kind]
            vlines.append(hv.VLines(xs).opts(color=LINE_COLOURS[kind], line_dash="dashed", line_width=1, alpha=0.7))
        levels = stagger_labels([ln["x"] for ln in lines], [ln["name"] for ln in lines],
                                x_span=hi - lo, width_px=PLOT_WIDTH_PX)
        step = 0.055 * (yhi - ylo)
        label_rows = [(ln["x"], yhi - step * (0.6 + lvl), ln["name"]) for ln, lvl in zip(lines, levels)
                      if lvl is not None]
        labels = hv.Labels(label_rows, ["x", "y"], ["text"]).opts(text_font_size="8pt", text_color="#333333",
                                                                   text_baseline="middle")
        spans = [(s[0] * scale, s[1] * scale) for s in self.shaded_ranges]
        shaded = hv.VSpans(spans).opts(color="#f1c40f", alpha=0.18)

        self.status = f"Showing {lo:.1f} – {hi:.1f} Å ({'rest' if self.rest_frame else 'observed'} frame)"
        return (curve * noise * bad * vlines[0] * vlines[1] * vlines[2] * labels * shaded).opts(
            hv.opts.Overlay(xlim=(lo, hi), ylim=(ylo, yhi), responsive=True, min_height=420,
                            show_legend=True, legend_position="top_right", active_tools=["box_zoom"],
                            toolbar="above"))

    def __panel__(self):
        return self._pane
