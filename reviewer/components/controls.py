"""View controls: typed range, presets, zoom history, line overlays, frame and z, arms, smoothing, exports.

Every button here has a title (its tooltip: Panel's `description`) saying what it does.

Zoom and overlays drive the plot (this view's own settings); the frame and z are the review state's,
so the plot, the presets and the line markers always agree on them. Presets are rest-frame windows:
on an observed axis they move to where the line is observed, (1+z) x rest.
"""
from __future__ import annotations

import io
import re

import panel as pn
import param
from panel.viewable import Viewer

import kb
from agents.spectra import write_csv, write_fits
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import plain_alert
from reviewer.components.spectrum_plot import ARM_COLOUR_NAMES, SpectrumPlot
from reviewer.components.view_png import view_png
from reviewer.review_state import ReviewState


def preset_title(preset: dict) -> str:
    if preset["range"] is None:
        return f"{preset['label']}: the whole spectrum"
    lo, hi = preset["range"]
    return f"Zoom to {preset['label']}: {lo:.0f}-{hi:.0f} Å in the rest frame, (1+z) x that as observed"


class Controls(Viewer):
    """Drives a SpectrumPlot; the frame and z are the review state's."""

    plot = param.ClassSelector(class_=SpectrumPlot)
    state = param.ClassSelector(class_=ReviewState)
    message = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        plot = self.plot
        self._min = pn.widgets.FloatInput(label="λ min (Å)", value=None, width=110, css_classes=["sr-wave-min"])
        self._max = pn.widgets.FloatInput(label="λ max (Å)", value=None, width=110, css_classes=["sr-wave-max"])
        self._apply = pn.widgets.Button(label="Apply", color="primary", css_classes=["sr-apply"],
                                        description="Zoom to the typed wavelength range")
        self._apply.on_click(lambda _: self.apply_range())
        self._presets = []
        for preset in kb.presets():
            btn = pn.widgets.Button(label=preset["label"], color="light", width=120,
                                    css_classes=[f"sr-preset-{preset['id']}"], description=preset_title(preset))
            btn.on_click(lambda _, p=preset: self.apply_preset(p))
            self._presets.append(btn)
        self._reset = pn.widgets.Button(label="Reset", css_classes=["sr-reset"],
                                        description="Show the whole spectrum (the zoom is kept for 'Previous zoom')")
        self._reset.on_click(lambda _: plot.reset_zoom())
        self._previous = pn.widgets.Button(label="Previous zoom", css_classes=["sr-previous"],
                                           description="Go back to the zoom before this one")
        self._previous.on_click(lambda _: plot.previous_zoom())
        self._kinds = pn.widgets.CheckButtonGroup.from_param(plot.param.line_kinds, label="Lines",
                                                             color="light", css_classes=["sr-lines"],
                                                             description="Which line markers to draw: emission, "
                                                                         "absorption, sky")
        self._major = pn.widgets.Checkbox.from_param(plot.param.major_only, label="Major lines only")
        # a button, not a Toggle: Panel's Toggle takes no title (description); pressed = primary
        frame = plot.frame
        rest = frame.param.rest_frame
        self._frame = pn.widgets.Button(label=pn.bind(lambda on: f"Rest frame: {'on' if on else 'off'}", rest),
                                        color=pn.bind(lambda on: "primary" if on else "light", rest),
                                        css_classes=["sr-frame"],
                                        description="Switch the wavelength axis between the rest frame (observed / "
                                                    "(1+z)) and the observed frame")
        self._frame.on_click(lambda _: setattr(frame, "rest_frame", not frame.rest_frame))
        self._z = pn.widgets.FloatInput.from_param(frame.param.z, label="z (lines, rest frame)", step=0.001,
                                                   format="0.00000", css_classes=["sr-z"],
                                                   width=160)  # beside "Rest frame" within the right column
        self._legend = pn.widgets.Checkbox.from_param(plot.param.show_legend, label="Legend")
        self._smooth = pn.widgets.RadioButtonGroup.from_param(
            plot.param.smoothing, label="Smoothing", color="light", css_classes=["sr-smoothing"],
            description="none; gaussian: equal weights; ivar: each pixel weighted by its inverse variance")
        # the width in pixels or in Å (prospect offers both): Å is converted to pixels at each pixel's
        # own dispersion, so a log-linear grid (LAMOST) is smoothed by the same Å in the blue and the red
        self._unit = pn.widgets.RadioButtonGroup.from_param(
            plot.param.smooth_unit, label="Width in", color="light", css_classes=["sr-smooth-unit"],
            description="The smoothing width in pixels, or in Å (converted by the local dispersion)")
        self._sigma = pn.widgets.FloatSlider.from_param(plot.param.sigma_px, label="σ (pixels)",
                                                        css_classes=["sr-sigma-px"])
        self._sigma_aa = pn.widgets.FloatSlider.from_param(plot.param.sigma_aa, label="σ (Å)",
                                                           css_classes=["sr-sigma-aa"])
        # each arm of a multi-arm file (DESI b/r/z, LAMOST MRS blue/red) on or off: the review state's,
        # so it holds from item to item; labels name the arm's colour on the plot
        self._arms = pn.widgets.CheckButtonGroup(label="Arms", options={}, value=[], color="light",
                                                 css_classes=["sr-arms"],
                                                 description="Show or hide each spectrograph arm (coloured as on "
                                                             "the plot)")
        self._arms.param.watch(self._arms_chosen, "value")
        plot.param.watch(self._arms_offered, "spectrum")
        frame.param.watch(self._arms_offered, "hidden_arms")
        plot.param.watch(self._unit_shown, "smooth_unit")
        self._arms_offered()
        self._unit_shown()
        self._status = pn.pane.Str(plot.param.status, css_classes=["sr-status"])
        self._message = TextHTML(pn.bind(plain_alert, self.param.message, "warning"), visible=False)
        self.param.watch(lambda e: setattr(self._message, "visible", bool(e.new)), "message")
        self._ymode = pn.widgets.RadioButtonGroup.from_param(
            plot.param.y_mode, label="Flux axis", color="light", css_classes=["sr-y-mode"],
            description="auto: from the flux in view; fixed: the typed range; log: logarithmic")
        self._ymin = pn.widgets.FloatInput(label="flux min", value=None, width=110, css_classes=["sr-flux-min"])
        self._ymax = pn.widgets.FloatInput(label="flux max", value=None, width=110, css_classes=["sr-flux-max"])
        self._yapply = pn.widgets.Button(label="Fix flux range", css_classes=["sr-flux-apply"],
                                         description="Keep this flux range from zoom to zoom (Auto: follow the view)")
        self._yapply.on_click(lambda _: self.apply_flux_range())
        # "View as PNG": the view on screen (frame, ranges, arms, markers, shading, noise, model, y scale)
        # drawn at twice the screen's size with a title naming the object, survey, z and frame (view_png)
        self._png = pn.widgets.FileDownload(callback=lambda: io.BytesIO(self.export_png()), filename="view.png",
                                            label="View as PNG", color="light", css_classes=["sr-export-png"],
                                            description="Save the plot as shown, at twice the screen's size, titled "
                                                        "with the object, survey, z and frame")
        self._downloads = pn.Column(
            self._png,
            pn.widgets.FileDownload(callback=lambda: io.BytesIO(self.export_csv()), filename="spectrum.csv",
                                    label="Spectrum as CSV", color="light", css_classes=["sr-export-csv"],
                                    description="Download the full arrays (wavelength, flux, ivar, mask) as CSV"),
            pn.widgets.FileDownload(callback=lambda: io.BytesIO(self.export_fits()), filename="spectrum.fits",
                                    label="Spectrum as FITS", color="light", css_classes=["sr-export-fits"],
                                    description="Download the full arrays as a FITS table that reads back"),
        )
        self.state.param.watch(self._rename_downloads, "item")
        self._rename_downloads()  # the View tab is built when first opened: an item is on screen already
        plot.param.watch(self._sync_inputs, ["x_range", "spectrum"])
        frame.param.watch(self._sync_inputs, ["rest_frame", "z"])

    # ---- exports of the item on screen -------------------------------------------------------------
    def export_png(self) -> bytes:
        return view_png(self.plot, self.state)

    def export_csv(self) -> bytes:
        if self.plot.spectrum is None:
            return b""
        buf = io.StringIO()
        write_csv(self.plot.spectrum, buf)
        return buf.getvalue().encode()

    def export_fits(self) -> bytes:
        if self.plot.spectrum is None:
            return b""
        buf = io.BytesIO()
        write_fits(self.plot.spectrum, buf)
        return buf.getvalue()

    def _rename_downloads(self, *_):
        item = self.state.item
        name = re.sub(r"[^\w.+-]", "_", str(item.record.get("object_id") or "spectrum"))[:80] if item else "spectrum"
        self.plot.save_tool.filename = name  # the PNG of the view (Bokeh adds .png)
        for widget, ext in zip(self._downloads, ("png", "csv", "fits"), strict=True):
            widget.filename = f"{name}.{ext}"

    # ---- arms and smoothing width ------------------------------------------------------------------
    def _arms_offered(self, *_):
        arms = self.plot.arms()
        options = {f"{name} ({ARM_COLOUR_NAMES.get(name, 'grey')})": name for name in arms}
        shown = [a for a in arms if a not in self.plot.frame.hidden_arms]
        self._arms.param.update(options=options, value=shown, visible=len(arms) > 1)

    def _arms_chosen(self, event):
        offered = list(self._arms.options.values())
        # an arm hidden on another item (a z arm, then a LAMOST MRS file) stays hidden for the next
        frame = self.plot.frame
        kept = [a for a in frame.hidden_arms if a not in offered]
        hidden = kept + [a for a in offered if a not in event.new]
        if hidden != list(frame.hidden_arms):
            frame.hidden_arms = hidden

    def _unit_shown(self, *_):
        pixels = self.plot.smooth_unit == "pixels"
        self._sigma.visible, self._sigma_aa.visible = pixels, not pixels

    def _sync_inputs(self, *_):
        rng = self.plot.x_range or self.plot.full_range()
        if rng:
            self._min.value, self._max.value = round(rng[0], 1), round(rng[1], 1)

    def apply_range(self) -> None:
        lo, hi = self._min.value, self._max.value
        if lo is None or hi is None:
            self.message = "Type both a minimum and a maximum wavelength."
            return
        try:
            self.plot.zoom_to(lo, hi)
        except ValueError as err:
            self.message = str(err)
            return
        self.message = ""

    def apply_flux_range(self) -> None:
        lo, hi = self._ymin.value, self._ymax.value
        if lo is None or hi is None:
            self.message = "Type both a minimum and a maximum flux."
            return
        try:
            self.plot.set_y_range(lo, hi)
        except ValueError as err:
            self.message = str(err)
            return
        self.message = ""

    def apply_preset(self, preset: dict) -> None:
        self.message = ""
        if preset["range"] is None:
            self.plot.reset_zoom()
            return
        # a preset is a rest-frame window: on the observed axis it sits at (1+z) x rest
        shift = 1.0 if self.plot.frame.rest_frame else 1.0 + self.plot.frame.z
        self.plot.zoom_to(preset["range"][0] * shift, preset["range"][1] * shift)

    def __panel__(self):
        return pn.Column(
            "### Wavelength range",
            pn.Row(self._min, self._max), self._apply, self._message,
            pn.Row(self._previous, self._reset),
            "### Flux axis", self._ymode, pn.Row(self._ymin, self._ymax), self._yapply,
            "### Presets", pn.FlexBox(*self._presets),
            "### Lines", self._kinds, pn.Row(self._major, self._legend), pn.Row(self._frame, self._z),
            "### Arms and smoothing", self._arms, self._smooth, self._unit, self._sigma, self._sigma_aa,
            "### Export", self._downloads,
            self._status,
            sizing_mode="stretch_width",
        )
