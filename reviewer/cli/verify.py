"""`specreview verify PATH_OR_ID... [--json]`: run the FORMA verification pipeline on spectra and
store the trajectories (report and brief in the outcome). Unknown paths are ingested first;
spectra already verified by the same backend and model are skipped unless --force.

`--backend rules` (default): the deterministic rules alone (stored as backend "rules", model
"forma-rules-<version>"). `--backend openai`: the same rules, then an adversarial review by an
OpenAI-compatible model configured as for `specreview vet` (env / config file, `--model`); stored
as backend "rules+openai", model = the model's name. The rules' verdict and credibility stand
either way; a disagreeing model sets human_review to Yes."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("verify", help="verify class and redshift with the FORMA protocol",
                              description=__doc__.splitlines()[0])
    p.add_argument("items", nargs="+", metavar="PATH_OR_ID", help="spectrum file, folder, or stored spectrum id")
    p.add_argument("--json", action="store_true", help="print one JSON brief per spectrum per line")
    p.add_argument("--force", action="store_true", help="verify again even when a trajectory exists")
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument("--dask", default=None, metavar="ADDRESS", help="run on an existing Dask scheduler")
    p.add_argument("--templates", default=None, metavar="DIR",
                   help="Redrock template folder (default: $RR_TEMPLATE_DIR / $SPECREVIEW_TEMPLATE_DIR; "
                        "else the derived templates bundled in kb/templates)")
    p.add_argument("--engine", choices=("builtin", "redrock"), default="builtin", help="hypothesis engine")
    p.add_argument("--backend", choices=("rules", "openai"), default="rules",
                   help="openai: add an adversarial LLM review beside the rule verdicts")
    p.add_argument("--model", default=None, help="model name for --backend openai (else from env/config)")
    p.add_argument("--eager-renders", action="store_true", help="render every window now (default: on demand)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def verify_job(job: dict):
    """Worker: read one spectrum, verify it, return the trajectory (module level: picklable)."""
    from agents.llm import load_config
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum

    spec = read_spectrum(job["source_path"], job["target"])
    cfg = load_config(model=job.get("model")) if job.get("backend") == "openai" else None
    return verify_spectrum(spec, spectrum_id=job["spectrum_id"], template_dir=job["templates"],
                           engine=job["engine"], eager_renders=job["eager"], llm_config=cfg)


def brief_line(traj, source_path: str | None = None) -> str:
    b = dict(traj.outcome.get("brief", {}))
    out = {"source_path": source_path or traj.source_path, "target": traj.target}
    out.update({k: b.get(k) for k in ("type", "redshift", "credibility", "feature_score", "human_review",
                                      "redshift_rms", "lines", "verdict")})
    return json.dumps(out)


def run(args: argparse.Namespace) -> int:
    from agents.batch import run_batch
    from agents.llm import load_config
    from agents.verify.graph import agent_info
    from reviewer.cli.common import open_store
    from reviewer.cli.vet import resolve_items

    store = open_store(args)
    if store is None:
        return 1
    progress = not args.no_progress and sys.stderr.isatty()
    agent = agent_info(load_config(model=args.model) if args.backend == "openai" else None)
    counts: Counter = Counter()
    problems: list[str] = []
    skipped = 0
    try:
        ids, problems = resolve_items(store, args.items, progress)
        jobs = []
        for sid in ids:
            rec = store.get_spectrum(sid)
            done = store.find_trajectory(sid, "verify", agent.backend, agent.model)
            if done and not args.force:
                skipped += 1
                if args.json:
                    traj = store.load_trajectory(done)
                    print(brief_line(traj, rec["source_path"]))
                continue
            jobs.append({"spectrum_id": sid, "source_path": rec["source_path"], "target": rec["target"],
                         "templates": args.templates, "engine": args.engine, "eager": args.eager_renders,
                         "backend": args.backend, "model": args.model})
        for job, result in run_batch(verify_job, jobs, workers=args.workers, dask_address=args.dask,
                                     progress=progress, desc="verify"):
            if isinstance(result, BaseException):
                problems.append(f"{job['source_path']}#{job['target'] or ''}: {type(result).__name__}: {result}")
                counts["failed"] += 1
                continue
            store.save_trajectory(result)
            counts[result.outcome.get("credibility", "?")] += 1
            if result.outcome.get("llm_disagrees"):
                counts["llm disagrees"] += 1
            if args.json:
                print(brief_line(result, job["source_path"]), flush=True)
    finally:
        store.close()
    out = sys.stderr if args.json else sys.stdout
    print(f"database: {store.path}", file=out)
    print(f"agent: {agent.backend} ({agent.model})", file=out)
    print(f"verified: {sum(v for k, v in counts.items() if k not in ('failed', 'llm disagrees'))} "
          f"({', '.join(f'{k}: {v}' for k, v in sorted(counts.items()))}); skipped (already verified): {skipped}", file=out)
    for p in problems:
        print(f"  problem: {p}", file=out)
    return 0 if ids and not counts.get("failed") else 1
