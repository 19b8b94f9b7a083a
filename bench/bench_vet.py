"""Vet-agent figures for docs/benchmarks.md: rules-policy throughput (deferred and eager renders),
graph overhead per step, and the scores of the rules policy on the shared data.

    .venv/bin/python bench/bench_vet.py [--limit N] [--json]

Throughput is single-process (spectra/s/core) on spectra already read into memory; reading FITS is
timed separately. Graph overhead = wall time of a run minus the time spent inside the model calls
and the tool calls, divided by the number of graph steps (model + tool nodes).
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the repo first and tests/ last: tests/agents (a folder without __init__) must not shadow agents/
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))
from shared_data import manifest_rows, spectra_dir  # noqa: E402

import kb  # noqa: E402
from agents.spectra import read_spectrum  # noqa: E402
from agents.tools import zoom as zoom_mod  # noqa: E402
from agents.vet import vet_spectrum  # noqa: E402


def load(limit):
    base = spectra_dir()
    rows, specs = [], []
    t0 = time.perf_counter()
    for row in manifest_rows():
        if not re.search(r"LAMOST-LRS|Pickles|SDSS", row["survey"]):
            continue
        path, _, target = row["file"].partition("#")
        try:
            specs.append(read_spectrum(base / path, target or None))
            rows.append(row)
        except Exception as exc:  # report, do not stop the bench
            print(f"skip {row['file']}: {exc}", file=sys.stderr)
        if limit and len(specs) >= limit:
            break
    return rows, specs, time.perf_counter() - t0


def throughput(specs, task, eager):
    vet_spectrum(specs[0], task, eager_renders=eager)  # warm caches (imports, matplotlib figure)
    t0 = time.perf_counter()
    for s in specs:
        vet_spectrum(s, task, eager_renders=eager)
    return len(specs) / (time.perf_counter() - t0)


def graph_overhead(specs, task):
    """Per graph step: wall time minus model time (recorded per think step) minus tool time."""
    tool_time = [0.0]
    orig = zoom_mod.SpectralVisualizationTool.__call__

    def timed(self, *a, **kw):
        t = time.perf_counter()
        try:
            return orig(self, *a, **kw)
        finally:
            tool_time[0] += time.perf_counter() - t

    zoom_mod.SpectralVisualizationTool.__call__ = timed
    try:
        wall = model = 0.0
        steps = 0
        for s in specs:
            t = time.perf_counter()
            traj = vet_spectrum(s, task)
            wall += time.perf_counter() - t
            model += sum(st.data.get("elapsed_s", 0.0) for st in traj.steps if st.kind == "think")
            steps += sum(st.kind == "think" for st in traj.steps) + sum(st.kind == "tool_result" for st in traj.steps)
    finally:
        zoom_mod.SpectralVisualizationTool.__call__ = orig
    return (wall - model - tool_time[0]) / steps, steps / len(specs)


def scores(rows, specs):
    from reviewer.cli.eval import pipeline_truth, score

    out = {}
    for task_id in ("a", "b", "o", "wd", "mg", "cv", "cs", "ss"):
        task = kb.task(task_id)
        pairs = []
        for row, spec in zip(rows, specs, strict=True):
            if task_id == "a" and "LAMOST-LRS" not in row["survey"]:
                continue  # the acceptance figure for `a` is over the LAMOST LRS stars
            truth = pipeline_truth(task, {"pipeline_class": spec.meta.get("pipeline_class"),
                                          "pipeline_subclass": spec.meta.get("pipeline_subclass"),
                                          "survey": spec.meta.get("survey")})
            if truth is not None:
                pairs.append((truth, vet_spectrum(spec, task_id).outcome.get("prediction")))
        out[task_id] = score(pairs)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows, specs, read_s = load(args.limit)
    res = {"machine": f"{platform.machine()} {platform.processor() or ''} python {platform.python_version()}",
           "date": date.today().isoformat(), "n_spectra": len(specs),
           "read_ms_per_spectrum": 1000 * read_s / len(specs)}
    sub = specs[: min(len(specs), 120)]
    for task in ("a", "mg"):
        res[f"deferred_spectra_per_s_{task}"] = throughput(sub, task, eager=False)
        res[f"eager_spectra_per_s_{task}"] = throughput(sub[:20], task, eager=True)
    res["graph_overhead_ms_per_step"], res["graph_steps_per_spectrum"] = graph_overhead(sub, "a")
    res["graph_overhead_ms_per_step"] *= 1000
    res["scores"] = scores(rows, specs)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    for k, v in res.items():
        if k != "scores":
            print(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}")
    print(f"{'task':5} {'n':>4} {'pos':>4} {'pred+':>5} {'acc':>6} {'F1':>6}")
    for t, s in res["scores"].items():
        f1 = "-" if s["f1"] is None else f"{s['f1']:.3f}"
        print(f"{t:5} {s['n']:4d} {s['positives']:4d} {s['predicted_positives']:5d} {s['accuracy']:6.3f} {f1:>6}")


if __name__ == "__main__":
    main()
