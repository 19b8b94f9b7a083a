"""`specreview judge --model M`: score stored trajectories with the 0-5 reasoning rubric through an
OpenAI-compatible endpoint; each score is stored as a rating by rater "llm:<model>". `--offline`: the
offline judge instead (agents.judge.offline_judge: the rubric read from the claim checker's verdicts, no
model; rater "offline:claims-1"). `--against-people`: the judge report, each judge's scores against
people's (reviewer.services.stats.judge_report: quadratic-weighted kappa, Spearman, confusion table); it
writes nothing.

--concurrency calls run at once from threads of this process, sharing one client and rate limiter
(429/503 with Retry-After pause them all). Trajectories are read and scores written by this thread
only, as each call finishes, so an interrupted run resumes with what is left."""
from __future__ import annotations

import argparse
from functools import partial

from reviewer.cli.common import open_store, progress_stream
from reviewer.cli.console import console_of
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE

EXIT_FAILED = EXIT_SOME_FAILED


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "judge", help="score trajectories 0-5 with an LLM judge (any OpenAI-compatible endpoint)",
        description="Score stored trajectories with the kb 0-5 reasoning rubric. The key comes from "
        "$SPECREVIEW_LLM_API_KEY / $OPENAI_API_KEY or the LLM config file, never from the command line. "
        "Trajectories this judge already scored under the current rubric version are skipped unless --force. "
        "A reply without a score is recorded as a judge failure, not a rating. Exit 1 if any call failed.",
    )
    p.add_argument("--model", default=None, help="model name as the endpoint knows it (needed unless --offline "
                   "or --against-people)")
    p.add_argument("--offline", action="store_true",
                   help="score with the offline judge (the rubric read from the stored claim checks; no model)")
    p.add_argument("--against-people", action="store_true",
                   help="report each judge's scores against people's 0-5 scores (weighted kappa, Spearman, "
                   "confusion table); writes nothing")
    p.add_argument("--judge", default=None, metavar="RATER",
                   help="--against-people: only this judge (e.g. llm:gpt-4o, offline:claims-1)")
    p.add_argument("--session", default=None, help="--against-people: only this campaign's scores")
    p.add_argument("--json", action="store_true", help="--against-people: the report as JSON")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1)")
    p.add_argument("--config", default=None, help="LLM config file (TOML/YAML/JSON; default $SPECREVIEW_LLM_CONFIG)")
    p.add_argument("--task", default=None, help="only trajectories of this task")
    p.add_argument("--limit", type=int, default=None, help="score at most N trajectories")
    p.add_argument("--force", action="store_true", help="score again what this judge already scored")
    p.add_argument("--images", action="store_true", help="send the stored renders too (vision models)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per call")
    p.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help="judge calls in flight at once (default: the LLM config's, else 16)")
    p.add_argument("--max-rps", type=float, default=None, metavar="R", help="at most R calls started per second")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _judge_one(item, *, cfg, entry, with_images):
    from agents.judge import judge_trajectory

    _, traj = item
    return judge_trajectory(traj, cfg=cfg, rubric_entry=entry, with_images=with_images)


def _offline_one(item, *, claims):
    from agents.judge import offline_judge

    tid, traj = item
    return offline_judge(traj, claims.get(tid))


def _report(args: argparse.Namespace, console) -> int:
    """The judges against people (reviewer.services.stats.judge_report), in words or as JSON."""
    import json

    from reviewer.services.stats import judge_report
    from reviewer.store.review_queries import UnknownSession

    store = open_store(args)
    if store is None:
        return EXIT_FAILED
    try:
        rows = judge_report(store, args.session, args.judge)
    except UnknownSession as exc:
        console.warn(f"specreview judge: {exc}")
        return EXIT_FAILED
    finally:
        store.close()
    if args.json:
        console.say(json.dumps(rows, allow_nan=True, indent=1))
        return EXIT_OK
    if not rows:
        console.say("no trajectory scored by both a judge and a person" + (f" (judge {args.judge})" if args.judge else ""))
    for r in rows:
        console.say(f"{r['judge']} against {r['people']}, {r['criterion']} v{r['rubric_version']}: n {r['n']}, "
                    f"weighted kappa {r['qwk']:.3f}, Spearman {r['spearman']:.3f} (p {r['p_value']:.3g}), "
                    f"exact {r['exact']:.2f}, bias {r['bias']:+.2f}")
        if r["people"].startswith("people"):  # the confusion table once per judge: rows people, columns judge
            console.say("  people \\ judge   " + " ".join(f"{s:>4}" for s in range(6)))
            for score, counts in enumerate(r["confusion"]):
                console.say(f"  {score:>14}   " + " ".join(f"{c:>4}" for c in counts))
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    if args.against_people:
        return _report(args, console)
    if not args.offline and not args.model:
        console.warn("specreview judge: give --model M (a model judge), --offline (the offline judge) or "
                     "--against-people (the report)")
        return EXIT_USAGE
    from agents.batch import run_batch
    from agents.judge import OFFLINE_JUDGE, rubric
    from agents.llm import load_config
    from agents.usage import RunSummary

    cfg = None if args.offline else load_config(args.config, model=args.model, base_url=args.base_url,
                                                timeout=args.timeout, concurrency=args.concurrency,
                                                max_rps=args.max_rps)
    entry = rubric()
    version = str(entry["version"])
    rater = OFFLINE_JUDGE if args.offline else f"llm:{cfg.model}"
    from reviewer.services.claims import claim_counts
    from reviewer.services.items import trajectory, trajectory_rows
    from reviewer.services.trajectories import judged_by, save_judge_failure, save_judge_score

    store = open_store(args)
    if store is None:
        return EXIT_FAILED
    summary = RunSummary()
    try:
        done = set() if args.force else judged_by(store, rater, version)
        todo = [r["id"] for r in trajectory_rows(store, task=args.task) if r["id"] not in done]
        todo.sort()  # stable order: the same --limit picks the same trajectories
        if args.limit is not None:
            todo = todo[:max(args.limit, 0)]
        # loaded lazily, by this thread, a few ahead of the calls: never the whole list in memory
        items = ((tid, trajectory(store, tid, with_images=args.images)) for tid in todo)
        if args.offline:  # the stored claim checks of the trajectories to score (one query)
            job, threads = partial(_offline_one, claims=claim_counts(store, todo)), 1
        else:
            job, threads = partial(_judge_one, cfg=cfg, entry=entry, with_images=args.images), max(cfg.concurrency, 1)
        summary = RunSummary()
        for (tid, _), result in run_batch(job, items, threads=threads, total=len(todo),
                                          progress=progress_stream(args), desc="judge", unit="traj",
                                          postfix=lambda *_: summary.postfix()):
            console.check()
            if isinstance(result, BaseException):  # a bug, not a model failure: record it all the same
                result_error, reply, usage = f"{type(result).__name__}: {result}", None, None
            else:
                result_error, reply, usage = result.error, result.reply, result.usage
            summary.add([usage] if usage else [], ok=not isinstance(result, BaseException) and result.score is not None)
            if isinstance(result, BaseException) or result.score is None:
                save_judge_failure(store, tid, rater, version, result_error or "no score", reply or None)
                console.warn(f"{tid}: FAILED ({result_error})")
                continue
            save_judge_score(store, tid, rater, result.score, version,
                             comment=result.reply[-2000:] if result.reply else None)
            console.say(f"{tid}: {result.score:g}")
    finally:
        store.close()
    how = "offline, no model" if args.offline else f"model {cfg.model}"
    console.say(f"judge {rater} ({how}): scored {summary.done}, failed {summary.failed}, "
                f"skipped {len(done)} already scored")
    for line in summary.lines("trajectories"):
        console.say(line)
    return EXIT_FAILED if summary.failed else EXIT_OK  # reviewer/cli/exits.py: 1 when any failed
