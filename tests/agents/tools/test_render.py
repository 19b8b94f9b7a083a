"""The Spec-o3 style PNG renderer: recipe tables, data handling, output, reuse safety, fidelity."""
from __future__ import annotations

import importlib.util
import io
import threading
from pathlib import Path

import astropy.units as u
import numpy as np
import pytest
from astropy.io import fits
from PIL import Image

from agents.tools import render_style as style
from agents.tools.png_encode import encode_png
from agents.tools.render import render_arrays, render_png, spectrum_title
from agents.tools.render_decimate import minmax_decimate
from agents.tools.zoom import SpectralVisualizationTool

REPO_ROOT = Path(__file__).resolve().parents[3]
LAMOST_FILE = "lamost_astrospectro/spec-55862-B6202_sp01-001.fits.gz"  # 3909 pixels


def _reference_module():
    path = REPO_ROOT / "bench" / "spec_o3_reference_render.py"
    spec = importlib.util.spec_from_file_location("spec_o3_reference_render", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read_lamost(path: Path):
    """(wavelength Å, flux, ivar) of a LAMOST LRS primary-image file, read with astropy."""
    with fits.open(path) as hdul:
        header, image = hdul[0].header, np.asarray(hdul[0].data, dtype=float)
    wavelength = 10 ** (header["COEFF0"] + header["COEFF1"] * np.arange(image.shape[1]))
    return wavelength, image[0], image[1]


def _image(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def _gray(png: bytes) -> np.ndarray:
    return np.asarray(_image(png).convert("L"), dtype=float)


@pytest.fixture(scope="module")
def lamost(shared_spectra):
    path = shared_spectra / LAMOST_FILE
    wavelength, flux, ivar = _read_lamost(path)
    return {"path": path, "wavelength": wavelength, "flux": flux, "ivar": ivar}


@pytest.fixture(scope="module")
def reference():
    return _reference_module()


# -- recipe tables ---------------------------------------------------------------------------

@pytest.mark.parametrize("span, expected", [
    (5400.0, (1000, 200)), (5000.0, (1000, 200)), (4999.9, (200, 50)), (1000.0, (200, 50)),
    (999.0, (100, 20)), (500.0, (100, 20)), (300.0, (100, 25)), (299.0, (50, 25)),
    (150.0, (50, 25)), (120.0, (25, 5)), (100.0, (25, 5)), (99.0, (10, 2)), (50.0, (10, 2)),
    (20.0, (5, 1)), (19.9, (2, 0.5)), (5.0, (2, 0.5)), (4.99, (1, 0.2)), (0.0, (1, 0.2)),
])
def test_x_tick_spacing_follows_the_span_table(span, expected):
    assert style.x_tick_spacing(span) == expected


@pytest.mark.parametrize("span, zoom, expected", [
    (10.0, True, (6.0, 4.0)), (49.9, True, (6.0, 4.0)), (50.0, True, (7.0, 4.5)),
    (199.0, True, (7.0, 4.5)), (200.0, True, (8.0, 5.0)), (999.0, True, (8.0, 5.0)),
    (1000.0, True, (9.0, 5.5)), (5400.0, True, (9.0, 5.5)),
    (5400.0, False, (10.0, 6.0)), (3000.0, False, (8.0, 5.0)), (1000.1, False, (8.0, 5.0)),
    (1000.0, False, (7.0, 4.5)), (200.1, False, (7.0, 4.5)), (200.0, False, (6.0, 4.0)),
    (10.0, False, (6.0, 4.0)),
])
def test_figure_size_follows_zoom_and_full_tables(span, zoom, expected):
    assert style.figure_size(span, 1000, zoom) == expected


def test_figure_width_scales_with_point_count():
    assert style.figure_size(5400.0, 10_001, False) == pytest.approx((10.5, 6.0))
    assert style.figure_size(5400.0, 10_000, False) == (10.0, 6.0)
    assert style.figure_size(30.0, 49, True) == pytest.approx((5.7, 4.0))
    assert style.figure_size(30.0, 50, True) == (6.0, 4.0)


def test_output_pixels_of_a_full_lamost_view_are_about_800_by_480():
    assert style.nominal_pixels(5400.0, 3909, False) == (792, 472)


# -- stats box -------------------------------------------------------------------------------

def test_stats_text_reports_count_wavelength_and_flux_ranges():
    wavelength = np.array([4000.04, 4001.0, 4002.96])
    flux = np.array([1234.5, -0.00123, 7.0])
    assert style.stats_text(wavelength, flux) == (
        "Data points: 3\nλ range: 4000.0 - 4003.0 Å\nFlux range: -1.23e-03 - 1.23e+03")


QUADRANT_BOXES = {  # (wavelength range, flux range) strictly inside each quadrant
    "upper left": ((5001, 5049), (0.51, 0.99)), "upper right": ((5051, 5099), (0.51, 0.99)),
    "lower left": ((5001, 5049), (0.01, 0.49)), "lower right": ((5051, 5099), (0.01, 0.49)),
}


@pytest.mark.parametrize("counts, expected", [
    ({"upper left": 30, "upper right": 5, "lower left": 40, "lower right": 50}, "upper right"),
    ({"upper left": 3, "upper right": 5, "lower left": 40, "lower right": 50}, "upper left"),
    ({"upper left": 30, "upper right": 20, "lower left": 2, "lower right": 50}, "lower left"),
    ({"upper left": 30, "upper right": 20, "lower left": 40, "lower right": 1}, "lower right"),
    ({"upper left": 10, "upper right": 10, "lower left": 10, "lower right": 10}, "upper left"),
])
def test_stats_box_goes_to_the_emptiest_quadrant(counts, expected):
    rng = np.random.default_rng(5)
    # Two fixed points span the plot (5000-5100 Å, flux 0-1) and fall in the lower left and
    # upper right quadrants; the rest is scattered inside each quadrant.
    wavelength, flux = [5000.0, 5100.0], [0.0, 1.0]
    for name, n in counts.items():
        (w0, w1), (f0, f1) = QUADRANT_BOXES[name]
        n -= {"lower left": 1, "upper right": 1}.get(name, 0)
        wavelength += list(rng.uniform(w0, w1, n))
        flux += list(rng.uniform(f0, f1, n))
    assert style.stats_corner(np.array(wavelength), np.array(flux)) == expected


def test_rendered_stats_box_sits_in_the_chosen_corner():
    """A falling line leaves the upper right empty: the box's dark text pixels are there."""
    wavelength = np.linspace(5000, 5100, 300)
    gray = _gray(render_arrays(wavelength, np.linspace(10, 0, 300), 5000, 5100))
    height, width = gray.shape
    # The box is 9 pt text on white: count dark pixels in the four inner corners of the plot.
    top, bottom = slice(int(0.12 * height), int(0.30 * height)), slice(int(0.62 * height), int(0.80 * height))
    left, right = slice(int(0.15 * width), int(0.45 * width)), slice(int(0.65 * width), int(0.95 * width))
    dark = {name: int(np.sum(gray[rows, cols] < 100)) for name, rows, cols in [
        ("upper left", top, left), ("upper right", top, right),
        ("lower left", bottom, left), ("lower right", bottom, right)]}
    assert max(dark, key=dark.get) == "upper right"


# -- data handling ---------------------------------------------------------------------------

def test_prepare_data_drops_masked_and_non_finite_sorts_and_clips():
    wavelength = np.array([5003.0, 5001.0, np.nan, 5002.0, 5000.0, 5004.0, 5005.0])
    flux = np.array([3.0, 1.0, 9.0, np.inf, 0.0, 4.0, 5.0])
    mask = np.array([False, False, False, False, False, True, False])
    data = style.prepare_data(wavelength, flux, 5000.5, 5004.5, mask=mask)
    np.testing.assert_array_equal(data.wavelength, [5001.0, 5003.0])
    np.testing.assert_array_equal(data.flux, [1.0, 3.0])
    assert data.zoom
    assert not style.prepare_data(wavelength, flux).zoom


def test_non_finite_and_masked_pixels_render_as_if_absent(lamost):
    wavelength, flux = lamost["wavelength"], lamost["flux"].copy()
    bad = np.zeros(flux.size, bool)
    bad[[10, 500, 2000]] = True
    flux_with_nan = flux.copy()
    flux_with_nan[bad] = np.nan
    expected = render_arrays(wavelength[~bad], flux[~bad])
    assert render_arrays(wavelength, flux_with_nan) == expected
    assert render_arrays(wavelength, flux, mask=bad) == expected
    assert render_arrays(wavelength, np.ma.MaskedArray(flux, mask=bad)) == expected


def test_empty_range_raises_value_error(lamost):
    with pytest.raises(ValueError, match="no data points in range"):
        render_arrays(lamost["wavelength"], lamost["flux"], 1000, 2000)
    with pytest.raises(ValueError, match="no data points in range"):
        render_arrays([5000.0, 5001.0], [np.nan, np.nan])


# -- output ----------------------------------------------------------------------------------

def test_full_view_is_a_valid_png_of_the_expected_size(lamost):
    png = render_arrays(lamost["wavelength"], lamost["flux"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    image = _image(png)
    assert image.format == "PNG" and image.size == (792, 472)
    pixels = np.asarray(image.convert("RGB"))
    assert (pixels == 255).all(axis=2).mean() > 0.5  # white background
    blue = (pixels[:, :, 2] > 200) & (pixels[:, :, 0] < 120)
    assert blue.sum() > 2000  # the spectrum line is drawn


@pytest.mark.parametrize("wave_range", [(None, None), (6400, 6700), (6540, 6590), (6560, 6563)])
def test_pixel_size_and_look_match_the_reference(lamost, reference, wave_range):
    wavelength, flux = lamost["wavelength"], lamost["flux"]
    title = f"Spectrum: {lamost['path'].name}"
    ours = _gray(render_arrays(wavelength, flux, *wave_range, title=title))
    theirs = _gray(reference.plot_spectrum(wavelength, flux, *wave_range, title=title))
    assert abs(ours.shape[0] - theirs.shape[0]) <= 1 and abs(ours.shape[1] - theirs.shape[1]) <= 1
    h, w = min(ours.shape[0], theirs.shape[0]), min(ours.shape[1], theirs.shape[1])
    # Text sits at whole pixels here and at sub-pixel positions there: small, spread differences.
    assert np.abs(ours[:h, :w] - theirs[:h, :w]).mean() < 3.0


def test_label_follows_the_title(lamost):
    wavelength, flux = lamost["wavelength"], lamost["flux"]
    plain = render_arrays(wavelength, flux, 6500, 6620)
    labelled = render_arrays(wavelength, flux, 6500, 6620, label="Hα")
    assert labelled == render_arrays(wavelength, flux, 6500, 6620, title="Spectrum - Hα")
    assert labelled != plain


def test_render_png_reads_a_specutils_spectrum(lamost):
    from specutils import Spectrum

    wavelength, flux, ivar = lamost["wavelength"], lamost["flux"], lamost["ivar"]
    mask = ivar <= 0
    spectrum = Spectrum(flux=flux * u.dimensionless_unscaled, spectral_axis=(wavelength / 10) * u.nm,
                        mask=mask, meta={"source_path": str(lamost["path"])})
    assert spectrum_title(spectrum) == f"Spectrum: {lamost['path'].name}"
    png = render_png(spectrum, 6400, 6700, label="Hα")
    assert png == render_arrays(wavelength, flux, 6400, 6700, label="Hα", mask=mask,
                                title=f"Spectrum: {lamost['path'].name}")
    untitled = Spectrum(flux=flux * u.dimensionless_unscaled, spectral_axis=wavelength * u.AA)
    assert spectrum_title(untitled) == "Spectrum"


# -- reuse safety ----------------------------------------------------------------------------

def _views(lamost):
    wavelength, flux = lamost["wavelength"], lamost["flux"]
    return [
        dict(wavelength=wavelength, flux=flux, title="Spectrum: a.fits"),
        dict(wavelength=wavelength, flux=flux, wave_min=6400, wave_max=6700, label="Hα"),
        dict(wavelength=wavelength, flux=flux * 1e-17, wave_min=6400, wave_max=6700),
        dict(wavelength=wavelength, flux=-flux + 5e4, wave_min=3900, wave_max=4100, label="Ca II H&K"),
        dict(wavelength=wavelength, flux=flux, wave_min=5000, wave_max=5020),
    ]


def test_results_do_not_depend_on_earlier_calls(lamost):
    views = _views(lamost)
    first = [render_arrays(**view) for view in views]
    again = [render_arrays(**view) for view in reversed(views)][::-1]
    assert first == again
    assert len(set(first)) == len(first)


def test_concurrent_renders_match_serial_ones(lamost):
    views = _views(lamost)
    serial = [render_arrays(**view) for view in views]
    results: dict[tuple[int, int], bytes] = {}
    errors = []
    barrier = threading.Barrier(4)

    def work(worker: int):
        try:
            barrier.wait()
            for round_ in range(3):
                for i, view in enumerate(views[worker:] + views[:worker]):
                    results[worker, (i + worker) % len(views), round_] = render_arrays(**view)
        except Exception as exc:  # surfaced below with the worker's id
            errors.append((worker, exc))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 4 * 3 * len(views)
    for (_, view_index, _), png in results.items():
        assert png == serial[view_index]


# -- pieces ----------------------------------------------------------------------------------

def test_decimation_keeps_every_column_extreme():
    rng = np.random.default_rng(7)
    x = np.linspace(4000, 9000, 20000)
    y = rng.normal(size=x.size)
    y[12345] = 50.0  # a one-pixel spike
    xs, ys = minmax_decimate(x, y, 500)
    assert xs.size <= 4 * 500 and np.all(np.diff(xs) > 0)
    column = np.minimum(((x - x[0]) * (500 / (x[-1] - x[0]))).astype(int), 499)
    kept_column = np.minimum(((xs - x[0]) * (500 / (x[-1] - x[0]))).astype(int), 499)
    for c in (0, 137, column[12345], 499):
        assert ys[kept_column == c].max() == y[column == c].max()
        assert ys[kept_column == c].min() == y[column == c].min()
    assert 50.0 in ys
    short_x, _short_y = minmax_decimate(x[:100], y[:100], 500)
    assert short_x is x[:100].base or np.array_equal(short_x, x[:100])


def test_decimated_line_looks_like_the_full_line():
    rng = np.random.default_rng(3)
    x = np.linspace(3600, 9800, 30000)
    y = np.sin(x / 200) + 0.3 * rng.normal(size=x.size)
    y[17000] = 6.0
    ours = _gray(render_arrays(x, y))
    theirs = _gray(_reference_module().plot_spectrum(x, y))
    h, w = min(ours.shape[0], theirs.shape[0]), min(ours.shape[1], theirs.shape[1])
    assert np.abs(ours[:h, :w] - theirs[:h, :w]).mean() < 4.0


@pytest.mark.parametrize("channels, mode", [(3, "RGB"), (4, "RGBA")])
def test_png_encoder_round_trips(channels, mode):
    rng = np.random.default_rng(channels)
    pixels = rng.integers(0, 256, size=(37, 53, channels), dtype=np.uint8)
    image = _image(encode_png(pixels))
    assert image.mode == mode
    np.testing.assert_array_equal(np.asarray(image), pixels)
    with pytest.raises(ValueError):
        encode_png(pixels.astype(np.float32))


def _text_frame(canvas_class, text_class, text, **props):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 1), dpi=80)
    canvas = canvas_class(figure)
    label = text_class(0.1, 0.4, text, transform=figure.transFigure, **props)
    figure.add_artist(label)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).astype(float)


@pytest.mark.parametrize("props", [dict(fontsize=10), dict(fontsize=12, fontweight="bold", rotation=90),
                                   dict(fontsize=9, color="red")])
def test_cached_text_looks_like_matplotlib_text(props):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    from agents.tools.render_text import FastText, SpriteCanvas

    plain = _text_frame(FigureCanvasAgg, Text, "λ range: 6400.3 Å", **props)
    sprite = _text_frame(SpriteCanvas, Text, "λ range: 6400.3 Å", **props)
    fast = _text_frame(SpriteCanvas, FastText, "λ range: 6400.3 Å", **props)
    np.testing.assert_array_equal(fast, sprite)  # the cached layout changes nothing
    assert (plain < 200).sum() > 100  # there is text to compare
    # whole-pixel instead of sub-pixel placement: small differences at glyph edges only
    assert np.abs(plain - sprite).mean() < 2.0


def test_math_titles_take_matplotlibs_own_path(lamost):
    png = render_arrays(lamost["wavelength"], lamost["flux"], 6500, 6620, title=r"Spectrum $H\alpha$")
    assert _image(png).size[0] > 400
    assert png != render_arrays(lamost["wavelength"], lamost["flux"], 6500, 6620, title="Spectrum")


@pytest.mark.parametrize("text, size, weight", [
    ("Spectrum: spec-55859-B5585906_sp06-071.fits.gz - H-alpha", 14, "bold"),
    ("λ range: 3700.0 - 9000.0 Å", 9, "normal"), ("Flux range: -1.96e+01 - 1.29e+02", 9, "normal"),
    ("WWWW———MMMM", 12, "bold"), ("gjpqy", 10, "normal"), ("   ", 10, "normal"), ("x", 30, "normal"),
])
def test_a_horizontal_sprite_is_the_one_drawn_on_a_square_canvas(text, size, weight):
    """The small canvas used for horizontal text gives the coverage and offsets the square one does."""
    import math

    from matplotlib.font_manager import FontProperties

    from agents.tools.render_text import SpriteTextRenderer

    renderer = SpriteTextRenderer(100, 100, 80)
    prop = FontProperties(size=size, weight=weight)
    width, height, descent = renderer.get_text_width_height_descent(text, prop, ismath=False)
    half = math.ceil(max(width, height) + descent) + 4
    square = renderer._rasterise_at(text, prop, 0, True, 2 * half, 2 * half, half, half, edge_ok=True)
    compact = renderer._rasterise(text, prop, 0, True)
    assert compact[1:] == square[1:]
    if square[0] is None:
        assert compact[0] is None
    else:
        np.testing.assert_array_equal(compact[0], square[0])


def test_text_cut_by_a_small_canvas_is_refused_not_kept():
    from matplotlib.font_manager import FontProperties

    from agents.tools.render_text import SpriteTextRenderer

    renderer = SpriteTextRenderer(100, 100, 80)
    assert renderer._rasterise_at("Spectrum", FontProperties(size=14), 0, True, 20, 12, 2, 10) is None



def test_a_render_does_not_depend_on_what_was_drawn_before(demo_dir):
    """Figures are reused per size: the crop of one picture must not change the next one's ticks
    (a DESI coadd's overview changed the next overview's y ticks before)."""
    from agents import spectra
    from agents.tools import render

    files = sorted(p for p in demo_dir.iterdir() if p.suffix in (".fits", ".gz", ".dat") and "redrock" not in p.name)
    assert len(files) >= 6
    wave = np.linspace(3800, 9000, 1500)
    reference = SpectralVisualizationTool(wave, 1 + 0.1 * np.sin(wave / 50), title="Spectrum: synthetic.fits")
    render._local.figures = {}  # a fresh figure, as in a new process
    fresh = reference(None).png
    for path in files:
        SpectralVisualizationTool.from_spectrum(spectra.read_spectrum(path), title="Spectrum")(None)
        assert reference(None).png == fresh, f"drawn after {path.name}, the picture changed"
