"""Cross-validation of the rules policy's thresholds (agents/vet/calibrate.py) on real spectra: folds
partition the labelled set without leaking, a threshold chosen on training folds is the one applied
to the held-out fold, the vectorised rule decides exactly as the policy does, and the MK Ca II K
criterion behaves as the classification literature says."""
import statistics

import numpy as np
import pytest

import kb
from agents.tools.measure import Arrays
from agents.vet import calibrate as cal
from agents.vet.evidence import decide


@pytest.fixture(scope="module")
def task_a_set(read_manifest_spectra):
    task = kb.task("a")
    pairs = [(r, s) for r, s in read_manifest_spectra("LAMOST-LRS", r"^(A|F|G|K|M|dM)\d")
             if cal.truth(task, r) is not None]
    rows = [r for r, _ in pairs]
    arrays = [Arrays.from_spectrum(s) for _, s in pairs]
    y = np.array([cal.truth(task, r) for r in rows], bool)
    return task, rows, arrays, y, cal.features(task, arrays)


def test_folds_partition_the_set_stratified_and_deterministic(task_a_set):
    _, _, _, y, _ = task_a_set
    folds = cal.stratified_folds(y, 5, seed=3)
    flat = np.concatenate(folds)
    assert sorted(flat.tolist()) == list(range(y.size))  # every spectrum tested exactly once
    positives = [int(y[f].sum()) for f in folds]
    assert max(positives) - min(positives) <= 1 and sum(positives) == int(y.sum())
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    assert all(np.array_equal(a, b) for a, b in zip(folds, cal.stratified_folds(y, 5, seed=3), strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(folds, cal.stratified_folds(y, 5, seed=4), strict=True))


def test_thresholds_come_from_training_folds_only_and_are_applied_unchanged(task_a_set):
    task, rows, _, y, feats = task_a_set
    guard = cal.keep_no_mask(task, rows)
    res = cal.cross_validate(task, feats, y, 5, seed=0, keep_no=guard)
    assert cal.tunables(task), "task a declares no calibrated threshold"
    for test, chosen in zip(res.folds, res.thresholds, strict=True):
        train = np.setdiff1d(np.arange(y.size), test)
        # scramble everything the held-out fold holds: labels, guard and measurements
        y2, guard2 = y.copy(), guard.copy()
        y2[test], guard2[test] = ~y2[test], True
        feats2 = {k: v.copy() for k, v in feats.items()}
        for v in feats2.values():
            v[test] = np.random.default_rng(0).uniform(-5, 50, test.size)
        assert cal.fit(task, {k: v[train] for k, v in feats2.items()}, y2[train], guard2[train]) == chosen
        for t in cal.tunables(task):  # inside the physically bounded grid
            assert t.grid[0] <= chosen[t.key] <= t.grid[-1]
        applied = cal.predict(cal.with_thresholds(task, chosen), {k: v[test] for k, v in feats.items()})
        assert np.array_equal(res.predicted[test], applied)
    assert res.f1 == cal.f1_score(y, res.predicted)


def test_vectorised_rule_decides_like_the_policy(task_a_set):
    task, _, arrays, _, feats = task_a_set
    for chosen in ({}, {t.key: float(t.grid[0]) for t in cal.tunables(task)},
                   {t.key: float(t.grid[-1]) for t in cal.tunables(task)}):
        variant = cal.with_thresholds(task, chosen)
        fast = cal.predict(variant, feats)
        slow = np.array([decide(variant, cal.measurements(variant, a)).answer == "YES" for a in arrays])
        assert np.array_equal(fast, slow)
    # the grid's two ends must answer differently somewhere, or the calibration tunes nothing
    loose = cal.predict(cal.with_thresholds(task, {t.key: float(t.grid[0]) for t in cal.tunables(task)}), feats)
    strict = cal.predict(cal.with_thresholds(task, {t.key: float(t.grid[-1]) for t in cal.tunables(task)}), feats)
    assert not np.array_equal(loose, strict)


def test_kb_thresholds_lie_on_their_grids_and_the_guard_is_kept():
    for task in kb.tasks().values():
        for t in cal.tunables(task):
            group, n = t.key.split(".")
            value = float(task["decision"][group][int(n)]["value"])
            assert t.source and t.grid[0] <= t.start <= t.grid[-1]
            assert np.isclose(t.grid, value).any(), f"{task['id']} {t.key}: {value} is not a grid point"


def test_fit_never_admits_a_guarded_spectrum(task_a_set):
    task, rows, _, y, feats = task_a_set
    guard = cal.keep_no_mask(task, rows)
    assert guard.any()
    chosen = cal.fit(task, feats, y, guard)
    assert not np.any(cal.predict(cal.with_thresholds(task, chosen), feats) & guard)


def test_ca_k_to_h_epsilon_ratio_rises_from_early_a_through_late_a_to_f(task_a_set):
    """MK (Jaschek & Jaschek 1987 ch. 10; Gray & Corbally 2009 ch. 5): K grows against H + H-epsilon
    from A0 to F0."""
    _, rows, _, _, feats = task_a_set
    ratio = feats["cak_hhe_ratio"]

    def median(prefix):
        vals = [v for r, v in zip(rows, ratio, strict=True) if r["subclass"][:2] in prefix and not np.isnan(v)]
        assert len(vals) >= 5, prefix
        return statistics.median(vals)

    early_a, late_a = median({f"A{i}" for i in range(5)}), median({f"A{i}" for i in range(5, 10)})
    early_f = median({f"F{i}" for i in range(5)})
    assert early_a < late_a < early_f


def test_ca_k_to_h_delta_ratio_rises_and_separates_late_a_from_early_f_better(task_a_set):
    """K against a pure hydrogen line (Jaschek & Jaschek 1987 ch. 10: hydrogen falls from A2, Ca II
    rises): it grows from early A through late A to early F, and ranks late-A below early-F stars more
    often than K against H + H-epsilon, whose Ca II H grows with K (the reason task a adds it)."""
    _, rows, _, _, feats = task_a_set

    def values(key, prefixes):
        return [v for r, v in zip(rows, feats[key], strict=True) if r["subclass"][:2] in prefixes and not np.isnan(v)]

    early_a, late_a = {f"A{i}" for i in range(5)}, {f"A{i}" for i in range(5, 10)}
    early_f = {f"F{i}" for i in range(5)}
    medians = [statistics.median(values("cak_hdelta_ratio", p)) for p in (early_a, late_a, early_f)]
    assert medians == sorted(medians) and len(set(medians)) == 3

    def ordered_share(key):  # share of (late A, early F) pairs with the A star lower (ties count half)
        a, f = values(key, late_a), values(key, early_f)
        assert len(a) >= 5 and len(f) >= 5
        return sum((x < y) + 0.5 * (x == y) for x in a for y in f) / (len(a) * len(f))

    assert ordered_share("cak_hdelta_ratio") > ordered_share("cak_hhe_ratio")
