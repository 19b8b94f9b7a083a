"""The z tab's template model on the spectrum plot (issue 46, "What to build" item 3), on the demo's real
SDSS QSO at z = 0.197: the model covers >= 90 % of the pixels (it stopped at ~5,400 Å, short of H-beta,
[O III] and H-alpha), and the y range is the data's own, whatever the model does."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document

import reviewer.components.spectrum_plot as spectrum_plot
from agents.spectra import read_spectrum
from agents.tools.model_overlay import TemplateModel
from reviewer.components.spectrum_plot import SpectrumPlot

QSO = Path(__file__).resolve().parents[3] / "assets" / "demo" / "spec-0853-52374-0240.fits"
QSO_Z = 0.197


@pytest.fixture(scope="module")
def qso():
    return read_spectrum(str(QSO))


def drawn_model(plot):
    data = plot.sources["model"].data
    return np.asarray(data["wave"], float), np.asarray(data["model"], float)


def y_range(plot):
    return plot.y_axis_range.start, plot.y_axis_range.end


def test_the_qso_model_covers_90_percent_of_the_pixels_through_h_alpha(qso):
    plot = SpectrumPlot(spectrum=qso)
    pn.panel(plot).get_root(Document())
    plot.model_of = {"class": "QSO", "z": QSO_Z}
    wave, model = drawn_model(plot)
    assert wave.size == len(qso.spectral_axis) and np.isfinite(model).mean() >= 0.9
    assert np.isfinite(model[wave > 6564.6 * (1 + QSO_Z)]).any()  # H-alpha is modelled


@pytest.mark.parametrize("x_range", [None, (3800.0, 4600.0)])
def test_the_y_range_is_the_datas_whatever_the_model(qso, monkeypatch, x_range):
    plot = SpectrumPlot(spectrum=qso, x_range=x_range)
    pn.panel(plot).get_root(Document())
    data_only = y_range(plot)
    plot.model_of = {"class": "QSO", "z": QSO_Z}
    assert y_range(plot) == pytest.approx(data_only)

    def swamping(wave, flux, ivar, spectype, z, templates=None):  # a model 10x the data, 3x at its blue end
        model = 10.0 * np.nan_to_num(flux) + np.where(wave < 4500, 30.0 * np.nanmax(flux), 0.0)
        return TemplateModel(model, spectype, "", z, 1.0)

    monkeypatch.setattr(spectrum_plot, "template_model", swamping)
    plot.model_of = {"class": "GALAXY", "z": 0.84}
    assert np.nanmax(drawn_model(plot)[1]) > 10 * data_only[1]
    assert y_range(plot) == pytest.approx(data_only)
    plot.y_mode = "log"
    log_data_only = SpectrumPlot(spectrum=qso, x_range=x_range, y_mode="log")
    pn.panel(log_data_only).get_root(Document())
    assert y_range(plot) == pytest.approx(y_range(log_data_only))
