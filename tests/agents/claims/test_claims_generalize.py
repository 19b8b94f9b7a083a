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
    # a negated bound is the other bound, whatever word carries the negation
    ("H-gamma's equivalent width does not exceed 3 Å.", "H-gamma", 3.0, "<"),
    ("The EW of Na D remains below 1.5 Å in every exposure.", "Na D", 1.5, "<"),
    ("Ca II K has an equivalent width of not more than 6 Å.", "Ca II K", 6.0, "<"),
    ("Hδ shows an EW of no less than 4 Å.", "H-delta", 4.0, ">"),
    ("The Mg b equivalent width is in excess of 5 Å.", "Mg b", 5.0, ">"),
    ("For Hβ the equivalent width comes out near 7 Å.", "H-beta", 7.0, "="),
    # "W" alone is the symbol when a relation follows; "no weaker than" is at least
    ("Hδ: W < 2 Å (absorption).", "H-delta", 2.0, "<"),
    ("The Na D absorption is no weaker than 3 Å in equivalent width.", "Na D", 3.0, ">"),
])
def test_equivalent_width_phrasings_are_quantities(text, line, value, relation):
    c = _one(text)
    assert (c.kind, c.quantity, c.lines, c.value, c.relation) == ("quantity", "ew", [line], value, relation)


def test_an_interval_in_brackets_and_a_line_named_earlier_in_the_sentence():
    c = _one("The H-alpha equivalent width sits in the interval [2.0, 3.0] Å.")
    assert (c.lines, c.value, c.spread) == (["H-alpha"], pytest.approx(2.5), pytest.approx(0.5))
    claims = extract_claims("Ca II K is deep; its equivalent width is 9 Å.")
    assert [(c.kind, c.lines) for c in claims] == [("feature", ["Ca II K"]), ("quantity", ["Ca II K"])]
    # "its" does not reach into another sentence
    assert [c.lines for c in extract_claims("Ca II K is deep. Its equivalent width is 9 Å.") if c.kind == "quantity"] == [[]]


@pytest.mark.parametrize("text", [
    "Equivalent widths: Hα 3.3 Å, the Ca II K line 5.3 Å.",
    "Hα sits at 3.3 Å of equivalent width and Ca II K at 5.3 Å.",
    "Hα has W = 3.3 Å, whereas Ca II K has W = 5.3 Å.",
    "The EWs are 3.3 Å for Hα and 5.3 Å for Ca II K.",
    "Hα and Ca II K show equivalent widths of 3.3 and 5.3 Å respectively.",
    "The equivalent widths of Hα and Ca II K are 3.3 and 5.3 Å.",
])
def test_a_pair_in_any_order_gives_each_line_its_own_value(text):
    claims = [c for c in extract_claims(text) if c.kind == "quantity"]
    assert [(c.lines, c.value) for c in claims] == [(["H-alpha"], 3.3), (["Ca II K"], 5.3)], text


@pytest.mark.parametrize("text, first, relation", [
    ("EW(Hβ) < EW(Ca II K).", "H-beta", "<"),
    ("Ca II K has a greater equivalent width than Hβ.", "Ca II K", ">"),
    ("Hβ has the smaller equivalent width of the two and Ca II K the larger.", "H-beta", "<"),
    ("Looking at Hβ and Ca II K, Ca II K is the stronger of the two.", "Ca II K", ">"),
    ("Ca II K dominates over Hβ in absorption.", "Ca II K", ">"),
    ("Hβ is more prominent than Ca II K, with a larger equivalent width.", "H-beta", ">"),
])
def test_the_order_of_two_equivalent_widths(text, first, relation):
    (c,) = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert (c.lines[0], c.relation, c.quantity) == (first, relation, "strength")


def test_an_order_word_before_both_lines_or_before_a_number_is_not_an_order():
    assert not [c for c in extract_claims("The larger equivalent width is that of Hβ, then Ca II K.")
                if c.kind == "comparison"]
    assert [c.kind for c in extract_claims("The EW of Hβ is larger than 5 Å, and Ca II K is deep.")] == \
        ["quantity", "feature"]


def test_a_line_named_before_a_comma_is_what_the_cue_after_it_is_about():
    (c,) = extract_claims("Around H-gamma, no absorption is visible.")
    assert (c.lines, c.polarity, c.line_kind) == (["H-gamma"], -1, "absorption")


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


def test_absorption_claimed_where_the_line_is_in_strong_emission_is_contradicted(shared_spectra):
    """DESI galaxy at z = 0.877 with H-beta in emission (EW -22 +- 4 A): a dip beside the peak is not
    the absorption line a sentence names."""
    from agents.spectra import read_spectrum

    m = Measurer.from_spectrum(read_spectrum(shared_spectra / "desi_quasarnp/test_coadd.fits", "1"))
    ctx = {"z": 0.8771, "object_class": "GALAXY"}
    assert _verdicts(m, "There is a clear absorption feature at H-beta.", **ctx) == ["contradicted"]
    assert _verdicts(m, "H-beta is seen in emission.", **ctx) == ["supported"]


def test_a_narrow_line_on_a_broad_one_is_judged_against_both_continua(shared_spectra):
    """DESI QSO at z = 0.477: [N II] 6583 sits on broad H-alpha. Its EW is 7.7 A against the broad
    line's wings and 23 A against the continuum beneath the broad line; a value in that bracket is
    supported, one outside both is not."""
    from agents.spectra import read_spectrum

    m = Measurer.from_spectrum(read_spectrum(shared_spectra / "desi_quasarnp/test_coadd.fits", "8"))
    ctx = {"z": 0.47749, "object_class": "QSO"}
    assert _verdicts(m, "EW([N II] 6583) ≈ 12.5 Å.", **ctx) == ["supported"]
    assert _verdicts(m, "EW([N II] 6583) ≈ 3 Å.", **ctx) == ["contradicted"]


def test_a_qso_redshift_may_sit_a_broad_line_shift_from_its_narrow_lines(shared_spectra):
    """SDSS QSO spec-0853-52374-0240: pipeline z 0.1968 (broad lines), narrow [O III] and [O II] at
    z = 0.2023 (1400 km/s away). For a QSO that z is not contradicted by the narrow lines; for an
    object of unknown class it still is."""
    from agents.spectra import read_spectrum

    m = Measurer.from_spectrum(read_spectrum(shared_spectra / "sdss_gelato/spec-0853-52374-0240.fits"))
    assert _verdicts(m, "The redshift is z = 0.197.", object_class="QSO") == ["supported"]
    assert _verdicts(m, "The redshift is z = 0.197.") == ["contradicted"]
    assert _verdicts(m, "The redshift is z = 0.2023.", object_class="QSO") == ["supported"]


def test_a_star_redshift_beyond_any_stars_velocity_is_contradicted_when_its_lines_sit_at_rest(shared_spectra):
    """LAMOST G-type star: H-alpha, H-beta, Mg b, Na D, the Ca triplet at rest. z = 0.0852 puts Ca II K
    and H on features by coincidence (it was 'supported'); for a star it is contradicted, and a z within
    a star's velocity (0.0015: 450 km/s) is not."""
    from agents.spectra import read_spectrum

    m = Measurer.from_spectrum(read_spectrum(shared_spectra / "lamost_learninglamost/spec-55862-B6212_sp06-093.fits"))
    assert _verdicts(m, "The redshift is z = 0.0852.", object_class="STAR") == ["contradicted"]
    assert _verdicts(m, "The redshift is z = 0.0015.", object_class="STAR") == ["supported"]


def test_the_g_band_explains_a_cool_stars_trough_at_4300(shared_spectra):
    """A LAMOST K star whose strongest troughs (4290, 4327 A) are the CH G band: z = 0 is supported, not
    contradicted for two unexplained features."""
    from agents.spectra import read_spectrum

    m = Measurer.from_spectrum(read_spectrum(shared_spectra / "lamost_learninglamost/spec-55862-B6212_sp06-214.fits"))
    assert _verdicts(m, "The redshift is z = 0.000.", object_class="STAR") == ["supported"]
