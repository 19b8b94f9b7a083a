"""Task a on late-A stars (issue 20, item 4), on the shared corpus's real LAMOST spectra: A5-A9 stars
are answered YES and F0-F4 NO by the rules policy's decision, also with each survey release held out
of the calibration, and the thresholds in kb/tasks/a.yaml are the ones every release fold chooses.

Physics (Gray & Corbally 2009 ch. 5; Jaschek & Jaschek 1987 ch. 10): the Balmer lines peak near A2 and
weaken through late A into F, while Ca II K grows; at A9/F0 the hydrogen lines are alike and K (with
the metals) tells the types apart."""
import statistics

import numpy as np
import pytest

import kb
from agents.tools.measure import Arrays
from agents.vet import calibrate as cal
from agents.vet.evidence import evaluate


def test_release_names_and_folds():
    assert cal.release("LAMOST-LRS DR8") == cal.release("LAMOST-MRS DR8") == "LAMOST DR8"
    assert cal.release("LAMOST-LRS") == "LAMOST (release not stated)"
    assert cal.release("SDSS DR18 (legacy spec)") == cal.release("SDSS-III BOSS (commissioning)") == "SDSS"
    assert cal.release("DESI EDR (fuji)") == "DESI"
    folds = cal.release_folds(["b", "a", "b", "c", "a"])
    assert [f.tolist() for f in folds] == [[1, 4], [0, 2], [3]]


def test_holds_across_means_optimal_on_every_folds_training_part():
    def toy(value):
        leaf = {"measure": "x", "op": ">=", "value": value, "calibrate": {"start": 4, "grid": [0, 10, 1]}}
        return {"decision": {"require": [leaf]}}

    feats = {"x": np.array([1.0, 2, 6, 7, 1, 3, 8, 9])}
    y = np.array([0, 0, 1, 1, 0, 0, 1, 1], bool)
    folds = cal.release_folds(list("aaaabbbb"))
    assert cal.holds_across(toy(5), feats, y, folds) == [True, True]  # optimal on 3-6 and on 4-8
    assert cal.holds_across(toy(3), feats, y, folds) == [False, True]  # admits the 3 of release b
    assert cal.holds_across(toy(8), feats, y, folds) == [True, False]  # loses the 6 and 7 of release a


@pytest.fixture(scope="module")
def corpus_a(read_manifest_spectra):
    """Every labelled spectrum of task a in the corpus (all surveys: the release folds need them all)."""
    task = kb.task("a")
    pairs = [(r, s) for r, s in read_manifest_spectra(".", ".") if cal.truth(task, r) is not None]
    rows = [r for r, _ in pairs]
    arrays = [Arrays.from_spectrum(s) for _, s in pairs]
    return task, rows, arrays, np.array([cal.truth(task, r) for r in rows], bool), cal.features(task, arrays)


def _select(rows, pattern):
    return np.array([r["survey"].startswith("LAMOST") and r["subclass"][:2] in pattern for r in rows], bool)


LATE_A = {f"A{i}" for i in range(5, 10)}
EARLY_A = {f"A{i}" for i in range(5)}
EARLY_F = {f"F{i}" for i in range(5)}


def test_late_a_answered_yes_and_early_f_no_by_the_policy(corpus_a):
    task, rows, arrays, _, _ = corpus_a
    late, early_f = _select(rows, LATE_A), _select(rows, EARLY_F)
    assert late.sum() >= 10 and early_f.sum() >= 10
    answers = np.array([evaluate(task, a)[1].answer == "YES" if (late[i] or early_f[i]) else False
                        for i, a in enumerate(arrays)])
    # one A7III measures as an F star by every criterion (K/H-delta 0.82, Balmer 5.8 A): at most one miss
    assert answers[late].sum() >= late.sum() - 1, [rows[i]["file"] for i in np.flatnonzero(late & ~answers)]
    assert not answers[early_f].any(), [rows[i]["file"] for i in np.flatnonzero(early_f & answers)]


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the whole corpus: minutes on a busy 2-core machine
def test_late_a_answered_yes_with_their_release_held_out(corpus_a):
    task, rows, _, y, feats = corpus_a
    groups = [cal.release(r["survey"]) for r in rows]
    folds = cal.release_folds(groups)
    assert {"LAMOST DR1", "LAMOST DR5", "LAMOST DR7", "LAMOST DR8"} <= set(groups)
    guard = cal.keep_no_mask(task, rows)
    cv = cal.cross_validate(task, feats, y, keep_no=guard, folds=folds)
    late, early_f = _select(rows, LATE_A), _select(rows, EARLY_F)
    assert cv.predicted[late].sum() >= late.sum() - 1
    assert not cv.predicted[early_f].any()
    assert cv.f1 >= 0.85
    # a threshold is kept only where it holds across folds: every release fold chose the file's values
    # (so they are F1-optimal on every fold's training part, what `calibrate.holds_across` checks)
    own = {t.key: float(task["decision"][t.key.split(".")[0]][int(t.key.split(".")[1])]["value"])
           for t in cal.tunables(task)}
    assert all(chosen == own for chosen in cv.thresholds), cv.thresholds


def test_the_starts_sit_between_late_a_and_f_as_the_physics_says(corpus_a):
    """Late A: Balmer lines weaker and K/H-delta higher than early A, but K/H-delta still below the
    veto's start and the Balmer lines above the gate's start; early F the other side of the K veto,
    mid-F (F5-F9) below the Balmer gate."""
    task, rows, _, _, feats = corpus_a
    starts = {t.measure: t.start for t in cal.tunables(task)}

    def median(key, pattern):
        vals = [v for v, s in zip(feats[key], _select(rows, pattern), strict=True) if s and not np.isnan(v)]
        assert len(vals) >= 5, (key, pattern)
        return statistics.median(vals)

    balmer, k_h = "balmer_ew_mean", "cak_hdelta_ratio"
    assert median(balmer, EARLY_A) > median(balmer, LATE_A) > starts[balmer] > median(balmer, {f"F{i}" for i in range(5, 10)})
    assert median(k_h, EARLY_A) < median(k_h, LATE_A) < starts[k_h] < median(k_h, EARLY_F)
