"""Line labels by object class and spectral type (issue 46 item 4), on the demo's real stars as the review
state opens them: a star's labels are its type's lines and bands (TiO, VO, CaH on an M giant; the Balmer
series on a white dwarf and an A star), never a QSO's or a nebula's unless the star shows them in emission."""
from __future__ import annotations

import re

import pytest

from agents.tools.lines import lines_in_window, stellar_groups
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.review_state import ReviewState

QSO_LINES = {"Ly-alpha", "C IV", "C III]", "Mg II", "[Ne V]", "He II 1640"}
FORBIDDEN = re.compile(r"^\[")  # [O III], [N II], [S II], [O II], [Ne V]: nebular lines


def labels_on(store, subclass: str) -> set[str]:
    """The labels the review page draws over the whole of the demo star of this pipeline subclass."""
    record = next(r for r in store.spectra.list_spectra(limit=100)
                  if str(r.get("pipeline_subclass") or "").startswith(subclass))
    state = ReviewState(store, reviewer="ann")
    assert state.open_item(spectrum_id=record["spectrum_id"])
    plot = SpectrumPlot(state=state, line_kinds=["emission", "absorption"], width_px=4000)  # room for every label
    assert plot.object_class == "STAR"
    return set(plot.sources["labels"].data["text"])


def test_an_m_giants_labels_are_its_molecular_bands_and_no_forbidden_or_qso_lines(demo_store):
    labels = labels_on(demo_store, "M5III")
    assert len({name for name in labels if name.startswith("TiO")}) >= 4, labels
    assert {name for name in labels if name.startswith(("VO", "CaH"))}, labels
    assert not {name for name in labels if FORBIDDEN.match(name)}, labels
    assert not QSO_LINES & labels and "He I 5877" not in labels, labels


@pytest.mark.parametrize("subclass", ["WD", "K7", "F0", "A1IV"])
def test_white_dwarfs_and_fgk_stars_get_no_nebular_lines(demo_store, subclass):
    labels = labels_on(demo_store, subclass)
    assert not {name for name in labels if FORBIDDEN.match(name)}, labels
    assert not {name for name in labels if name.startswith(("TiO", "C2", "CN"))} or subclass == "K7", labels
    if subclass in ("WD", "A1IV"):  # the Balmer series
        assert {"H-beta", "H-gamma", "H-delta"} <= labels, labels


def test_stellar_types_and_emission():
    assert stellar_groups("M5III (M giant)")[0] == "M" and stellar_groups("dM1")[0] == "M"
    assert stellar_groups("Carbon")[0] == "C" and stellar_groups("DA")[0] == "W" and stellar_groups("DB")[0] == "H"
    carbon = {ln["name"] for ln in lines_in_window(3500, 9000, object_class="STAR", spectral_type="Carbon")}
    assert {"CN 3883", "CN 4216", "C2 5165", "G band (CH)"} <= carbon and not any(n.startswith("TiO") for n in carbon)
    # emission only where the type says the star shows it; forbidden lines only on a nebula's nucleus
    star = {"object_class": "STAR", "kinds": ("emission", "absorption")}  # the sky's [O I] is no star's
    quiet = {(ln["name"], ln["kind"]) for ln in lines_in_window(3500, 9000, spectral_type="M4", **star)}
    flaring = {(ln["name"], ln["kind"]) for ln in lines_in_window(3500, 9000, spectral_type="M4e", **star)}
    assert ("H-alpha", "emission") in flaring and ("H-alpha", "emission") not in quiet
    assert not any(name.startswith("[") for name, _ in flaring)
    nucleus = {ln["name"] for ln in lines_in_window(3500, 9000, object_class="STAR", spectral_type="PN")}
    assert "[O III] 5008" in nucleus
    # galaxies and QSOs keep their lists
    qso = {ln["name"] for ln in lines_in_window(1000, 9000, object_class="QSO")}
    assert {"C IV", "Mg II", "[O III] 5008"} <= qso


def test_which_line_is_it_offers_an_m_giant_its_own_lines(demo_store):
    """The z tab's "Which line is it?" offers the lines the plot labels (one catalogue, agents.tools.lines.
    lines_for): an M giant's bands, no nebular or QSO line."""
    from reviewer.components.candidates_view import CandidatesView

    record = next(r for r in demo_store.spectra.list_spectra(limit=100)
                  if str(r.get("pipeline_subclass") or "").startswith("M5III"))
    state = ReviewState(demo_store, reviewer="ann")
    assert state.open_item(spectrum_id=record["spectrum_id"])
    view = CandidatesView(state=state, plot=SpectrumPlot(state=state))
    offered = {name.split(" (")[0] for name in view._line.options}
    assert any(name.startswith("TiO") for name in offered), offered
    assert not {name for name in offered if FORBIDDEN.match(name)} and not QSO_LINES & offered, offered
