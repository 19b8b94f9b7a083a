"""`specreview vet --task TASK [--backend rules|openai] PATH_OR_ID...`: run the Spec-o3 vetting
agent on spectra and store the trajectories. Paths not yet in the database are ingested first;
spectra already vetted with the same task/backend/model are skipped unless --force."""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from reviewer.cli.common import known_task, open_store
from reviewer.ingest import ingest_paths
from reviewer.ingest import file_sha256, find_spectrum_files, spectrum_id_for


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("vet", help="vet spectra with the Spec-o3 protocol and store the trajectories",
                              description=__doc__.splitlines()[0])
    p.add_argument("items", nargs="+", metavar="PATH_OR_ID", help="spectrum file, folder, or stored spectrum id")
    p.add_argument("--task", required=True, help="kb task id (a, b, o, wd, mg, cv, cs, ss); comma-separate several")
    p.add_argument("--backend", choices=("rules", "openai"), default="rules")
    p.add_argument("--model", default=None, help="model name for --backend openai (else from env/config)")
    p.add_argument("--tool-protocol", choices=("native", "hermes"), default=None, help="openai backend tool protocol")
    p.add_argument("--force", action="store_true", help="vet again even when a trajectory exists")
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument("--dask", default=None, metavar="ADDRESS", help="run on an existing Dask scheduler")
    p.add_argument("--eager-renders", action="store_true", help="render every zoom now (default: on demand)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def vet_job(job: dict):
    """Worker: read one spectrum, vet it, return the trajectory (module level: picklable)."""
    from agents.llm import load_config
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    spec = read_spectrum(job["source_path"], job["target"])
    cfg = None
    if job["backend"] == "openai":
        cfg = load_config(model=job.get("model"), tool_protocol=job.get("tool_protocol"))
    return vet_spectrum(spec, job["task"], job["backend"], eager_renders=job["eager"], llm_config=cfg,
                        spectrum_id=job["spectrum_id"])


def resolve_items(store, items: list[str], progress: bool) -> tuple[list[str], list[str]]:
    """Spectrum ids for ids and paths (ingesting unknown files); plus the problems met."""
    ids, problems = [], []
    for item in items:
        if store.get_spectrum(item) is not None:
            ids.append(item)
            continue
        if not Path(item).exists():
            problems.append(f"{item}: neither a stored spectrum id nor an existing path")
            continue
        summary = ingest_paths(store, [item], progress=progress)
        problems += [f"{where}: {why}" for where, why in summary.failed]
        files, _ = find_spectrum_files([item])
        for path in files:
            sha = file_sha256(path)
            ids += [spectrum_id_for(sha, t) for t in sorted(store.targets_for_file(sha), key=lambda t: (t is not None, str(t)))]
    return list(dict.fromkeys(ids)), problems


def run(args: argparse.Namespace) -> int:
    from agents.batch import run_batch
    from agents.llm import load_config
    from agents.vet.rules_model import RULES_VERSION

    tasks = [t.strip() for t in args.task.split(",") if t.strip()]
    if not all(known_task("vet", t) for t in tasks):
        return 2
    store = open_store(args)
    if store is None:
        return 1
    progress = not args.no_progress and sys.stderr.isatty()
    model = RULES_VERSION if args.backend == "rules" else load_config(model=args.model).model
    try:
        ids, problems = resolve_items(store, args.items, progress)
        jobs, skipped = [], 0
        for sid in ids:
            rec = store.get_spectrum(sid)
            for task in tasks:
                if not args.force and store.find_trajectory(sid, task, args.backend, model):
                    skipped += 1
                    continue
                jobs.append({"spectrum_id": sid, "source_path": rec["source_path"], "target": rec["target"],
                             "task": task, "backend": args.backend, "model": args.model,
                             "tool_protocol": args.tool_protocol, "eager": args.eager_renders})
        counts: Counter = Counter()
        for job, result in run_batch(vet_job, jobs, workers=args.workers, dask_address=args.dask,
                                     progress=progress, desc="vet"):
            if isinstance(result, BaseException):
                problems.append(f"{job['source_path']}#{job['target'] or ''} [{job['task']}]: {type(result).__name__}: {result}")
                counts["failed"] += 1
                continue
            store.save_trajectory(result)
            out = result.outcome
            counts[out.get("prediction") or out.get("status")] += 1
    finally:
        store.close()
    print(f"database: {store.path}")
    print(f"vetted: {sum(v for k, v in counts.items() if k != 'failed')} ({', '.join(f'{k}: {v}' for k, v in sorted(counts.items()))})")
    print(f"skipped (already vetted): {skipped}")
    for p in problems:
        print(f"  problem: {p}")
    return 0 if ids and counts.get("failed", 0) < max(len(jobs), 1) else 1
