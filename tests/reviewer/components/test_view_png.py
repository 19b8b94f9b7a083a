""""View as PNG" (issue 46, item 7): the view at twice the screen's size with a title naming the object,
the survey, the z (the reviewer's when they set one, else the agent's) and the frame with its range; on
the demo's real DESI galaxy and its verify trajectory."""
from __future__ import annotations

import io
import re

import numpy as np
from PIL import Image

from reviewer.components.controls import Controls
from reviewer.components.view_png import clean_field, png_size, render_view_png, view_png, view_title


def image(png: bytes) -> Image.Image:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(png)).convert("L")


def test_the_png_is_twice_the_figure_on_screen(desi_galaxy):
    state, plot = desi_galaxy
    png = Controls(plot=plot, state=state).export_png()
    size = image(png).size
    assert size == png_size(plot.width_px)
    assert size[0] >= 1308 and size[1] >= 892  # 2 x the 654 x 446 figure this export used to be
    plot.width_px = 900  # a wider plot on screen gives a wider picture, still at 2x
    assert image(view_png(plot, state)).size == (2 * (900 + 120), 2 * round((900 + 120) * 446 / 654))


def test_the_title_names_the_object_survey_z_and_frame(desi_galaxy):
    state, plot = desi_galaxy
    item = state.item
    record = item.record
    agent_z = float(item.agent_label["z"])
    first, second = view_title(item, z=state.frame.z, rest_frame=False, x_range=plot.full_range())
    assert str(record["object_id"]) in first and "DESI" in first and record["file_name"] in first
    assert f"z = {agent_z:.5f} (agent)" in second and "observed frame" in second
    lo, hi = plot.full_range()
    assert f"{lo:.1f}–{hi:.1f} Å" in second
    # the reviewer's own z and rest frame, zoomed: the title says so
    state.frame.param.update(z=0.5, rest_frame=True)
    plot.zoom_to(4000, 4500)
    _, second = view_title(item, z=state.frame.z, rest_frame=plot.frame.rest_frame, x_range=plot.x_range)
    assert second == "z = 0.50000 (reviewer) · rest frame · 4000.0–4500.0 Å rest"


def test_the_title_is_drawn_above_the_plot(desi_galaxy):
    _state, plot = desi_galaxy
    frame = plot._frame()
    args = {"axis_label": plot.axis_label(), "log_y": False, "size": png_size(plot.width_px)}
    titled = np.asarray(image(render_view_png(frame, ["TITLE LINE ONE", "second line"], **args)))
    untitled = np.asarray(image(render_view_png(frame, ["", ""], **args)))
    band = slice(0, int(0.12 * titled.shape[0]))  # above the axes (which start 15 % below the top)
    assert (titled[band] < 128).sum() > 200 and (untitled[band] < 128).sum() == 0


def test_names_from_files_stay_one_line_of_plain_text(desi_galaxy):
    state, plot = desi_galaxy
    assert clean_field("a\nb\x1b[31m\u202ec") == "a b[31mc"
    assert len(clean_field("x" * 500)) == 60
    state.item.record["object_id"] = "$\\frac{1}{0}$ <b>\n"  # mathtext or markup from a file: drawn as text
    first, _ = view_title(state.item, z=state.frame.z, rest_frame=False, x_range=None)
    assert first.startswith("$\\frac{1}{0}$ <b>")
    assert image(view_png(plot, state)).size == png_size(plot.width_px)


def test_the_downloads_are_named_after_the_object_from_the_first_item_on(desi_galaxy):
    state, plot = desi_galaxy
    controls = Controls(plot=plot, state=state)  # built once an item is open, as the lazy View tab is
    for _ in range(2):
        name = re.sub(r"[^\w.+-]", "_", str(state.item.record.get("object_id") or "spectrum"))[:80]
        assert [w.filename for w in controls._downloads] == [f"{name}.png", f"{name}.csv", f"{name}.fits"]
        state.step_item(+1)
