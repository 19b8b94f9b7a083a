import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from reviewer.services.stats import (
    accuracy_vs_coverage,
    cohen_kappa,
    f1_positive,
    rater_correlations,
    rating_distributions,
    task_scores,
    verdict_kappas,
)


def ratings(rows):
    return pd.DataFrame(rows, columns=["trajectory_id", "rater", "rater_kind", "score"])


def test_distribution_counts_mean_and_cdf():
    frame = ratings([("t1", "ann", "human", 5), ("t2", "ann", "human", 3), ("t3", "ann", "human", 3),
                     ("t1", "llm:m", "llm", 2.4)])
    dist = rating_distributions(frame)
    assert dist["ann"]["counts"] == {0: 0, 1: 0, 2: 0, 3: 2, 4: 0, 5: 1}
    assert dist["ann"]["mean"] == pytest.approx(11 / 3)
    assert dist["ann"]["cdf"]["y"] == pytest.approx([0, 0, 0, 2 / 3, 2 / 3, 1])
    assert dist["llm:m"]["counts"][2] == 1 and dist["llm:m"]["rater_kind"] == "llm"


def test_spearman_over_shared_trajectories_only():
    a = [1, 2, 3, 4, 5, 0]
    b = [2, 1, 4, 3, 5, 0]
    rows = [(f"t{i}", "ann", "human", x) for i, x in enumerate(a)]
    rows += [(f"t{i}", "bob", "human", x) for i, x in enumerate(b)]
    rows += [("t99", "bob", "human", 5), ("t98", "cy", "human", 1)]  # not shared with ann
    table = rater_correlations(ratings(rows))
    pair = table[(table.rater_a == "ann") & (table.rater_b == "bob")].iloc[0]
    assert pair.n_shared == 6
    assert pair.spearman == pytest.approx(sps.spearmanr(a, b).statistic)
    lonely = table[(table.rater_a == "ann") & (table.rater_b == "cy")].iloc[0]
    assert lonely.n_shared == 0 and math.isnan(lonely.spearman)


def test_kappa_matches_the_textbook_example():
    # 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15 -> p_o .7, p_e .5, kappa .4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["x", "y"], ["x", "y"]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))  # chance agreement 1: undefined
    assert math.isnan(cohen_kappa([], []))


def test_verdict_kappas_per_pair():
    rows = [("t1", "ann", "approve"), ("t1", "bob", "approve"), ("t2", "ann", "reject"), ("t2", "bob", "approve"),
            ("t3", "ann", "override"), ("t3", "bob", "override")]
    table = verdict_kappas(pd.DataFrame(rows, columns=["trajectory_id", "reviewer", "action"]))
    row = table.iloc[0]
    assert (row.reviewer_a, row.reviewer_b, row.n_shared) == ("ann", "bob", 3)
    assert row.agreement == pytest.approx(2 / 3)
    # p_o = 2/3; p_e = (1/3*2/3) + (1/3*0) + (1/3*1/3) = 1/3 -> kappa = 0.5
    assert row.kappa == pytest.approx(0.5)


def test_f1_and_accuracy_per_task_with_macro_row():
    rows = pd.DataFrame([
        {"task": "wd", "predicted": "YES", "truth": "YES"}, {"task": "wd", "predicted": "YES", "truth": "NO"},
        {"task": "wd", "predicted": "NO", "truth": "YES"}, {"task": "wd", "predicted": "NO", "truth": "NO"},
        {"task": "a", "predicted": "YES", "truth": "YES"}, {"task": "a", "predicted": None, "truth": "NO"},
        {"task": "verify", "predicted": "QSO", "predicted_z": 2.0, "truth": "QSO", "truth_z": 2.001},
        {"task": "verify", "predicted": "QSO", "predicted_z": 2.0, "truth": "QSO", "truth_z": 2.3},
    ])
    table = task_scores(rows).set_index("task")
    assert table.loc["wd", "accuracy"] == pytest.approx(0.5) and table.loc["wd", "f1"] == pytest.approx(0.5)
    assert table.loc["a", "accuracy"] == pytest.approx(0.5) and table.loc["a", "f1"] == pytest.approx(1.0)
    assert table.loc["verify", "accuracy"] == pytest.approx(0.5) and math.isnan(table.loc["verify", "f1"])
    assert table.loc["macro", "f1"] == pytest.approx(0.75)  # over the vet tasks only
    assert table.loc["macro", "accuracy"] == pytest.approx(0.5)
    assert f1_positive(["NO"], ["NO"]) != f1_positive(["NO"], ["NO"])  # NaN: no positives at all


def test_accuracy_rises_as_coverage_falls():
    rows = pd.DataFrame(
        [{"predicted": "QSO", "truth": "QSO", "credibility": "HIGH"}] * 4
        + [{"predicted": "QSO", "truth": "GALAXY", "credibility": "HIGH"}]
        + [{"predicted": "QSO", "truth": "QSO", "credibility": "MEDIUM"}, {"predicted": "STAR", "truth": "QSO",
                                                                         "credibility": "MEDIUM"}]
        + [{"predicted": "STAR", "truth": "QSO", "credibility": "low"}, {"predicted": "QSO", "truth": "QSO",
                                                                       "credibility": None}])
    curve = accuracy_vs_coverage(rows)
    assert curve["tier"].tolist() == ["HIGH", "MEDIUM", "LOW"]
    assert curve["n_kept"].tolist() == [5, 7, 8]
    assert curve["coverage"].tolist() == pytest.approx([5 / 9, 7 / 9, 8 / 9])
    assert curve["accuracy"].tolist() == pytest.approx([4 / 5, 5 / 7, 5 / 8])
    assert curve["accuracy_tier"].tolist() == pytest.approx([0.8, 0.5, 0.0])
    assert np.all(np.diff(curve["accuracy"]) < 0)
