"""Right panel: typed range, presets, zoom history, line overlays, smoothing and exports."""
from __future__ import annotations

import io

import panel as pn
import param
from panel.viewable import Viewer

import kb
from reviewer.components.spectrum_plot import SpectrumPlot


class Controls(Viewer):
    """Drives a SpectrumPlot. Exports call the functions given (the app wires the real ones)."""

    plot = param.ClassSelector(class_=SpectrumPlot)
    wave_min = param.Number(default=None, allow_None=True, label="λ min (Å)")
    wave_max = param.Number(default=None, allow_None=True, label="λ max (Å)")
    message = param.String(default="")
    export_png = param.Callable(default=None, doc="() -> PNG bytes of the current view")
    export_csv = param.Callable(default=None, doc="() -> CSV bytes of the spectrum")
    export_fits = param.Callable(default=None, doc="() -> FITS bytes of the spectrum")
    export_name = param.String(default="spectrum")

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
        self._frame = pn.widgets.RadioButtonGroup(options=["observed", "rest"], value="observed",
                                                  button_type="light", css_classes=["sr-frame"])
        self._frame.param.watch(lambda e: setattr(plot, "rest_frame", e.new == "rest"), "value")
        self._z = pn.widgets.FloatInput.from_param(plot.param.z, label="z (lines, rest frame)", step=0.001, format="0.00000")
        self._smooth = pn.widgets.RadioButtonGroup.from_param(plot.param.smoothing, label="Smoothing",
                                                              button_type="light", css_classes=["sr-smoothing"])
        self._sigma = pn.widgets.FloatSlider.from_param(plot.param.sigma_px, label="σ (pixels)")
        self._status = pn.pane.Str(plot.param.status, css_classes=["sr-status"])
        self._message = pn.pane.Alert(self.param.message, alert_type="warning", visible=False)
        self.param.watch(lambda e: setattr(self._message, "visible", bool(e.new)), "message")
        self._downloads = pn.Column(
            pn.widgets.FileDownload(callback=lambda: self._bytes(self.export_png), filename="view.png",
                                    label="View as PNG", button_type="light", css_classes=["sr-export-png"]),
            pn.widgets.FileDownload(callback=lambda: self._bytes(self.export_csv), filename="spectrum.csv",
                                    label="Spectrum as CSV", button_type="light", css_classes=["sr-export-csv"]),
            pn.widgets.FileDownload(callback=lambda: self._bytes(self.export_fits), filename="spectrum.fits",
                                    label="Spectrum as FITS", button_type="light", css_classes=["sr-export-fits"]),
        )
        self.param.watch(self._rename_downloads, "export_name")
        plot.param.watch(self._sync_inputs, "x_range")

    def _bytes(self, fn):
        return io.BytesIO(fn() if fn else b"")

    def _rename_downloads(self, event):
        for widget, ext in zip(self._downloads, ("png", "csv", "fits")):
            widget.filename = f"{event.new}.{ext}"

    def _sync_inputs(self, event):
        rng = event.new or self.plot.full_range()
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
        else:
            self.plot.zoom_to(*preset["range"])

    def __panel__(self):
        return pn.Column(
            "### Wavelength range",
            pn.Row(self._min, self._max), self._apply, self._message,
            pn.Row(self._previous, self._reset),
            "### Presets", pn.FlexBox(*self._presets),
            "### Lines", self._kinds, self._major, self._frame, self._z,
            "### Smoothing", self._smooth, self._sigma,
            "### Export", self._downloads,
            self._status,
            sizing_mode="stretch_width",
        )
