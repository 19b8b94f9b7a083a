"""LLM campaign throughput: `specreview vet --backend openai --concurrency N` against the local
scripted OpenAI-compatible server with an added latency per call, versus the bound.

    .venv/bin/python bench/bench_llm_concurrency.py [--concurrency 32] [--latency 0.5] [--zooms 2]
                                                    [--limit N] [--repeat R] [--json]

The server runs in its own process (as a model server would) and answers from the conversation:
`--zooms` zoom calls, then the answer, so every trajectory makes zooms + 1 calls. With N requests in
flight and L seconds per call, no client can vet more than N / (zooms + 1) / L spectra per second:
that is the bound. The corpus is ingested first (not timed); the vet command then runs as a user
runs it, in a subprocess, and its throughput is the run summary's (the batch phase: jobs started
to last trajectory stored). End-to-end wall time of the command (start-up, resolving ids) is
reported beside it. Token and latency figures are read back from the database, as stored.

The client's own CPU is reported too (the vet process, its render processes): each zoom is a
matplotlib render, so a machine with few cores caps the run below the bound whatever the server
does; `cpu_ceiling` = CPUs / CPU seconds per trajectory says where that cap lies on this machine.
So is the server's (it shares the machine; ~3 ms per trajectory, so it is not what limits a run),
and the load average before and after each run: on a machine shared with other work, run with
`--repeat 3` and read the spread beside the load.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))
from scripted_openai_server import Reply, ScriptedOpenAIServer  # noqa: E402
from shared_data import spectra_dir  # noqa: E402

WINDOWS = [[6500, 6620], [4800, 4950], [4300, 4400], [3900, 4000], [5850, 5950]]
FINAL = "<think>The zoomed lines settle it.</think><answer>\\boxed{NO} Not this class.</answer>"


def responder(zooms: int):
    def reply(body: dict) -> Reply:
        turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if turns < zooms:
            window = WINDOWS[turns % len(WINDOWS)]
            return Reply.tool_call("spectral_visualization_tool", {"wavelength_range": window, "label": "line"},
                                   content=f"<think>zoom {turns + 1}</think>")
        return Reply.text(FINAL)
    return reply


def serve(latency: float, zooms: int, conn, stop) -> None:
    server = ScriptedOpenAIServer(latency=latency, responder=responder(zooms))
    with server:
        conn.send(server.base_url)
        cpu0 = time.process_time()
        stop.wait()
        conn.send({"requests": len(server.requests), "max_in_flight": server.max_in_flight,
                   "cpu_s": round(time.process_time() - cpu0, 2)})


def specreview(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "reviewer.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def spectrum_ids(db: Path) -> list[str]:
    from reviewer.store import Store

    with Store(db) as store:
        return [s["spectrum_id"] for s in store.spectra.list_spectra(limit=None)]


def stored_usage(db: Path) -> dict:
    from agents.usage import step_usages, sum_usage
    from reviewer.store import Store

    calls = []
    with Store(db) as store:
        rows = store.trajectories.list_trajectories(backend="openai")
        for r in rows:
            calls += step_usages(store.trajectories.load_trajectory(r["id"]))
    lat = sorted(c["latency_s"] for c in calls)
    out = sum_usage(calls)
    out["trajectories"] = len(rows)
    out["latency_p50_s"] = lat[len(lat) // 2] if lat else None
    out["latency_p95_s"] = lat[int(0.95 * (len(lat) - 1))] if lat else None
    return out


def start_server(latency: float, zooms: int):
    """(base_url, finish) of a scripted server in its own process; finish() stops it and returns
    what it saw (requests, the most in flight at once, its CPU seconds)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    proc = ctx.Process(target=serve, args=(latency, zooms, child, stop), daemon=True)
    proc.start()
    base_url = parent.recv()

    def finish() -> dict:
        stop.set()
        seen = parent.recv()
        proc.join(5)
        return seen

    return base_url, finish


def vet_once(args, db: Path, ids: list[str]) -> dict | None:
    """One `specreview vet` run on `db` against a fresh server; its figures, or None if it failed."""
    base_url, finish = start_server(args.latency, args.zooms)
    env = dict(os.environ, SPECREVIEW_LLM_BASE_URL=base_url, SPECREVIEW_LLM_MODEL="scripted-vlm",
               SPECREVIEW_LLM_API_KEY="bench-key")
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    extra = ["--dask", args.dask] if args.dask else []
    if args.render_processes is not None:
        extra += ["--render-processes", args.render_processes]
    run = specreview("vet", "--db", str(db), "--task", args.task, "--backend", "openai", "--concurrency",
                     str(args.concurrency), "--no-progress", *extra, *ids, env=env)
    end_to_end = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = finish()
    if run.returncode != 0:
        print(run.stdout[-3000:], run.stderr[-3000:], file=sys.stderr)
        return None
    m = re.search(r"run: (\d+) trajectories done, (\d+) failed, wall ([\d.]+) s .*CPU ([\d.]+) s", run.stdout)
    done, failed, wall, batch_cpu = int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))
    calls_per = args.zooms + 1
    bound = args.concurrency / calls_per / args.latency
    rate = done / wall
    cpu_per = batch_cpu / max(done, 1)
    return {
        "trajectories": done, "failed": failed, "throughput_per_s": round(rate, 2),
        "fraction_of_bound": round(rate / bound, 3), "batch_wall_s": wall, "batch_cpu_s": batch_cpu,
        "cpu_ms_per_trajectory": round(1000 * cpu_per, 1),
        # if the client had every core to itself, renders included
        "cpu_ceiling_per_s": round((os.cpu_count() or 1) / cpu_per, 2),
        "end_to_end_s": round(end_to_end, 2),
        "vet_cpu_s": round((cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime), 2),
        "server": server, "server_cpu_ms_per_trajectory": round(1000 * server["cpu_s"] / max(done, 1), 1),
        "load_avg_before": [round(x, 2) for x in load0], "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "stored": stored_usage(db), "output": run.stdout,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds added to every call")
    ap.add_argument("--zooms", type=int, default=2, help="zoom calls per trajectory before the answer")
    ap.add_argument("--task", default="a")
    ap.add_argument("--limit", type=int, default=None, help="vet only the first N ingested spectra")
    ap.add_argument("--dask", default=None, help="pass --dask to vet (e.g. local:2: the in-flight requests "
                    "spread over 2 worker processes, for when renders fill one core)")
    ap.add_argument("--render-processes", default=None,
                    help="pass --render-processes to vet (0: renders in the threads; default: vet's own)")
    ap.add_argument("--repeat", type=int, default=1, help="vet the corpus this many times (a fresh copy of the "
                    "ingested database and a fresh server each time): on a shared machine the spread and the "
                    "load average beside each run say how much the machine's other work weighed")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus = spectra_dir()
    if corpus is None:
        print("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)", file=sys.stderr)
        return 2
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "ingested.duckdb"
        ingest = specreview("ingest", "--db", str(base), str(corpus))
        if ingest.returncode != 0:
            print(ingest.stdout, ingest.stderr, file=sys.stderr)
        ids = spectrum_ids(base)[: args.limit] if args.limit else spectrum_ids(base)
        for i in range(max(args.repeat, 1)):
            db = Path(tmp) / f"run{i}.duckdb"
            shutil.copy(base, db)
            result = vet_once(args, db, ids)
            if result is None:
                return 1
            runs.append(result)
            if not args.json:
                print_run(args, result, len(ids))
    bound = args.concurrency / (args.zooms + 1) / args.latency
    rates = sorted(r["throughput_per_s"] for r in runs)
    summary = {
        "spectra": len(ids), "concurrency": args.concurrency, "dask": args.dask,
        "render_processes": args.render_processes, "latency_s": args.latency,
        "calls_per_trajectory": args.zooms + 1, "bound_per_s": round(bound, 2),
        "throughput_median_per_s": rates[len(rates) // 2], "throughput_best_per_s": rates[-1],
        "cpus": os.cpu_count(), "python": platform.python_version(),
        "runs": [{k: v for k, v in r.items() if k != "output"} for r in runs],
    }
    if args.json:
        print(json.dumps(summary, indent=1))
    elif len(runs) > 1:
        print(f"{len(runs)} runs: throughput median {summary['throughput_median_per_s']:.2f}/s, best "
              f"{rates[-1]:.2f}/s, bound {bound:.2f}/s; load average (1 min) before each run: "
              f"{', '.join(str(r['load_avg_before'][0]) for r in runs)}")
    return 0


def print_run(args, r: dict, spectra: int) -> None:
    bound = args.concurrency / (args.zooms + 1) / args.latency
    usage, server = r["stored"], r["server"]
    print(r["output"])
    print(f"{r['trajectories']} trajectories ({r['failed']} failed), {args.zooms + 1} calls each, {args.concurrency} "
          f"in flight{' over --dask ' + args.dask if args.dask else ' from one process'}, "
          f"{args.latency * 1000:.0f} ms per call")
    print(f"throughput {r['throughput_per_s']:.2f} trajectories/s over {r['batch_wall_s']:.1f} s; bound {bound:.2f}/s "
          f"-> {100 * r['fraction_of_bound']:.0f} % of the bound (target >= 70 %)")
    cpu_per = r["cpu_ms_per_trajectory"]
    print(f"client CPU {r['batch_cpu_s']:.1f} s = {cpu_per:.0f} ms per trajectory (renders, HTTP, store): "
          f"{os.cpu_count()} CPUs cap this client at {r['cpu_ceiling_per_s']:.1f}/s = "
          f"{100 * min(r['cpu_ceiling_per_s'] / bound, 9.99):.0f} % of the bound, "
          f"{r['batch_cpu_s'] / r['batch_wall_s']:.2f} CPUs used on average")
    print(f"end to end (process start, ids, summary) {r['end_to_end_s']:.1f} s, {r['vet_cpu_s']:.1f} s CPU; "
          f"server saw {server['requests']} requests, at most {server['max_in_flight']} at once, and used "
          f"{server['cpu_s']:.1f} s CPU ({r['server_cpu_ms_per_trajectory']:.1f} ms per trajectory)")
    print(f"stored: {usage['calls']} calls, prompt {usage['prompt_tokens']:,} / completion "
          f"{usage['completion_tokens']:,} tokens, {usage['images']:,} images; latency p50 "
          f"{usage['latency_p50_s']} s p95 {usage['latency_p95_s']} s; load average (1 min) "
          f"{r['load_avg_before'][0]} before, {r['load_avg_after'][0]} after, on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    sys.exit(main())
