"""Pattern extraction: spans, aliases, units, frames, and what is not a claim."""
import json

import pytest

from agents.claims import Claim, ClaimResult, extract_claims, summary_text


@pytest.mark.parametrize("alias", ["H-alpha", "Halpha", "H alpha", "Hα", "Ha", "H-α"])
def test_aliases_name_the_same_line(alias):
    claims = extract_claims(f"Strong {alias} emission is present.")
    assert [c.lines for c in claims] == [["H-alpha"]]
    assert claims[0].line_kind == "emission" and claims[0].polarity == 1


def test_spans_are_offsets_into_the_source():
    text = "<think>Deep Hβ absorption at 4861 Å; no [O III] 5007 emission. The Hβ EW is about 11 Å.</think>"
    claims = extract_claims(text)
    assert claims
    for c in claims:
        assert text[c.start:c.end] == c.text
    kinds = [(c.kind, c.polarity) for c in claims]
    assert ("feature", -1) in kinds and ("quantity", 1) in kinds


def test_units_are_parsed_with_astropy():
    (c,) = [c for c in extract_claims("An emission line at 656.3 nm in the observed frame.") if c.kind == "feature"]
    assert c.wavelength == pytest.approx(6563.0) and c.frame == "observed"
    (w,) = extract_claims("Hβ FWHM ~ 2000 km/s.")
    assert w.quantity == "fwhm" and w.unit == "km/s" and w.hedged


def test_numbers_named_after_a_line_are_not_positions():
    (c,) = extract_claims("[O III] 5007 emission is strong.")
    assert c.lines == ["[O III] 5008"] and c.wavelength is None


def test_plans_and_rule_criteria_are_not_claims():
    assert extract_claims("Let me zoom into the Hα region to check for emission.") == []
    text = "Not met: strong H-alpha emission: H-alpha emission equivalent width = -4.87 (needs >= 10.00)."
    (c,) = extract_claims(text)
    assert c.kind == "measure" and c.value == -4.87  # the measured number is a claim, the criterion is not


def test_comparisons_ratios_and_redshifts():
    kinds = {c.kind: c for c in extract_claims(
        "Hβ is deeper than Hα. The Hα / Hβ flux ratio is about 4.6. The redshift is z = 0.3687.")}
    assert kinds["comparison"].lines == ["H-beta", "H-alpha"] and kinds["comparison"].relation == ">"
    assert kinds["quantity"].quantity in ("ratio", "z")
    zs = [c for c in extract_claims("The redshift is z = 0.3687.") if c.quantity == "z"]
    assert zs[0].value == 0.3687 and zs[0].decimals == 4


def test_results_round_trip_through_json():
    claim = extract_claims("No TiO bands are seen.")[0]
    result = ClaimResult(claim, "supported", 0.01, 0.02, [6100.0, 7150.0], None, "ok", step_index=3)
    back = ClaimResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back == result and isinstance(back.claim, Claim)
    assert summary_text([result, result]) == "2 supported, 0 contradicted, 0 unverifiable"
