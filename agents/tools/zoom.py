"""The Spec-o3 zoom tool: `spectral_visualization_tool(wavelength_range=[min, max], label=None)`.

Same schema, validation and returned texts as Spec-o3's tool (reference.md section 1.1): ranges are
in the rest frame when the spectrum has a truthy redshift (the wavelengths are divided by 1 + z
before validating and plotting), a range is rejected only when it lies wholly outside the data, and
no range means the full-spectrum overview. Rendering can be deferred: the call alone (spectrum +
arguments) always reproduces the image, so a batch run may skip the PNG and a reviewer renders it
when the step is opened.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

TOOL_NAME = "spectral_visualization_tool"
TOOL_DESCRIPTION = "A tool for visualizing spectral data with wavelength range zooming capabilities."

TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "wavelength_range": {
                    "type": "array",
                    "items": {"type": "number"},
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "Wavelength range to zoom into, as [min_wavelength, max_wavelength] in Angstroms.",
                },
                "label": {
                    "type": "string",
                    "description": "label for the spectral feature being analyzed",
                },
            },
            "required": ["wavelength_range"],
        },
    },
}


@dataclass
class ZoomResult:
    """What one tool call returns: Spec-o3's text, the PNG (None when deferred or on error)."""

    text: str
    is_error: bool
    args: dict[str, Any]  # the call as received (reproduces the image with the spectrum)
    png: bytes | None = None
    plotted_range: tuple[float, float] | None = None  # in the plotted (rest) frame
    extra: dict[str, Any] = field(default_factory=dict)


class SpectralVisualizationTool:
    """State of one trajectory's tool: the arrays it plots (Spec-o3 `create` kwargs)."""

    def __init__(self, wavelength, flux, redshift: float | None = None, title: str = "Spectrum"):
        wave = np.asarray(wavelength, dtype=float)
        flux = np.asarray(flux, dtype=float)
        if wave.shape != flux.shape:
            raise ValueError(f"wavelength and flux differ in length ({wave.size} vs {flux.size})")
        self.observed_wavelength = wave
        self.flux = flux
        self.redshift = redshift
        self.title = title
        # Spec-o3 divides by 1 + z only when z is truthy (None or 0 leave the axis alone)
        self.wavelength = wave / (1.0 + float(redshift)) if redshift else wave
        finite = np.isfinite(self.wavelength) & np.isfinite(self.flux)
        self._lo = float(np.nanmin(self.wavelength[finite])) if finite.any() else float("nan")
        self._hi = float(np.nanmax(self.wavelength[finite])) if finite.any() else float("nan")
        self._finite = finite

    @classmethod
    def from_spectrum(cls, spec, redshift: float | None = None, title: str = "Spectrum"):
        wave = spec.spectral_axis.to_value("Angstrom")
        flux = np.asarray(getattr(spec.flux, "value", spec.flux), dtype=float).copy()
        if spec.mask is not None:
            flux[np.asarray(spec.mask, bool)] = np.nan  # masked pixels are not plotted
        return cls(wave, flux, redshift=redshift, title=title)

    @property
    def data_range(self) -> tuple[float, float]:
        return self._lo, self._hi

    def create_kwargs(self) -> dict[str, Any]:
        """The Spec-o3 RL-row form of this state (SpecVI-Bench `create_kwargs`)."""
        return {"wavelength": self.observed_wavelength.tolist(), "flux": self.flux.tolist(),
                "redshift": self.redshift}

    def __call__(self, wavelength_range=None, label: str | None = None, *, render: bool = True,
                 marks=None) -> ZoomResult:
        """The tool's answer to one call; `marks` (reviewer-side copies only, never an agent's
        picture): lines to mark on the render, as for agents.tools.render.render_arrays."""
        args: dict[str, Any] = {}
        if wavelength_range is not None:
            args["wavelength_range"] = wavelength_range
        if label is not None:
            args["label"] = label
        if wavelength_range is None:
            text = "Generated full spectrum visualization"
            text += f" for {label}." if label else "."
            lo, hi = self.data_range
            return self._finish(ZoomResult(text, False, args, plotted_range=(lo, hi)), None, None, label, render,
                                marks)
        bounds = _valid_pair(wavelength_range)
        lo, hi = self.data_range
        if bounds is None or bounds[1] < lo or bounds[0] > hi:
            return ZoomResult(
                f"Error: The specified wavelength range {wavelength_range} is invalid or outside "
                f"the available data range [{lo:.1f}, {hi:.1f}].", True, args)
        inside = self._finite & (self.wavelength >= bounds[0]) & (self.wavelength <= bounds[1])
        if not inside.any():
            return ZoomResult("Error processing spectral visualization: no data points in the "
                              "selected wavelength range", True, args)
        shown = tuple(wavelength_range)
        text = f"Generated spectral visualization focused on wavelength range {shown} Å"
        text += f" for {label}." if label else "."
        return self._finish(ZoomResult(text, False, args, plotted_range=bounds), bounds[0], bounds[1], label, render,
                            marks)

    def render(self, wave_min=None, wave_max=None, label=None, marks=None) -> bytes:
        from agents.tools.render import render_arrays  # lazy: deferred runs never load matplotlib

        return render_arrays(self.wavelength, self.flux, wave_min, wave_max, label=label, title=self.title,
                             marks=marks)

    def _finish(self, result: ZoomResult, wmin, wmax, label, render: bool, marks=None) -> ZoomResult:
        if not render:
            result.extra["deferred"] = True
            return result
        try:
            result.png = self.render(wmin, wmax, label, marks)
        except Exception as exc:  # Spec-o3 reports plot failures as a tool text, not a crash
            return ZoomResult(f"Error processing spectral visualization: {exc}", True, result.args)
        return result


def _valid_pair(value) -> tuple[float, float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        return None
    if isinstance(value[0], bool) or isinstance(value[1], bool) or not (np.isfinite(a) and np.isfinite(b)):
        return None
    return (a, b) if a < b else None
