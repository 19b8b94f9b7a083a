"""Classes of phrasing a pattern extractor meets in hands it has not seen (issue 20, item 3, fourth
pass): each test is one class, in wording written for the test, not copied from any evaluation set."""
import pytest

from agents.claims import extract_claims


def _quantities(text):
    return [c for c in extract_claims(text) if c.kind == "quantity"]


def _one_quantity(text):
    claims = extract_claims(text)
    assert len(claims) == 1 and claims[0].kind == "quantity", [c.to_dict() for c in claims]
    return claims[0]


@pytest.mark.parametrize("text, relation", [
    # a bound written after the number
    ("The Na D absorption has an equivalent width of 1.5 Å or less.", "<"),
    ("Mg b: EW of 2 Å at most, so the star is metal poor.", "<"),
    ("The Hδ absorption equivalent width is 6 Å or greater.", ">"),
    ("Hδ absorption, EW 6 Å at the least.", ">"),
    ("Na D shows an equivalent width of 4+ Å.", ">"),
    # ASCII and "about" relations
    ("Na D absorption EW >= 4 Å.", ">"),
    ("EW(Mg b) =< 2 Å.", "<"),
    ("The Hδ EW ≳ 6 Å.", ">"),
    ("The Hδ EW ≲ 1 Å.", "<"),
    # a negation of a bound, whatever carries it
    ("The Mg b equivalent width can't be more than 2 Å.", "<"),
    ("The Na D equivalent width never exceeds 1.5 Å.", "<"),
    ("The Hδ EW does not reach 1 Å.", "<"),
    ("The equivalent width of Na D is not below 4 Å.", ">"),
    # a comparative of strength against a number
    ("Mg b absorption is weaker than 2 Å in equivalent width.", "<"),
    ("The Na D absorption is deeper than 4 Å in EW.", ">"),
    ("The equivalent width of Hδ is bigger than 6 Å.", ">"),
    # verbs and nouns that name a bound
    ("The Mg b EW tops out at 2 Å.", "<"),
    ("The Mg b EW falls short of 2 Å.", "<"),
    ("The Na D EW has an upper limit of 1.5 Å.", "<"),
    ("The Hδ EW is at minimum 6 Å.", ">"),
    ("The Hδ EW surpasses 6 Å.", ">"),
    ("The Hδ EW sits at or above 6 Å.", ">"),
    ("The Mg b EW is well below 2 Å.", "<"),
    ("Na D absorption exceeds an equivalent width of 4 Å.", ">"),
])
def test_bounds_in_any_wording_are_bounds(text, relation):
    c = _one_quantity(text)
    assert (c.quantity, c.relation) == ("ew", relation), text


@pytest.mark.parametrize("text", [
    "The Mg b EW ranges from 3 to 5 Å.",
    "The Mg b equivalent width spans 3-5 Å.",
    "The Mg b equivalent width is bounded by 3 and 5 Å.",
    "The Mg b equivalent width is estimated to be 3–5 Å.",
    "The Mg b EW is probably in the range of 3 to 5 Å.",
    "The Mg b EW is anywhere from 3 to 5 Å.",
    "Mg b absorption has an EW from 3 up to 5 Å.",
    "3 Å < EW(Mg b) < 5 Å.",
    "EW(Mg b) ∈ [3, 5] Å.",
    "The Mg b EW is no less than 3 and no more than 5 Å.",
    "The EW of Mg b, 3–5 Å, is what a K giant shows.",
    "Mg b EW (3–5 Å) is what a K giant shows.",
])
def test_ranges_in_any_wording_keep_their_ends(text):
    c = _one_quantity(text)
    assert (c.lines, c.relation, c.value, c.spread) == (["Mg b"], "=", pytest.approx(4.0), pytest.approx(1.0)), text


@pytest.mark.parametrize("text", [
    "For Na D and Mg b the equivalent widths are 4.1 Å and 2.2 Å.",
    "Na D and Mg b equivalent widths are 4.1 and 2.2 Å.",
    "Na D: 4.1 Å, Mg b: 2.2 Å (equivalent widths).",
    "Na D's EW is 4.1 Å whereas that of Mg b is 2.2 Å.",
    "The equivalent widths are 4.1 Å (Na D) and 2.2 Å (Mg b).",
    "Na D has an EW of 4.1 Å and Mg b one of 2.2 Å.",
    "Na D measures 4.1 Å in EW, compared with 2.2 Å for Mg b.",
    "The EW of Na D (4.1 Å) is larger than that of Mg b (2.2 Å).",
    "Na D and Mg b come in at 4.1 and 2.2 Å of equivalent width.",
])
def test_two_lines_and_two_values_pair_up_in_the_order_named(text):
    claims = _quantities(text)
    assert [(c.lines, c.value) for c in claims] == [(["Na D"], 4.1), (["Mg b"], 2.2)], text


@pytest.mark.parametrize("text", [
    "The EW of Na D is 4.1 Å, about 2 Å more than Mg b.",
    "Na D exceeds Mg b in equivalent width by 1.9 Å, at 4.1 Å.",
])
def test_a_difference_is_not_the_second_lines_value(text):
    assert not any(c.lines == ["Mg b"] for c in _quantities(text)), text


@pytest.mark.parametrize("text, first, relation", [
    # the sense or the word "line" between the comparative and "than"
    ("Na D shows stronger absorption than Mg b.", "Na D", ">"),
    ("Mg b is weaker in absorption than Na D.", "Mg b", "<"),
    ("Na D is a stronger line than Mg b.", "Na D", ">"),
    ("Na D absorption is stronger compared to Mg b.", "Na D", ">"),
    # more comparatives of strength
    ("Na D is more intense than Mg b in absorption.", "Na D", ">"),
    ("Mg b is less pronounced than Na D.", "Mg b", "<"),
    ("Na D has more absorption than Mg b.", "Na D", ">"),
    ("Mg b carries less equivalent width than Na D.", "Mg b", "<"),
    # verbs of one line outdoing another, active and passive
    ("Na D absorption dominates Mg b.", "Na D", ">"),
    ("Na D clearly overpowers Mg b.", "Na D", ">"),
    ("Mg b is outweighed by Na D in absorption.", "Mg b", "<"),
    # a factor
    ("Na D is three times as strong as Mg b.", "Na D", ">"),
    ("Mg b is about half as strong as Na D.", "Mg b", "<"),
    # one of two singled out with "the"
    ("Na D is the stronger absorber, Mg b the weaker.", "Na D", ">"),
    ("Between Mg b and Na D, Na D is the stronger one.", "Na D", ">"),
    ("Na D, not Mg b, is the stronger absorption feature.", "Na D", ">"),
])
def test_the_order_of_two_lines_in_any_wording(text, first, relation):
    (c,) = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert (c.lines[0], c.relation, c.quantity) == (first, relation, "strength"), text


@pytest.mark.parametrize("text", [
    # "z" with a subscript, or with a verb rather than a sign
    "The adopted z_sys = 0.0871.",
    "z(lines) = 0.0871.",
    "We obtain a z of 0.0871 from three lines.",
    "Its z is roughly 0.0871.",
    "The z value is 0.0871.",
    # "redshift" with the words reports put before a value
    "Redshift: 0.0871.",
    "Redshift (z): 0.0871.",
    "The redshift was determined to be 0.0871.",
    "The redshift comes out as 0.0871.",
    "A redshift estimate of 0.0871 fits the lines.",
    "The redshift equals 0.0871.",
    "The redshift appears to be 0.0871.",
    "The redshift is consistent with 0.0871.",
    "The galaxy is redshifted to 0.0871.",
    "The lines place the galaxy at 0.0871 in redshift.",
])
def test_a_redshift_in_any_wording(text):
    (c,) = [c for c in extract_claims(text) if c.quantity == "z"]
    assert c.value == pytest.approx(0.0871), text


@pytest.mark.parametrize("text", [
    "The redshift is not 0.0871 but higher.",
    "The z-band magnitude is 0.5 mag fainter.",
    "The redshift uncertainty is 2 km/s.",
])
def test_a_denied_redshift_or_another_number_is_not_a_redshift(text):
    assert not [c for c in extract_claims(text) if c.quantity == "z"], text


@pytest.mark.parametrize("text, value", [
    ("W(Hδ) = 5.5 Å.", 5.5),  # the symbol W with the line in parentheses
    ("The Hδ absorption measures 5.5 Ångström in equivalent width.", 5.5),  # the unit spelt out
    ("Hδ absorption EW (rest frame) ≈ 5.5 Å.", 5.5),  # a frame remark between quantity and value
    ("Hδ emission, EW = −5.5 Å.", -5.5),  # the negative-is-emission sign is kept for the checker
])
def test_notations_units_and_remarks_around_a_value(text, value):
    c = _one_quantity(text)
    assert (c.quantity, c.lines, c.value) == ("ew", ["H-delta"], value), text


@pytest.mark.parametrize("text", [
    "The equivalent width we measure for Na D is 4.1 Å.",
    "The EW that I obtain for the Na D absorption is 4.1 Å.",
    "The EW derived for Na D is about 4.1 Å.",
    "The equivalent width associated with Na D absorption is 4.1 Å.",
])
def test_a_line_named_in_a_relative_clause_after_the_quantity(text):
    c = _one_quantity(text)
    assert (c.quantity, c.lines, c.value) == ("ew", ["Na D"], 4.1), text


def test_a_clause_after_a_semicolon_may_leave_the_quantity_out():
    for text in ("Na D has an equivalent width of 4.1 Å; Mg b has 2.2 Å.", "EW(Na D) ≈ 4.1 Å; Mg b: 2.2 Å."):
        assert [(c.lines, c.value) for c in _quantities(text)] == [(["Na D"], 4.1), (["Mg b"], 2.2)], text
    # not across a full stop, and not a wavelength or another quantity
    for text in ("Na D has an EW of 4.1 Å. Mg b has 2.2 Å.", "Na D has an EW of 4.1 Å; Mg b is at 5175 Å.",
                 "Na D has an EW of 4.1 Å; Mg b FWHM 2.2 Å."):
        assert not [c for c in _quantities(text) if c.quantity == "ew" and c.lines == ["Mg b"]], text


@pytest.mark.parametrize("text, first, relation", [
    # a comparative said of a line with no "than": the other line named in the clause is the reference
    ("Na D is strong, whereas Mg b is weaker.", "Mg b", "<"),
    ("Mg b absorption is shallower, Na D deeper.", "Mg b", "<"),
    ("Set against Mg b, Na D is stronger in absorption.", "Na D", ">"),
    ("Na D > Mg b (absorption strength).", "Na D", ">"),
    # verbs of outdoing taking the other line as object, nouns of strength, adverbs
    ("The Na D absorption outstrips that of Mg b.", "Na D", ">"),
    ("Na D shows greater absorption strength than Mg b.", "Na D", ">"),
    ("Mg b absorbs less strongly than Na D.", "Mg b", "<"),
])
def test_the_order_of_two_lines_said_without_than_or_by_a_verb(text, first, relation):
    (c,) = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert (c.lines[0], c.relation) == (first, relation), text


def test_a_verb_of_outdoing_with_a_number_after_it_is_no_order():
    assert not [c for c in extract_claims("Na D exceeds 4 Å in EW, and Mg b is weak.") if c.kind == "comparison"]


@pytest.mark.parametrize("text, relation", [
    ("The Mg b equivalent width clocks in at 2.5 Å.", "="),
    ("The Mg b EW works out to 2.5 Å.", "="),
    ("The Mg b EW turns out to be 2.5 Å.", "="),
    ("The Mg b EW totals 2.5 Å.", "="),
    ("The Mg b EW is below the 2.5 Å level.", "<"),
    ("The Mg b EW stays above a 2.5 Å threshold.", ">"),
])
def test_verbs_of_coming_to_a_value_and_a_value_named_as_a_level(text, relation):
    c = _one_quantity(text)
    assert (c.lines, c.value, c.relation) == (["Mg b"], 2.5, relation), text


def test_a_hedge_before_a_range_hedges_it_and_a_hedge_before_a_value_still_does():
    c = _one_quantity("The Mg b EW is approximately between 2 and 3 Å.")
    assert (c.value, c.spread, c.hedged) == (2.5, 0.5, True)
    assert _one_quantity("Mg b EW ~ 2.5 Å.").hedged


@pytest.mark.parametrize("text", [
    "The Mg b EW is bracketed by 3 Å and 5 Å.",  # both ends, not the first as a value
    "The Mg b EW is 3 through 5 Å.",
    "The Mg b EW must be between 3 and 5 Å.",
    "The Mg b EW could be anywhere between 3 and 5 Å.",
    "The Mg b EW is plausibly 3-5 Å.",
    "The Mg b EW is confined to 3–5 Å.",
    "Between 3 and 5 Å of equivalent width is in Mg b.",  # a range before the quantity
])
def test_ranges_with_modal_verbs_and_other_connectors(text):
    c = [c for c in _quantities(text)]
    assert [(x.lines, x.value, x.spread) for x in c] == [(["Mg b"], pytest.approx(4.0), pytest.approx(1.0))], text


@pytest.mark.parametrize("text, value, spread, relation", [
    ("The EW of Na D, which we see in absorption, lies between 3 and 5 Å.", 4.0, 1.0, "="),
    ("The equivalent width of Na D (a blended doublet) is 4 Å.", 4.0, 0.0, "="),
    ("The equivalent width of Na D — clearly an absorption feature — exceeds 3 Å.", 3.0, 0.0, ">"),
    ("The EW of Na D, as far as the noise allows, is under 5 Å.", 5.0, 0.0, "<"),
])
def test_an_aside_between_the_line_and_its_value(text, value, spread, relation):
    c = _one_quantity(text)
    assert (c.lines, c.value, c.spread, c.relation) == (["Na D"], pytest.approx(value), pytest.approx(spread),
                                                        relation), text


def test_a_line_listed_in_what_looks_like_an_aside_is_not_skipped():
    assert not _quantities("The EW of Na D, Mg b, and H-beta is 4 Å.")


@pytest.mark.parametrize("text, relation", [
    # an intensifier before a bound word
    ("Na D absorption, with an EW far in excess of 2 Å.", ">"),
    ("The Na D EW is comfortably above 2 Å.", ">"),
    ("The Na D EW sits far below 6 Å.", "<"),
    # bound words of extent
    ("Na D absorption EW upward of 2 Å.", ">"),
    ("The Na D absorption reaches an EW beyond 2 Å.", ">"),
    # a relative pronoun before the verb of the value
    ("Na D has an absorption EW which is no less than 2 Å.", ">"),
    ("Na D shows an absorption EW that is at most 6 Å.", "<"),
    # a bound named as a noun before the quantity
    ("The lower bound on the Na D equivalent width is 2 Å.", ">"),
    ("An upper limit to the equivalent width of Na D is 6 Å.", "<"),
])
def test_bounds_with_intensifiers_extent_words_relatives_and_limit_nouns(text, relation):
    c = _one_quantity(text)
    assert (c.quantity, c.lines, c.relation) == ("ew", ["Na D"], relation), text


@pytest.mark.parametrize("text", [
    "The systemic redshift comes to 0.0452.",
    "The redshift of the galaxy: 0.0452",
    "The redshift of this quasar is 0.0452.",
    "Its redshift stands at 0.0452.",
    "The redshift is effectively 0.0452.",
])
def test_a_redshift_after_verbs_of_amounting_and_the_thing_it_is_of(text):
    c = _one_quantity(text)
    assert (c.quantity, c.value) == ("z", pytest.approx(0.0452)), text


@pytest.mark.parametrize("text, first, relation", [
    ("[O III] 5007 is brighter than H-beta in emission.", "[O III] 5008", ">"),
    ("In emission, H-beta is fainter than [O III] 5007.", "H-beta", "<"),
    ("[O III] 5007 outshines H-beta.", "[O III] 5008", ">"),
    ("H-beta is overshadowed by [O III] 5007.", "H-beta", "<"),
])
def test_the_order_of_two_emission_lines_by_brightness(text, first, relation):
    c = [x for x in extract_claims(text) if x.kind == "comparison"]
    assert [(x.lines[0], x.relation) for x in c] == [(first, relation)], text


# --- fifth pass (claims-7): from the development half of a fourth blind hand ---------------------------

def _features(text):
    return [c for c in extract_claims(text) if c.kind == "feature"]


@pytest.mark.parametrize("text, polarity, kind", [
    # the sense in one field, the detection in another: one statement, not two clauses
    ('{"species": "Hβ", "detection": "no", "sense": "absorption"}', -1, "absorption"),
    ('{"line": "Na D", "status": "undetected", "kind": "emission"}', -1, "emission"),
    ("line=[O III] 5007 | status=present | type=emission", 1, "emission"),
    ("Mg b ; absorption ; detected: true", 1, "absorption"),
    ("- H-delta | emission | seen: false", -1, "emission"),
])
def test_a_record_of_fields_is_read_as_one_statement(text, polarity, kind):
    claims = extract_claims(text)
    assert len(claims) == 1 and claims[0].kind == "feature", [c.to_dict() for c in claims]
    assert claims[0].polarity == polarity and claims[0].line_kind == kind


@pytest.mark.parametrize("text, quantity, value, relation, spread", [
    ('{"name": "Ca II K", "mode": "absorption", "ew_aa": 7.5}', "ew", 7.5, "=", 0.0),  # the unit in the key
    ("line: Hδ; type: absorption; EW: > 4 Å", "ew", 4.0, ">", 0.0),
    ('{"line": "Hγ", "type": "absorption", "ew_min_angstrom": 2}', "ew", 2.0, ">", 0.0),  # the bound in the key
    ("feature=Na D | EW_upper_A=0.5 | type=absorption", "ew", 0.5, "<", 0.0),
    ('{"line": "H-alpha", "ew_range": [3, 5], "unit": "A"}', None, None, None, None),  # a unit field: not read
    ('{"line": "Hβ", "component": "broad", "fwhm_km_s": 3500}', "fwhm", 3500.0, "=", 0.0),
    ('{"z_best": 0.0412, "quality": "good"}', "z", 0.0412, "=", 0.0),
])
def test_values_bounds_and_units_in_a_record(text, quantity, value, relation, spread):
    qs = _quantities(text)
    if quantity is None:
        assert not [q for q in qs if q.quantity == "ew"]
        return
    assert len(qs) == 1, [c.to_dict() for c in qs]
    q = qs[0]
    assert (q.quantity, q.value, q.relation, q.spread) == (quantity, value, relation, spread)
    assert quantity == "z" or q.unit


def test_a_record_needs_its_fields_to_be_known():
    # a list of lines with values is not one line's record; a line named in a key is a list
    qs = _quantities("Hα: EW = 6 Å, Hβ: EW = 2 Å")
    assert [(q.lines, q.value) for q in qs] == [(["H-alpha"], 6.0), (["H-beta"], 2.0)]
    assert not _features('{"line": "Hα", "status": "unclear", "note": "blend with [N II]"}')


def test_double_a_is_the_ascii_angstrom():
    q = _one_quantity("The Hβ absorption has EW = 3.5 AA.")
    assert (q.value, q.unit) == (3.5, "AA")
    q = _one_quantity("Na D absorption with an equivalent width above 2 AA")
    assert (q.value, q.relation) == (2.0, ">")


@pytest.mark.parametrize("text, line, value", [
    ("EW[Hδ] = 5.5 Å", "H-delta", 5.5),  # the argument in brackets right after the symbol
    ("W_λ[Mg b] ~ 4 Å", "Mg b", 4.0),
    ("EW_{Hγ} = 2.5 Å", "H-gamma", 2.5),  # a subscript in braces
    ("Hα EW_obs = 12 Å", "H-alpha", 12.0),  # a subscript naming the frame
])
def test_the_argument_of_the_symbol_in_brackets_braces_or_a_subscript(text, line, value):
    q = _one_quantity(text)
    assert (q.lines, q.value) == ([line], value)


def test_a_forbidden_line_in_brackets_is_still_its_own_name():
    assert [c.lines for c in _features("The [O III] line is strong")] == [["[O III] 5008"]]


@pytest.mark.parametrize("text, value, relation, spread", [
    ("No more than 0.8 Å: this caps the absorption EW of Na D.", 0.8, "<", 0.0),
    ("Between 2 and 4 Å - that's my reading of the EW of Hδ.", 3.0, "=", 1.0),
    ("6 Å is the equivalent width I find for Hβ.", 6.0, "=", 0.0),
])
def test_a_value_opening_the_clause_pointed_back_to_by_the_quantity(text, value, relation, spread):
    q = _one_quantity(text)
    assert (q.value, q.relation, q.spread) == (value, relation, spread) and q.lines


def test_a_value_opening_the_clause_needs_the_pointer():
    # "3 Å away, the EW of X ..." is not a value of the EW
    assert not [q for q in _quantities("About 3 Å redward, the EW of Hβ looks odd.") if q.value == 3.0]


@pytest.mark.parametrize("text", ["0.0512 is the redshift we adopt.", "0.0512 was our final redshift."])
def test_a_redshift_value_before_the_word(text):
    q = _one_quantity(text)
    assert (q.quantity, q.value) == ("z", 0.0512)


def test_a_quantity_after_a_semicolon_is_about_the_line_of_the_clause_before():
    qs = _quantities("Hδ clearly in absorption; EW 4-6 Å on a local continuum.")
    assert [(q.lines, q.value, q.spread) for q in qs] == [(["H-delta"], 5.0, 1.0)]
    # two lines before: no guess
    assert [q.lines for q in _quantities("Hα and Hβ in emission; EW 10 Å.")] == [[]]


def test_the_symbol_after_the_name_of_the_quantity_and_a_relative_would():
    q = _one_quantity("The broad Hα line has a width (FWHM) of 4200 km/s, which would imply a massive black hole.")
    assert (q.quantity, q.value, q.lines, q.strength) == ("fwhm", 4200.0, ["H-alpha"], "broad")
    q = _one_quantity("The equivalent width (EW) of Hβ is 7 Å.")
    assert (q.value, q.lines) == (7.0, ["H-beta"])
    assert not extract_claims("I would check whether Hα has an EW of 7 Å.")


@pytest.mark.parametrize("text, first, relation", [
    ("Sorted by equivalent width (strongest first): Na D, Hβ", "Na D", ">"),
    ("Listed by EW, smallest first: Hγ, Hδ", "H-gamma", "<"),
    ("The lines in descending order of EW: Hα, [N II] 6583.", "H-alpha", ">"),
])
def test_two_lines_ranked_by_strength_with_the_direction_stated(text, first, relation):
    c = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert len(c) == 1 and c[0].lines[0] == first and c[0].relation == relation, [x.to_dict() for x in c]


def test_a_ranking_without_a_direction_is_not_read():
    assert not [c for c in extract_claims("Ranked by EW: Na D, Hβ") if c.kind == "comparison"]


def test_a_bound_in_the_subscript_of_the_symbol():
    q = _one_quantity("Hβ absorption EW_max = 1.5 Å")
    assert (q.value, q.relation, q.lines) == (1.5, "<", ["H-beta"])


# --- sixth pass (claims-8): from the development halves of the fifth and fourth blind hands ------------
@pytest.mark.parametrize("text", [
    "The Hδ EW is close to 5.5 Å, and the summary should repeat that number.",
    "Hδ absorption has an equivalent width of about 5.5 Å, and I will check the continuum again later.",
    "The EW of Hδ comes out near 5.5 Å, which the write-up should state.",
    "Hδ EW ≈ 5.5 Å - we need to carry this into the table.",
])
def test_a_request_or_plan_in_a_trailing_clause_leaves_the_claim_before_it(text):
    q = _one_quantity(text)
    assert (q.quantity, q.lines, q.value) == ("ew", ["H-delta"], 5.5), text


@pytest.mark.parametrize("text", [
    # a plan that names the line or holds a number is still a plan
    "The Hδ EW is close to 5.5 Å, and I will check whether Hγ agrees.",
    "Hδ absorption has an EW of 5.5 Å, and we need to confirm it is above 4 Å.",
    # a plan before the value is a plan
    "I will measure the EW of Hδ, which is probably about 5.5 Å.",
])
def test_a_trailing_plan_that_names_a_line_or_a_number_still_voids_the_clause(text):
    assert not _quantities(text), text


@pytest.mark.parametrize("text, value, spread", [
    ("Looking at Hδ, its absorption equivalent width should lie somewhere in 4-7 Å.", 5.5, 1.5),
    ("The Hδ equivalent width should be about 5.5 Å.", 5.5, 0.0),
    ("From the zoom, the EW of Hδ should come out between 4 and 7 Å.", 5.5, 1.5),
])
def test_should_before_a_value_is_a_hedged_estimate(text, value, spread):
    q = _one_quantity(text)
    assert (q.lines, q.value, q.spread, q.hedged) == (["H-delta"], value, spread, True), text


@pytest.mark.parametrize("text", [
    "For an A star the Hδ EW should be about 10 Å.",
    "If this is a K giant, the Hδ EW should be at most 2 Å.",
    "Hδ should be in absorption with an EW of about 5 Å, as expected for a typical F star.",
    "The EW of Hδ should be measured on a local continuum of 4000 Å.",
])
def test_should_of_an_expectation_or_a_method_is_not_a_claim(text):
    assert not _quantities(text), text


@pytest.mark.parametrize("text, relation", [
    ("The Mg b EW is maximum 2.5 Å.", "<"),
    ("Mg b equivalent width: max. 2.5 Å.", "<"),
    ("The Mg b EW is minimum 2.5 Å.", ">"),
    ("Mg b EW min 2.5 Å.", ">"),
    ("The Mg b EW is less than or equal to 2.5 Å.", "<"),
    ("The Mg b EW is lower than or equal to 2.5 Å.", "<"),
    ("The Mg b EW is greater than or equal to 2.5 Å.", ">"),
    ("The Mg b EW is at the very most 2.5 Å.", "<"),
    ("The Mg b EW is bounded above by 2.5 Å.", "<"),
    ("The Mg b EW is bounded below by 2.5 Å.", ">"),
    ("The Mg b EW does not go above 2.5 Å.", "<"),
    ("The Mg b EW never rises above 2.5 Å.", "<"),
    ("The Mg b EW does not drop below 2.5 Å.", ">"),
    ("The Mg b EW is 2.5 Å tops.", "<"),
])
def test_bound_words_written_bare_or_spelled_out(text, relation):
    q = _one_quantity(text)
    assert (q.quantity, q.lines, q.value, q.relation) == ("ew", ["Mg b"], 2.5, relation), text


@pytest.mark.parametrize("text, first, quantity, relation", [
    ("Absorption in Na D is more strong than in Hβ.", "Na D", "strength", ">"),
    ("Na D is more deep than Hβ.", "Na D", "depth", ">"),
    ("Hβ is less strong than Na D in absorption.", "H-beta", "strength", "<"),
    ("Na D is more broad than Hβ.", "Na D", "fwhm", ">"),
    ("Hβ is not as strong as Na D.", "H-beta", "strength", "<"),
    ("Hβ is not as deep as Na D in equivalent width.", "H-beta", "depth", "<"),
    ("EW(Na D) exceeds EW(Hβ).", "Na D", "strength", ">"),
    ("In equivalent width Hβ falls short of Na D.", "H-beta", "strength", "<"),
])
def test_analytic_and_negated_comparatives_of_two_lines(text, first, quantity, relation):
    c = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert len(c) == 1 and (c[0].lines[0], c[0].quantity, c[0].relation) == (first, quantity, relation), \
        [x.to_dict() for x in c]


def test_a_comparative_predicated_of_the_line_after_it():
    # "the stronger one is A": A is the stronger, whichever line was named first
    c = [c for c in extract_claims("Of Na D and Hβ, the stronger absorption is Na D.") if c.kind == "comparison"]
    assert [(x.lines, x.relation) for x in c] in ([(["Na D", "H-beta"], ">")], [])
    c = [c for c in extract_claims("Between Hβ and Na D, the weaker line is Hβ.") if c.kind == "comparison"]
    assert [(x.lines, x.relation) for x in c] in ([(["H-beta", "Na D"], "<")], [])


def _feature_senses(text):
    return [(c.lines, c.polarity, c.line_kind) for c in extract_claims(text) if c.kind == "feature"]


@pytest.mark.parametrize("text", [
    "Hα appears in absorption and not in emission.",
    "Hα is an absorption (not emission) line.",
    "Hα is absorbed, not emitted.",
    "Hα absorbs and does not emit.",
])
def test_only_the_denied_sense_is_denied(text):
    # the emission sense is denied, the absorption one asserted: never "no Hα at all", never "no absorption"
    fs = _feature_senses(text)
    assert (["H-alpha"], 1, "absorption") in fs or (["H-alpha"], -1, "emission") in fs, (text, fs)
    assert all(k == "emission" for _, p, k in fs if p < 0), (text, fs)
    assert all(p > 0 for _, p, k in fs if k == "absorption"), (text, fs)


@pytest.mark.parametrize("text", [
    "Hα emission cannot be seen.",
    "Hα never shows emission.",
    "Hα is devoid of emission.",
    "Zero emission at Hα.",
    "Hα is invisible in emission.",
    "Hα fails to appear in emission.",
    "Nothing is emitted at Hα.",
    "Hα emission is undetectable.",
])
def test_more_words_that_deny_a_line(text):
    assert _feature_senses(text) == [(["H-alpha"], -1, "emission")], text


def test_a_negated_bound_is_never_an_absence():
    assert not [c for c in extract_claims("The Hβ EW does not go above 3 Å.") if c.kind == "feature"]


@pytest.mark.parametrize("text, value, spread, relation", [
    # an uncertainty in parentheses, an arrow, the sense between the quantity and its value
    ("Ca II K EW = 9.5 (±0.3) Å.", 9.5, 0.3, "="),  # the stated uncertainty is the spread
    ("Ca II K equivalent width → 9.5 Å.", 9.5, 0.0, "="),
    ("Ca II K: EW in absorption is 9.5 Å.", 9.5, 0.0, "="),
    ("Ca II K has an equivalent width in the neighbourhood of 9.5 Å.", 9.5, 0.0, "="),
    ("The Ca II K equivalent width is something like 9.5 Å.", 9.5, 0.0, "="),
    # ranges: verbs of extent, an open interval, two bounds written after their numbers
    ("The Ca II K EW runs from 8 to 11 Å.", 9.5, 1.5, "="),
    ("The Ca II K EW varies between 8 and 11 Å.", 9.5, 1.5, "="),
    ("The Ca II K EW stays between 8 and 11 Å.", 9.5, 1.5, "="),
    ("The Ca II K EW could be anything from 8 to 11 Å.", 9.5, 1.5, "="),
    ("The Ca II K EW sits in the window 8-11 Å.", 9.5, 1.5, "="),
    ("EW(Ca II K) ∈ (8, 11) Å.", 9.5, 1.5, "="),
    ("The Ca II K EW is 8 Å or more, but 11 Å or less.", 9.5, 1.5, "="),
    ("The Ca II K EW is 8 Å at the least and 11 Å at the most.", 9.5, 1.5, "="),
])
def test_more_notations_of_a_value_or_a_range(text, value, spread, relation):
    q = _one_quantity(text)
    assert (q.lines, q.value, q.spread, q.relation) == (["Ca II K"], value, spread, relation), text


def test_two_values_in_parentheses_after_two_lines_stay_a_pair():
    qs = _quantities("The EWs of Hβ and Hγ (3, 5 Å) look normal.")
    assert [(q.lines, q.value, q.spread) for q in qs] == [(["H-beta"], 3.0, 0.0), (["H-gamma"], 5.0, 0.0)]


@pytest.mark.parametrize("text", [
    "Hα should be in emission at about 30 Å EW.",  # the line, not the quantity, is what should be
    "Na D is not as strong as expected.",  # weaker than expected is not absent
])
def test_an_expected_line_or_a_weaker_than_expected_one_is_not_a_claim(text):
    assert not [c for c in extract_claims(text) if c.kind == "quantity" or c.polarity < 0], text


@pytest.mark.parametrize("text, first, relation", [
    # verbs of outdoing and of falling behind, active and passive, with the other line as object
    ("Ca II K outranks Hδ in equivalent width.", "Ca II K", ">"),
    ("By EW, Ca II K beats Hδ.", "Ca II K", ">"),
    ("Ca II K edges out Hδ in EW.", "Ca II K", ">"),
    ("Hδ comes in below Ca II K in equivalent width.", "H-delta", "<"),
    ("Hδ is exceeded by Ca II K in equivalent width.", "H-delta", "<"),
    ("Hδ is surpassed by Ca II K in EW.", "H-delta", "<"),
    # absorbing more or less, a factor of the other's EW
    ("Ca II K absorbs more than Hδ.", "Ca II K", ">"),
    ("Hδ absorbs less than Ca II K.", "H-delta", "<"),
    ("Ca II K is more absorbing than Hδ.", "Ca II K", ">"),
    ("Ca II K has larger absorption than Hδ.", "Ca II K", ">"),
    ("The EW of Ca II K is three times that of Hδ.", "Ca II K", ">"),
    ("The EW of Hδ is about half that of Ca II K.", "H-delta", "<"),
    # the comparative said of a line through "has the"
    ("Of Ca II K and Hδ, Ca II K has the greater equivalent width.", "Ca II K", ">"),
])
def test_more_verbs_and_nouns_that_order_two_lines(text, first, relation):
    c = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert len(c) == 1 and (c[0].lines[0], c[0].relation) == (first, relation), [x.to_dict() for x in c]


@pytest.mark.parametrize("text", [
    "Ca II K leads to a metal-rich solution.",  # no other line as the object
    "Ca II K falls below 8 Å in EW.",  # a bound, not an order
])
def test_a_verb_of_order_needs_the_other_line_as_its_object(text):
    assert not [c for c in extract_claims(text) if c.kind == "comparison"], text


@pytest.mark.parametrize("text", [
    # idioms of a non-detection said after the line
    "Hβ emission is below the detection limit.",
    "Hβ emission is lost in the noise.",
    "The Hβ emission EW is consistent with zero.",
    # words for emission that are not the word
    "There is no excess flux at Hβ.",
    "No bump at Hβ.",
])
def test_a_non_detection_of_emission_in_other_words(text):
    assert _feature_senses(text) == [(["H-beta"], -1, "emission")], text


@pytest.mark.parametrize("text", [
    "Emission at Hβ: none - it is an absorption line.",
    "Hβ absorption is present and emission is absent.",
    "Hβ absorption is seen and its emission is undetected.",
])
def test_a_negation_after_a_sense_is_said_of_that_sense(text):
    # "none", "absent", "undetected" reach back to the sense before them, not on to the next one
    fs = _feature_senses(text)
    assert (["H-beta"], -1, "emission") in fs and all(k == "emission" for _, p, k in fs if p < 0), (text, fs)


@pytest.mark.parametrize("text", [
    # symbols and abbreviations of the equivalent width
    "Na D: EQW = 4.2 Å.",
    "Na D REW = 4.2 Å.",
    "W_0(Na D) = 4.2 Å.",
    "Na D: W_r = 4.2 Å.",
    "Na D: W_lambda = 4.2 Å.",
    "Na D equiv. width 4.2 Å.",
    "Na D eq. width = 4.2 Å.",
    # the line right after the symbol; an em dash before the value
    "EW Na D = 4.2 Å.",
    "Na D EW — 4.2 Å.",
    # asymmetric uncertainties
    "Na D EW = 4.2^{+0.3}_{-0.2} Å.",
    "Na D EW = 4.2 (+0.3/-0.2) Å.",
    # past tense and other verbs before the value
    "The EW for Na D was 4.2 Å.",
    "The Na D EW is equal to 4.2 Å.",
    "The equivalent width measured for Na D came to 4.2 Å.",
    "The Na D EW lands at 4.2 Å.",
])
def test_more_symbols_and_verbs_of_a_single_value(text):
    q = _one_quantity(text)
    assert (q.quantity, q.lines, q.value, q.relation) == ("ew", ["Na D"], 4.2, "="), text


@pytest.mark.parametrize("text", [
    "The Na D EW is of the order of 4.2 Å.",
    "The Na D EW hovers around 4.2 Å.",
    "The Na D EW approaches 4.2 Å.",
])
def test_words_of_approximation_hedge_the_value(text):
    q = _one_quantity(text)
    assert (q.lines, q.value, q.hedged) == (["Na D"], 4.2, True), text


def test_an_abbreviated_equivalent_width_is_not_a_line_width():
    assert [c.quantity for c in _quantities("Na D equiv. width 4.2 Å.")] == ["ew"]


@pytest.mark.parametrize("text, first, relation", [
    # the comparative before both lines, each after a preposition
    ("The EW is larger for Ca II K than for Hδ.", "Ca II K", ">"),
    ("The equivalent width is smaller in Hδ than in Ca II K.", "H-delta", "<"),
    # above / below between the two lines' widths
    ("Ca II K's EW is well above Hδ's.", "Ca II K", ">"),
    ("Hδ's equivalent width lies below that of Ca II K.", "H-delta", "<"),
    # a factor with no "that of", an -ing verb of outdoing
    ("Ca II K's EW is about three times Hδ's.", "Ca II K", ">"),
    ("Hδ's EW is roughly half of Ca II K's.", "H-delta", "<"),
    ("Ca II K has an EW exceeding that of Hδ.", "Ca II K", ">"),
])
def test_two_lines_ordered_around_a_comparative_or_a_factor(text, first, relation):
    c = [c for c in extract_claims(text) if c.kind == "comparison"]
    assert len(c) == 1 and (c[0].lines[0], c[0].relation) == (first, relation), [x.to_dict() for x in c]


@pytest.mark.parametrize("text", [
    "Hδ was measured twice, Ca II K once, in equivalent width.",  # a count, not a factor
    "The EW of Hδ is below 3 Å, and Ca II K is strong.",  # a bound, not an order
])
def test_a_factor_or_a_bound_is_not_an_order(text):
    assert not [c for c in extract_claims(text) if c.kind == "comparison"], text


@pytest.mark.parametrize("text, hedged", [
    ("8 Å ≲ EW(Ca II K) ≲ 11 Å.", False),
    ("The Ca II K EW: 8 Å (min) – 11 Å (max).", False),
    ("Ca II K has an EW between 8 Å (lower) and 11 Å (upper).", False),
    ("The Ca II K EW lies inside 8-11 Å.", False),
    ("Ca II K EW (range) 8-11 Å.", False),
    ("The Ca II K EW is greater than 8 Å yet below 11 Å.", False),
    ("The Ca II K EW is roughly in the 8-11 Å interval.", True),
    ("The Ca II K EW is 9.5 ± 1.5 Å.", False),  # a value and its uncertainty: the range it allows
])
def test_ranges_with_labelled_ends_about_relations_and_uncertainties(text, hedged):
    q = _one_quantity(text)
    assert (q.lines, q.value, q.spread, q.relation, q.hedged) == (["Ca II K"], 9.5, 1.5, "=", hedged), text


@pytest.mark.parametrize("text", [
    # two negations that assert, and negation words about the method or the writer, not the line
    "One cannot miss the strong Hγ absorption.",
    "There is nothing unusual about the Hγ absorption.",
    "The Gaussian fit fails to converge for Hγ.",
    "Hγ cannot be fitted well.",
    "Hγ is not absent.",
])
def test_negation_words_that_deny_no_line(text):
    assert not [c for c in extract_claims(text) if c.kind == "feature" and c.polarity < 0], text


def test_nowhere_near_as_strong_is_an_order():
    c = [c for c in extract_claims("Hγ is nowhere near as strong as Hβ.") if c.kind == "comparison"]
    assert [(x.lines, x.relation) for x in c] == [(["H-gamma", "H-beta"], "<")]


@pytest.mark.parametrize("text", [
    "The Hβ EW inside a 20 Å window is 3 Å.",
    "The EW of Hβ in the window 4840-4880 Å is 3 Å.",
    "The Hβ EW within a 40 Å region is 3 Å.",
    "The Hβ EW, measured in a 20 Å wide box, is 3 Å.",
])
def test_a_stretch_of_spectrum_is_not_the_value(text):
    # the window an EW is measured in is no value of it (the value after it may go unread)
    assert all(q.value == 3.0 for q in _quantities(text)), [q.to_dict() for q in _quantities(text)]
