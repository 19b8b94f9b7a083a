"""A straightforward reimplementation of Spec-o3's `plot_spectrum` (reference.md section 1.2).

New pyplot figure per call, `tight_layout()`, `savefig(bbox_inches="tight")`: the baseline that
`agents.tools.render` is compared against (speed in bench/bench_render.py, pixels in the tests).
It deliberately reuses nothing from `agents.tools.render`, so a shared bug cannot hide; only the
`label` handling (which the reference leaves open) follows the product's choice: "title - label".
"""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import AutoMinorLocator, MultipleLocator


def _tick_spacing(span):
    for limit, major, minor in ((5000, 1000, 200), (1000, 200, 50), (500, 100, 20), (300, 100, 25),
                                (150, 50, 25), (100, 25, 5), (50, 10, 2), (20, 5, 1), (5, 2, 0.5)):
        if span >= limit:
            return major, minor
    return 1, 0.2


def _figure_size(span, n_points, zoom):
    if zoom:
        size = (6, 4) if span < 50 else (7, 4.5) if span < 200 else (8, 5) if span < 1000 else (9, 5.5)
    else:
        size = (10, 6) if span > 3000 else (8, 5) if span > 1000 else (7, 4.5) if span > 200 else (6, 4)
    width, height = size
    if n_points > 10000:
        width *= 1.05
    elif n_points < 50:
        width *= 0.95
    return width, height


def plot_spectrum(wavelength, flux, wave_min=None, wave_max=None, title="Spectrum", label=None) -> bytes:
    wavelength = np.asarray(wavelength, dtype=float)
    flux = np.asarray(flux, dtype=float)
    good = np.isfinite(wavelength) & np.isfinite(flux)
    wavelength, flux = wavelength[good], flux[good]
    order = np.argsort(wavelength, kind="stable")
    wavelength, flux = wavelength[order], flux[order]
    zoom = wave_min is not None or wave_max is not None
    lo = wavelength.min() if wave_min is None else wave_min
    hi = wavelength.max() if wave_max is None else wave_max
    keep = (wavelength >= lo) & (wavelength <= hi)
    wavelength, flux = wavelength[keep], flux[keep]
    if wavelength.size == 0:
        raise ValueError(f"no data points in range {lo} - {hi}")
    span = float(wavelength.max() - wavelength.min())

    fig, ax = plt.subplots(figsize=_figure_size(span, wavelength.size, zoom), dpi=80)
    ax.plot(wavelength, flux, color="blue", linewidth=1.0, alpha=0.8)
    ax.set_xlabel("Wavelength (Å)", fontsize=12, fontweight="bold")
    ax.set_ylabel("Flux", fontsize=12, fontweight="bold")
    ax.set_title(f"{title} - {label}" if label else title, fontsize=14, fontweight="bold", pad=20)
    ax.grid(True, which="major", alpha=0.3, linewidth=0.5)
    ax.grid(True, which="minor", alpha=0.1, linewidth=0.3)
    ax.tick_params(axis="both", which="both", direction="in", labelsize=10)
    major, minor = _tick_spacing(span)
    ax.xaxis.set_major_locator(MultipleLocator(major))
    ax.xaxis.set_minor_locator(MultipleLocator(minor))
    ax.yaxis.set_minor_locator(AutoMinorLocator())

    mid_w = (wavelength.min() + wavelength.max()) / 2
    mid_f = (flux.min() + flux.max()) / 2
    left, low = wavelength < mid_w, flux < mid_f
    counts = {
        (0.02, 0.98, "left", "top"): np.sum(left & ~low),
        (0.98, 0.98, "right", "top"): np.sum(~left & ~low),
        (0.02, 0.02, "left", "bottom"): np.sum(left & low),
        (0.98, 0.02, "right", "bottom"): np.sum(~left & low),
    }
    x, y, ha, va = min(counts, key=counts.get)
    text = (f"Data points: {wavelength.size}\n"
            f"λ range: {wavelength.min():.1f} - {wavelength.max():.1f} Å\n"
            f"Flux range: {flux.min():.2e} - {flux.max():.2e}")
    ax.text(x, y, text, transform=ax.transAxes, fontsize=9, ha=ha, va=va,
            bbox=dict(boxstyle="round", facecolor="white", alpha=0.8))

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
