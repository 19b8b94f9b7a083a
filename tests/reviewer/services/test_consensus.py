import pytest

from reviewer.services.consensus import (
    DZ_MAX,
    QUALITY_CONFLICT,
    agent_label,
    dz_over_1pz,
    labels_agree,
    merge_vi_labels,
    verdict_consensus,
)


def vi(reviewer, quality=4, z=None, spectype=None, issues="", comment=None):
    return {"reviewer": reviewer, "quality": quality, "z": z, "spectype": spectype, "issues": issues, "comment": comment}


def test_agreeing_inspectors_merge_to_means_and_unions():
    merge = merge_vi_labels([vi("ann", 4, 1.0000, "QSO", "R", "BAL"), vi("bob", 3, 1.0050, "qso", "S", "broad")])
    assert merge.status == "merged" and not merge.reasons
    assert merge.best_z == pytest.approx(1.0025)
    assert merge.best_quality == pytest.approx(3.5)
    assert merge.best_spectype == "QSO"
    assert merge.best_issues == "RS"
    assert merge.comments == "ann: BAL | bob: broad"
    assert merge.n_vi == 2 and merge.reviewers == ["ann", "bob"]


def test_blank_vi_fields_mean_the_pipeline_is_right():
    merge = merge_vi_labels([vi("ann", 4), vi("bob", 4, z=0.5001)], pipeline_z=0.5, pipeline_spectype="galaxy")
    assert merge.status == "merged"
    assert merge.best_spectype == "GALAXY"
    assert merge.best_z == pytest.approx(0.50005)


def test_dz_threshold_is_strict_and_normalised_by_one_plus_z():
    z1 = 2.0
    just_inside = z1 + 0.0032 * (1 + z1)
    just_outside = z1 + 0.0034 * (1 + z1)
    assert merge_vi_labels([vi("a", 4, z1, "QSO"), vi("b", 4, just_inside, "QSO")]).status == "merged"
    out = merge_vi_labels([vi("a", 4, z1, "QSO"), vi("b", 4, just_outside, "QSO")])
    assert out.status == "conflict" and out.best_z is None
    assert any("dz/(1+z)" in r for r in out.reasons)
    assert dz_over_1pz(z1, just_outside) > DZ_MAX


def test_quality_spread_over_one_is_a_conflict_with_999():
    out = merge_vi_labels([vi("a", 4, 0.1, "GALAXY"), vi("b", 2, 0.1, "GALAXY")])
    assert out.status == "conflict" and out.best_quality == QUALITY_CONFLICT
    assert merge_vi_labels([vi("a", 4, 0.1, "GALAXY"), vi("b", 3, 0.1, "GALAXY")]).status == "merged"


def test_different_spectype_or_missing_quality_is_a_conflict():
    out = merge_vi_labels([vi("a", 4, 0.1, "GALAXY"), vi("b", 4, 0.1, "STAR")])
    assert out.status == "conflict" and "spectype" in out.reasons[0]
    out = merge_vi_labels([vi("a", None, 0.1, "GALAXY"), vi("b", 4, 0.1, "GALAXY")])
    assert out.status == "conflict" and "quality not set by a" in out.reasons[0]


def test_single_and_empty():
    assert merge_vi_labels([]).status == "empty"
    one = merge_vi_labels([vi("a", 1, 0.3, "QSO")])
    assert one.status == "single" and one.best_quality == 1 and one.n_vi == 1


def review(who, action, label=None):
    return {"reviewer": who, "action": action, "label": label}


def test_two_approvals_agree_on_the_agents_answer():
    out = verdict_consensus([review("a", "approve"), review("b", "approve")], {"answer": "YES"})
    assert out.status == "agreed" and out.action == "approve" and out.label == {"answer": "YES"}


def test_override_matching_the_agent_agrees_with_an_approval():
    out = verdict_consensus([review("a", "approve"), review("b", "override", {"answer": "yes"})], {"answer": "YES"})
    assert out.status == "agreed" and out.action == "override"


def test_approve_against_override_to_the_other_answer_conflicts():
    out = verdict_consensus([review("a", "approve"), review("b", "override", {"answer": "NO"})], {"answer": "YES"})
    assert out.is_conflict and out.action is None
    assert out.reasons == ["label differs: a=YES vs b=NO"]


def test_reject_against_approve_conflicts_and_two_rejects_agree():
    assert verdict_consensus([review("a", "reject"), review("b", "approve")], {"answer": "NO"}).is_conflict
    both = verdict_consensus([review("a", "reject"), review("b", "reject")], {"answer": "NO"})
    assert both.status == "agreed" and both.action == "reject" and both.label is None


def test_verify_overrides_compare_type_and_z():
    own = {"type": "QSO", "z": 2.0}
    close = verdict_consensus([review("a", "override", {"type": "GALAXY", "z": 0.5}),
                               review("b", "override", {"class": "galaxy", "redshift": 0.5010})], own)
    assert close.status == "agreed" and close.label["type"] == "GALAXY"
    far = verdict_consensus([review("a", "override", {"type": "GALAXY", "z": 0.5}),
                             review("b", "override", {"type": "GALAXY", "z": 0.52})], own)
    assert far.is_conflict
    assert not labels_agree({"type": "QSO", "z": 1.0}, {"type": "GALAXY", "z": 1.0})


def test_cleared_reviews_do_not_count():
    out = verdict_consensus([review("a", "clear"), review("b", "approve")], {"answer": "YES"})
    assert out.status == "single" and out.n_reviews == 1


def test_agent_label_from_columns_and_outcome():
    assert agent_label("wd", None, None, {"prediction": "no"}) == {"answer": "NO"}
    assert agent_label("wd", "YES", None, {}) == {"answer": "YES"}
    assert agent_label("verify", None, None, {"brief": {"type": "QSO", "redshift": 2.9197}}) == {"type": "QSO", "z": 2.9197}
    assert agent_label("wd", None, None, {"prediction": None}) == {}
