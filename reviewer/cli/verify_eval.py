"""`specreview eval --verify [--dv-max KMS] [--plot PNG] [--json]`: agreement of stored FORMA verify
trajectories with the survey pipeline labels of their spectra, per credibility tier (class agreement and
a right z: |dv| within the class's tolerance in km/s, agents.verify.evaluation), coverage at each
threshold; per class and per survey the |dv| median, p90 and bias, the coverage of the stated errors
and the catastrophic rate; and the accuracy-versus-coverage plot."""
from __future__ import annotations

import argparse
import json
import re

from reviewer.cli.console import console_of


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", default=None, metavar="PNG", help="with --verify: write the accuracy-vs-coverage plot")
    p.add_argument("--dv-max", type=float, default=None, metavar="KMS",
                   help="with --verify: the |dv| (km/s) within which a galaxy's or QSO's z is right "
                        "(default: 300 for galaxies, 500 for QSOs)")


def collect_rows(store, survey: str | None = None, dv_max: float | None = None) -> list:
    from agents.verify.evaluation import DV_TOLERANCE_KMS, Row
    from reviewer.services.items import record_of_spectrum, trajectory, trajectory_rows

    tolerance = dict(DV_TOLERANCE_KMS) if dv_max is None else dict.fromkeys(DV_TOLERANCE_KMS, float(dv_max))
    rows, seen = [], set()
    for t in trajectory_rows(store, task="verify"):  # newest first: keep the latest
        if t["spectrum_id"] in seen:
            continue
        seen.add(t["spectrum_id"])
        traj = trajectory(store, t["id"])
        if traj is None or not traj.spectrum_id:
            continue
        rec = record_of_spectrum(store, traj.spectrum_id)
        if rec is None or rec.get("pipeline_class") not in ("STAR", "GALAXY", "QSO") or rec.get("pipeline_z") is None:
            continue
        if survey and not re.search(survey, rec.get("survey") or ""):
            continue
        b = traj.outcome.get("brief", {})
        rows.append(Row(rec["source_path"], rec["pipeline_class"], float(rec["pipeline_z"]), b.get("type"),
                        b.get("redshift"), b.get("credibility", "LOW"), redshift_rms=b.get("redshift_rms"),
                        survey=rec.get("survey") or "", tolerance_kms=tolerance))
    return rows


def plot(summary: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.verify.evaluation import TIERS

    cov = [summary["gates"][t]["coverage"] * 100 for t in TIERS]
    acc = [100 * (summary["gates"][t]["agreement"] or 0) for t in TIERS]
    fig, ax = plt.subplots(figsize=(5, 4), dpi=100)
    ax.plot(cov, acc, "o-")
    for c, a, t in zip(cov, acc, TIERS, strict=True):
        ax.annotate(f">= {t}", (c, a), textcoords="offset points", xytext=(5, -12))
    ax.set_xlabel("coverage (%)")
    ax.set_ylabel("agreement with pipeline (%)")
    ax.set_title("FORMA verify: accuracy vs coverage")
    ax.set_xlim(0, 105)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def run_verify_eval(args: argparse.Namespace) -> int:
    console = console_of(args)
    from agents.verify.evaluation import format_summary, summarise
    from reviewer.cli.common import open_store

    store = open_store(args)
    if store is None:
        return 1
    try:
        rows = collect_rows(store, getattr(args, "survey", None), getattr(args, "dv_max", None))
    finally:
        store.close()
    if not rows:
        console.warn("specreview eval --verify: no verify trajectory of a labelled spectrum in the store")
        return 1
    s = summarise(rows)
    if getattr(args, "json", False):
        console.say(json.dumps(s))
    else:
        console.say(format_summary(s))
    if getattr(args, "plot", None):
        plot(s, args.plot)
        console.warn(f"plot: {args.plot}")
    return 0
