"""`specreview eval [--task TASK] [--labels CSV] [--json]`: accuracy and positive-class F1 of the
stored vet trajectories per task, and their macro average (Spec-o3's metrics, YES = positive).

Truth comes from a CSV (columns `path` or `object_id`, `task`, `label` YES/NO) or, without one,
from the stored pipeline labels mapped by each task's `labels` rule in kb/tasks/<id>.yaml
(spectra matching neither the positive nor the negative rule are left out). `--verify` hands
over to the FORMA evaluation (reviewer.cli.verify_eval)."""
from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path
from typing import Any

from reviewer.cli.common import open_store
from reviewer.cli.console import console_of
from reviewer.services.gold import pipeline_truth


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("eval", help="score stored trajectories (accuracy, positive-class F1)",
                              description=__doc__.splitlines()[0])
    p.add_argument("--task", default=None, help="task id(s), comma-separated (default: every task with trajectories)")
    p.add_argument("--labels", default=None, metavar="CSV", help="truth labels: path|object_id, task, label")
    p.add_argument("--backend", default=None, help="only trajectories of this backend")
    p.add_argument("--model", default=None, help="only trajectories of this model")
    p.add_argument("--survey", default=None, metavar="REGEX", help="only spectra whose survey matches")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--verify", action="store_true", help="evaluate FORMA verify trajectories instead")
    try:  # the FORMA evaluation registers its own flags when it is installed
        from reviewer.cli import verify_eval
    except ImportError:
        verify_eval = None
    if verify_eval is not None and hasattr(verify_eval, "add_arguments"):
        verify_eval.add_arguments(p)
    return p


def read_label_csv(path: str) -> dict[tuple[str, str], str]:
    """{(key, task): YES/NO} where key is a resolved path or an object id."""
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            label = (row.get("label") or "").strip().upper()
            if label not in ("YES", "NO"):
                continue
            task = (row.get("task") or "").strip()
            if row.get("path"):
                out[(str(Path(row["path"]).expanduser().resolve()), task)] = label
            if row.get("object_id"):
                out[(row["object_id"].strip(), task)] = label
    return out


def score(pairs: list[tuple[str, str | None]]) -> dict[str, Any]:
    """pairs of (truth, prediction); a missing or invalid prediction is never correct (exact match)."""
    tp = sum(t == "YES" and p == "YES" for t, p in pairs)
    fp = sum(t == "NO" and p == "YES" for t, p in pairs)
    fn = sum(t == "YES" and p != "YES" for t, p in pairs)
    tn = sum(t == "NO" and p == "NO" for t, p in pairs)
    n = len(pairs)
    f1 = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else None
    return {"n": n, "positives": tp + fn, "predicted_positives": tp + fp, "tp": tp, "fp": fp, "fn": fn,
            "tn": tn, "no_valid_answer": sum(p not in ("YES", "NO") for _, p in pairs),
            "accuracy": (tp + tn) / n if n else None, "f1": f1}


def evaluate_store(store, tasks: list[str] | None, labels: dict | None = None, backend: str | None = None,
                   model: str | None = None, survey: str | None = None) -> dict[str, Any]:
    import kb
    from reviewer.services.items import record_of_spectrum, trajectory_rows

    rows = trajectory_rows(store, agent_name="vet", backend=backend, model=model)
    newest: dict[tuple[str, str], dict] = {}
    for row in rows:  # newest first: keep the first per (spectrum, task)
        if tasks and row["task"] not in tasks:
            continue
        newest.setdefault((row["spectrum_id"], row["task"]), row)
    per_task: dict[str, list] = {}
    spectra: dict[str, dict] = {}
    for (sid, task_id), row in newest.items():
        spec = spectra.setdefault(sid, record_of_spectrum(store, sid) or {})
        if survey and not re.search(survey, spec.get("survey") or ""):
            continue
        if labels is not None:
            truth = labels.get((str(Path(spec.get("source_path") or "").resolve()), task_id)) or \
                labels.get((spec.get("object_id") or "", task_id))
        else:
            truth = pipeline_truth(kb.task(task_id), spec)
        if truth is None:
            continue
        outcome = row.get("outcome") or {}
        if isinstance(outcome, str):
            outcome = json.loads(outcome)
        per_task.setdefault(task_id, []).append((truth, outcome.get("prediction")))
    result = {"tasks": {t: score(p) for t, p in sorted(per_task.items())}}
    f1s = [s["f1"] for s in result["tasks"].values() if s["f1"] is not None]
    accs = [s["accuracy"] for s in result["tasks"].values() if s["accuracy"] is not None]
    result["macro_f1"] = sum(f1s) / len(f1s) if f1s else None
    result["macro_accuracy"] = sum(accs) / len(accs) if accs else None
    return result


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    if args.verify:
        from reviewer.cli.verify_eval import run_verify_eval

        return int(run_verify_eval(args) or 0)
    labels = read_label_csv(args.labels) if args.labels else None
    tasks = [t.strip() for t in args.task.split(",")] if args.task else None
    store = open_store(args)
    if store is None:
        return 1
    try:
        result = evaluate_store(store, tasks, labels, args.backend, args.model, args.survey)
    finally:
        store.close()
    if args.json:
        console.say(json.dumps(result, indent=None))
        return 0
    if not result["tasks"]:
        console.warn("no labelled trajectories to score")
        return 1
    console.say(f"{'task':6} {'n':>5} {'pos':>5} {'pred+':>5} {'acc':>6} {'F1':>6}")
    for t, s in result["tasks"].items():
        console.say(f"{t:6} {s['n']:5d} {s['positives']:5d} {s['predicted_positives']:5d} "
                    f"{_fmt(s['accuracy']):>6} {_fmt(s['f1']):>6}")
    console.say(f"macro  accuracy {_fmt(result['macro_accuracy'])}  F1 {_fmt(result['macro_f1'])}")
    return 0
