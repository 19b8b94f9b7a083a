"""View controls: typed range, presets, zoom history, line overlays, frame and z, smoothing, exports.

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
from agents.tools.render import render_png
from reviewer.components.safe_text import plain_alert
from reviewer.components.spectrum_plot import SpectrumPlot


class Controls(Viewer):
    """Drives a SpectrumPlot; the frame and z are the review state's."""

    plot = param.ClassSelector(class_=SpectrumPlot)
    state = param.Parameter()
    message = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        plot = self.plot
        self._min = pn.widgets.FloatInput(label="λ min (Å)", value=None, width=110, css_classes=["sr-wave-min"])
        self._max = pn.widgets.FloatInput(label="λ max (Å)", value=None, width=110, css_classes=["sr-wave-max"])
        self._apply = pn.widgets.Button(label="Apply", button_type="primary", css_classes=["sr-apply"])
        self._apply.on_click(lambda _: self.apply_range())
        self._presets = []
        for preset in kb.presets():
            btn = pn.widgets.Button(label=preset["label"], button_type="light", width=120,
                                    css_classes=[f"sr-preset-{preset['id']}"])
            btn.on_click(lambda _, p=preset: self.apply_preset(p))
            self._presets.append(btn)
        self._reset = pn.widgets.Button(label="Reset", css_classes=["sr-reset"])
        self._reset.on_click(lambda _: plot.reset_zoom())
        self._previous = pn.widgets.Button(label="Previous zoom", css_classes=["sr-previous"])
        self._previous.on_click(lambda _: plot.previous_zoom())
        self._kinds = pn.widgets.CheckButtonGroup.from_param(plot.param.line_kinds, label="Lines",
                                                             button_type="light", css_classes=["sr-lines"])
        self._major = pn.widgets.Checkbox.from_param(plot.param.major_only, label="Major lines only")
        self._frame = pn.widgets.Toggle.from_param(self.state.param.rest_frame, name="Rest frame",
                                                   button_type="light", css_classes=["sr-frame"])
        self._z = pn.widgets.FloatInput.from_param(self.state.param.z, name="z (lines, rest frame)", step=0.001,
                                                   format="0.00000", css_classes=["sr-z"])
        self._legend = pn.widgets.Checkbox.from_param(plot.param.show_legend, name="Legend")
        self._smooth = pn.widgets.RadioButtonGroup.from_param(plot.param.smoothing, label="Smoothing",
                                                              button_type="light", css_classes=["sr-smoothing"])
        self._sigma = pn.widgets.FloatSlider.from_param(plot.param.sigma_px, label="σ (pixels)")
        self._status = pn.pane.Str(plot.param.status, css_classes=["sr-status"])
        self._message = pn.pane.HTML(pn.bind(plain_alert, self.param.message, "warning"), visible=False)
        self.param.watch(lambda e: setattr(self._message, "visible", bool(e.new)), "message")
        self._downloads = pn.Column(
            pn.widgets.FileDownload(callback=lambda: io.BytesIO(self.export_png()), filename="view.png",
                                    label="View as PNG", button_type="light", css_classes=["sr-export-png"]),
            pn.widgets.FileDownload(callback=lambda: io.BytesIO(self.export_csv()), filename="spectrum.csv",
                                    label="Spectrum as CSV", button_type="light", css_classes=["sr-export-csv"]),
            pn.widgets.FileDownload(callback=lambda: io.BytesIO(self.export_fits()), filename="spectrum.fits",
                                    label="Spectrum as FITS", button_type="light", css_classes=["sr-export-fits"]),
        )
        self.state.param.watch(self._rename_downloads, "item")
        plot.param.watch(self._sync_inputs, ["x_range", "rest_frame", "z", "spectrum"])

    # ---- exports of the item on screen -------------------------------------------------------------
    def export_png(self) -> bytes:
        spec = self.plot.spectrum
        if spec is None:
            return b""
        lo, hi = self.plot.x_range or (None, None)
        if lo is not None:  # the renderer works in observed wavelengths
            lo, hi = lo / self.plot.frame_scale(), hi / self.plot.frame_scale()
        return render_png(spec, lo, hi)

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
        for widget, ext in zip(self._downloads, ("png", "csv", "fits"), strict=True):
            widget.filename = f"{name}.{ext}"

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

    def apply_preset(self, preset: dict) -> None:
        self.message = ""
        if preset["range"] is None:
            self.plot.reset_zoom()
            return
        # a preset is a rest-frame window: on the observed axis it sits at (1+z) x rest
        shift = 1.0 if self.plot.rest_frame else 1.0 + self.plot.z
        self.plot.zoom_to(preset["range"][0] * shift, preset["range"][1] * shift)

    def __panel__(self):
        return pn.Column(
            "### Wavelength range",
            pn.Row(self._min, self._max), self._apply, self._message,
            pn.Row(self._previous, self._reset),
            "### Presets", pn.FlexBox(*self._presets),
            "### Lines", self._kinds, pn.Row(self._major, self._legend), pn.Row(self._frame, self._z),
            "### Smoothing", self._smooth, self._sigma,
            "### Export", self._downloads,
            self._status,
            sizing_mode="stretch_width",
        )
