"""`specreview claims PATH_OR_ID... [--task T] [--json]`: check every claim of the stored trajectories
against their spectra (agents/claims) and store the results, replacing earlier results of the same
checker version. Items are trajectory ids, spectrum ids (every trajectory on the spectrum), or
spectrum files / folders already ingested (every trajectory on their spectra). Prints one line per
trajectory ("7 supported, 1 contradicted, 2 unverifiable") and the totals; --json prints them as one
JSON document. `vet` and `verify` already check the trajectories they make.

--backend openai: a chat model (any OpenAI-compatible endpoint: --base-url, --model, --config; the
key comes from $SPECREVIEW_LLM_API_KEY / $OPENAI_API_KEY or the config file, never the command line)
also extracts the claims the patterns miss, as structured JSON; the same deterministic checker judges
them (the model never judges). Those results are stored under checker version
"<version>+llm:<model>". A reply that is not the JSON asked for is a problem naming the trajectory
and the step; that trajectory keeps its pattern claims. The output names the extractors that ran:
patterns, or patterns+llm.

--pending: only the trajectories whose claims the current checker has not checked (of the items, else of
the whole database): those a `specreview vet` campaign stored without waiting for their check
(reviewer/services/claim_checks.py). They are checked in groups of 32 (--workers N: in N processes,
this one storing), each group stored in one transaction, so a stopped run leaves the rest pending; it
prints the totals and how many are still pending (a check that fails, its file gone, leaves its
trajectory pending and names it)."""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from reviewer.cli.common import open_store, progress_stream
from reviewer.cli.console import console_of


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("claims", help="check the trajectories' claims against their spectra and store the results",
                              description=__doc__.splitlines()[0])
    p.add_argument("items", nargs="*", metavar="PATH_OR_ID",
                   help="trajectory id, stored spectrum id, or ingested spectrum file / folder (with --pending: "
                        "optional, default every trajectory)")
    p.add_argument("--pending", action="store_true",
                   help="only the trajectories whose claims the current checker has not checked yet")
    p.add_argument("--workers", type=int, default=1,
                   help="with --pending: check in N processes (this one stores; default 1: here)")
    p.add_argument("--task", default=None, help="only trajectories of these kb tasks (comma-separated; e.g. a,verify)")
    p.add_argument("--backend", choices=("patterns", "openai"), default="patterns",
                   help="claim extraction: the patterns alone (default), or the patterns and a chat model "
                        "(the checker judges both)")
    p.add_argument("--model", default=None, help="model name for --backend openai (else from env/config)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1)")
    p.add_argument("--config", default=None, help="LLM config file (TOML/YAML/JSON; default $SPECREVIEW_LLM_CONFIG)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per model call")
    p.add_argument("--json", action="store_true", help="print the results as one JSON document")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def resolve_trajectories(store, items: list[str]) -> tuple[list[str], list[str]]:
    """Trajectory ids for trajectory ids, spectrum ids and paths (as `vet` resolves them, but nothing
    is ingested: a file not in the database has no trajectories); plus the problems met."""
    from reviewer.services.ingest import file_sha256, find_spectrum_files, ids_of_file
    from reviewer.services.items import record_of_spectrum, targets_of_file, trajectories_on, trajectory_summary

    tids, problems = [], []
    for item in items:
        if trajectory_summary(store, item) is not None:
            tids.append(item)
            continue
        if record_of_spectrum(store, item) is not None:
            sids = [item]
        elif Path(item).exists():
            files, _ = find_spectrum_files([item])
            sids = []
            for path in files:
                sha = file_sha256(Path(path))
                stored = ids_of_file(sha, targets_of_file(store, sha))
                if not stored:
                    problems.append(f"{path}: not ingested (no trajectories)")
                sids += stored
            if not files:
                problems.append(f"{item}: no spectrum files")
        else:
            problems.append(f"{item}: neither a stored trajectory or spectrum id nor an existing path")
            continue
        for sid in sids:
            found = [r["id"] for r in trajectories_on(store, sid)]
            if not found:
                problems.append(f"{sid}: no trajectories on this spectrum")
            tids += found
    return list(dict.fromkeys(tids)), problems


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from reviewer.services.claims import ClaimChecker, LLMExtractor, summarize, summary_text
    from reviewer.services.items import trajectory

    extractor = None
    if args.backend == "openai":
        from agents.llm import load_config

        try:
            cfg = load_config(args.config, model=args.model, base_url=args.base_url, timeout=args.timeout)
        except (OSError, ValueError) as err:
            console.warn(f"specreview claims: LLM config: {err}")
            return 2
        extractor = LLMExtractor(cfg)
    if not args.items and not args.pending:
        console.warn("specreview claims: name the trajectories, spectra or files to check (or --pending)")
        return 2
    if args.pending and (extractor is not None or args.task):
        console.warn("specreview claims: --pending checks with the patterns, every task")
        return 2
    store = open_store(args)
    if store is None:
        return 1
    if args.pending:
        return run_pending(args, store)
    tasks = {t.strip() for t in (args.task or "").split(",") if t.strip()}
    out = console.err if args.json else console.out
    checked, failed = [], 0
    try:
        tids, problems = resolve_trajectories(store, args.items)
        checker = ClaimChecker(store, extractor=extractor)
        iterator = tids
        bar_stream = progress_stream(args)
        if bar_stream is not None:
            from tqdm import tqdm

            iterator = tqdm(tids, desc="claims", unit="traj", file=bar_stream)
        for tid in iterator:
            console.check()
            traj = trajectory(store, tid)
            if traj is None or (tasks and traj.task not in tasks):
                continue
            try:
                done = checker.run_and_store(traj)
            except Exception as exc:
                problems.append(f"{tid}: {type(exc).__name__}: {exc}")
                failed += 1
                continue
            if done.problem:
                problems.append(done.problem)
                failed += 1
            results = done.results
            checked.append({
                "trajectory_id": tid, "spectrum_id": traj.spectrum_id, "task": traj.task,
                "backend": traj.agent.backend, "model": traj.agent.model, "extractor": done.extractor,
                "checker_version": done.version, **summarize(results),
                "contradicted_claims": [
                    {"step_idx": r.step_index, "text": r.claim.text, "measured": r.measured,
                     "tolerance": r.tolerance, "window": r.window, "reason": r.reason}
                    for r in results if r.verdict == "contradicted"],
                "summary": summary_text(results),
            })
    finally:
        store.close()
    totals = Counter()
    for row in checked:
        totals.update({v: row[v] for v in ("supported", "contradicted", "unverifiable")})
    flagged = sum(bool(row["contradicted"]) for row in checked)
    extractor_model = extractor.model if extractor is not None else None
    if args.json:
        console.say(json.dumps({"checker_version": checker.version, "extractor": checker.extractor_name,
                          "extractor_model": extractor_model, "trajectories": checked,
                          "totals": {v: totals[v] for v in ("supported", "contradicted", "unverifiable")},
                          "with_contradicted": flagged, "problems": problems}))
    else:
        for row in checked:
            console.say(f"{row['trajectory_id']}  {row['task']:<6} {row['backend']}/{row['model'] or '-'}  {row['summary']}  "
                  f"extractor: {row['extractor']}")
            for c in row["contradicted_claims"]:
                console.say(f"    contradicted, step {c['step_idx']}: {c['text']!r}: {c['reason']}")
    print(f"database: {store.path}", file=out)
    print(f"extractor: {checker.extractor_name}" + (f" ({extractor_model})" if extractor_model else ""), file=out)
    print(f"checked: {len(checked)} trajectories (checker {checker.version}); claims: "
          f"{totals['supported']} supported, {totals['contradicted']} contradicted, "
          f"{totals['unverifiable']} unverifiable; trajectories with a contradicted claim: {flagged}", file=out)
    for p in problems:
        print(f"  problem: {p}", file=out)
    return 0 if checked and not failed else 1


def run_pending(args: argparse.Namespace, store) -> int:
    """`--pending`: check the trajectories left pending (reviewer/services/claim_checks.py) and say
    how many were checked, with what, and how many are still pending."""
    from reviewer.services.claim_checks import check_pending, pending_count
    from reviewer.services.claims import CHECKER_VERSION, counts_text

    console = console_of(args)
    try:
        problems: list[str] = []
        ids = None
        if args.items:
            ids, problems = resolve_trajectories(store, args.items)
        total = pending_count(store, ids)
        bar = None
        bar_stream = progress_stream(args)
        if bar_stream is not None:
            from tqdm import tqdm

            bar = tqdm(total=total, desc="claims", unit="traj", file=bar_stream)

        def step(n: int) -> None:
            console.check()
            if bar is not None:
                bar.update(n)

        done, totals, failed = check_pending(store, ids, step=step, workers=max(args.workers, 1))
        if bar is not None:
            bar.close()
        left = pending_count(store, ids)
    finally:
        store.close()
    out = {"checker_version": CHECKER_VERSION, "checked": done, "totals": dict(totals), "still_pending": left,
           "problems": problems + failed}
    if args.json:
        console.say(json.dumps(out))
    else:
        console.say(f"database: {store.path}")
        console.say(f"checked: {done} pending trajectories (checker {CHECKER_VERSION}); claims: {counts_text(totals)}")
        console.say(f"still pending: {left}")
        for p in out["problems"]:
            console.say(f"  problem: {p}")
    return 0 if not out["problems"] else 1
