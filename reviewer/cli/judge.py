"""`specreview judge --model M`: score stored trajectories with the 0-5 reasoning rubric through an
OpenAI-compatible endpoint; each score is stored as a rating by rater "llm:<model>".

--concurrency calls run at once from threads of this process, sharing one client and rate limiter
(429/503 with Retry-After pause them all). Trajectories are read and scores written by this thread
only, as each call finishes, so an interrupted run resumes with what is left."""
from __future__ import annotations

import argparse
from functools import partial

from reviewer.cli.common import open_store, progress_stream
from reviewer.cli.console import console_of
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED

EXIT_FAILED = EXIT_SOME_FAILED


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "judge", help="score trajectories 0-5 with an LLM judge (any OpenAI-compatible endpoint)",
        description="Score stored trajectories with the kb 0-5 reasoning rubric. The key comes from "
        "$SPECREVIEW_LLM_API_KEY / $OPENAI_API_KEY or the LLM config file, never from the command line. "
        "Trajectories this judge already scored under the current rubric version are skipped unless --force. "
        "A reply without a score is recorded as a judge failure, not a rating. Exit 1 if any call failed.",
    )
    p.add_argument("--model", required=True, help="model name as the endpoint knows it")
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


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from agents.batch import run_batch
    from agents.judge import rubric
    from agents.llm import load_config
    from agents.usage import RunSummary

    cfg = load_config(args.config, model=args.model, base_url=args.base_url, timeout=args.timeout,
                      concurrency=args.concurrency, max_rps=args.max_rps)
    entry = rubric()
    version = str(entry["version"])
    rater = f"llm:{cfg.model}"
    store = open_store(args)
    if store is None:
        return EXIT_FAILED
    summary = RunSummary()
    try:
        done = set() if args.force else store.reviews.rated_trajectory_ids(rater, version)
        todo = [r["id"] for r in store.trajectories.list_trajectories(task=args.task) if r["id"] not in done]
        todo.sort()  # stable order: the same --limit picks the same trajectories
        if args.limit is not None:
            todo = todo[:max(args.limit, 0)]
        # loaded lazily, by this thread, a few ahead of the calls: never the whole list in memory
        items = ((tid, store.trajectories.load_trajectory(tid, with_images=args.images)) for tid in todo)
        job = partial(_judge_one, cfg=cfg, entry=entry, with_images=args.images)
        summary = RunSummary()
        for (tid, _), result in run_batch(job, items, threads=max(cfg.concurrency, 1), total=len(todo),
                                          progress=progress_stream(args), desc="judge", unit="traj",
                                          postfix=lambda *_: summary.postfix()):
            console.check()
            if isinstance(result, BaseException):  # a bug, not a model failure: record it all the same
                result_error, reply, usage = f"{type(result).__name__}: {result}", None, None
            else:
                result_error, reply, usage = result.error, result.reply, result.usage
            summary.add([usage] if usage else [], ok=not isinstance(result, BaseException) and result.score is not None)
            if isinstance(result, BaseException) or result.score is None:
                store.reviews.add_judge_failure(tid, rater, version, result_error or "no score", reply or None)
                console.warn(f"{tid}: FAILED ({result_error})")
                continue
            store.labels.add_rating(tid, rater, result.score, version, rater_kind="llm",
                                    comment=result.reply[-2000:] if result.reply else None)
            console.say(f"{tid}: {result.score:g}")
    finally:
        store.close()
    console.say(f"judge {rater}: scored {summary.done}, failed {summary.failed}, skipped {len(done)} already scored")
    for line in summary.lines("trajectories"):
        console.say(line)
    return EXIT_FAILED if summary.failed else EXIT_OK  # reviewer/cli/exits.py: 1 when any failed
