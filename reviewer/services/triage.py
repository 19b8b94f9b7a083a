"""Triage: which queue items a reviewer should see first, and which could be accepted without a look.

Each trajectory gets a review **priority**: the estimated probability that a reviewer overrides or
rejects the agent's answer, a logistic model over signals computed from the store (none is guessed):

| signal            | value in [0, 1]                                                              |
|-------------------|------------------------------------------------------------------------------|
| `contradicted`    | 1 - 0.5**n, n = claims of its text the checker found contradicted            |
| `disagreement`    | share of the other agents' answers on the same spectrum and task that differ |
|                   | (vet backends against each other; a vet YES against the verify class where  |
|                   | the task's positive rule names a class; the verify LLM review against the    |
|                   | verify rules); 0 when there is nothing to compare with                       |
| `low_credibility` | FORMA credibility (a verify item's own; a vet item's spectrum's verify run): |
|                   | HIGH 0, MEDIUM 0.5, LOW 1, none 0.5                                          |
| `closeness`       | 1 - margin: how close the deciding measurement sat to its threshold (margin: |
|                   | relative distance capped at 1, agents.vet.evidence.decision_margin); none 0.5|
| `seen`            | 1 - 0.5**k, k = reviewers with a current verdict on it                       |

**Weights.** `priority = sigmoid(w0 + sum(w_i * signal_i))`. Before the store holds `MIN_LABELS`
human verdicts, with at least `MIN_PER_CLASS` approvals and `MIN_PER_CLASS` overrides/rejections,
the documented `DEFAULT_WEIGHTS` are used (hand-set priors: an item with no signal is wrong about 5 %
of the time; an answer right on its threshold, or a contradicted claim, brings that to about 50 %;
an already reviewed item drops). From then on the weights are fitted on the verdicts (one row per
reviewer's current verdict, y = override or reject, `seen` = reviewers who had given theirs before)
by regularised IRLS (`fit_logistic`, numpy only), the penalty pulling the signal weights toward the
defaults, so a signal the labels never exercise keeps its default weight.

**Unjudgeable items first.** A trajectory whose agent refused the spectrum as too poor to judge
(outcome status "unjudgeable", agents/tools/judgeable.py) has no answer to accept or override: only a
human can label it, so until someone has given a verdict on it its priority is UNJUDGEABLE_PRIORITY (1,
above any score the model gives; after that the score, as for any item seen); it is left out of the fit
and of the abstention estimates, which are about answers.

**Caching.** The priorities are stored per trajectory (table `triage_priority`, with their signals and
the weights used) and the queue's `order="priority"` reads them. `refresh(store)` refits and
recomputes them all (`specreview triage --refresh`); after a verdict the label service calls
`refresh(store, [trajectory_id], refit=False)`, which recomputes that item's priority (its `seen`
changed) with the stored weights.

**Calibrated abstention.** From the human verdicts, per task and agent, the accuracy of the agent's
answers as a function of priority (`accuracy_by_priority`, bootstrap intervals) and, for a target
accuracy, the priority below which unreviewed answers could be accepted without review, the share of
the unreviewed queue that is, and the accuracy it is estimated to reach (`abstention`).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from types import SimpleNamespace
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from agents.trajectory import UNJUDGEABLE
from reviewer.store.triage import SIGNAL_COLUMNS

FEATURES = ("contradicted", "disagreement", "low_credibility", "closeness", "seen")
# [intercept, contradicted, disagreement, low_credibility, closeness, seen]
DEFAULT_WEIGHTS = (-3.0, 3.0, 2.5, 1.5, 3.0, -1.0)
MIN_LABELS = 30  # human verdicts before the weights are fitted rather than the defaults used
MIN_PER_CLASS = 5  # and at least this many approvals and this many overrides / rejections
RIDGE = 1.0  # L2 penalty on the signal weights' distance from the defaults (the intercept is free)
CREDIBILITY_RISK = {"HIGH": 0.0, "MEDIUM": 0.5, "LOW": 1.0}
UNKNOWN = 0.5  # the value of a signal that cannot be computed for an item (no margin, no credibility)
ERROR_ACTIONS = ("override", "reject")
MIN_ACCEPT = 10  # labelled answers of a task and agent below a threshold before it may accept any
T = TypeVar("T")
STORE_TRIES = 3  # rounds of storing stale signals before a read computes them all instead
UNJUDGEABLE_PRIORITY = 1.0  # a refusal needs a human: above every sigmoid score (< 1)


# -- the logistic model ----------------------------------------------------------------------
def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))


def _penalised_loss(X, y, w, prior, penalty) -> float:
    z = X @ w
    # log(1 + e^z) - y z, stable for large |z|
    nll = np.sum(np.logaddexp(0.0, z) - y * z)
    return float(nll + 0.5 * np.sum(penalty * (w - prior) ** 2))


def fit_logistic(X: np.ndarray, y: np.ndarray, prior: np.ndarray | None = None, ridge: float = RIDGE,
                 max_iter: int = 100, tol: float = 1e-8) -> np.ndarray:
    """Weights of a logistic regression by Newton's method (IRLS) with an L2 penalty
    `ridge / 2 * |w[1:] - prior[1:]|**2`; column 0 of X is the intercept (unpenalised). Each Newton
    step is halved until the penalised loss decreases, so it converges on separable data too."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n_features = X.shape[1]
    prior = np.zeros(n_features) if prior is None else np.asarray(prior, dtype=float)
    penalty = np.full(n_features, float(ridge))
    penalty[0] = 0.0
    w = prior.copy()
    loss = _penalised_loss(X, y, w, prior, penalty)
    for _ in range(max_iter):
        p = sigmoid(X @ w)
        grad = X.T @ (p - y) + penalty * (w - prior)
        hess = (X * (p * (1 - p))[:, None]).T @ X + np.diag(penalty) + 1e-9 * np.eye(n_features)
        step = np.linalg.solve(hess, grad)
        scale = 1.0
        while True:
            candidate = w - scale * step
            new_loss = _penalised_loss(X, y, candidate, prior, penalty)
            if new_loss <= loss + 1e-12 or scale < 1e-6:
                break
            scale /= 2
        w, loss = candidate, new_loss
        if np.max(np.abs(scale * step)) < tol:
            break
    return w


@dataclass
class TriageModel:
    weights: np.ndarray
    kind: str = "default"  # default / fitted
    n_labels: int = 0
    n_errors: int = 0
    features: tuple[str, ...] = FEATURES
    id: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def score(self, signals: pd.DataFrame) -> np.ndarray:
        # the weighted sum column by column: a stacked matrix of 1M rows cost up to ~0.1 s to allocate
        z = np.full(len(signals), self.weights[0])
        for weight, feature in zip(self.weights[1:], self.features, strict=True):
            z += weight * signals[feature].to_numpy(float)
        return sigmoid(z)

    def priority(self, signals: pd.DataFrame) -> np.ndarray:
        """The review priority: the score, or UNJUDGEABLE_PRIORITY for a refusal nobody has labelled yet."""
        first = _refused(signals) & (signals["n_reviewers"].to_numpy(float) == 0)
        return np.where(first, UNJUDGEABLE_PRIORITY, self.score(signals))

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "n_labels": self.n_labels, "n_errors": self.n_errors,
                "weights": dict(zip(("intercept", *self.features), (round(float(w), 4) for w in self.weights),
                                    strict=True))}


def _refused(signals: pd.DataFrame) -> np.ndarray:
    """Which rows are unjudgeable refusals (signals_frame's `unjudgeable`; none in a frame without it)."""
    column = signals.get("unjudgeable")
    return np.zeros(len(signals), bool) if column is None else column.to_numpy(bool)


def default_model() -> TriageModel:
    return TriageModel(np.array(DEFAULT_WEIGHTS, dtype=float))


def fit_model(train: pd.DataFrame, min_labels: int = MIN_LABELS, min_per_class: int = MIN_PER_CLASS,
              ridge: float = RIDGE) -> TriageModel:
    """The model for training rows (the FEATURES and `error` 0/1): fitted when there are enough
    labels of both kinds, else the defaults (`info` says why)."""
    n = len(train)
    errors = int(train["error"].sum()) if n else 0
    if n < min_labels or errors < min_per_class or n - errors < min_per_class:
        model = default_model()
        model.n_labels, model.n_errors = n, errors
        model.info = {"why": f"{n} verdicts ({errors} overrides/rejections): the defaults are used until there are "
                             f"{min_labels}, with at least {min_per_class} of each kind"}
        return model
    X = np.column_stack([np.ones(n), *(train[f].to_numpy(float) for f in FEATURES)])
    w = fit_logistic(X, train["error"].to_numpy(float), prior=np.array(DEFAULT_WEIGHTS), ridge=ridge)
    return TriageModel(w, "fitted", n, errors, info={"ridge": ridge})


# -- signals ---------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _task(task_id: str) -> dict | None:
    import kb

    try:
        return kb.task(task_id)
    except KeyError:
        return None


def _positive_class(task_id: str) -> str | None:
    """The class pattern a YES of this vet task implies (its `labels.positive.class`), if any."""
    task = _task(task_id)
    return ((task or {}).get("labels") or {}).get("positive", {}).get("class")


def _agent_key(row: dict[str, Any]) -> str:
    return f"{row['agent_name']}/{row['backend']}/{row['model'] or '-'}"


def _margin_from_measurements(task_id: str, answer: str | None, measured: list[dict]) -> float | None:
    """The decision margin recomputed from the measurements a rules trajectory recorded (for
    trajectories made before the outcome carried it); None when the task's rule no longer gives the
    recorded answer from them (its thresholds changed since)."""
    from agents.vet.evidence import Measurement, decision_margin

    task = _task(task_id)
    if task is None or not measured or answer not in ("YES", "NO"):
        return None
    values = {m["id"]: Measurement(m["id"], m.get("name") or m["id"], m.get("kind") or "", m.get("value"))
              for m in measured if m.get("id")}
    margin = decision_margin(task, values)
    return float(margin["value"]) if margin.get("answer") == answer else None


def _recorded_margin(margin: Any, answer: str | None) -> float | None:
    ok = isinstance(margin, dict) and isinstance(margin.get("value"), (int, float))
    return float(margin["value"]) if ok and margin.get("answer") in (None, answer) else None


def signals_frame(items: list[dict[str, Any]], measurements: dict[str, list[dict]] | None = None) -> pd.DataFrame:
    """The signals of each trajectory (rows of `store.triage.triage_items`), indexed by trajectory id, with
    task, agent, answer, n_reviewers, the raw inputs (n_contradicted, margin, credibility) and whether
    the agent refused the spectrum as unjudgeable."""
    measurements = measurements or {}
    cols = ["task", "agent", "spectrum_id", "answer", "n_reviewers", "n_contradicted", "margin", "credibility",
            "unjudgeable", *FEATURES]
    if not items:
        return pd.DataFrame(columns=cols).rename_axis("trajectory_id")
    # plain rows, not a frame: a Python loop over 100k pandas rows costs seconds
    rows = [SimpleNamespace(**item, agent=_agent_key(item)) for item in items]
    # the newest trajectory of each agent on a spectrum and task speaks for that agent
    by_time = sorted(rows, key=lambda r: (r.created_at, r.trajectory_id))
    newest_of = {(r.spectrum_id, r.task, r.agent): r.trajectory_id for r in by_time}
    newest = [r for r in by_time if newest_of[(r.spectrum_id, r.task, r.agent)] == r.trajectory_id]
    vet_answers: dict[tuple[str, str], dict[str, str]] = {}
    verify_types: dict[str, dict[str, str]] = {}
    verify_cred: dict[str, str | None] = {}
    for row in newest:
        if row.agent_name == "verify":
            if row.answer:
                verify_types.setdefault(row.spectrum_id, {})[row.agent] = str(row.answer).upper()
            verify_cred[row.spectrum_id] = row.credibility  # newest verify run wins (sorted by time)
        elif row.answer in ("YES", "NO"):
            vet_answers.setdefault((row.spectrum_id, row.task), {})[row.agent] = row.answer
    # a verify row compares with its own spectrum's vet answers only (not a scan of all: O(n^2) at 100k)
    vet_by_spectrum: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for (sid, task_id), answers in vet_answers.items():
        vet_by_spectrum.setdefault(sid, []).append((task_id, answers))

    out = []
    for row in rows:
        compared = disagreed = 0
        if row.agent_name == "verify":
            if row.llm_disagrees:  # the verify LLM review against the verify rules
                compared += 1
                disagreed += 1
            mine = str(row.answer or "").upper()
            for agent, other in verify_types.get(row.spectrum_id, {}).items():
                if agent != row.agent and mine:
                    compared += 1
                    disagreed += other != mine
            for task_id, answers in vet_by_spectrum.get(row.spectrum_id, ()):
                pattern = _positive_class(task_id)
                if not pattern or not mine:
                    continue
                for answer in answers.values():
                    if answer == "YES":
                        compared += 1
                        disagreed += re.search(pattern, mine) is None
            credibility = row.credibility
            margin = None
        else:
            for agent, other in vet_answers.get((row.spectrum_id, row.task), {}).items():
                if agent != row.agent and row.answer in ("YES", "NO"):
                    compared += 1
                    disagreed += other != row.answer
            pattern = _positive_class(row.task)
            if row.answer == "YES" and pattern:
                for other in verify_types.get(row.spectrum_id, {}).values():
                    compared += 1
                    disagreed += re.search(pattern, other) is None
            credibility = verify_cred.get(row.spectrum_id)
            margin = _recorded_margin(row.margin, row.answer)
            if margin is None and row.trajectory_id in measurements:
                margin = _margin_from_measurements(row.task, row.answer, measurements[row.trajectory_id])
        n_contra = int(row.contradicted or 0)
        n_seen = int(row.n_reviewers or 0)
        out.append({
            "trajectory_id": row.trajectory_id, "task": row.task, "agent": row.agent,
            "spectrum_id": row.spectrum_id, "answer": row.answer, "n_reviewers": n_seen,
            "n_contradicted": n_contra, "margin": margin, "credibility": credibility,
            "unjudgeable": row.status == UNJUDGEABLE,
            "contradicted": 1.0 - 0.5 ** n_contra,
            "disagreement": disagreed / compared if compared else 0.0,
            "low_credibility": CREDIBILITY_RISK.get(str(credibility or "").upper(), UNKNOWN),
            "closeness": UNKNOWN if margin is None else 1.0 - min(max(float(margin), 0.0), 1.0),
            "seen": 1.0 - 0.5 ** n_seen,
        })
    return pd.DataFrame(out, columns=["trajectory_id", *cols]).set_index("trajectory_id")


def compute_signals(store, task: str | None = None, spectrum_ids: list[str] | None = None) -> pd.DataFrame:
    """`signals_frame` of the store's trajectories (of a task; of some spectra)."""
    items = store.triage.triage_items(task, spectrum_ids)
    missing = [r["trajectory_id"] for r in items
               if r["agent_name"] == "vet" and _recorded_margin(r["margin"], r["answer"]) is None]
    return signals_frame(items, store.triage.recorded_measurements(missing) if missing else {})


# the columns of current_signals, and those a triage report reads (no text it does not show)
SIGNALS_OUT = ("task", "agent", "spectrum_id", "answer", "n_reviewers", "n_contradicted", "margin", "credibility",
               "unjudgeable", *FEATURES)
TRIAGE_COLUMNS = ("task", "agent", "unjudgeable", *FEATURES)


def current_signals(store, task: str | None = None, columns: tuple[str, ...] | None = None, ordered: bool = True,
                    with_truth: bool = False) -> pd.DataFrame:
    """`compute_signals(store, task)`, read from the stored signals (table triage_signals) after the
    spectra whose trajectories or claim counts changed since they were stored are recomputed and
    stored (every spectrum the first time: an upgraded database fills it once). Signals depend only on
    a spectrum's own trajectories, so recomputing a spectrum's rows gives what a full pass would;
    `n_reviewers` and `seen` follow the labels and are counted in SQL on each read. Rows a concurrent
    write made stale again are not stored (put_signals): checked again, and after STORE_TRIES the signals
    are computed in full rather than read with trajectories missing. `columns`: those of the result
    wanted (all by default; `n_reviewers` always); `ordered`: in the queue's order (a report that
    aggregates needs none); `with_truth`: also `correct`, each labelled trajectory's truth (NaN: none)."""
    out = [c for c in SIGNALS_OUT if columns is None or c in columns or c in ("n_reviewers", "seen")]
    frame = _read_fresh(store, lambda: store.triage.cached_signals(task, out, ordered=ordered, with_truth=with_truth))
    if frame is None:
        full = compute_signals(store, task)[out]
        if with_truth:
            full["correct"] = store.triage.labelled_truth().set_index("trajectory_id")["correct"].reindex(full.index)
        return full
    return _with_seen(frame)[[*out, "correct"] if with_truth else out]


def _with_seen(frame: pd.DataFrame) -> pd.DataFrame:
    """Stored signals as the signals frame has them: by trajectory id, with `seen` from n_reviewers."""
    frame = frame.set_index("trajectory_id")
    frame["seen"] = 1.0 - 0.5 ** frame["n_reviewers"].to_numpy(float)
    if "margin" in frame:
        frame["margin"] = frame["margin"].astype(object).where(frame["margin"].notna(), None)
    return frame


def _read_fresh(store, read: Callable[[], T]) -> T | None:
    """`read()` of the stored signals once none is stale: the read and the staleness check in one
    snapshot (a write, or another reader's refill, between two separate reads could leave rows missing
    from a read that then looked current), the stale spectra recomputed and stored between tries. Read
    first, check after: when nothing is stale (every read but the first after a write) that is one
    check, not two (~0.2 s each at 100k trajectories). None when rows a concurrent write made stale
    again were not stored (put_signals) after STORE_TRIES rounds: the caller computes in full."""
    for attempt in range(STORE_TRIES + 1):
        with store.transaction():
            got = read()
            stale = store.triage.stale_signal_spectra()
        if not stale:
            return got
        if attempt == STORE_TRIES:
            return None
        _store_signals_of(store, stale)
    return None


def _store_signals_of(store, spectrum_ids: list[str | None]) -> int:
    """Compute the signals of these spectra's trajectories and store them (put_signals); how many rows were."""
    items = store.triage.triage_items(spectrum_ids=spectrum_ids)
    missing = [r["trajectory_id"] for r in items
               if r["agent_name"] == "vet" and _recorded_margin(r["margin"], r["answer"]) is None]
    fresh = signals_frame(items, store.triage.recorded_measurements(missing) if missing else {})
    hashes = {r["trajectory_id"]: r["inputs_hash"] for r in items}
    records = fresh.reset_index().to_dict("records")
    return store.triage.put_signals(spectrum_ids, [{**{c: _plain(r[c]) for c in SIGNAL_COLUMNS},
                                                    "trajectory_id": r["trajectory_id"],
                                                    "inputs_hash": hashes[r["trajectory_id"]]} for r in records])


def store_signals(store, spectrum_ids: set[str | None] | None) -> int:
    """Compute and store the signals of the trajectories of these spectra (a campaign's, an import's; None
    in the set: the trajectories without a spectrum; None for the set: every spectrum's) that are not
    stored as they are now; how many trajectories' signals were stored. A campaign ends with this, so
    that the first read after it (the server's start, the Stats tab, the priority queue) does not compute
    them: at 1M trajectories that read spent ~90 s on them (docs/benchmarks.md, issue 22)."""
    stored = 0
    if spectrum_ids is not None and not spectrum_ids:  # nothing of theirs to store: not even the staleness check
        return stored
    for _ in range(STORE_TRIES):  # a concurrent write may make some stale again: put_signals skips those
        stale = [sid for sid in store.triage.stale_signal_spectra() if spectrum_ids is None or sid in spectrum_ids]
        if not stale:
            break
        stored += _store_signals_of(store, stale)
    return stored


def _plain(value: Any) -> Any:
    """A value DuckDB's typed arrays take (numpy scalars as Python ones, NaN as NULL)."""
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and value != value else value


# -- labels ----------------------------------------------------------------------------------
def training_rows(history: list[dict[str, Any]], signals: pd.DataFrame) -> pd.DataFrame:
    """One row per reviewer's current verdict (store.triage.review_history): the trajectory's signals with
    `seen` as it was when the verdict was given, and `error` = override or reject."""
    answered = signals.index[~_refused(signals)]  # a verdict on a refusal says nothing about answers
    rows = [h for h in history if h["trajectory_id"] in answered]
    if not rows:
        return pd.DataFrame(columns=[*FEATURES, "error", "trajectory_id"])
    frame = signals.loc[[h["trajectory_id"] for h in rows], list(FEATURES)].reset_index()
    frame["seen"] = [1.0 - 0.5 ** int(h["n_before"]) for h in rows]
    frame["error"] = [int(h["action"] in ERROR_ACTIONS) for h in rows]
    return frame


def trajectory_truth(history: list[dict[str, Any]], resolutions: dict[str, dict[str, Any]] | None = None) -> pd.Series:
    """Per labelled trajectory: was the agent's answer right? A merger's resolution decides where
    there is one (approve = right); else the verdicts do: right when more than half approve."""
    votes: dict[str, list[bool]] = {}
    for h in history:
        votes.setdefault(h["trajectory_id"], []).append(h["action"] == "approve")
    out = {tid: sum(v) > len(v) / 2 for tid, v in votes.items()}
    for tid, res in (resolutions or {}).items():
        if res.get("action") in ("approve", "override", "reject"):
            out[tid] = res["action"] == "approve"
    return pd.Series(out, dtype=bool, name="correct")


# -- the store round trip --------------------------------------------------------------------
def stored_model(store) -> TriageModel | None:
    row = store.triage.triage_model()
    if row is None:
        return None
    if tuple(row["features"]) != FEATURES:  # weights for other signals: not usable
        return None
    return TriageModel(np.array(row["weights"], dtype=float), row["kind"], row["n_labels"], row["n_errors"],
                       id=row["id"], info=row.get("info") or {})


def fit_from_store(store, signals: pd.DataFrame | None = None) -> TriageModel:
    history = store.triage.review_history()
    if not history:  # nothing to fit on: no signals to read
        return fit_model(training_rows(history, pd.DataFrame(columns=list(FEATURES))))
    return fit_model(training_rows(history, current_signals(store) if signals is None else signals))


def refresh(store, trajectory_ids: list[str] | None = None, refit: bool = True) -> TriageModel:
    """Recompute and store the cached priorities of every trajectory, or of the given ones. With
    `refit` the weights are fitted again on the verdicts so far (or the defaults taken, before
    MIN_LABELS) and saved; without it the stored weights are used (fitted first when none are
    stored). After a verdict the label service calls `refresh(store, [trajectory_id], refit=False)`:
    one item's signals, the weights as they are."""
    if trajectory_ids is not None:
        rows = [store.trajectories.trajectory_summary(t) for t in trajectory_ids]
        spectra = sorted({r["spectrum_id"] for r in rows if r is not None and r.get("spectrum_id")})
        signals = compute_signals(store, spectrum_ids=spectra)
        signals = signals.loc[signals.index.intersection(list(trajectory_ids))]
    else:
        store.triage.clear_signals()  # a full refresh recomputes every stored signal too
        signals = current_signals(store)
    model = None if refit else stored_model(store)
    if model is None:
        model = fit_from_store(store, signals if trajectory_ids is None else None)
    if model.id is None:
        model.id = store.triage.save_triage_model(model.kind, list(model.features), [float(w) for w in model.weights],
                                                  model.n_labels, model.n_errors, model.info)
    priority = model.priority(signals)
    store.triage.put_priorities(
        [{"trajectory_id": tid, "priority": float(p), "signals": {f: round(float(signals.at[tid, f]), 4) for f in FEATURES}}
         for tid, p in zip(signals.index, priority, strict=True)], model.id)
    return model


# -- calibrated abstention -------------------------------------------------------------------
def _percentiles(samples: np.ndarray, level: float = 0.95) -> tuple[float | None, float | None]:
    """The central `level` interval of the finite samples (NaN: a resample with nothing to measure)."""
    values = samples[np.isfinite(samples)]
    if not len(values):
        return None, None
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """The Wilson score interval of a proportion (None, None for n = 0)."""
    from statistics import NormalDist

    if n <= 0:
        return None, None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo, hi = max(centre - half, 0.0), min(centre + half, 1.0)
    # exact at the ends (rounding would leave 1 - 1e-16 above an all-correct sample)
    return (0.0 if successes == 0 else float(lo)), (1.0 if successes == n else float(hi))


def _interval(boot_correct: np.ndarray, boot_n: np.ndarray, successes: int, n: int,
              level: float) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of an accuracy; where the sample has no error (or no right
    answer) every resample has none either and the bootstrap collapses to a point, so there the
    Wilson score interval is given instead."""
    if n == 0:
        return None, None
    if successes in (0, n):
        return wilson_interval(successes, n, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _percentiles(np.where(boot_n > 0, boot_correct / np.maximum(boot_n, 1), np.nan), level)


def accuracy_by_priority(labelled: pd.DataFrame, n_bins: int = 5, n_boot: int = 1000, seed: int = 0,
                         level: float = 0.95) -> pd.DataFrame:
    """Per task and agent, the accuracy of the agent's answers in priority bins (quantiles of the
    labelled items' priorities), with percentile bootstrap intervals (Wilson where a bin holds no error):
    what the Stats tab plots.
    `labelled`: columns task, agent, priority, correct. Columns out: task, agent, bin, priority_lo,
    priority_hi, priority_mid, n, accuracy, ci_low, ci_high."""
    rng = np.random.default_rng(seed)
    out = []
    all_p, all_ok = labelled["priority"].to_numpy(float), labelled["correct"].to_numpy(bool)
    groups = _positions(labelled)
    for (task, agent), rows in sorted(groups.items(), key=lambda group: group[0]):  # the draws in the groups' order
        p, ok = all_p[rows], all_ok[rows]
        edges = np.unique(np.quantile(p, np.linspace(0, 1, n_bins + 1)))
        which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, max(len(edges) - 2, 0))
        for b in range(max(len(edges) - 1, 1)):
            sel = ok[which == b]
            if not len(sel):
                continue
            # resampling n answers of which k are right draws Binomial(n, k/n) right ones: the bootstrap
            # on the bin's counts, not on its n rows (the same distribution, O(n_boot) instead of O(n_boot n))
            boot = rng.binomial(len(sel), sel.mean(), size=n_boot)
            lo, hi = _interval(boot.astype(float), np.full(n_boot, float(len(sel))), int(sel.sum()), len(sel), level)
            pb = p[which == b]
            out.append({"task": task, "agent": agent, "bin": b, "priority_lo": float(pb.min()),
                        "priority_hi": float(pb.max()), "priority_mid": float(np.median(pb)), "n": len(sel),
                        "accuracy": float(sel.mean()), "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(out, columns=["task", "agent", "bin", "priority_lo", "priority_hi", "priority_mid", "n",
                                      "accuracy", "ci_low", "ci_high"])


def acceptance_threshold(priority: np.ndarray, correct: np.ndarray, target: float,
                         min_accept: int = MIN_ACCEPT) -> float | None:
    """The highest priority t such that the labelled answers with priority <= t are right at least
    `target` of the time, over at least `min_accept` of them (None: no such t)."""
    order = np.argsort(priority, kind="stable")
    p, ok = priority[order], correct[order].astype(float)
    taken = np.arange(1, len(ok) + 1)  # the answers at or below each one's priority, ties after it included
    cum = np.cumsum(ok) / taken
    last_of_tie = np.append(p[1:] != p[:-1], True)  # a threshold takes every item at its priority
    met = np.flatnonzero(last_of_tie & (taken >= min_accept) & (cum >= target))
    return float(p[met[-1]]) if len(met) else None


def abstention(labelled: pd.DataFrame, unreviewed: pd.DataFrame, target: float = 0.98, n_boot: int = 1000,
               seed: int = 0, level: float = 0.95, min_accept: int = MIN_ACCEPT) -> pd.DataFrame:
    """For a target accuracy, per task and agent and over all of them ("all"): the priority threshold
    below which answers would be accepted without review (`acceptance_threshold` on the labelled
    items), how many labelled items fall below it and their accuracy (the estimate) with a percentile
    bootstrap interval (labelled items resampled per group, the threshold held; the Wilson interval
    where the accepted items hold no error, as the bootstrap has nothing to resample there), and the
    share of the unreviewed queue (columns task, agent, priority, and `n` when each row counts that many
    answers: bin_unreviewed) the threshold would accept."""
    rng = np.random.default_rng(seed)
    rows, pooled = [], []
    # each group's rows found once (a comparison of the text columns per group cost ~0.6 s at 1M rows)
    in_lab, in_todo = _positions(labelled), _positions(unreviewed)
    all_p, all_ok = labelled["priority"].to_numpy(float), labelled["correct"].to_numpy(bool)
    todo_p = unreviewed["priority"].to_numpy(float)
    # each unreviewed row stands for `n` answers (bin_unreviewed's counts), or for one
    todo_n = unreviewed["n"].to_numpy(np.int64) if "n" in unreviewed else np.ones(len(unreviewed), np.int64)
    none = np.zeros(0, dtype=np.intp)
    for task, agent in sorted(set(in_lab) | set(in_todo)):
        lab = in_lab.get((task, agent), none)
        p, ok = all_p[lab], all_ok[lab]
        todo, todo_count = todo_p[in_todo.get((task, agent), none)], todo_n[in_todo.get((task, agent), none)]
        thr = acceptance_threshold(p, ok, target, min_accept) if len(lab) else None
        accepted = p <= thr if thr is not None else np.zeros(len(p), bool)
        boot_correct = np.zeros(n_boot)
        boot_n = np.zeros(n_boot)
        if len(lab):
            # resampling the group's answers draws the counts (accepted and right, accepted and wrong, not
            # accepted) from a multinomial: the bootstrap on the group's summary, not on its rows
            n_ok, n_acc = int((ok & accepted).sum()), int(accepted.sum())
            draws = rng.multinomial(len(lab), np.array([n_ok, n_acc - n_ok, len(lab) - n_acc]) / len(lab),
                                    size=n_boot)
            boot_correct = draws[:, 0].astype(float)
            boot_n = (draws[:, 0] + draws[:, 1]).astype(float)
        pooled.append((boot_correct, boot_n))
        lo, hi = _interval(boot_correct, boot_n, int(ok[accepted].sum()), int(accepted.sum()), level)
        n_todo = int(todo_count.sum())
        n_accept = int(todo_count[todo <= thr].sum()) if thr is not None else 0
        rows.append({"task": task, "agent": agent, "target": target, "threshold": thr, "n_labelled": len(lab),
                     "labelled_accuracy": float(ok.mean()) if len(lab) else None,
                     "n_labelled_accepted": int(accepted.sum()),
                     "estimated_accuracy": float(ok[accepted].mean()) if accepted.any() else None,
                     "ci_low": lo if accepted.any() else None, "ci_high": hi if accepted.any() else None,
                     "n_unreviewed": n_todo, "n_accept": n_accept,
                     "fraction_accept": n_accept / n_todo if n_todo else None})
    if rows:
        acc_n = sum(r["n_labelled_accepted"] for r in rows)
        acc_ok = sum((r["estimated_accuracy"] or 0) * r["n_labelled_accepted"] for r in rows)
        boot_c = sum(c for c, _ in pooled)
        boot_n = sum(n for _, n in pooled)
        lo, hi = _interval(boot_c, boot_n, round(acc_ok), acc_n, level)
        n_todo = sum(r["n_unreviewed"] for r in rows)
        n_accept = sum(r["n_accept"] for r in rows)
        n_lab = sum(r["n_labelled"] for r in rows)
        lab_ok = sum((r["labelled_accuracy"] or 0) * r["n_labelled"] for r in rows)
        rows.append({"task": "all", "agent": "all", "target": target, "threshold": None, "n_labelled": n_lab,
                     "labelled_accuracy": lab_ok / n_lab if n_lab else None, "n_labelled_accepted": acc_n,
                     "estimated_accuracy": acc_ok / acc_n if acc_n else None,
                     "ci_low": lo if acc_n else None, "ci_high": hi if acc_n else None,
                     "n_unreviewed": n_todo, "n_accept": n_accept,
                     "fraction_accept": n_accept / n_todo if n_todo else None})
    return pd.DataFrame(rows, columns=["task", "agent", "target", "threshold", "n_labelled", "labelled_accuracy",
                                       "n_labelled_accepted", "estimated_accuracy", "ci_low", "ci_high",
                                       "n_unreviewed", "n_accept", "fraction_accept"])


def _positions(frame: pd.DataFrame) -> dict[tuple, np.ndarray]:
    """{(task, agent): the positions of its rows}, found from the two columns' category codes (a
    pandas groupby of 1M rows cost ~0.1 s)."""
    if frame.empty:
        return {}
    task, agent = (pd.Categorical(frame[c]) for c in ("task", "agent"))  # no copy when they are categories
    key = (task.codes.astype(np.int64) + 1) * (len(agent.categories) + 1) + agent.codes + 1  # NaN: code -1
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.diff(key[order])) + 1
    return {(_category(task, part[0]), _category(agent, part[0])): part for part in np.split(order, starts)}


def _category(column: pd.Categorical, row: int) -> Any:
    code = column.codes[row]
    return None if code < 0 else column.categories[code]


def _priced(signals: pd.DataFrame, model: TriageModel, keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """task, agent, priority (and the `keep` columns) of a signals frame's rows: the priority each had
    before anyone reviewed it (`seen` = 0), the score an unreviewed item is compared against."""
    before = signals[list(model.features)].assign(seen=0.0)  # numbers only: no copy of the text columns
    # task and agent as categories (read as such, or made here): the report's grouping takes codes, not
    # text (~0.3 s of Arrow string copies at 1M rows)
    return signals[["task", "agent"]].astype("category").assign(priority=model.score(before), **{
        column: signals[column] for column in keep})


def calibration_frame(store, task: str | None = None, n_bins: int = 5, n_boot: int = 1000,
                      seed: int = 0) -> pd.DataFrame:
    """What the Stats tab plots: `accuracy_by_priority` of the store's verdicts, with the stored
    weights (the defaults before any): one row per task, agent and priority bin, with the accuracy
    of the agent's answers and its bootstrap interval."""
    labelled = triage_inputs(store).labelled
    if task:
        labelled = labelled[labelled["task"] == task]
    return accuracy_by_priority(labelled, n_bins=n_bins, n_boot=n_boot, seed=seed)


def triage_inputs(store, refresh_cache: bool = False) -> TriageInputs:
    """What a triage report is computed from (the expensive part: every trajectory's signals): the
    labelled answers (task, agent, priority, correct) and the unreviewed ones (task, agent, priority),
    read apart, refusals left out (a refusal has no answer to accept unseen). With `refresh_cache` the
    weights are refitted and every cached priority recomputed first; without it the stored weights are
    used (fitted, or the defaults, before any)."""
    model = (refresh(store) if refresh_cache else None) or stored_model(store) or fit_from_store(store)
    cached = len(store.triage.priorities()) if refresh_cache else None
    priced = _stored_inputs(store, model) if model.id is not None else None
    if priced is not None:
        labelled, unreviewed = priced
        labelled = labelled.set_index("trajectory_id").assign(correct=labelled["correct"].to_numpy(bool))
        return TriageInputs(model, labelled, unreviewed, cached)
    # weights not stored (fitted for this read), or rows made stale or unpriced by writers all along
    labelled, unreviewed = answers(store, model)
    return TriageInputs(model, labelled, bin_unreviewed(unreviewed, labelled), cached)


def answers(store, model: TriageModel) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every answered trajectory's priority under `model`, by trajectory id, the labelled ones (task, agent,
    priority, correct) and the unreviewed ones (task, agent, priority) apart: what `triage_inputs` counts,
    row by row (its weights not stored, or an evaluation that follows single answers)."""
    labelled, unreviewed = _read_fresh(store, lambda: tuple(
        store.triage.cached_signals(columns=TRIAGE_COLUMNS, ordered=False, rows=rows, answered=True,
                                    categories=("task", "agent"))
        for rows in ("labelled", "unreviewed"))) or _split_in_full(store)
    labelled = _priced(_with_seen(labelled.assign(correct=labelled["correct"].astype(bool))), model, keep=("correct",))
    return labelled, _priced(_with_seen(unreviewed), model)


_UNPRICED = object()


def _stored_inputs(store, model: TriageModel) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The labelled answers and the unreviewed ones binned (bin_unreviewed) from the stored priorities under
    the stored weights, once the signals are fresh and every answered trajectory is priced (the unpriced
    ones priced here: every one after an upgrade or new weights, those of a spectrum written since
    otherwise); None when writers keep making rows stale or unpriced."""
    for _ in range(STORE_TRIES):
        got = _read_fresh(store, lambda: _priced_read(store, model.id))
        if got is None:
            return None
        if got is not _UNPRICED:
            labelled, answers = got
            # the unreviewed answers are every answer less the labelled ones (store.triage.priced_answers)
            edges = _sorted_by_group(labelled)
            return labelled, _binned(answers, edges, less=edges)
        todo = store.triage.unpriced(model.id)
        store.triage.put_prices(list(todo.index), model.score(todo.assign(seen=0.0)).tolist(), model.id)
    return None


def _priced_read(store, model_id: str):
    labelled = _labelled_answers(store, model_id)
    return _UNPRICED if labelled is None else (labelled, _answer_priorities(store, model_id))


_HELD_ANSWERS, _HELD_LABELLED = "triage.answer_priorities", "triage.labelled_answers"


def _labelled_answers(store, model_id: str) -> pd.DataFrame | None:
    """store.triage.priced_labelled, kept with the database while the signals' mark and the weights stand:
    after labels alone only the trajectories labelled since are read again and their rows replaced (the
    whole read: ~75 ms at 1M trajectories, for the one row a verdict changes). Read in the caller's
    snapshot (_read_fresh), the labels' mark first: a label written during the read is read again next time."""
    mark = store.triage.signals_mark()
    if mark is None:  # not known in step: nothing kept
        return store.triage.priced_labelled(model_id)
    labels, held = store.triage.labels_mark(), store.db.derived.get(_HELD_LABELLED)
    frame = None
    if held is not None and held[0][:2] == (model_id, mark):
        if held[0][2] == labels:
            return held[1]
        changed = store.triage.labelled_between(held[0][2], labels)
        if changed is not None:
            frame = _replaced(held[1], changed, store.triage.priced_labelled(model_id, changed))
    if frame is None:
        frame = store.triage.priced_labelled(model_id)
        if frame is None:
            return None
    store.db.derived[_HELD_LABELLED] = ((model_id, mark, labels), frame)
    return frame


def _replaced(kept: pd.DataFrame, changed: list[str], fresh: pd.DataFrame) -> pd.DataFrame:
    """`kept` with the rows of the `changed` trajectories replaced by `fresh` (a withdrawn verdict's
    trajectory may have none now), task and agent categories of what is there, sorted, as a whole read
    has them."""
    stay = kept.loc[~kept["trajectory_id"].isin(changed)]
    both = {c: sorted(set(stay[c].cat.categories) | set(fresh[c].cat.categories)) for c in ("task", "agent")}
    frame = pd.concat([part.assign(**{c: part[c].cat.set_categories(cats) for c, cats in both.items()})
                       for part in (stay, fresh)], ignore_index=True)  # one set of categories: kept in the concat
    return frame.assign(**{c: frame[c].cat.remove_unused_categories() for c in both})


def _answer_priorities(store, model_id: str) -> dict[tuple, np.ndarray]:
    """Every answer's stored priority, sorted, by (task, agent). Kept with the database while the signals'
    mark and the weights stand: a verdict moves neither (their read and sort: ~0.3 s at 1M answers)."""
    mark = store.triage.signals_mark()  # None: not known in step, so not kept
    held = store.db.derived.get(_HELD_ANSWERS)
    if mark is not None and held is not None and held[0] == (model_id, mark):
        return held[1]
    grouped = _sorted_by_group(store.triage.priced_answers())
    if mark is not None:
        store.db.derived[_HELD_ANSWERS] = ((model_id, mark), grouped)
    return grouped


def _sorted_by_group(frame: pd.DataFrame) -> dict[tuple, np.ndarray]:
    priority = frame["priority"].to_numpy(float)
    return {key: np.sort(priority[rows]) for key, rows in _positions(frame).items()}


def bin_unreviewed(unreviewed: pd.DataFrame, labelled: pd.DataFrame) -> pd.DataFrame:
    """The unreviewed answers (task, agent, priority) counted by task, agent and the lowest labelled priority
    of their task and agent at or above their own (+inf: above all of them): task, agent, priority, n.
    Thresholds are labelled priorities (acceptance_threshold), so an answer is below one exactly when its
    bin is: what the report needs of 900k answers, in a few rows."""
    return _binned(_sorted_by_group(unreviewed), _sorted_by_group(labelled))


def _binned(answers: dict[tuple, np.ndarray], labelled: dict[tuple, np.ndarray],
            less: dict[tuple, np.ndarray] | None = None) -> pd.DataFrame:
    """bin_unreviewed's counts of sorted priorities by (task, agent) under the labelled priorities (sorted,
    by task and agent), less those of `less` (a subset of the answers)."""
    parts = []
    for (task, agent), sorted_p in answers.items():
        at = np.unique(labelled.get((task, agent), np.zeros(0)))
        n = _counts_in_bins(sorted_p, at)
        if less is not None and (task, agent) in less:
            n = n - _counts_in_bins(less[(task, agent)], at)
        keep = n > 0
        parts.append(pd.DataFrame({"task": task, "agent": agent, "priority": np.append(at, np.inf)[keep],
                                   "n": n[keep]}))
    columns = ["task", "agent", "priority", "n"]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return out[columns].sort_values(columns[:3], ignore_index=True)


def _counts_in_bins(sorted_p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """How many of `sorted_p` lie in each (edges[i-1], edges[i]], then above the last edge (NaN: above all)."""
    at_or_below = np.searchsorted(sorted_p, edges, side="right")
    return np.diff(np.concatenate(([0], at_or_below, [len(sorted_p)])))


def _split_in_full(store) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The labelled and unreviewed rows of `cached_signals(rows=..., answered=True)`, from signals computed
    in full (the stored ones kept being made stale by concurrent writes)."""
    signals = compute_signals(store)[[*TRIAGE_COLUMNS, "n_reviewers"]]
    signals = signals.loc[~_refused(signals)]
    correct = store.triage.labelled_truth().set_index("trajectory_id")["correct"].reindex(signals.index)
    known = correct.notna().to_numpy()
    labelled = signals.loc[known].assign(correct=correct[known])
    unreviewed = signals.loc[~known & (signals["n_reviewers"].to_numpy() == 0)]
    return labelled.reset_index(), unreviewed.reset_index()


@dataclass
class TriageInputs:
    model: TriageModel
    labelled: pd.DataFrame  # by trajectory id: task, agent, priority, correct
    unreviewed: pd.DataFrame  # bin_unreviewed's counts: task, agent, priority, n
    cached_priorities: int | None = None


def triage_report(store, target: float = 0.98, task: str | None = None, refresh_cache: bool = False,
                  n_boot: int = 1000, seed: int = 0, n_bins: int = 5,
                  inputs: TriageInputs | None = None) -> dict[str, Any]:
    """What `specreview triage` prints: the weights in use, the abstention table and the accuracy by
    priority bin (for a task or all). `inputs`: `triage_inputs(store, refresh_cache)` already
    computed (a new target needs no new signals)."""
    inputs = inputs or triage_inputs(store, refresh_cache)
    labelled, unreviewed = inputs.labelled, inputs.unreviewed
    if task:
        labelled = labelled[labelled["task"] == task]
        unreviewed = unreviewed[unreviewed["task"] == task]
    table = abstention(labelled, unreviewed, target, n_boot=n_boot, seed=seed)
    bins = accuracy_by_priority(labelled, n_bins=n_bins, n_boot=n_boot, seed=seed)
    return {"target": target, "task": task, "model": inputs.model.as_dict(), "model_info": inputs.model.info,
            "min_labels": MIN_LABELS, "groups": _records(table), "bins": _records(bins),
            "cached_priorities": inputs.cached_priorities}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in frame.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and not np.isfinite(v) else
                        v.item() if hasattr(v, "item") else v) for k, v in rec.items()})
    return out
