import numpy as np
import pytest

from agents.tools.zoom import TOOL_SCHEMA, SpectralVisualizationTool

WAVE = np.linspace(3700.0, 9100.0, 3000)
FLUX = 1.0 + 0.1 * np.sin(WAVE / 50.0)


def test_schema_is_spec_o3s():
    fn = TOOL_SCHEMA["function"]
    assert TOOL_SCHEMA["type"] == "function"
    assert fn["name"] == "spectral_visualization_tool"
    assert fn["description"] == "A tool for visualizing spectral data with wavelength range zooming capabilities."
    assert fn["parameters"]["required"] == ["wavelength_range"]
    assert fn["parameters"]["properties"]["wavelength_range"]["items"] == {"type": "number"}
    assert fn["parameters"]["properties"]["label"]["description"] == "label for the spectral feature being analyzed"


def test_zoom_texts_and_png():
    tool = SpectralVisualizationTool(WAVE, FLUX)
    res = tool([6500, 6600], "Hα")
    assert res.text == "Generated spectral visualization focused on wavelength range (6500, 6600) Å for Hα."
    assert not res.is_error and res.png.startswith(b"\x89PNG")
    assert tool([6500.5, 6600]).text == "Generated spectral visualization focused on wavelength range (6500.5, 6600) Å."
    assert tool().text == "Generated full spectrum visualization."
    assert tool(None, "overview").text == "Generated full spectrum visualization for overview."


@pytest.mark.parametrize("rng", [[1000, 2000], [9200, 9900], [6600, 6500], [6500], "6500-6600", [6500, None]])
def test_bad_ranges_are_spec_o3_errors(rng):
    res = SpectralVisualizationTool(WAVE, FLUX)(rng, render=False)
    assert res.is_error and res.png is None
    assert res.text == (f"Error: The specified wavelength range {rng} is invalid or outside the available "
                        f"data range [3700.0, 9100.0].")


def test_partial_overlap_is_accepted_and_gap_is_a_plot_error():
    tool = SpectralVisualizationTool(WAVE, FLUX)
    assert not tool([3000, 3800], render=False).is_error  # only wholly-outside ranges are rejected
    flux = FLUX.copy()
    flux[(WAVE > 5000) & (WAVE < 5100)] = np.nan
    res = SpectralVisualizationTool(WAVE, flux)([5010, 5090], render=False)
    assert res.is_error and res.text.startswith("Error processing spectral visualization: ")


def test_redshift_divides_wavelengths_only_when_truthy():
    z = 0.5
    tool = SpectralVisualizationTool(WAVE, FLUX, redshift=z)
    lo, hi = tool.data_range
    assert lo == pytest.approx(3700 / 1.5) and hi == pytest.approx(9100 / 1.5)
    assert tool([2000, 2400], render=False).is_error  # wholly below the rest-frame range
    assert not tool([2500, 2600], render=False).is_error
    assert SpectralVisualizationTool(WAVE, FLUX, redshift=0).data_range == (3700.0, 9100.0)


def test_deferred_render_reproduces_the_eager_png():
    tool = SpectralVisualizationTool(WAVE, FLUX)
    deferred = tool([4800, 4950], "Hβ", render=False)
    assert deferred.png is None and deferred.extra["deferred"]
    eager = SpectralVisualizationTool(WAVE, FLUX)(**deferred.args)
    assert eager.png == tool([4800, 4950], "Hβ").png
