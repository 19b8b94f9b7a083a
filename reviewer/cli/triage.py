"""`specreview triage [--target 0.98] [--task T] [--refresh] [--json]`: review priorities and calibrated
abstention. For each task and agent, from the human verdicts so far: the priority below which the
agent's answers reach the target accuracy, the share of the unreviewed queue that could be accepted
without review there, and the accuracy it is estimated to reach, with a bootstrap interval; then the
accuracy by priority bin. The weights in use are printed first (the documented defaults until the
store holds enough verdicts: reviewer/services/triage.py). --refresh refits the weights and recomputes every
cached priority (the queue's "priority" order reads them)."""
from __future__ import annotations

import argparse
import json

from reviewer.cli.common import open_store
from reviewer.cli.console import console_of


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("triage", help="review priorities and the share of answers safe to accept without review",
                              description=__doc__.splitlines()[0])
    p.add_argument("--target", type=float, default=0.98, help="target accuracy of the accepted answers (default 0.98)")
    p.add_argument("--task", default=None, help="only this task (e.g. a, verify)")
    p.add_argument("--refresh", action="store_true", help="refit the weights and recompute the cached priorities")
    p.add_argument("--bins", type=int, default=5, help="priority bins of the accuracy table (default 5)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _f(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(row) -> str:
    return "-" if row.get("ci_low") is None else f"[{_f(row['ci_low'])}, {_f(row['ci_high'])}]"


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from reviewer.services.triage import triage_report

    if not 0 < args.target <= 1:
        console.warn("specreview triage: --target is an accuracy in (0, 1]")
        return 2
    store = open_store(args)
    if store is None:
        return 1
    try:
        report = triage_report(store, args.target, args.task, refresh_cache=args.refresh, n_boot=args.bootstrap,
                               seed=args.seed, n_bins=args.bins)
    finally:
        store.close()
    report["database"] = str(store.path)
    if args.json:
        console.say(json.dumps(report, default=str))
        return 0
    model = report["model"]
    weights = ", ".join(f"{k} {v:+.2f}" for k, v in model["weights"].items())
    console.say(f"database: {store.path}")
    console.say(f"weights ({model['kind']}, {model['n_labels']} verdicts, {model['n_errors']} overrides/rejections): {weights}")
    if report["model_info"].get("why"):
        console.say(f"  {report['model_info']['why']}")
    if report["cached_priorities"] is not None:
        console.say(f"cached priorities recomputed: {report['cached_priorities']}")
    console.say(f"\naccept without review at target accuracy {args.target:g}:")
    console.say(f"{'task':8} {'agent':28} {'labelled':>8} {'acc':>6} {'thresh':>7} {'est. acc':>8} {'95% CI':>16} "
          f"{'accept':>14}")
    for g in report["groups"]:
        accept = "-" if g["fraction_accept"] is None else f"{g['n_accept']}/{g['n_unreviewed']} ({g['fraction_accept']:.0%})"
        console.say(f"{g['task']:8} {g['agent'][:28]:28} {g['n_labelled']:8d} {_f(g['labelled_accuracy']):>6} "
              f"{_f(g['threshold']):>7} {_f(g['estimated_accuracy']):>8} {_ci(g):>16} {accept:>14}")
    if report["bins"]:
        console.say("\naccuracy by priority:")
        console.say(f"{'task':8} {'agent':28} {'priority':>15} {'n':>5} {'acc':>6} {'95% CI':>16}")
        for b in report["bins"]:
            rng = f"{b['priority_lo']:.3f}-{b['priority_hi']:.3f}"
            console.say(f"{b['task']:8} {b['agent'][:28]:28} {rng:>15} {b['n']:5d} {_f(b['accuracy']):>6} {_ci(b):>16}")
    elif not report["groups"]:
        console.warn("no trajectories")
    return 0
