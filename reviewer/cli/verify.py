"""`specreview verify PATH_OR_ID... [--json]`: run the FORMA verification pipeline on spectra and
store the trajectories (report and brief in the outcome). Unknown paths are ingested first;
spectra already verified by the same backend and model are skipped unless --force.

`--backend rules` (default): the deterministic rules alone (stored as backend "rules", model
"forma-rules-<version>"). `--backend openai`: the same rules, then an adversarial review by an
OpenAI-compatible model configured as for `specreview vet` (env / config file, `--model`); stored
as backend "rules+openai", model = the model's name. The rules' verdict and credibility stand
either way; a disagreeing model sets human_review to Yes. With a model, --concurrency reviews run
at once from this process (shared rate limiter, Retry-After obeyed) and the run ends with a summary
of calls, tokens and latency; --dask ADDRESS or local[:N] spreads the work over Dask workers, which
only compute (this process writes the database). Each new trajectory's claims are checked against
its spectrum (agents/claims) before it is saved, and stored with it (--no-claims: not now)."""
from __future__ import annotations

import argparse
import json
from collections import Counter

from reviewer.cli.common import (
    TrajectoryWriter,
    add_batch_options,
    add_claims_option,
    batch_plan,
    changed_since_ingest,
    claim_checker,
    claims_report,
    llm_overrides,
    open_store,
    progress_stream,
    store_triage_signals,
)
from reviewer.cli.console import console_of


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("verify", help="verify class and redshift with the FORMA protocol",
                              description=__doc__.splitlines()[0])
    p.add_argument("items", nargs="+", metavar="PATH_OR_ID", help="spectrum file, folder, or stored spectrum id")
    p.add_argument("--json", action="store_true", help="print one JSON brief per spectrum per line")
    p.add_argument("--force", action="store_true", help="verify again even when a trajectory exists")
    p.add_argument("--templates", default=None, metavar="DIR",
                   help="Redrock template folder (default: $RR_TEMPLATE_DIR / $SPECREVIEW_TEMPLATE_DIR; "
                        "else the derived templates bundled in kb/templates)")
    p.add_argument("--engine", choices=("builtin", "redrock"), default="builtin", help="hypothesis engine")
    p.add_argument("--backend", choices=("rules", "openai"), default="rules",
                   help="openai: add an adversarial LLM review beside the rule verdicts")
    p.add_argument("--model", default=None, help="model name for --backend openai (else from env/config)")
    p.add_argument("--eager-renders", action="store_true", help="render every window now (default: on demand)")
    add_batch_options(p)
    add_claims_option(p)
    return p


def brief_line(traj, source_path: str | None = None) -> str:
    b = dict(traj.outcome.get("brief", {}))
    out = {"source_path": source_path or traj.source_path, "target": traj.target}
    out.update({k: b.get(k) for k in ("type", "redshift", "credibility", "feature_score", "human_review",
                                      "redshift_rms", "lines", "verdict")})
    return json.dumps(out)


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from agents.batch import run_batch
    from agents.jobs import verify_job
    from agents.llm import load_config
    from agents.usage import RunSummary, step_usages
    from agents.verify.graph import agent_info
    from reviewer.cli.vet import resolve_items
    from reviewer.services.items import record_of_spectrum, trajectory, trajectory_for

    llm = llm_overrides(args) if args.backend == "openai" else None
    cfg = load_config(**llm) if llm is not None else None
    plan, llm = batch_plan(args, cfg, llm)
    store = open_store(args)
    if store is None:
        return 1
    progress = progress_stream(args)
    agent = agent_info(cfg)
    summary = RunSummary()
    counts: Counter = Counter()
    problems: list[str] = []
    skipped, signals = 0, None
    try:
        ids, problems = resolve_items(store, args.items, console, progress)
        jobs = []
        for sid in ids:
            rec = record_of_spectrum(store, sid)
            done = trajectory_for(store, sid, "verify", agent.backend, agent.model)
            if done and not args.force:
                skipped += 1
                if args.json:
                    traj = trajectory(store, done)
                    console.say(brief_line(traj, rec["source_path"]))
                continue
            changed = changed_since_ingest(rec)
            if changed:  # not the file that was ingested: its trajectory would describe other data
                problems.append(f"{rec['source_path']}#{rec['target'] or ''}: {changed}")
                counts["failed"] += 1
                continue
            jobs.append({"spectrum_id": sid, "source_path": rec["source_path"], "target": rec["target"],
                         "templates": args.templates, "engine": args.engine, "eager": args.eager_renders,
                         "backend": args.backend, "llm": llm})
        summary = RunSummary()  # the clock starts when the jobs do
        with TrajectoryWriter(store, claims=claim_checker(args, store)) as writer:
            for job, result in run_batch(verify_job, jobs, **plan, progress=progress,
                                         desc="verify", unit="spectrum", postfix=lambda *_: summary.postfix()):
                console.check()
                if isinstance(result, BaseException):
                    problems.append(f"{job['source_path']}#{job['target'] or ''}: {type(result).__name__}: {result}")
                    counts["failed"] += 1
                    summary.add(ok=False)
                    continue
                writer.add(result)
                summary.add(step_usages(result))
                counts[result.outcome.get("credibility") or result.outcome.get("status", "?")] += 1  # or unjudgeable
                if result.outcome.get("llm_disagrees"):
                    counts["llm disagrees"] += 1
                if args.json:
                    console.say(brief_line(result, job["source_path"]), flush=True)
        for traj, exc in writer.errors:
            problems.append(f"{traj.source_path}#{traj.target or ''}: not stored: {exc}")
            counts["failed"] += 1
        signals = store_triage_signals(store, writer.spectra)  # a run stopped early leaves them to the first read
    finally:
        store.close()
    out = console.err if args.json else console.out
    print(f"database: {store.path}", file=out)
    print(f"agent: {agent.backend} ({agent.model})", file=out)
    print(f"verified: {sum(v for k, v in counts.items() if k not in ('failed', 'llm disagrees'))} "
          f"({', '.join(f'{k}: {v}' for k, v in sorted(counts.items()))}); "
          f"skipped (already verified): {skipped}", file=out)
    for line in summary.lines("spectra"):
        print(line, file=out)
    for line in claims_report(writer):
        print(line, file=out)
    if signals:
        print(signals, file=out)
    for p in problems:
        print(f"  problem: {p}", file=out)
    return 0 if ids and not counts.get("failed") else 1
