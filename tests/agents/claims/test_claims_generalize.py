"""Claims that generalize (issue 20, item 3): numbers in the phrasings LLMs write, redshifts judged by
the strongest features they must explain, presence / absence on a flat continuum, stars with no
stated z placed at rest, broad lines measured in windows fit for them. Real spectra of the shared
corpus; the expected verdicts follow from what the spectra show (values printed in the comments)."""
import pytest

from agents.claims import Context, Measurer, check_text, extract_claims

A7V = "lamost_junhui_ccf/spec-57042-EG030739N012421V01_sp03-008.fits.gz"  # LAMOST A7V: H-beta EW ~11.5 A
QSO = "sdss_pyqsofit/spec-0332-52367-0639.fits"  # SDSS broad-line QSO, z = 0.101, broad H-alpha ~3000 km/s
PASSIVE = "sdss_ppxf/NGC3522_SDSS_DR18.fits"  # SDSS passive galaxy, z = 0.004, no emission lines


def _one(text):
    claims = extract_claims(text)
    assert len(claims) == 1, [c.to_dict() for c in claims]
    return claims[0]


@pytest.mark.parametrize("text, line, value, relation", [
    ("EW(H-alpha) ~ 20 Å.", "H-alpha", 20.0, "="),
    ("Hβ has an equivalent width of 7.5 Å.", "H-beta", 7.5, "="),
    ("The equivalent width of Ca II K is below 2.7 Å.", "Ca II K", 2.7, "<"),
    ("The equivalent width of Mg b is at least 3 Å.", "Mg b", 3.0, ">"),
    ("EW(Na D) > 4 Å.", "Na D", 4.0, ">"),
    ("A 24 Å equivalent width for Ca II K fits the rest.", "Ca II K", 24.0, "="),
    ("12 Å is the equivalent width I get for Hβ.", "H-beta", 12.0, "="),
    ("H-alpha emission exceeds 80 Å in equivalent width.", "H-alpha", 80.0, ">"),
    ("Wλ(Hγ) ≈ 9 Å", "H-gamma", 9.0, "="),
])
def test_equivalent_width_phrasings_are_quantities(text, line, value, relation):
    c = _one(text)
    assert (c.kind, c.quantity, c.lines, c.value, c.relation) == ("quantity", "ew", [line], value, relation)


def test_ranges_keep_their_spread():
    for text in ("The equivalent width of Hδ lies between 0.9 and 1.5 Å.", "EW([OIII] 5007) = 0.9-1.5 Å.",
                 "Hδ has an EW in the range 0.9–1.5 Å."):
        c = _one(text)
        assert c.value == pytest.approx(1.2) and c.spread == pytest.approx(0.3)


def test_a_line_pair_gives_one_value_each():
    for text in ("The equivalent widths of Hα and the Ca II K line are about 3.3 Å and 5.3 Å.",
                 "EW(Hα) ≈ 3.3 Å, EW(Ca II K) ≈ 5.3 Å.", "Hα has EW ~3.3 Å while Ca II K has EW ~5.3 Å."):
        claims = [c for c in extract_claims(text) if c.kind == "quantity"]
        assert [(c.lines, c.value) for c in claims] == [(["H-alpha"], 3.3), (["Ca II K"], 5.3)], text
        assert all(c.hedged for c in claims) or "while" in text or "EW(" in text


def test_idioms_are_not_negations_and_strength_is_read():
    c = _one("I can see Hβ in absorption without any doubt.")
    assert c.polarity == 1 and c.line_kind == "absorption"
    assert _one("Strong H-alpha emission is present.").strength == "strong"
    assert _one("Broad Mg II emission is present, FWHM ≈ 4500 km/s.").strength == "broad"


@pytest.fixture(scope="module")
def measurers(shared_spectra):
    from agents.spectra import read_spectrum

    return {f: Measurer.from_spectrum(read_spectrum(shared_spectra / f)) for f in (A7V, QSO, PASSIVE)}


def _verdicts(measurer, text, **ctx):
    return [r.verdict for r in check_text(text, Context(measurer, **ctx))]


def test_a_star_with_no_stated_z_is_placed_at_rest(measurers):
    m = measurers[A7V]
    assert _verdicts(m, "Hβ absorption is clearly present.") == ["unverifiable"]  # class unknown: no z
    star = {"object_class": "STAR"}
    assert _verdicts(m, "Hβ absorption is clearly present.", **star) == ["supported"]
    assert _verdicts(m, "There is no H-beta absorption.", **star) == ["contradicted"]
    assert _verdicts(m, "The equivalent width of H-beta is about 11 Å.", **star) == ["supported"]
    assert _verdicts(m, "EW(Hβ) ≈ 3 Å.", **star) == ["contradicted"]


def test_broad_winged_balmer_ew_is_bracketed_by_core_and_full_window(measurers):
    # H-beta of the A7V: ~9 A over the central 30 A (a Lick-like band), ~11.5 A with the wings
    star = {"object_class": "STAR"}
    assert _verdicts(measurers[A7V], "EW(Hβ) = 9.0 Å.", **star) == ["supported"]
    assert _verdicts(measurers[A7V], "EW(Hβ) = 30 Å.", **star) == ["contradicted"]


def test_a_redshift_must_explain_the_strongest_features(measurers):
    assert _verdicts(measurers[QSO], "The redshift is z = 0.101.") == ["supported"]
    assert _verdicts(measurers[QSO], "The redshift is z = 0.35.") == ["contradicted"]
    # the star: Balmer lines and Ca II at rest; at z = 0.3 none of them is explained
    assert _verdicts(measurers[A7V], "The redshift is z = 0.000.") == ["supported"]
    assert _verdicts(measurers[A7V], "This object lies at z ≈ 0.30.") == ["contradicted"]


def test_presence_and_absence_on_a_flat_continuum_are_decided(measurers):
    m, z = measurers[PASSIVE], {"z": 0.004}
    assert _verdicts(m, "Strong H-alpha emission is present.", **z) == ["contradicted"]
    assert _verdicts(m, "Strong [O III] 5007 emission is present.", **z) == ["contradicted"]
    assert _verdicts(m, "There is no H-alpha emission.", **z) == ["supported"]
    assert _verdicts(m, "There is no [N II] 6583 emission.", **z) == ["supported"]


def test_a_broad_line_width_is_measured_in_a_broad_window(measurers):
    # broad H-alpha of the QSO: half maximum from ~7185 to ~7268 A observed, about 3000-3500 km/s
    m, z = measurers[QSO], {"z": 0.101}
    assert _verdicts(m, "Broad H-alpha emission is present, FWHM ≈ 3200 km/s.", **z) == ["supported"]
    assert _verdicts(m, "The broad H-alpha line has a FWHM of about 800 km/s.", **z) == ["contradicted"]
    assert _verdicts(m, "The broad H-alpha line has a FWHM of about 15000 km/s.", **z) == ["contradicted"]
