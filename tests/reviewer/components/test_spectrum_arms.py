"""Per-arm display and the smoothing width in pixels or Angstrom (issue 19 item 4), on real files:
a DESI coadd (b/r/z arms) and a LAMOST MRS coadd (blue/red arms)."""
from __future__ import annotations

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document

from agents.spectra import arm_ids, read_spectrum
from agents.tools.smoothing import smooth_flux
from reviewer.components.spectrum_plot import ARM_COLOURS, SpectrumPlot

DESI = "desi_fastspecfit/coadd-4-80613-thru20210324.fits"
DESI_TARGET = "39633345008634465"
MRS = "lamost_laspec/med-58408-TD230151N343645T01_sp01-015.fits"


@pytest.fixture(scope="module")
def desi(shared_spectra):
    return read_spectrum(str(shared_spectra / DESI), target=DESI_TARGET)


@pytest.fixture(scope="module")
def mrs(shared_spectra):
    return read_spectrum(str(shared_spectra / MRS))


def drawn_arms(plot) -> dict[str, np.ndarray]:
    """{arm: wavelengths drawn in that arm's line} from the figure's own arms source."""
    data = plot.arm_source.data
    return {arm: np.asarray(xs, float)[np.isfinite(np.asarray(ys, float))]
            for arm, xs, ys in zip(data["arm"], data["xs"], data["ys"], strict=True)}


def check_arms(spec, names):
    got_names, ids = arm_ids(spec)
    assert got_names == names and ids.size == len(spec.spectral_axis) and (ids >= 0).all()
    plot = SpectrumPlot(spectrum=spec, show_legend=True)
    pn.panel(plot).get_root(Document())
    colours = plot.arm_source.data["color"]
    assert list(plot.arm_source.data["arm"]) == list(names)
    assert len(set(colours)) == len(names) and list(colours) == [ARM_COLOURS[n] for n in names]
    legend = [item.label.value for item in plot.legend.items]
    assert [f"{n} arm" for n in names] == [text for text in legend if text.endswith(" arm")]
    wave = spec.spectral_axis.to_value("Angstrom")
    good = np.isfinite(plot.drawn_flux())
    for k, hidden in enumerate(names):
        plot.frame.hidden_arms = [hidden]
        shown = drawn_arms(plot)
        assert hidden not in shown
        assert f"{hidden} arm" not in [item.label.value for item in plot.legend.items]
        drawn = np.concatenate(list(shown.values()))
        # exactly the hidden arm's pixels go: every other good pixel is still drawn
        assert np.array_equal(np.sort(drawn), np.sort(wave[good & (ids != k)].astype(np.float32)))
        flux = np.asarray(plot.sources["flux"].data["flux"], float)
        assert np.isnan(flux[ids == k]).all() and np.isfinite(flux[good & (ids != k)]).all()
    plot.frame.hidden_arms = []
    assert sum(v.size for v in drawn_arms(plot).values()) == int(good.sum())


def test_a_desi_coadd_draws_b_r_z_in_three_colours_and_hides_exactly_one_arm(desi):
    check_arms(desi, ("B", "R", "Z"))


def test_a_lamost_mrs_coadd_draws_blue_and_red_arms(mrs):
    check_arms(mrs, ("B", "R"))


def test_desi_arm_boundaries_fall_inside_the_overlaps(desi):
    # DESI data model: b 3600-5930 A, r 5660-7720 A, z 7470-9824 A on one 0.8 A grid
    _, ids = arm_ids(desi)
    wave = desi.spectral_axis.to_value("Angstrom")
    first_r, first_z = wave[np.argmax(ids == 1)], wave[np.argmax(ids == 2)]
    assert 5660 < first_r < 5930 and 7470 < first_z < 7720
    assert (np.diff(ids) >= 0).all()  # each arm one run, blue to red


def test_a_single_arm_spectrum_has_no_arms(shared_spectra, manifest):
    row = next(r for r in manifest if r["survey"].startswith("LAMOST-LRS DR5"))
    spec = read_spectrum(str(shared_spectra / row["file"]))
    assert arm_ids(spec) is None
    plot = SpectrumPlot(spectrum=spec)
    assert len(plot.arm_source.data["arm"]) == 0


def test_smoothing_in_angstrom_is_the_pixel_kernel_at_the_local_dispersion(desi, shared_spectra, manifest):
    # DESI: one 0.8 A grid, so 1.6 A is 2 pixels everywhere
    plot = SpectrumPlot(spectrum=desi)
    plot.param.update(smoothing="gaussian", smooth_unit="Å", sigma_aa=1.6)
    in_aa = plot.drawn_flux()
    plot.param.update(smooth_unit="pixels", sigma_px=2.0)
    assert np.allclose(in_aa, plot.drawn_flux(), equal_nan=True, rtol=1e-6, atol=1e-9)
    # LAMOST LRS: log-linear, the dispersion grows ~2.4x from blue to red: at each pixel, the Angstrom
    # kernel is the pixel kernel of width sigma_aa / (local dispersion)
    row = next(r for r in manifest if r["survey"].startswith("LAMOST-LRS DR5"))
    lrs = read_spectrum(str(shared_spectra / row["file"]))
    wave = lrs.spectral_axis.to_value("Angstrom")
    flux, ivar, mask = lrs.flux.value, lrs.uncertainty.array, lrs.mask
    disp = np.gradient(wave)
    plot = SpectrumPlot(spectrum=lrs)
    plot.param.update(smoothing="ivar", smooth_unit="Å", sigma_aa=6.0)
    in_aa = plot.drawn_flux()
    for i in (300, 1500, 3000):
        px = smooth_flux(flux, ivar, mask, mode="ivar", sigma_px=6.0 / disp[i])
        assert in_aa[i] == pytest.approx(px[i], rel=1e-6)
    assert 6.0 / disp[300] > 1.5 * (6.0 / disp[3000])  # the kernel in pixels does vary


def test_hidden_arms_follow_the_review_state(tmp_path, desi, wait_for_background_renders):
    from reviewer.review_state import ReviewState
    from reviewer.services.demo import seed_demo_if_empty
    from reviewer.store import Store

    store = Store(tmp_path / "a.duckdb")
    try:
        seed_demo_if_empty(store)
        state = ReviewState(store, reviewer="ann")
        tid = next(r["trajectory_id"] for r in store.queue.queue_items(limit=100)
                   if r["survey"] and "DESI" in r["survey"].upper())
        assert state.open_item(trajectory_id=tid)
        plot = SpectrumPlot(state=state)
        assert set(plot.arm_source.data["arm"]) == {"B", "R", "Z"}
        state.frame.hidden_arms = ["R"]
        assert list(plot.arm_source.data["arm"]) == ["B", "Z"]
        state.frame.hidden_arms = []
        assert list(plot.arm_source.data["arm"]) == ["B", "R", "Z"]
    finally:
        wait_for_background_renders()
        store.close()
