"""`specreview judge --model M`: score stored trajectories with the 0-5 reasoning rubric through an
OpenAI-compatible endpoint; each score is stored as a rating by rater "llm:<model>"."""
from __future__ import annotations

import argparse
import sys

from reviewer.cli.common import open_store

EXIT_OK, EXIT_FAILED = 0, 1


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "judge", help="score trajectories 0-5 with an LLM judge (any OpenAI-compatible endpoint)",
        description="Score stored trajectories with the kb 0-5 reasoning rubric. The key comes from "
        "$SPECREVIEW_LLM_API_KEY / $OPENAI_API_KEY or the LLM config file, never from the command line. "
        "Trajectories this judge already scored under the current rubric version are skipped unless --force. "
        "A reply without a score is recorded as a judge failure, not a rating. Exit 1 if every call failed.",
    )
    p.add_argument("--model", required=True, help="model name as the endpoint knows it")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1)")
    p.add_argument("--config", default=None, help="LLM config file (TOML/YAML/JSON; default $SPECREVIEW_LLM_CONFIG)")
    p.add_argument("--task", default=None, help="only trajectories of this task")
    p.add_argument("--limit", type=int, default=None, help="score at most N trajectories")
    p.add_argument("--force", action="store_true", help="score again what this judge already scored")
    p.add_argument("--images", action="store_true", help="send the stored renders too (vision models)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per call")
    return p


def run(args: argparse.Namespace) -> int:
    from agents.judge import judge_trajectory, rubric
    from agents.llm import load_config, make_chat_model

    cfg = load_config(args.config, model=args.model, base_url=args.base_url, timeout=args.timeout)
    entry = rubric()
    version = str(entry["version"])
    rater = f"llm:{cfg.model}"
    store = open_store(args)
    if store is None:
        return EXIT_FAILED
    try:
        done = set() if args.force else store.rated_trajectory_ids(rater, version)
        todo = [r["id"] for r in store.list_trajectories(task=args.task) if r["id"] not in done]
        todo.sort()  # stable order: the same --limit picks the same trajectories
        if args.limit is not None:
            todo = todo[:max(args.limit, 0)]
        chat = make_chat_model(cfg)
        scored = failed = 0
        for tid in todo:
            traj = store.load_trajectory(tid, with_images=args.images)
            result = judge_trajectory(traj, chat, cfg=cfg, rubric_entry=entry, with_images=args.images)
            if result.score is None:
                failed += 1
                store.add_judge_failure(tid, rater, version, result.error or "no score", result.reply or None)
                print(f"{tid}: FAILED ({result.error})", file=sys.stderr)
                continue
            store.add_rating(tid, rater, result.score, version, rater_kind="llm",
                             comment=result.reply[-2000:] if result.reply else None)
            scored += 1
            print(f"{tid}: {result.score:g}")
    finally:
        store.close()
    print(f"judge {rater}: scored {scored}, failed {failed}, skipped {len(done)} already scored")
    return EXIT_FAILED if failed and not scored else EXIT_OK
