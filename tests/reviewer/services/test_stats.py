import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from reviewer.services.stats import (
    accuracy_vs_coverage,
    f1_positive,
    kappa,
    rater_correlations,
    rating_distributions,
    task_scores,
    verdict_kappas,
)

# The statistics take small tables of counts (what store.reviews.rating_counts, rating_pairs and
# verdict_pairs return); these tests count raw label lists into them and check against the textbook
# computation on the raw lists (scipy's, numpy's).


def counts_of(scores: dict[str, list[float]], kinds: dict[str, str] | None = None) -> pd.DataFrame:
    rows = [(rater, (kinds or {}).get(rater, "human"), value, n)
            for rater, values in scores.items() for value, n in sorted(Counter(values).items())]
    return pd.DataFrame(rows, columns=["rater", "rater_kind", "score", "n"])


def pairs_of(who: str, first: str, second: str, a: list, b: list) -> pd.DataFrame:
    rows = [(first, second, x, y, n) for (x, y), n in Counter(zip(a, b, strict=True)).items()]
    kind = "score" if who == "rater" else "action"
    return pd.DataFrame(rows, columns=[f"{who}_a", f"{who}_b", f"{kind}_a", f"{kind}_b", "n"])


def test_distribution_counts_mean_median_and_cdf():
    scores = {"ann": [5, 3, 3], "bob": [1, 4, 2, 2], "llm:m": [2.4]}
    dist = rating_distributions(counts_of(scores, {"llm:m": "llm"}))
    assert dist["ann"]["counts"] == {0: 0, 1: 0, 2: 0, 3: 2, 4: 0, 5: 1}
    assert dist["ann"]["cdf"]["y"] == pytest.approx([0, 0, 0, 2 / 3, 2 / 3, 1])
    for rater, values in scores.items():
        assert dist[rater]["n"] == len(values)
        assert dist[rater]["mean"] == pytest.approx(np.mean(values))
        assert dist[rater]["median"] == np.median(values)  # odd and even counts
    assert dist["llm:m"]["counts"][2] == 1 and dist["llm:m"]["rater_kind"] == "llm"
    assert rating_distributions(counts_of({})) == {}


def test_spearman_over_shared_trajectories_only():
    a = [1, 2, 3, 4, 5, 0, 3, 3]
    b = [2, 1, 4, 3, 5, 0, 4, 2]  # ties on both sides
    pairs = pairs_of("rater", "ann", "bob", a, b)  # bob's and cy's other scores are shared with nobody
    table = rater_correlations(pairs, ["bob", "cy", "ann"])
    assert [(r.rater_a, r.rater_b) for r in table.itertuples()] == [("ann", "bob"), ("ann", "cy"), ("bob", "cy")]
    pair = table.iloc[0]
    assert pair.n_shared == 8
    assert pair.spearman == pytest.approx(sps.spearmanr(a, b).statistic)
    assert pair.p_value == pytest.approx(sps.spearmanr(a, b).pvalue)
    lonely = table.iloc[1]
    assert lonely.n_shared == 0 and math.isnan(lonely.spearman)
    constant = rater_correlations(pairs_of("rater", "ann", "bob", [1, 2, 3], [4, 4, 4]), ["ann", "bob"])
    assert constant.iloc[0].n_shared == 3 and math.isnan(constant.iloc[0].spearman)


def test_kappa_matches_the_textbook_example():
    # 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15 -> p_o .7, p_e .5, kappa .4
    assert kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    assert kappa(np.eye(2)) == pytest.approx(1.0)
    assert math.isnan(kappa(np.array([[2]])))  # chance agreement 1: undefined
    assert math.isnan(kappa(np.zeros((0, 0))))


def test_verdict_kappas_per_pair():
    a, b = ["approve", "reject", "override"], ["approve", "approve", "override"]
    own = pd.DataFrame([(who, None, action, None, n) for who, actions in (("ann", a), ("bob", b), ("cy", ["reject"]))
                        for action, n in Counter(actions).items()], columns=["reviewer_a", "reviewer_b", "action_a",
                                                                              "action_b", "n"])
    table = verdict_kappas(pd.concat([own, pairs_of("reviewer", "ann", "bob", a, b)], ignore_index=True))
    assert [(r.reviewer_a, r.reviewer_b) for r in table.itertuples()] == [("ann", "bob"), ("ann", "cy"), ("bob", "cy")]
    row = table.iloc[0]
    assert row.n_shared == 3
    assert row.agreement == pytest.approx(2 / 3)
    # p_o = 2/3; p_e = (1/3*2/3) + (1/3*0) + (1/3*1/3) = 1/3 -> kappa = 0.5
    assert row.kappa == pytest.approx(0.5)
    assert table.iloc[1].n_shared == 0 and math.isnan(table.iloc[1].kappa)


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
    assert math.isnan(f1_positive(0, 0, 0))  # no positives at all


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
