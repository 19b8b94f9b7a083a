"""`specreview session`: audit campaigns. A named set of trajectories (chosen by filter), the reviewers
assigned and a mode; blind by default; closing one freezes its labels for export and stats.

    specreview session create NAME --mode verdicts --task a --reviewers alice,bob [--limit 50]
    specreview session list
    specreview session progress NAME
    specreview session close NAME

Reviewers open a campaign with `?session=NAME` in the app's address.
"""
from __future__ import annotations

import argparse

from reviewer.cli.common import open_store
from reviewer.cli.console import console_of
from reviewer.store.sessions import SESSION_MODES


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("session", help="create, list, follow and close audit campaigns",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("create", "list", "progress", "close"))
    p.add_argument("name", nargs="?", help="campaign name (create, progress, close)")
    p.add_argument("--mode", choices=SESSION_MODES, default="verdicts")
    p.add_argument("--reviewers", default="", help="comma-separated names of the reviewers assigned")
    p.add_argument("--open", dest="blind", action="store_false",
                   help="not blind: reviewers see each other's labels at once")
    for name in ("task", "agent_name", "backend", "credibility", "answer"):
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None, help=f"filter trajectories by {name}")
    p.add_argument("--limit", type=int, default=None, help="at most N trajectories (oldest first)")
    return p


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    if args.action != "list" and not args.name:
        console.warn(f"specreview session {args.action}: a campaign NAME is needed")
        return 2
    store = open_store(args)
    if store is None:
        return 1
    if args.action == "create":
        filters = {k: getattr(args, k) for k in ("task", "agent_name", "backend", "credibility", "answer")
                   if getattr(args, k)}
        rows = store.trajectories.list_trajectories(**filters)
        ids = [r["id"] for r in sorted(rows, key=lambda r: (r["created_at"], r["id"]))][: args.limit]
        if not ids:
            console.warn("specreview session create: no trajectory matches these filters")
            return 1
        reviewers = [r.strip() for r in args.reviewers.split(",") if r.strip()]
        store.sessions.create_session(args.name, args.mode, ids, reviewers, blind=args.blind, filters=filters)
        console.say(f"session {args.name!r}: {len(ids)} trajectories, mode {args.mode}, "
              f"{'blind' if args.blind else 'open'}, reviewers: {', '.join(reviewers) or '(anyone)'}")
        return 0
    if args.action == "list":
        for s in store.sessions.list_sessions():
            state = f"closed {s['closed_at']:%Y-%m-%d %H:%M}" if s["closed_at"] else "open"
            console.say(f"{s['name']}\t{s['mode']}\t{'blind' if s['blind'] else 'open'}\t{state}\t"
                  f"{len(store.sessions.session_items(s['id']))} items")
        return 0
    found = store.sessions.find_session(args.name)
    if found is None:
        console.warn(f"specreview session: no campaign named {args.name!r}")
        return 1
    if args.action == "close":
        closed = store.sessions.close_session(found["id"])
        console.say(f"session {args.name!r} {'closed: its labels are frozen' if closed else 'was already closed'}")
        return 0
    session = store.sessions.get_session(found["id"])
    for person in session["reviewers"] or sorted({r["reviewer"] for r in store.reviews.current_reviews(session=found["id"])}):
        prog = store.queue.queue_progress(person, session_id=found["id"])
        console.say(f"{person}\t{prog['done']}/{prog['total']}")
    return 0
