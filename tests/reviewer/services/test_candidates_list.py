"""The z tab's candidate list (issue 46 item 3/7): the survey pipeline's z and class are a row of their own
even when the agent's answer is near them, the answer names the hypothesis it stands for (hypothesis 0 is
never dropped), and each hypothesis carries FORMA's delta-chi2 (score = 100 / (1 + delta-chi2))."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from reviewer.services.candidates import redshift_candidates


def item(hyps, *, answer=("GALAXY", 0.3689), pipeline=("GALAXY", 0.36874)):
    steps = [SimpleNamespace(tool_name="redshift_hypotheses", kind="tool_result", data={"hypotheses": hyps})]
    return SimpleNamespace(agent_label={"type": answer[0], "z": answer[1]},
                           trajectory=SimpleNamespace(steps=steps),
                           record={"pipeline_class": pipeline[0], "pipeline_z": pipeline[1]})


HYPS = [{"idx": 0, "z": 0.36885, "class": "GALAXY", "score": 100.0, "chi2": 9000.0, "source": "template"},
        {"idx": 1, "z": 1.2, "class": "QSO", "score": 1.0, "chi2": 9900.0, "source": "template"},
        {"idx": 2, "z": 0.5, "class": "GALAXY", "score": 50.0, "chi2": 9100.0, "delta_chi2": 1.0, "source": "template"},
        {"idx": 3, "z": 0.9, "class": "GALAXY", "score": 0.8, "source": "lines", "matched": ["H-alpha"]}]


def test_the_pipeline_is_its_own_row_even_near_the_answer():
    cands = redshift_candidates(item(HYPS))
    pipeline = [c for c in cands if c["source"] == "survey pipeline"]
    assert len(pipeline) == 1 and pipeline[0]["z"] == pytest.approx(0.36874)
    assert len({c["key"] for c in cands}) == len(cands)  # keys stay unique


def test_the_answer_names_the_hypothesis_it_stands_for():
    cands = redshift_candidates(item(HYPS))
    assert cands[0]["source"].startswith("agent's answer") and "hypothesis 0" in cands[0]["source"]
    assert cands[0]["score"] == 100.0


def test_each_template_hypothesis_carries_its_delta_chi2_a_line_match_none():
    by_z = {round(c["z"], 2): c for c in redshift_candidates(item(HYPS)) if c["source"] != "survey pipeline"}
    assert by_z[0.37]["dchi2"] == pytest.approx(0.0)  # from the score, 100 / (1 + delta-chi2)
    assert by_z[0.5]["dchi2"] == pytest.approx(1.0)  # as recorded
    assert by_z[1.2]["dchi2"] == pytest.approx(99.0)
    assert by_z[0.9]["dchi2"] is None
