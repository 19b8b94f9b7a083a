"""Triage and calibrated abstention on the shared corpus (issue 9, item 3-4 acceptance), with the survey
labels standing in for reviewers.

    .venv/bin/python bench/bench_triage.py [--seeds 5] [--target 0.98] [--no-verify] [--keep DIR] [--json]

1. Every spectrum of the manifest is vetted by the rules policy for every kb task through `specreview
   vet` (claims checked as they are stored) and, unless --no-verify, verified by the FORMA rules
   (`specreview verify`: credibility and the vet/verify disagreement signal), into a temporary DuckDB.
2. Truth per vet trajectory: the task's `labels` rule on the manifest's class/subclass (as
   bench_rules_cv.py and `specreview eval` map survey labels); per verify trajectory: the survey's
   class and z (agents.verify.evaluation). Trajectories without truth stay in the queue, unscored.
3. Per seed, on a copy of that database: the spectra are split at random in halves; on the first half
   a simulated reviewer approves every right answer and overrides every wrong one (to the survey's
   answer). `reviewer.services.triage.refresh` fits the weights on those verdicts and caches every priority.
4. On the other half (unreviewed): the queue in `order="priority"`; the agent errors in its first 20 %
   against those of a random 20 % (the expectation, 20 % of all errors); and the abstention estimate
   at the target (thresholds from the first half's verdicts) against the accuracy actually reached by
   the answers it would accept. The lift is given for the whole queue and for its vet and verify parts.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import shutil
import sys
import tempfile
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# the repo first and tests/ last: tests/agents (a folder without __init__) must not shadow agents/
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))
from shared_data import manifest_rows, spectra_dir  # noqa: E402

import kb  # noqa: E402
from agents.verify.evaluation import Row, is_labelled  # noqa: E402
from agents.vet.calibrate import truth as task_truth  # noqa: E402
from reviewer.cli import main as cli  # noqa: E402
from reviewer.services import triage  # noqa: E402
from reviewer.services.ingest import file_sha256, spectrum_id_for  # noqa: E402
from reviewer.store import Store  # noqa: E402

TOP = 0.2


def build(db: Path, with_verify: bool) -> dict[str, float]:
    base = spectra_dir()
    if base is None:
        sys.exit("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
    files = sorted({str(base / r["file"].partition("#")[0]) for r in manifest_rows()})
    timings = {}
    quiet = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(quiet):
        cli(["vet", "--db", str(db), "--task", ",".join(kb.tasks()), "--no-progress", *files])
    timings["vet_s"] = time.perf_counter() - t0
    if with_verify:
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(quiet):
            cli(["verify", "--db", str(db), "--no-progress", *files])
        timings["verify_s"] = time.perf_counter() - t0
    return timings


def truth_by_trajectory(store) -> dict[str, tuple[bool, dict]]:
    """{trajectory id: (the agent's answer is right, the survey's answer as an override label)}: vet
    trajectories whose spectrum the manifest labels for their task; verify trajectories whose spectrum
    carries a survey pipeline label (class STAR / GALAXY / QSO and z: right when the class agrees and
    the z does, in km/s for galaxies and QSOs: agents.verify.evaluation.Row.agrees)."""
    base = spectra_dir()
    rows_by_sid, shas = {}, {}
    for row in manifest_rows():
        path, _, target = row["file"].partition("#")
        sha = shas.setdefault(path, file_sha256(base / path))
        rows_by_sid[spectrum_id_for(sha, target or None)] = row
    tasks = kb.tasks()
    out = {}
    for t in store.trajectories.list_trajectories(agent_name="verify"):
        row = rows_by_sid.get(t["spectrum_id"])
        if row is None or not is_labelled(row) or t["answer"] is None:
            continue
        right = Row(row["file"], row["class"].upper(), float(row["z"]), str(t["answer"]).upper(),
                    None if t["answer_z"] is None else float(t["answer_z"]), "LOW").agrees
        out[t["id"]] = (right, {"type": row["class"].upper(), "z": float(row["z"])})
    for t in store.trajectories.list_trajectories(agent_name="vet"):
        row = rows_by_sid.get(t["spectrum_id"])
        if row is None or t["task"] not in tasks:
            continue
        truth = task_truth(tasks[t["task"]], row)
        if truth is None or t["answer"] not in ("YES", "NO"):
            continue
        out[t["id"]] = ((t["answer"] == "YES") == truth, {"answer": "YES" if truth else "NO"})
    return out


def lift(queue: list[str], correct: dict[str, bool], rng) -> dict:
    """Agent errors in the first 20 % of a priority-ordered queue against a random 20 %."""
    errors = np.array([not correct[t] for t in queue])
    k = round(TOP * len(queue))
    top = int(errors[:k].sum())
    expected = float(errors.sum()) * k / len(queue) if len(queue) else 0.0  # hypergeometric mean
    draws = [int(rng.permutation(errors)[:k].sum()) for _ in range(2000)]
    return {"n": len(queue), "errors": int(errors.sum()), "k": k, "top": top, "random_expected": expected,
            "random_mean": float(np.mean(draws)), "lift": top / expected if expected else None,
            "ok": bool(expected and top >= 2 * expected)}


def one_seed(base_db: Path, work: Path, seed: int, truth: dict[str, tuple[bool, dict]], target: float) -> dict:
    db = work / f"seed{seed}.duckdb"
    shutil.copyfile(base_db, db)
    rng = np.random.default_rng(seed)
    correct = {t: v[0] for t, v in truth.items()}
    with Store(db) as store:
        summaries = {t["id"]: t for t in store.trajectories.list_trajectories()}
        spectra = sorted({summaries[t]["spectrum_id"] for t in truth})
        train_spectra = set(rng.permutation(spectra)[: len(spectra) // 2])
        train = [t for t in truth if summaries[t]["spectrum_id"] in train_spectra]
        test = [t for t in truth if summaries[t]["spectrum_id"] not in train_spectra]
        with store.transaction():  # the simulated reviewer: approve right answers, override wrong ones
            for tid in train:
                right, label = truth[tid]
                store.labels.add_review(tid, "survey", "approve" if right else "override", label=None if right else label)
        model = triage.refresh(store)
        test_set = set(test)
        queue = [r["trajectory_id"] for r in store.queue.queue_items(order="priority", limit=10**7)
                 if r["trajectory_id"] in test_set]
        lifts = {"all": lift(queue, correct, rng),
                 "vet": lift([t for t in queue if summaries[t]["agent_name"] == "vet"], correct, rng),
                 "verify": lift([t for t in queue if summaries[t]["agent_name"] == "verify"], correct, rng)}

        # abstention: thresholds from the reviewed half, applied to the unreviewed half
        labelled, unreviewed = triage.answers(store, model)  # each answer's priority under the weights just stored
        unreviewed = unreviewed.loc[unreviewed.index.intersection(test)]
        table = triage.abstention(labelled, unreviewed, target, seed=seed)
        thresholds = {(r.task, r.agent): r.threshold for r in table.itertuples() if r.task != "all"}
        accepted = [t for t in unreviewed.index
                    if (thr := thresholds.get((unreviewed.at[t, "task"], unreviewed.at[t, "agent"]))) is not None
                    and not np.isnan(thr) and unreviewed.at[t, "priority"] <= thr]
        reached = float(np.mean([correct[t] for t in accepted])) if accepted else None
        pooled = table[table["task"] == "all"].iloc[0]
        per_task = []
        for r in table.itertuples():
            if r.task == "all":
                continue
            acc = [t for t in accepted if unreviewed.at[t, "task"] == r.task and unreviewed.at[t, "agent"] == r.agent]
            got = float(np.mean([correct[t] for t in acc])) if acc else None
            per_task.append({"task": r.task, "estimated": r.estimated_accuracy, "ci": [r.ci_low, r.ci_high],
                             "accepted": len(acc), "of": int(r.n_unreviewed), "reached": got,
                             "within": bool(got is not None and r.ci_low is not None and r.ci_low <= got <= r.ci_high)})
    db.unlink()

    def num(v):
        return None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)

    ci = (num(pooled["ci_low"]), num(pooled["ci_high"]))
    return {
        "seed": seed, "model": model.as_dict(), "n_train": len(train),
        "train_errors": int(sum(not correct[t] for t in train)), "lift": lifts,
        "estimated_accuracy": num(pooled["estimated_accuracy"]),
        "ci": ci, "accepted": len(accepted), "unreviewed": len(unreviewed),
        "fraction_accepted": len(accepted) / len(unreviewed) if len(unreviewed) else None,
        "reached_accuracy": reached,
        "within_ci": bool(reached is not None and ci[0] is not None and ci[0] <= reached <= ci[1]),
        "per_task": per_task,
    }


def fmt(v, d=3):
    return "-" if v is None else f"{v:.{d}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="random halvings (default 5)")
    ap.add_argument("--target", type=float, default=0.98)
    ap.add_argument("--no-verify", action="store_true", help="vet only (no FORMA credibility / vet-verify signal)")
    ap.add_argument("--keep", default=None, metavar="DIR", help="keep the vetted database in DIR (reused when there)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    work = Path(tempfile.mkdtemp(prefix="bench_triage_"))
    keep = Path(args.keep) if args.keep else None
    base_db = (keep / "triage_base.duckdb") if keep else work / "base.duckdb"
    timings = {}
    if not base_db.exists():
        base_db.parent.mkdir(parents=True, exist_ok=True)
        timings = build(base_db, not args.no_verify)
    with Store(base_db) as store:
        truth = truth_by_trajectory(store)
        n_traj = store.trajectories.count_trajectories()
        n_spectra = store.spectra.count_spectra()
        n_contra = sum(c["contradicted"] for c in store.claims.claim_counts(
            r["id"] for r in store.trajectories.list_trajectories()).values())
    results = [one_seed(base_db, work, seed, truth, args.target) for seed in range(args.seeds)]
    shutil.rmtree(work, ignore_errors=True)
    errors = {kind: sum(not v[0] for t, v in truth.items() if t in ids) for kind, ids in (("all", set(truth)),)}
    summary = {"date": str(date.today()), "machine": f"{platform.machine()} {platform.python_version()}",
               "spectra": n_spectra, "trajectories": n_traj, "scored_trajectories": len(truth),
               "agent_errors": errors["all"], "contradicted_claims": n_contra,
               "target": args.target, "timings": timings, "seeds": results,
               "lift_ok_all": all(r["lift"]["all"]["ok"] for r in results),
               "within_ci_all": all(r["within_ci"] for r in results)}
    if args.json:
        print(json.dumps(summary, default=str))
        return
    cmd = "python bench/bench_triage.py " + " ".join(sys.argv[1:])
    print(f"`{cmd.strip()}` ({summary['date']}, {summary['machine']}): {n_spectra} spectra, {n_traj} trajectories, "
          f"{len(truth)} answers with survey truth ({summary['agent_errors']} wrong), "
          f"{n_contra} contradicted claims; build {', '.join(f'{k} {v:.0f} s' for k, v in timings.items()) or 'reused'}\n")
    print("| seed | queue | unreviewed items | errors | errors in first 20 % | random 20 % (expected) | lift | >= 2x |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        for scope, x in r["lift"].items():
            print(f"| {r['seed']} | {scope} | {x['n']} | {x['errors']} | {x['top']} | {x['random_expected']:.1f} | "
                  f"{fmt(x['lift'], 2)} | {'yes' if x['ok'] else 'no'} |")
    print(f"\n| seed | verdicts fitted on (errors) | weights | est. accuracy at {args.target:g} [95 % CI] | "
          "accepted without review | accuracy reached | in CI |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        acc = "-" if r["fraction_accepted"] is None else f"{r['accepted']}/{r['unreviewed']} ({r['fraction_accepted']:.0%})"
        w = ", ".join(f"{k} {v:+.2f}" for k, v in r["model"]["weights"].items())
        print(f"| {r['seed']} | {r['n_train']} ({r['train_errors']}) | {r['model']['kind']}: {w} | "
              f"{fmt(r['estimated_accuracy'])} [{fmt(r['ci'][0])}, {fmt(r['ci'][1])}] | {acc} | "
              f"{fmt(r['reached_accuracy'])} | {'yes' if r['within_ci'] else 'no'} |")
    print("\nper task and agent (seed 0): task | est. accuracy [CI] | accepted | reached | in CI")
    for p in results[0]["per_task"]:
        print(f"  {p['task']:6} {fmt(p['estimated'])} [{fmt(p['ci'][0])}, {fmt(p['ci'][1])}]  "
              f"{p['accepted']}/{p['of']}  {fmt(p['reached'])}  {'yes' if p['within'] else 'no'}")
    print(f"\nfirst 20 % holds >= 2x the errors of a random 20 % in every seed: {summary['lift_ok_all']}; "
          f"reached accuracy within the estimate's bootstrap interval in every seed: {summary['within_ci_all']}")


if __name__ == "__main__":
    main()
