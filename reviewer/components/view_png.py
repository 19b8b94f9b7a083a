""""View as PNG": the spectrum as the reviewer sees it, drawn at twice the screen's size, with a title
that says what it is (issue 46, item 7).

The picture is drawn with matplotlib from the plot's own columns (SpectrumPlot._frame: the flux as
drawn, each arm in its colour, noise, the chosen model, masked pixels, line markers and labels, the
shaded window, the x and y ranges and the y scale), so it is the view on screen, not a re-render of
the file. The title names the object (its id, the target and the file), the survey, the z (the
reviewer's, when they changed the frame's z; else the agent's answer; else the pipeline's) and the
frame with the wavelength range in view. Every name in it comes from a file or the store: it is
reduced to one line of printable text and drawn without mathtext (a `$` stays a `$`).
"""
from __future__ import annotations

import io
import os
import unicodedata
from typing import Any

import numpy as np

from reviewer.components.spectrum_plot import LINE_COLOURS, flux_axis_label

SCALE = 2  # pixels of the PNG per pixel of the screen
MIN_SIZE_PX = (654, 446)  # the figure's size on screen before issue 46 (the PNG is at least twice it)
MAX_WIDTH_PX = 1200  # a very wide screen still gives a PNG of reasonable size (2400 px)
AXES_ROOM_PX = 120  # y axis label and ticks beside the data area (the plot's width_px is the data's)
FIELD_CHARS = 60


def clean_field(value: Any, limit: int = FIELD_CHARS) -> str:
    """One line of printable text, at most `limit` characters: no control or format characters."""
    text = " ".join(str(value).split())
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def z_source(state_z: float | None, item) -> tuple[float | None, str]:
    """The z of the frame and whose it is: the reviewer's when it differs from the item's own frame z,
    else the agent's answer, else the pipeline's (None when there is none at all)."""
    agent_z = (item.agent_label or {}).get("z") if item is not None else None
    pipeline_z = item.record.get("pipeline_z") if item is not None else None
    own = item.frame_z() if item is not None else 0.0
    if state_z is not None and abs(float(state_z) - own) > 5e-7:
        return float(state_z), "reviewer"
    if agent_z is not None:
        return float(agent_z), "agent"
    if pipeline_z is not None:
        return float(pipeline_z), "pipeline"
    return (float(state_z), "reviewer") if state_z else (None, "")


def view_title(item, *, z: float | None, rest_frame: bool, x_range: tuple[float, float] | None) -> list[str]:
    """The PNG's title, two lines: what the object is, then the z and the frame the reviewer looks at."""
    record = item.record if item is not None else {}
    meta = (getattr(item.spectrum, "meta", None) or {}) if item is not None else {}
    obj = record.get("object_id") or meta.get("object_id") or (item.spectrum_id if item is not None else "")
    target = record.get("target") or meta.get("target")
    path = record.get("source_path") or meta.get("source_path")
    file_name = record.get("file_name") or (os.path.basename(str(path)) if path else "")
    survey = record.get("survey") or meta.get("survey")
    first = [clean_field(obj or "spectrum")]
    if target and str(target) != str(obj):
        first.append(f"target {clean_field(target)}")
    if file_name:
        first.append(clean_field(file_name))
    if survey:
        first.append(clean_field(survey))
    if item is not None and item.trajectory is not None:
        first.append(clean_field(item.trajectory.task, 20))
    value, whose = z_source(z, item)
    second = [f"z = {value:.5f} ({whose})" if value is not None else "z unknown"]
    second.append("rest frame" if rest_frame else "observed frame")
    if x_range is not None:
        second.append(f"{x_range[0]:.1f}–{x_range[1]:.1f} Å{' rest' if rest_frame else ''}")
    return [" · ".join(first), " · ".join(second)]


def png_size(width_px: int | None) -> tuple[int, int]:
    """(width, height) of the PNG for a data area `width_px` wide on screen: twice the figure's size."""
    width = min(MAX_WIDTH_PX, max(MIN_SIZE_PX[0], int(width_px or 0) + AXES_ROOM_PX))
    height = max(MIN_SIZE_PX[1], round(width * MIN_SIZE_PX[1] / MIN_SIZE_PX[0]))
    return SCALE * width, SCALE * height


def _finite(x, y) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def render_view_png(frame: dict, title: list[str], *, axis_label: str, log_y: bool,
                    size: tuple[int, int], legend: bool = False) -> bytes:
    """PNG bytes of the plot's columns (`frame`, as SpectrumPlot._frame gives them) at `size` pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    dpi = 100 * SCALE
    fig = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    # the legend, when the plot shows one, beside the data as on screen (never over it)
    ax = fig.add_axes((0.1, 0.11, 0.76 if legend else 0.87, 0.74))
    arms = frame.get("arms") or {}
    if len(arms.get("xs", [])):
        for xs, ys, colour, name in zip(arms["xs"], arms["ys"], arms["color"], arms["arm"], strict=True):
            ax.plot(*_finite(xs, ys), color=colour, lw=0.6, label=f"arm {clean_field(name, 8)}")
    elif "flux" in frame:
        ax.plot(*_finite(frame["flux"]["wave"], frame["flux"]["flux"]), color="#1f4e9c", lw=0.6, label="flux")
    if "noise" in frame and np.isfinite(np.asarray(frame["noise"]["noise"], float)).any():
        ax.plot(*_finite(frame["noise"]["wave"], frame["noise"]["noise"]), color="#f39c12", lw=0.5, alpha=0.8,
                label="noise")
    if "model" in frame and len(frame["model"]["wave"]):
        ax.plot(*_finite(frame["model"]["wave"], frame["model"]["model"]), color="#8e44ad", lw=0.8, alpha=0.85,
                label="model")
    masked = frame.get("masked") or {}
    if len(masked.get("wave", [])):
        ax.scatter(*_finite(masked["wave"], masked["flux"]), color="#e74c3c", marker="x", s=6, lw=0.6,
                   label="masked")
    for kind, colour in LINE_COLOURS.items():
        for x in (frame.get(kind) or {}).get("x", []):
            ax.axvline(float(x), color=colour, ls="--", lw=0.6, alpha=0.7)
    labels = frame.get("labels") or {}
    for x, y, text in zip(labels.get("x", []), labels.get("y", []), labels.get("text", []), strict=False):
        ax.text(float(x), float(y), clean_field(text, 24), fontsize=6, color="#333333", ha="center", va="center",
                parse_math=False, clip_on=True)
    if frame.get("shaded"):
        ax.axvspan(*frame["shaded"], color="#f1c40f", alpha=0.22, lw=0)
    xlo, xhi = frame.get("xlim") or (0.0, 1.0)
    ylo, yhi = frame.get("ylim") or (0.0, 1.0)
    if log_y and ylo > 0:
        ax.set_yscale("log")
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    ax.set_xlabel(axis_label, fontsize=8)
    ax.set_ylabel(flux_axis_label(frame.get("unit") or ""), fontsize=8)
    ax.tick_params(labelsize=7)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.text(0.5, 0.965, title[0], ha="center", va="top", fontsize=10, weight="bold", parse_math=False)
    if len(title) > 1:
        fig.text(0.5, 0.915, title[1], ha="center", va="top", fontsize=8.5, parse_math=False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def view_png(plot, state) -> bytes:
    """The PNG of the view on screen (`plot`: the SpectrumPlot, `state`: its ReviewState); b"" when no
    spectrum is open."""
    if plot.spectrum is None:
        return b""
    frame = plot._frame()
    title = view_title(state.item, z=plot.frame.z, rest_frame=bool(plot.frame.rest_frame), x_range=frame.get("xlim"))
    return render_view_png(frame, title, axis_label=plot.axis_label(), log_y=plot.y_mode == "log",
                           size=png_size(plot.width_px), legend=bool(plot.show_legend))
