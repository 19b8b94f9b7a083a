"""Render a wavelength range of a spectrum to PNG in the Spec-o3 plot style (reference.md 1.2).

This is what agents see on every step and what the viewer exports, so it is built for speed:
one figure per figure size and per thread is kept and updated (see render_figure), and the frame
is encoded by a small PNG writer (see png_encode). Results depend only on the arguments.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from agents.tools import render_style as style
from agents.tools.png_encode import encode_png

__all__ = ["render_arrays", "render_png", "spectrum_title"]

_local = threading.local()
# Up to 15 sizes exist (zoom and full tables x 3 widths); an agent mostly uses 2-4. Each figure
# holds a frame buffer of ~1.5 MB, so a thread keeps only the most recently used ones.
_FIGURES_PER_THREAD = 6


def _figure(width_in: float, height_in: float):
    # Imported lazily: matplotlib costs ~0.3 s to import and many callers never render.
    from agents.tools.render_figure import SpectrumFigure

    cache = getattr(_local, "figures", None)
    if cache is None:
        cache = _local.figures = {}
    key = (width_in, height_in)
    figure = cache.pop(key, None)
    if figure is None:
        figure = SpectrumFigure(width_in, height_in)
    cache[key] = figure  # most recently used last
    while len(cache) > _FIGURES_PER_THREAD:
        cache.pop(next(iter(cache)))
    return figure


def render_arrays(wavelength, flux, wave_min=None, wave_max=None, label=None, title=None, *,
                  mask=None, marks: Sequence[tuple[str, float]] | None = None) -> bytes:
    """PNG bytes of flux against wavelength (Å) between wave_min and wave_max (inclusive).

    Masked (True) and non-finite pixels are dropped. `wave_min`/`wave_max` default to the data's
    ends; giving either makes it a zoom (zoom figure sizes). `label` follows the title.
    `marks`: (label, x in the plot's wavelengths) of lines to mark, most important first (their
    labels are kept first where they crowd); only those inside the window are drawn. The frame,
    window and everything else are those of the unmarked render, which `marks=None` gives exactly.
    Raises ValueError("no data points in range ...") when no pixel is left to draw.
    """
    data = style.prepare_data(wavelength, flux, wave_min, wave_max, mask=mask)
    size = style.figure_size(data.span, data.wavelength.size, data.zoom)
    frame = _figure(*size).draw(data, style.plot_title(title, label), marks, (wave_min, wave_max))
    return encode_png(frame)


def spectrum_title(spectrum) -> str:
    """"Spectrum: <file name>" when the spectrum knows its file, else "Spectrum"."""
    source = (getattr(spectrum, "meta", None) or {}).get("source_path")
    return f"{style.DEFAULT_TITLE}: {os.path.basename(str(source))}" if source else style.DEFAULT_TITLE


def spectrum_arrays(spectrum) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, str]:
    """What `render_png` draws of a specutils Spectrum, as plain (picklable) arrays: wavelength (Å),
    flux, mask (None: no mask) and the default title."""
    import astropy.units as u

    wavelength = spectrum.spectral_axis.to_value(u.AA, equivalencies=u.spectral())
    flux = np.asarray(getattr(spectrum.flux, "value", spectrum.flux))
    mask = spectrum.mask
    return wavelength, flux, None if mask is None else np.asarray(mask, dtype=bool), spectrum_title(spectrum)


def render_png(spectrum, wave_min=None, wave_max=None, label=None, title=None, *,
               marks: Sequence[tuple[str, float]] | None = None) -> bytes:
    """PNG bytes of a specutils Spectrum (spectral axis converted to Å; masked pixels dropped);
    `marks` as for render_arrays (observed wavelengths)."""
    wavelength, flux, mask, default_title = spectrum_arrays(spectrum)
    return render_arrays(wavelength, flux, wave_min, wave_max, label=label,
                         title=title if title is not None else default_title, mask=mask, marks=marks)
