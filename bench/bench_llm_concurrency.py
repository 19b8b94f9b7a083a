"""LLM campaign throughput: `specreview vet --backend openai --concurrency N` against the local
scripted OpenAI-compatible server with an added latency per call, versus the bound.

    .venv/bin/python bench/bench_llm_concurrency.py [--concurrency 32] [--latency 0.5] [--zooms 2]
                                                    [--limit N] [--json]

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
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import re
import resource
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
        stop.wait()
        conn.send({"requests": len(server.requests), "max_in_flight": server.max_in_flight})


def specreview(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "reviewer.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def spectrum_ids(db: Path) -> list[str]:
    from reviewer.store import Store

    with Store(db) as store:
        return [s["spectrum_id"] for s in store.list_spectra(limit=None)]


def stored_usage(db: Path) -> dict:
    from agents.usage import step_usages, sum_usage
    from reviewer.store import Store

    calls = []
    with Store(db) as store:
        rows = store.list_trajectories(backend="openai")
        for r in rows:
            calls += step_usages(store.load_trajectory(r["id"]))
    lat = sorted(c["latency_s"] for c in calls)
    out = sum_usage(calls)
    out["trajectories"] = len(rows)
    out["latency_p50_s"] = lat[len(lat) // 2] if lat else None
    out["latency_p95_s"] = lat[int(0.95 * (len(lat) - 1))] if lat else None
    return out


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
                    help="pass --render-processes to vet (0: renders in the threads)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus = spectra_dir()
    if corpus is None:
        print("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)", file=sys.stderr)
        return 2
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    proc = ctx.Process(target=serve, args=(args.latency, args.zooms, child, stop), daemon=True)
    proc.start()
    base_url = parent.recv()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        ingest = specreview("ingest", "--db", str(db), str(corpus))
        if ingest.returncode != 0:
            print(ingest.stdout, ingest.stderr, file=sys.stderr)
        ids = spectrum_ids(db)[: args.limit] if args.limit else spectrum_ids(db)
        env = dict(os.environ, SPECREVIEW_LLM_BASE_URL=base_url, SPECREVIEW_LLM_MODEL="scripted-vlm",
                   SPECREVIEW_LLM_API_KEY="bench-key")
        t0 = time.perf_counter()
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        extra = ["--dask", args.dask] if args.dask else []
        if args.render_processes is not None:
            extra += ["--render-processes", args.render_processes]
        run = specreview("vet", "--db", str(db), "--task", args.task, "--backend", "openai", "--concurrency",
                         str(args.concurrency), "--no-progress", *extra, *ids, env=env)
        end_to_end = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        vet_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        stop.set()
        server = parent.recv()
        proc.join(5)
        if run.returncode != 0:
            print(run.stdout[-3000:], run.stderr[-3000:], file=sys.stderr)
            return 1
        m = re.search(r"run: (\d+) trajectories done, (\d+) failed, wall ([\d.]+) s .*CPU ([\d.]+) s", run.stdout)
        done, failed, wall, batch_cpu = int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))
        usage = stored_usage(db)
    calls_per = args.zooms + 1
    bound = args.concurrency / calls_per / args.latency
    rate = done / wall
    cpu_per = batch_cpu / max(done, 1)
    ceiling = (os.cpu_count() or 1) / cpu_per  # if the client had every core to itself, renders included
    result = {
        "spectra": len(ids), "trajectories": done, "failed": failed, "concurrency": args.concurrency,
        "dask": args.dask, "render_processes": args.render_processes,
        "latency_s": args.latency, "calls_per_trajectory": calls_per, "bound_per_s": round(bound, 2),
        "throughput_per_s": round(rate, 2), "fraction_of_bound": round(rate / bound, 3),
        "batch_wall_s": wall, "batch_cpu_s": batch_cpu, "cpu_ms_per_trajectory": round(1000 * cpu_per, 1),
        "cpu_ceiling_per_s": round(ceiling, 2), "end_to_end_s": round(end_to_end, 2),
        "vet_cpu_s": round(vet_cpu, 2), "server": server,
        "stored": usage, "cpus": os.cpu_count(), "load_avg": os.getloadavg(), "python": platform.python_version(),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(run.stdout)
    print(f"{done} trajectories ({failed} failed), {calls_per} calls each, {args.concurrency} in flight"
          f"{' over --dask ' + args.dask if args.dask else ' from one process'}, "
          f"{args.latency * 1000:.0f} ms per call")
    print(f"throughput {rate:.2f} trajectories/s over {wall:.1f} s; bound {bound:.2f}/s -> "
          f"{100 * rate / bound:.0f} % of the bound (target >= 70 %)")
    print(f"client CPU {batch_cpu:.1f} s = {1000 * cpu_per:.0f} ms per trajectory (renders, HTTP, store): "
          f"{os.cpu_count()} CPUs cap this client at {ceiling:.1f}/s = {100 * min(ceiling / bound, 9.99):.0f} % "
          f"of the bound, {batch_cpu / wall:.2f} CPUs used on average")
    print(f"end to end (process start, ids, summary) {end_to_end:.1f} s, {vet_cpu:.1f} s CPU; "
          f"server saw {server['requests']} requests, "
          f"at most {server['max_in_flight']} at once")
    print(f"stored: {usage['calls']} calls, prompt {usage['prompt_tokens']:,} / completion "
          f"{usage['completion_tokens']:,} tokens, {usage['images']:,} images; latency p50 "
          f"{usage['latency_p50_s']} s p95 {usage['latency_p95_s']} s; load avg {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
