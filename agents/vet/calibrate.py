"""Cross-validated thresholds for the rules policy (issue 9, item 5).

A decision leaf in kb/tasks/<id>.yaml may carry `calibrate: {start, grid: [lo, hi, step], source}`:
its threshold is then chosen, on training spectra only, from that physically bounded grid (the
bounds and the MK-based start come from the classification literature cited beside it). The rest of
the rule stays fixed. Choosing = maximising positive-class F1 on the training labels; ties go to the
grid point nearest the start, so the data move a threshold away from the physics only when they must.
`decision.calibration.keep_no` names training spectra every candidate must answer NO (task a: the
early-F stars), so a threshold never buys recall with the contaminant the criterion exists to reject.

Measurements do not depend on thresholds, so they are made once per spectrum (`features`) and the
decision rule is re-evaluated vectorised (`predict`), with the same semantics as
`agents.vet.evidence.decide`: values compared as quoted (2 decimals), an unmeasurable value makes its
leaf false. Folds are stratified by label with a fixed seed, or one per survey release
(`release`, `release_folds`: leave-one-release-out, issue 20). A threshold in a task file must hold
across folds (`holds_across`: F1-optimal on every fold's training part; tests/agents/vet/test_late_a.py
checks that every release fold chooses task a's). Pure numpy; no scikit-learn.
"""
from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from agents.tools.judgeable import assess
from agents.tools.measure import Arrays
from agents.vet.evidence import OPS, Measurement, derive, measure_window, quote


@dataclass(frozen=True)
class Tunable:
    key: str  # "require.0" / "veto.2": where the leaf sits in the decision rule
    measure: str
    start: float
    grid: np.ndarray
    source: str


@dataclass
class CVResult:
    folds: list[np.ndarray]  # test indices per fold
    thresholds: list[dict[str, float]]  # chosen on each fold's training part
    predicted: np.ndarray  # out-of-fold YES (bool) per spectrum
    f1: float


def truth(task: dict, row: dict) -> bool | None:
    """The task's `labels` rule on manifest columns (class, subclass, survey): True/False/None."""
    fields = {"class": row.get("class", ""), "subclass": row.get("subclass", ""), "survey": row.get("survey", "")}
    rules = task.get("labels") or {}
    for side, value in (("positive", True), ("negative", False)):
        rule = rules.get(side)
        if rule and all(re.search(pat, fields.get(k) or "") for k, pat in rule.items()):
            return value
    return None


def measurements(task: dict, arrays: Arrays) -> dict[str, Measurement]:
    values: dict[str, Measurement] = {}
    for win in task["windows"]:
        for m in measure_window(task, win["id"], arrays):
            values[m.id] = m
    derive(task, values)
    return values


JUDGEABLE = "_judgeable"  # the features' column that says whether the policy answers at all


def features(task: dict, arrays_list: list[Arrays]) -> dict[str, np.ndarray]:
    """measure id -> values over the spectra, rounded as quoted (NaN = not measurable); and JUDGEABLE:
    1 where agents.tools.judgeable answers the task, 0 where it refuses it (never YES, as in vet_spectrum)."""
    rows = [measurements(task, a) for a in arrays_list]
    ids = list(rows[0]) if rows else []
    out = {i: np.array([np.nan if r[i].value is None else float(quote(r[i].value)) for r in rows]) for i in ids}
    if arrays_list:
        out[JUDGEABLE] = np.array([1.0 if assess(a, task).judgeable else 0.0 for a in arrays_list])
    return out


def _leaf_groups(task: dict):
    rule = task["decision"]
    for group in ("require", "veto"):
        for n, crit in enumerate(rule.get(group, [])):
            yield f"{group}.{n}", crit


def tunables(task: dict) -> list[Tunable]:
    out = []
    for key, crit in _leaf_groups(task):
        cal = crit.get("calibrate")
        if cal:
            lo, hi, step = (float(x) for x in cal["grid"])
            # round: a grid of floats must hold exactly the 2-decimal values a threshold is quoted with
            grid = np.round(np.arange(lo, hi + step / 2, step), 2)
            out.append(Tunable(key, crit["measure"], float(cal["start"]), grid, cal.get("source", "")))
    return out


def with_thresholds(task: dict, chosen: dict[str, float]) -> dict:
    """A copy of the task whose calibrated leaves carry the chosen thresholds (the decision rule is
    copied deeply, the rest shared: `fit` makes one per grid point)."""
    out = {**task, "decision": copy.deepcopy(task["decision"])}
    for key, value in chosen.items():
        group, n = key.split(".")
        out["decision"][group][int(n)]["value"] = float(value)
    return out


def _holds(crit: dict, feats: dict[str, np.ndarray], n: int) -> np.ndarray:
    if "all" in crit:
        return np.logical_and.reduce([_holds(c, feats, n) for c in crit["all"]])
    if "any" in crit:
        return np.logical_or.reduce([_holds(c, feats, n) for c in crit["any"]])
    x = feats.get(crit["measure"], np.full(n, np.nan))
    with np.errstate(invalid="ignore"):
        return ~np.isnan(x) & OPS[crit["op"]](x, float(crit["value"]))


def predict(task: dict, feats: dict[str, np.ndarray]) -> np.ndarray:
    """YES (True) per spectrum: every `require` holds and no `veto` fires (evidence.decide)."""
    n = len(next(iter(feats.values())))
    rule = task["decision"]
    yes = feats[JUDGEABLE] > 0 if JUDGEABLE in feats else np.ones(n, bool)
    for crit in rule.get("require", []):
        yes &= _holds(crit, feats, n)
    for crit in rule.get("veto", []):
        yes &= ~_holds(crit, feats, n)
    return yes


def f1_score(y: np.ndarray, p: np.ndarray) -> float:
    tp = int(np.sum(y & p))
    denom = 2 * tp + int(np.sum(p & ~y)) + int(np.sum(y & ~p))
    return 2 * tp / denom if denom else float("nan")


def stratified_folds(y: np.ndarray, k: int = 5, seed: int = 0) -> list[np.ndarray]:
    """k disjoint test-index sets covering every spectrum; each label dealt round-robin after a
    seeded shuffle, so every fold holds its share of the (few) positives."""
    rng = np.random.default_rng(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    offset = 0
    for label in (True, False):
        idx = rng.permutation(np.flatnonzero(y == label))
        for j, i in enumerate(idx):
            folds[(offset + j) % k].append(int(i))
        offset += len(idx)  # the next label continues where this one stopped: fold sizes stay even
    return [np.sort(np.array(f, dtype=int)) for f in folds]


def release(survey: str) -> str:
    """The survey release a manifest `survey` names: one fold of the leave-one-release-out CV. LAMOST
    by data release (LRS and MRS of one release together: one pipeline run), SDSS legacy and BOSS as
    one survey, DESI as one, anything else (a stellar library) by its name without the parenthesis."""
    if survey.startswith("LAMOST"):
        m = re.search(r"\bDR\d+", survey)
        return f"LAMOST {m.group(0)}" if m else "LAMOST (release not stated)"
    for name in ("SDSS", "DESI"):
        if survey.startswith(name):
            return name
    return survey.split(" (")[0]


def release_folds(groups: list[str]) -> list[np.ndarray]:
    """Test indices per distinct group (sorted by name): each release held out once."""
    groups = np.asarray(groups)
    return [np.flatnonzero(groups == g) for g in sorted(set(groups.tolist()))]


def keep_no_mask(task: dict, rows: list[dict]) -> np.ndarray:
    """Spectra the calibration must keep at NO (`decision.calibration.keep_no`, a rule on manifest
    columns like `labels`): the contaminant an A/F boundary must not admit."""
    rule = (task["decision"].get("calibration") or {}).get("keep_no")
    if not rule:
        return np.zeros(len(rows), bool)
    return np.array([all(re.search(p, r.get(k) or "") for k, p in rule.items()) for r in rows], bool)


def fit(task: dict, feats: dict[str, np.ndarray], y: np.ndarray,
        keep_no: np.ndarray | None = None) -> dict[str, float]:
    """The grid point with the best F1 on (feats, y) among those answering NO to every `keep_no`
    spectrum; ties -> nearest the physics-based starting values. Falls back to the starts if none qualifies."""
    tune = tunables(task)
    if not tune:
        return {}
    guard = np.zeros(len(y), bool) if keep_no is None else np.asarray(keep_no, bool)
    best, best_key = {t.key: t.start for t in tune}, None
    for combo in itertools.product(*(t.grid for t in tune)):
        chosen = {t.key: float(v) for t, v in zip(tune, combo, strict=True)}
        yes = predict(with_thresholds(task, chosen), feats)
        if np.any(yes & guard):
            continue
        score = f1_score(y, yes)
        score = -1.0 if np.isnan(score) else score
        # distance from the physics, each threshold in units of its own grid span
        dist = sum(abs(v - t.start) / max(t.grid[-1] - t.grid[0], 1e-9) for t, v in zip(tune, combo, strict=True))
        key = (-round(score, 9), dist)
        if best_key is None or key < best_key:
            best, best_key = chosen, key
    return best


def _subset(feats: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    return {k: v[idx] for k, v in feats.items()}


def cross_validate(task: dict, feats: dict[str, np.ndarray], y: np.ndarray, k: int = 5, seed: int = 0,
                   keep_no: np.ndarray | None = None, folds: list[np.ndarray] | None = None) -> CVResult:
    """Out-of-fold predictions: thresholds fitted on the other folds, applied unchanged to the held-out
    one. `folds` (test indices, e.g. `release_folds`) replaces the k stratified folds."""
    y = np.asarray(y, bool)
    guard = np.zeros(y.size, bool) if keep_no is None else np.asarray(keep_no, bool)
    folds = stratified_folds(y, k, seed) if folds is None else folds
    predicted = np.zeros(y.size, bool)
    chosen_per_fold = []
    for test in folds:
        train = np.setdiff1d(np.arange(y.size), test)
        chosen = fit(task, _subset(feats, train), y[train], guard[train])
        predicted[test] = predict(with_thresholds(task, chosen), _subset(feats, test))
        chosen_per_fold.append(chosen)
    return CVResult(folds, chosen_per_fold, predicted, f1_score(y, predicted))


def holds_across(task: dict, feats: dict[str, np.ndarray], y: np.ndarray, folds: list[np.ndarray],
                 keep_no: np.ndarray | None = None) -> list[bool]:
    """Per fold: do the task's own thresholds score the best F1 any grid point reaches on that fold's
    training part, without admitting a guarded spectrum? True everywhere = the deployed thresholds are
    ones every fold could have chosen, not a fit to one release."""
    y = np.asarray(y, bool)
    guard = np.zeros(y.size, bool) if keep_no is None else np.asarray(keep_no, bool)
    out = []
    for test in folds:
        train = np.setdiff1d(np.arange(y.size), test)
        sub, yt = _subset(feats, train), y[train]
        best = f1_score(yt, predict(with_thresholds(task, fit(task, sub, yt, guard[train])), sub))
        own = predict(task, sub)
        out.append(bool(not np.any(own & guard[train]) and np.isclose(f1_score(yt, own), best, equal_nan=True)))
    return out


@dataclass
class GroupScore:
    name: str
    n: int
    yes: int
    rate: float = field(default=float("nan"))  # yes / n (recall for positives)


def by_subclass(subclasses: list[str], predicted: np.ndarray, groups: dict[str, str]) -> list[GroupScore]:
    """Share answered YES per subclass group (name -> regex on the manifest subclass)."""
    out = []
    for name, pattern in groups.items():
        sel = np.array([bool(re.search(pattern, s or "")) for s in subclasses], bool)
        n, yes = int(sel.sum()), int(np.sum(predicted & sel))
        out.append(GroupScore(name, n, yes, yes / n if n else float("nan")))
    return out
