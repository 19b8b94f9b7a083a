"""`specreview session`: audit campaigns. A named set of trajectories (chosen by filter), the reviewers
assigned and a mode; blind by default; closing one freezes its labels for export and stats.

    specreview session create NAME --mode verdicts --task a --reviewers alice,bob [--limit 50]
    specreview session create NAME --task a --reviewers a,b,c --gold-file gold.csv --gold-rate 0.1 --per-item 2
    specreview session create NAME --task a --reviewers a,b --first-look
    specreview session list
    specreview session progress NAME
    specreview session close NAME

Reviewers open a campaign with `?session=NAME` in the app's address. Gold items (known answers from
`--gold-file`, or `--gold-from survey,consensus`) are mixed into the queue at `--gold-rate`; `--per-item N`
plans N reviewers per item (reviewer/services/campaigns.py); `--first-look` hides the agent's answer, its
evidence and the pipeline's labels until the reviewer has given their own answer; `specreview reviewers
--session NAME` measures each reviewer on the gold items, their time and their first looks.
"""
from __future__ import annotations

import argparse

from reviewer.cli.common import open_store
from reviewer.cli.console import console_of
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
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
    p.add_argument("--limit", type=int, default=None, help="at most N trajectories (oldest first), gold aside")
    p.add_argument("--gold-file", default=None, metavar="FILE.csv",
                   help="known answers: columns file or spectrum_id, task, answer (verify: class, z)")
    p.add_argument("--gold-from", default="", metavar="SOURCES",
                   help="known answers also from: survey (the pipeline's labels), consensus (agreed or resolved)")
    p.add_argument("--gold-rate", type=float, default=0.0, help="share of the queue that is gold items (0-1)")
    p.add_argument("--per-item", type=int, default=None, metavar="N", help="reviewers planned per item")
    p.add_argument("--first-look", action="store_true",
                   help="the agent's answer, evidence and the pipeline's labels hidden until the reviewer's own answer")
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
        return _create(args, store, console)
    from reviewer.services import campaigns  # here: the parser answers without the services' imports
    from reviewer.services.items import find_campaign

    if args.action == "list":
        for s in campaigns.campaigns_listed(store):
            state = f"closed {s['closed_at']:%Y-%m-%d %H:%M}" if s["closed_at"] else "open"
            console.say(f"{s['name']}\t{s['mode']}\t{'blind' if s['blind'] else 'open'}\t{state}\t"
                  f"{s['item_count']} items")
        return 0
    session = find_campaign(store, args.name)
    if session is None:
        console.warn(f"specreview session: no campaign named {args.name!r}")
        return 1
    if args.action == "close":
        closed = campaigns.close_campaign(store, session["id"])
        console.say(f"session {args.name!r} {'closed: its labels are frozen' if closed else 'was already closed'}")
        return 0
    for person, prog in campaigns.reviewer_progress(store, session):
        console.say(f"{person}\t{prog['done']}/{prog['total']}")

    planned = campaigns.overlap_progress(store, session)
    if planned is not None:
        console.say(f"complete at {session['per_item']} reviewers per item\t{planned['complete']}/{planned['items']}"
                    f" (and {planned['gold']} gold items, asked of everyone)")
    console.say(time_to_complete(store, session))
    return 0


def time_to_complete(store, session: dict) -> str:
    """The campaign's estimated active time to completion, as the progress report says it."""
    from reviewer.services import campaigns
    from reviewer.services.review_times import reviewer_times, seconds_to_complete

    left = campaigns.verdicts_left(store, session)
    times = reviewer_times(store, session["id"])
    people = max(len(campaigns.reviewer_progress(store, session)), 1)
    seconds = seconds_to_complete(left, times, people)
    if left == 0:
        return "time to completion\tnone: every verdict is given"
    if seconds is None:
        return f"time to completion\tnot estimated: {left} verdicts left, none timed yet (time is measured in the app)"
    return (f"time to completion\t{seconds / 3600:.1f} h of active time: {left} verdicts left at the usual time, "
            f"{people} reviewer{'s' if people != 1 else ''} at once")


def _create(args: argparse.Namespace, store, console) -> int:
    from reviewer.services import campaigns
    from reviewer.services.gold import GoldFileError
    from reviewer.services.labels import NameRefused, check_name

    filters = {k: getattr(args, k) for k in ("agent_name", "backend", "credibility", "answer") if getattr(args, k)}
    gold_from = tuple(s.strip() for s in args.gold_from.split(",") if s.strip())
    try:
        reviewers = [check_name(r) for r in args.reviewers.split(",") if r.strip()]
        check_name(args.name, "campaign name")
        made = campaigns.create_campaign(
            store, args.name, task=args.task, reviewers=reviewers, mode=args.mode, blind=args.blind,
            filters=filters, limit=args.limit, gold_file=args.gold_file, gold_from=gold_from,
            gold_rate=args.gold_rate, per_item=args.per_item, first_look=args.first_look)
    except (campaigns.CampaignUsage, NameRefused) as err:
        console.warn(f"specreview session create: {err}")
        return EXIT_USAGE
    except (campaigns.CampaignRefused, GoldFileError) as err:
        console.warn(f"specreview session create: {err}")
        return EXIT_SOME_FAILED
    for note in made["notes"]:
        console.say(note)
    gold = f", {len(made['gold'])} of them gold" if made["gold"] else ""
    plan = (f", {args.per_item} reviewers per item" if args.per_item else "") + (", first look" if args.first_look else "")
    console.say(f"session {args.name!r}: {len(made['items'])} trajectories{gold}, mode {args.mode}, "
                f"{'blind' if args.blind else 'open'}{plan}, reviewers: {', '.join(reviewers) or '(anyone)'}")
    return EXIT_OK
