"""Vet-agent figures for docs/benchmarks.md: rules-policy throughput (deferred and eager renders),
graph overhead per step, and the scores of the rules policy on the shared data.

    .venv/bin/python bench/bench_vet.py [--limit N] [--json]
    .venv/bin/python bench/bench_vet.py --campaign [--tree NAME=DIR ...] [--workers 1,2] [--repeat 3]

Throughput is single-process (spectra/s/core) on spectra already read into memory; reading FITS is
timed separately. Graph overhead = wall time of a run minus the time spent inside the model calls
and the tool calls, divided by the number of graph steps (model + tool nodes).

--campaign (issue 22, item 2): a vet campaign end to end on every LAMOST file of the corpus,
`specreview ingest` then `specreview vet --task a` (claims checked, stored) into a fresh database,
against the agent's own loop (read + vet_spectrum in one process; and the same with each trajectory's claims
checked, the work the campaign does beside storing) measured in the same run, round
after round (the agent loop, then each tree's campaign: adjacent, so a shared machine's load hits
them alike); medians over --repeat rounds. --tree NAME=DIR runs the CLI of another checkout (e.g. a
git worktree of an earlier commit; default: this one). Reported per tree: end-to-end spectra/s
(both commands' wall time), the same after process start-up (the wall time of both commands on one
file taken off), the vet command's own vetting rate ("run: ... /s"), and its steady rate: trajectories
committed a second between the 10th and 90th percentile of their commit times; and, where the vet
leaves claim checks pending (issue 48: it stores first, checks after), how many at its end and when
every claim is checked (`specreview claims --pending` run after it). --copies N: N distinct
copies of each file (a header card each, so new content to the store), a run long enough for the
per-spectrum rate to show past start-up; --one-command: `specreview vet` alone on the files (it
registers them itself), no `ingest` before it.
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


def lamost_files() -> list[str]:
    base = spectra_dir()
    files = [str(base / r["file"]) for r in manifest_rows() if "LAMOST" in r["survey"] and "#" not in r["file"]]
    return list(dict.fromkeys(files))


def distinct_copies(files: list[str], copies: int, into: Path) -> list[str]:
    """`copies` copies of each file, each with a header card of its own (BENCHCPY = k in the primary
    header), so that every copy is new content to `specreview ingest` and `vet` (the store keys a
    spectrum by its file's hash): a campaign of len(files) x copies distinct files with the same
    spectra, for runs long enough that start-up does not hide the per-spectrum rate."""
    from astropy.io import fits

    out = []
    into.mkdir(parents=True, exist_ok=True)
    for k in range(copies):
        for f in files:
            dest = into / f"c{k}-{Path(f).name}"
            with fits.open(f) as hdul:
                hdul[0].header["BENCHCPY"] = (k, "bench_vet.py copy number")
                hdul.writeto(dest, overwrite=True)
            out.append(str(dest))
    return out


def agent_loop(files: list[str], check: bool = False) -> float:
    """The agent's own rate (spectra/s): read + vet_spectrum(task a), one process, imports warm. With
    `check`, each trajectory's claims checked too (check_trajectory): the work a campaign does for each
    spectrum beside storing it, so that a campaign's rate against it is what the CLI's own costs leave."""
    from agents.claims import check_trajectory

    def one(f):
        spec = read_spectrum(f)
        traj = vet_spectrum(spec, "a")
        if check:
            check_trajectory(traj, spec)

    one(files[0])
    t0 = time.perf_counter()
    for f in files:
        one(f)
    return len(files) / (time.perf_counter() - t0)


def _cli(tree: Path, args: list[str], log: Path) -> float:
    """Wall seconds of `specreview ARGS` run from checkout `tree` (its own code first on the path)."""
    import os
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(tree))
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        rc = subprocess.call([sys.executable, "-m", "reviewer.cli", *args], cwd=tree, env=env, stdout=fh,
                             stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    if rc != 0:
        raise RuntimeError(f"specreview {args[0]} failed in {tree}: {log.read_text()[-1500:]}")
    return wall


def campaign(tree: Path, files: list[str], tmp: Path, workers: int = 1, one_command: bool = False) -> dict:
    """`specreview ingest` + `specreview vet --task a` on `files` into a fresh database (and the same on
    one file, for the start-up cost); with `one_command`, `specreview vet` alone (it registers the
    files itself). Returns walls and rates."""
    import shutil

    out = {}
    for key, some in (("one", files[:1]), ("all", files)):
        run = tmp / f"{tree.name}-{key}"
        shutil.rmtree(run, ignore_errors=True)
        run.mkdir(parents=True)
        db = str(run / "c.duckdb")
        ingest = 0.0 if one_command else _cli(tree, ["ingest", "--db", db, "--no-progress", *some],
                                              run / "ingest.log")
        vet_args = ["vet", "--task", "a", "--db", db, "--no-progress", *some]
        if workers > 1:
            vet_args += ["--workers", str(workers)]
        vet = _cli(tree, vet_args, run / "vet.log")
        log = (run / "vet.log").read_text()
        said = re.search(r"run: .*\(([\d.]+)/s\)", log)
        left = re.search(r"claim checks pending: (\d+)", log)
        # a tree whose vet leaves claim checks pending: `specreview claims --pending` does them after it
        claims = _cli(tree, ["claims", "--pending", "--db", db, "--no-progress"], run / "claims.log") if left else 0.0
        out[key] = {"ingest_s": ingest, "vet_s": vet, "vet_run_per_s": float(said.group(1)) if said else None,
                    "steady_per_s": steady_rate(db), "pending_at_end": int(left.group(1)) if left else 0,
                    "claims_s": claims}
    n = len(files)
    wall, fixed = out["all"]["ingest_s"] + out["all"]["vet_s"], out["one"]["ingest_s"] + out["one"]["vet_s"]
    return {"per_s": n / wall, "per_s_after_start": (n - 1) / max(wall - fixed, 1e-9),
            "vet_run_per_s": out["all"]["vet_run_per_s"], "steady_per_s": out["all"]["steady_per_s"],
            "ingest_s": out["all"]["ingest_s"], "vet_s": out["all"]["vet_s"], "start_s": fixed,
            "pending_at_end": out["all"]["pending_at_end"], "claims_s": out["all"]["claims_s"],
            "all_checked_s": wall + out["all"]["claims_s"]}


def steady_rate(db: str) -> float | None:
    """Trajectories committed a second between the 10th and the 90th percentile of their commit times
    (`saved_at`): the campaign once it runs, its start-up and its last group left out, the rate that
    decides how long a survey's million candidates take. None under 100 trajectories."""
    from reviewer.store import Store

    with Store(db) as store:
        times = sorted(r["saved_at"].timestamp() for r in store.trajectories.list_trajectories())
    if len(times) < 100:
        return None
    lo, hi = len(times) // 10, len(times) * 9 // 10
    return (hi - lo) / max(times[hi] - times[lo], 1e-9)


def campaigns(trees: dict[str, Path], workers: list[int], repeat: int, copies: int = 1,
              one_command: bool = False) -> dict:
    import os
    import statistics
    import tempfile

    rounds: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-vet-campaign-") as tmp:
        files = lamost_files() if copies <= 1 else distinct_copies(lamost_files(), copies, Path(tmp) / "copies")
        for r in range(repeat):
            got = {"load_before": os.getloadavg()[0], "agent_per_s": agent_loop(files),
                   "checked_per_s": agent_loop(files, check=True)}
            for name, tree in trees.items():
                for w in workers:
                    got[f"{name}/w{w}"] = campaign(tree, files, Path(tmp) / f"r{r}", w, one_command)
            got["load_after"] = os.getloadavg()[0]
            rounds.append(got)
            print(json.dumps(got), file=sys.stderr, flush=True)
    med = {"n_files": len(files), "one_command": one_command, "rounds": rounds,
           "agent_per_s": statistics.median(g["agent_per_s"] for g in rounds),
           "checked_per_s": statistics.median(g["checked_per_s"] for g in rounds),
           "load": [min(min(g["load_before"], g["load_after"]) for g in rounds),
                    max(max(g["load_before"], g["load_after"]) for g in rounds)]}
    for key in rounds[0]:
        if "/w" in key:
            med[key] = {k: statistics.median(g[key][k] for g in rounds) for k in rounds[0][key]
                        if rounds[0][key][k] is not None}
            med[key]["ratio"] = statistics.median(g[key]["per_s"] / g["agent_per_s"] for g in rounds)
            med[key]["ratio_after_start"] = statistics.median(g[key]["per_s_after_start"] / g["agent_per_s"]
                                                              for g in rounds)
            med[key]["ratio_checked_after_start"] = statistics.median(g[key]["per_s_after_start"] / g["checked_per_s"]
                                                                      for g in rounds)
            # every claim checked (vet, then `claims --pending` where vet left some) against the checked loop
            med[key]["ratio_all_checked"] = statistics.median(len(files) / g[key]["all_checked_s"] / g["checked_per_s"]
                                                              for g in rounds)
            if all(g[key]["steady_per_s"] for g in rounds):
                med[key]["ratio_steady"] = statistics.median(g[key]["steady_per_s"] / g["agent_per_s"] for g in rounds)
    return med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--campaign", action="store_true", help="the end-to-end campaign against the agent's own loop")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                    help="--campaign: a checkout whose CLI to run (repeatable; default: this one, as 'after')")
    ap.add_argument("--workers", default="1", help="--campaign: comma-separated --workers values")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--copies", type=int, default=1,
                    help="--campaign: N distinct copies of each file (a header card each): N x 228 files")
    ap.add_argument("--one-command", action="store_true",
                    help="--campaign: `specreview vet` on the files alone (it registers them), no `ingest` first")
    args = ap.parse_args()
    if args.campaign:
        trees = dict(t.split("=", 1) for t in args.tree) or {"after": str(ROOT)}
        res = campaigns({k: Path(v).resolve() for k, v in trees.items()},
                        [int(w) for w in args.workers.split(",")], args.repeat, args.copies, args.one_command)
        res.update(machine=f"{platform.machine()} python {platform.python_version()}", date=date.today().isoformat())
        if args.json:
            print(json.dumps(res, indent=1))
            return
        print(f"{res['n_files']} LAMOST files, load average {res['load'][0]:.1f}-{res['load'][1]:.1f}; "
              f"agent loop (read + vet_spectrum): {res['agent_per_s']:.1f} spectra/s; "
              f"with the claims checked: {res['checked_per_s']:.1f} spectra/s")
        for key, v in res.items():
            if isinstance(v, dict) and "ratio" in v:
                print(f"{key}: {v['per_s']:.2f}/s end to end ({100 * v['ratio']:.0f} % of the agent), "
                      f"{v['per_s_after_start']:.2f}/s after start-up ({100 * v['ratio_after_start']:.0f} %; "
                      f"{100 * v['ratio_checked_after_start']:.0f} % of the checked loop), "
                      + (f"steady {v['steady_per_s']:.2f}/s ({100 * v['ratio_steady']:.0f} %), " if "ratio_steady" in v
                         else "") +
                      f"vet step {v.get('vet_run_per_s', float('nan')):.2f}/s; ingest {v['ingest_s']:.1f} s, "
                      f"vet {v['vet_s']:.1f} s, start-up {v['start_s']:.1f} s; claim checks pending at its end "
                      f"{v['pending_at_end']:.0f}, all checked at {v['all_checked_s']:.1f} s (`claims --pending` "
                      f"{v['claims_s']:.1f} s; {100 * v['ratio_all_checked']:.0f} % of the checked loop's rate)")
        return
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
