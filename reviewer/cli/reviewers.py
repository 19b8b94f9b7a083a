"""`specreview reviewers --session NAME [--json]`: each reviewer of a campaign measured on its gold items.

Per reviewer: labelled (current verdicts in the campaign), gold_n (gold items answered; rejections are
counted apart in gold_rejected), gold_accuracy with its 95 % Wilson interval, yes_bias (YES rate minus the
known answers' YES rate), z_bias_kms (median signed velocity offset of their z on verify gold), gold_drift
(accuracy on the first and the second half of their gold answers); timed, median_seconds, p90_seconds,
items_per_hour and rushed from the verdicts' active time (null where none was timed); first_look_agreement
and revised_after_reveal are null until the campaign records first looks (reviewer/services/reviewer_stats.py
says how each is computed).
"""
from __future__ import annotations

import argparse
import json

from reviewer.cli.common import open_store
from reviewer.cli.console import console_of
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("reviewers", help="each reviewer of a campaign measured on its gold items",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--session", required=True, metavar="NAME", help="the campaign (name or id)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _number(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def run(args: argparse.Namespace) -> int:
    from reviewer.services.items import find_campaign  # here: the parser answers without the services' imports
    from reviewer.services.reviewer_stats import reviewer_report

    console = console_of(args)
    store = open_store(args)
    if store is None:
        return EXIT_SOME_FAILED
    campaign = find_campaign(store, args.session)
    if campaign is None:
        console.warn(f"specreview reviewers: no campaign named {args.session!r}")
        return EXIT_SOME_FAILED
    report = reviewer_report(store, campaign)
    if args.json:
        console.say(json.dumps({"session": campaign["name"], "session_id": campaign["id"], "reviewers": report},
                               indent=1, default=str))
        return EXIT_OK
    console.say("reviewer\tlabelled\tgold_n\taccuracy [95% interval]\tyes_bias\tz_bias_kms\tdrift (1st -> 2nd half)")
    for r in report:
        interval = r["gold_accuracy_interval"]
        accuracy = f"{_number(r['gold_accuracy'])} [{_number(interval[0])}, {_number(interval[1])}]" if interval \
            else "-"
        drift = r["gold_drift"]
        console.say(f"{r['reviewer']}\t{r['labelled']}\t{r['gold_n']}\t{accuracy}\t{_number(r['yes_bias'])}\t"
                    f"{_number(r['z_bias_kms'], 0)}\t{_number(drift['first_half']['accuracy'])} -> "
                    f"{_number(drift['second_half']['accuracy'])}")
    return EXIT_OK
