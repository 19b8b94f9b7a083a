"""Rules-policy baseline, cross-validated (issue 9, item 5): 5-fold CV F1 per task, task-a recall by
subclass (A0-A4, A5-A9) and early-F (F0-F4) precision, for the task files as committed at a git
revision ("before") and as they are in the working tree ("after").

    .venv/bin/python bench/bench_rules_cv.py [--before-rev HEAD] [--folds 5] [--seed 0] [--json]
                                             [--start-sensitivity]

Truth = each task's `labels` rule on the manifest's class/subclass columns; every readable spectrum
of the shared corpus with a label for the task takes part. Thresholds without `calibrate` are fixed,
so for such a rule the CV F1 equals its F1 on the whole set. `--start-sensitivity` re-runs task a's CV
with each calibrated threshold's start (the tie-break) moved to its grid's low end, middle and high end
in turn: how much the out-of-fold answers owe to the starting values rather than to the data.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
# the repo first and tests/ last: tests/agents (a folder without __init__) must not shadow agents/
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))
from shared_data import manifest_rows, spectra_dir  # noqa: E402

import kb  # noqa: E402
from agents.spectra import read_spectrum  # noqa: E402
from agents.tools.measure import Arrays  # noqa: E402
from agents.vet import calibrate as cal  # noqa: E402

SUBCLASSES = {"A0-A4": r"^A[0-4]", "A5-A9": r"^A[5-9]", "F0-F4": r"^F[0-4]"}


def load_corpus():
    base = spectra_dir()
    if base is None:
        sys.exit("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
    rows, arrays = [], []
    for row in manifest_rows():
        path, _, target = row["file"].partition("#")
        try:
            arrays.append(Arrays.from_spectrum(read_spectrum(base / path, target or None)))
            rows.append(row)
        except Exception as exc:  # report, do not stop the bench
            print(f"skip {row['file']}: {exc}", file=sys.stderr)
    return rows, arrays


def task_at(rev: str, task_id: str) -> dict | None:
    try:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:kb/tasks/{task_id}.yaml"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return yaml.safe_load(text)


def score(task, rows, arrays, folds, seed):
    labelled = [(r, a, t) for r, a in zip(rows, arrays, strict=True) if (t := cal.truth(task, r)) is not None]
    y = np.array([t for _, _, t in labelled], bool)
    feats = cal.features(task, [a for _, a, _ in labelled])
    guard = cal.keep_no_mask(task, [r for r, _, _ in labelled])
    cv = cal.cross_validate(task, feats, y, folds, seed, guard)
    deployed = cal.predict(task, feats)  # the thresholds in the file, on every labelled spectrum
    subs = [r["subclass"] for r, _, _ in labelled]
    return {**_summary(cv, y, subs),
            "deployed_f1": cal.f1_score(y, deployed),
            "tunables": [t.key + ":" + t.measure for t in cal.tunables(task)],
            "sources": {t.key + ":" + t.measure: t.source for t in cal.tunables(task)},
            "fold_thresholds": cv.thresholds, "fit_all": cal.fit(task, feats, y, guard),
            "file_values": {t.key: float(task["decision"][t.key.split(".")[0]][int(t.key.split(".")[1])]["value"])
                            for t in cal.tunables(task)}}


def _summary(cv, y, subs) -> dict:
    groups = cal.by_subclass(subs, cv.predicted, SUBCLASSES)
    early_f = next(g for g in groups if g.name == "F0-F4")
    tp = int(np.sum(cv.predicted & y))
    return {
        "n": int(y.size), "positives": int(y.sum()), "cv_f1": cv.f1,
        "subclass": {g.name: {"n": g.n, "yes": g.yes} for g in groups},
        # precision of YES against early-F contamination: A stars found / (those + F0-F4 said YES)
        "early_f_precision": tp / (tp + early_f.yes) if tp + early_f.yes else float("nan"),
    }


def start_sensitivity(task, rows, arrays, folds, seed) -> list[dict]:
    """Task-a CV with one calibrated threshold's start moved to its grid's low end, middle or high end
    (the others at the file's starts): the start only breaks ties between equally good grid points."""
    labelled = [(r, a, t) for r, a in zip(rows, arrays, strict=True) if (t := cal.truth(task, r)) is not None]
    y = np.array([t for _, _, t in labelled], bool)
    feats = cal.features(task, [a for _, a, _ in labelled])
    guard = cal.keep_no_mask(task, [r for r, _, _ in labelled])
    subs = [r["subclass"] for r, _, _ in labelled]
    out = []
    for t in cal.tunables(task):
        group, n = t.key.split(".")
        mid = float(t.grid[len(t.grid) // 2])
        for where, start in (("low end", float(t.grid[0])), ("middle", mid), ("high end", float(t.grid[-1]))):
            variant = cal.with_thresholds(task, {})
            variant["decision"][group][int(n)]["calibrate"] = {**variant["decision"][group][int(n)]["calibrate"],
                                                               "start": start}
            cv = cal.cross_validate(variant, feats, y, folds, seed, guard)
            out.append({"tunable": f"{t.key}:{t.measure}", "file_start": t.start, "where": where, "start": start,
                        **_summary(cv, y, subs)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-rev", default="HEAD")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--start-sensitivity", action="store_true",
                    help="also re-run task a's CV with each calibrated start at its grid's ends and middle")
    args = ap.parse_args()
    rows, arrays = load_corpus()
    out = {"date": date.today().isoformat(), "machine": platform.platform(), "spectra": len(rows),
           "folds": args.folds, "seed": args.seed, "before_rev": args.before_rev, "tasks": {}}
    for task_id, task in kb.tasks().items():
        before = task_at(args.before_rev, task_id)
        out["tasks"][task_id] = {"after": score(task, rows, arrays, args.folds, args.seed),
                                 "before": score(before, rows, arrays, args.folds, args.seed) if before else None}
    if args.start_sensitivity:
        out["start_sensitivity"] = start_sensitivity(kb.task("a"), rows, arrays, args.folds, args.seed)
    if args.json:
        print(json.dumps(out, indent=1, default=float))
        return
    print(f"{out['spectra']} spectra, {args.folds}-fold CV (seed {args.seed}); before = {args.before_rev}, "
          f"after = working tree; {out['date']}")
    print("\n| task | n | positives | CV F1 before | CV F1 after | F1, file thresholds, after | thresholds tuned |")
    print("|---|---|---|---|---|---|---|")
    for tid, res in out["tasks"].items():
        a, b = res["after"], res["before"]
        print(f"| {tid} | {a['n']} | {a['positives']} | {_f(b['cv_f1']) if b else '-'} | {_f(a['cv_f1'])} "
              f"| {_f(a['deployed_f1'])} | {', '.join(a['tunables']) or 'none (fixed)'} |")
    print("\nTask a, out-of-fold answers by subclass (recall for A; F0-F4 must stay NO):")
    print("| | A0-A4 recall | A5-A9 recall | F0-F4 answered YES | early-F precision | CV F1 |")
    print("|---|---|---|---|---|---|")
    for label in ("before", "after"):
        r = out["tasks"]["a"][label]
        if r is None:
            continue
        s = r["subclass"]
        print(f"| {label} | {_frac(s['A0-A4'])} | {_frac(s['A5-A9'])} | {s['F0-F4']['yes']}/{s['F0-F4']['n']} "
              f"| {_f(r['early_f_precision'])} | {_f(r['cv_f1'])} |")
    for tid, res in out["tasks"].items():
        a = res["after"]
        if a["tunables"]:
            for name, source in a["sources"].items():
                print(f"\n{tid}: {name} grid bounded by {source}" if source else f"\n{tid}: {name}: no source given")
            print(f"\n{tid}: thresholds per fold {a['fold_thresholds']}")
            print(f"{tid}: fitted on all labelled spectra {a['fit_all']}; in kb/tasks/{tid}.yaml {a['file_values']}"
                  + ("" if a["fit_all"] == a["file_values"] else "  <-- the file differs from the fit"))
    if "start_sensitivity" in out:
        print("\nTask a, CV with one start moved (the others as in the file):")
        print("| threshold | file start | start used | A0-A4 recall | A5-A9 recall | F0-F4 answered YES "
              "| early-F precision | CV F1 |")
        print("|---|---|---|---|---|---|---|---|")
        for r in out["start_sensitivity"]:
            s = r["subclass"]
            print(f"| {r['tunable']} | {r['file_start']:g} | {r['start']:g} ({r['where']}) | {_frac(s['A0-A4'])} "
                  f"| {_frac(s['A5-A9'])} | {s['F0-F4']['yes']}/{s['F0-F4']['n']} | {_f(r['early_f_precision'])} "
                  f"| {_f(r['cv_f1'])} |")


def _f(x: float) -> str:
    return "-" if x != x else f"{x:.3f}"


def _frac(g: dict) -> str:
    return f"{g['yes']}/{g['n']} ({g['yes'] / g['n']:.2f})" if g["n"] else "-"


if __name__ == "__main__":
    main()
