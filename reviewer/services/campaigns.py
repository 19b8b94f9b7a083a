"""Campaigns that measure their reviewers (issue 47, items 1 and 6): gold items mixed into the queue at a
chosen rate, and a planned number of reviewers per item.

Gold items. The known answers (reviewer.services.gold) pick, among the trajectories the campaign's filters
select, those on a spectrum with a known answer for the task; `rate` of the queue is gold: with R other
items, round(rate * R / (1 - rate)) gold items (all there are, when fewer), drawn at random, one placed at a
random position in each of that many equal stretches of the queue, so that every stretch holds its share
and no pattern tells them apart. Which items are gold is kept in table gold_items only: the queue's rows,
the page and its Bokeh models read nothing of it. Every reviewer is asked for every gold item (each is
measured on all of them), so gold items stand outside the plan below.

Reviewers per item. With `per_item` N, an item is handed to a reviewer only while fewer than N others hold
it, a reviewer holding an item when they have a current verdict on it in the campaign or a reservation
that has not expired. The queue (`n`, its pages) shows a reviewer only the items they may take; the item
a reviewer opens is reserved for them for RESERVATION_MINUTES (releasing the one they held before), if
they may take it; a verdict that would make an item's (N+1)-th is refused, checked and written in one
transaction (store.sessions.in_turn). So no item is labelled beyond the plan, whatever order people work
in. Disagreements at the overlap go to the Conflicts tab, where an assigned reviewer resolves them as a
merger (a resolution is not a verdict and does not count here).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from reviewer.services.gold import KnownAnswer, consensus_answers, read_gold_file, survey_answers

# How long `n` holds an item for the reviewer it handed it to: a hard spectrum takes a few minutes; a
# reviewer who walks away (or closes the tab) frees what they held within half an hour.
RESERVATION_MINUTES = 30
GOLD_FROM = ("survey", "consensus")


class CampaignRefused(ValueError):
    """A campaign that cannot be made from what the store holds; the message says why."""


class CampaignUsage(CampaignRefused):
    """A campaign asked for with options that cannot go together (a command-line error)."""


@dataclass
class CampaignPlan:
    items: list[str]  # trajectory ids in queue order, gold mixed in
    gold: list[dict[str, Any]]  # store.sessions.create_session's gold rows
    notes: list[str] = field(default_factory=list)  # what the organiser should know (fewer gold than asked...)


def known_answers(store, task: str, spectrum_ids: list[str], gold_file: str | None = None,
                  gold_from: tuple[str, ...] = ()) -> tuple[dict[str, KnownAnswer], list[str]]:
    """{spectrum id: its known answer for `task`} from the file, then the survey, then consensus (the first
    source that knows a spectrum wins), and notes on what was read."""
    unknown = [s for s in gold_from if s not in GOLD_FROM]
    if unknown:
        raise CampaignUsage(f"gold answers come from a file, or from {' or '.join(GOLD_FROM)}; not {unknown[0]!r}")
    answers: dict[str, KnownAnswer] = {}
    notes = []
    if gold_file:
        found, other_tasks = read_gold_file(store, gold_file, task)
        answers.update((a.spectrum_id, a) for a in found)
        notes.append(f"{gold_file}: {len(found)} known answers for task {task}"
                     + (f" ({other_tasks} rows for other tasks passed over)" if other_tasks else ""))
    for source in gold_from:
        found = survey_answers(store, task, spectrum_ids) if source == "survey" else consensus_answers(store, task)
        answers.update((a.spectrum_id, a) for a in found if a.spectrum_id not in answers)
    return answers, notes


def plan_campaign(store, task: str, candidates: list[dict[str, Any]], *, limit: int | None = None,
                  gold_file: str | None = None, gold_from: tuple[str, ...] = (), gold_rate: float = 0.0,
                  rng: random.Random | None = None) -> CampaignPlan:
    """The queue of a campaign over `candidates` (trajectory summaries, oldest first): the first `limit` of
    those without a chosen gold answer, with gold items mixed in at `gold_rate` (see the module doc)."""
    if not 0.0 <= gold_rate < 1.0:
        raise CampaignUsage(f"--gold-rate is the share of the queue that is gold, from 0 up to (not) 1; got {gold_rate}")
    if gold_rate and not (gold_file or gold_from):
        raise CampaignUsage("--gold-rate needs known answers: --gold-file FILE.csv, or --gold-from survey,consensus")
    rng = rng or random.Random()
    answers, notes = known_answers(store, task, [c["spectrum_id"] for c in candidates if c.get("spectrum_id")],
                                   gold_file, gold_from) if gold_rate else ({}, [])
    pool, seen = [], set()
    for c in candidates:  # one gold item per spectrum: its oldest trajectory of the task
        if c.get("spectrum_id") in answers and c["spectrum_id"] not in seen:
            seen.add(c["spectrum_id"])
            pool.append(c)
    if gold_rate and not pool:
        raise CampaignRefused(f"no trajectory of task {task} that these filters select is on a spectrum with a "
                              "known answer: there can be no gold items")
    # gold's share of the whole queue: of `limit` other items and the gold beside them, or of every candidate
    wanted = round(gold_rate * limit / (1 - gold_rate)) if limit is not None else round(gold_rate * len(candidates))
    wanted = max(wanted, 1) if gold_rate else 0  # a rate asked for is at least one gold item
    chosen = rng.sample(pool, min(wanted, len(pool)))
    chosen_ids = {c["id"] for c in chosen}
    others = [c for c in candidates if c["id"] not in chosen_ids][:limit]  # the rest of the pool is not gold
    if len(chosen) < wanted:
        notes.append(f"only {len(chosen)} gold items of the {wanted} the rate asks for (the known answers on "
                     f"these trajectories): the gold rate is {len(chosen) / (len(chosen) + len(others)):.2f}")
    items = _mix([c["id"] for c in others], [c["id"] for c in chosen], rng)
    gold = [{"trajectory_id": c["id"], "answer": answers[c["spectrum_id"]].answer,
             "answer_z": answers[c["spectrum_id"]].z, "source": answers[c["spectrum_id"]].source,
             "origin": answers[c["spectrum_id"]].origin} for c in chosen]
    return CampaignPlan(items, gold, notes)


def _mix(others: list[str], gold: list[str], rng: random.Random) -> list[str]:
    """`others` in their order with each of `gold` at a random place in its own equal stretch of the queue."""
    total = len(others) + len(gold)
    if not gold:
        return list(others)
    places = set()
    for k in range(len(gold)):
        start, end = math.floor(k * total / len(gold)), math.floor((k + 1) * total / len(gold))
        places.add(rng.randrange(start, max(end, start + 1)))
    golds, rest = iter(gold), iter(others)
    return [next(golds) if i in places else next(rest) for i in range(total)]


def create_campaign(store, name: str, *, task: str | None, reviewers: list[str], mode: str = "verdicts",
                    blind: bool = True, filters: dict[str, Any] | None = None, limit: int | None = None,
                    gold_file: str | None = None, gold_from: tuple[str, ...] = (), gold_rate: float = 0.0,
                    per_item: int | None = None, first_look: bool = False,
                    rng: random.Random | None = None) -> dict[str, Any]:
    """Make a campaign: {'id', 'items', 'gold', 'notes'}; CampaignRefused (or gold.GoldFileError) before
    anything is written. `name` and `reviewers` are checked names (reviewer.services.labels.check_name)."""
    filters = {k: v for k, v in (filters or {}).items() if v}
    if task:
        filters["task"] = task
    if per_item is not None and per_item < 1:
        raise CampaignUsage(f"--per-item is how many reviewers label each item: at least 1; got {per_item}")
    if per_item is not None and reviewers and per_item > len(reviewers):
        raise CampaignUsage(f"--per-item {per_item} needs at least {per_item} reviewers; "
                              f"{len(reviewers)} are assigned")
    if (gold_rate or per_item) and not task:
        raise CampaignUsage("gold items and reviewers per item are planned for one task: give --task")
    rows = store.trajectories.list_trajectories(**filters)
    candidates = sorted(rows, key=lambda r: (r["created_at"], r["id"]))
    if not candidates:
        raise CampaignRefused("no trajectory matches these filters")
    plan = plan_campaign(store, task or "", candidates, limit=limit, gold_file=gold_file, gold_from=gold_from,
                         gold_rate=gold_rate, rng=rng)
    session_id = store.sessions.create_session(name, mode, plan.items, reviewers, blind=blind, filters=filters,
                                               per_item=per_item, gold=plan.gold, gold_rate=gold_rate or None,
                                               first_look=first_look)
    return {"id": session_id, "items": plan.items, "gold": plan.gold, "notes": plan.notes}


# -- listing, progress and closing (`specreview session`) -------------------------------------
def campaigns_listed(store) -> list[dict[str, Any]]:
    """Every campaign's row, newest first, each with `item_count`: how many items its queue holds."""
    return [{**row, "item_count": len(store.sessions.session_items(row["id"]))} for row in store.sessions.list_sessions()]


def close_campaign(store, campaign_id: str) -> bool:
    """Close a campaign once (its labels are frozen); False when it was closed already or does not exist."""
    return store.sessions.close_session(campaign_id)


def reviewer_progress(store, campaign: dict[str, Any]) -> list[tuple[str, dict[str, int]]]:
    """(reviewer, {'done', 'total', ...}) in the campaign's queue for each reviewer assigned to it, or, with
    none assigned, each who gave a current verdict in it (by name)."""
    people = campaign["reviewers"] or sorted({r["reviewer"] for r in store.reviews.current_reviews(session=campaign["id"])})
    return [(person, store.queue.queue_progress(person, session_id=campaign["id"])) for person in people]


def verdicts_left(store, campaign: dict[str, Any]) -> int:
    """Verdicts the campaign still needs: each reviewer's items not done; with reviewers per item, that many
    per item and every gold item of everyone, less the verdicts given."""
    people = reviewer_progress(store, campaign)
    per_item = plan_of(store, campaign)
    if per_item is None:
        return sum(max(p["total"] - p["done"], 0) for _, p in people)
    planned = overlap_progress(store, campaign)
    given = len(store.reviews.current_reviews(session=campaign["id"]))
    return max(per_item * planned["items"] + planned["gold"] * max(len(people), 1) - given, 0)


# -- reviewers per item ----------------------------------------------------------------------
def plan_of(store, campaign: dict[str, Any] | None) -> int | None:
    """The campaign's reviewers per item (None: no plan)."""
    if not campaign:
        return None
    per_item = campaign.get("per_item") if "per_item" in campaign else \
        (store.sessions.get_session(campaign["id"]) or {}).get("per_item")
    return int(per_item) if per_item else None


def overlap_refusal(store, campaign: dict[str, Any] | None, trajectory_id: str, reviewer: str,
                    at=None) -> str | None:
    """Why `reviewer` may not give a verdict on the item now (None: they may): the campaign plans N reviewers
    per item and N others hold it (a verdict, or a live reservation). Gold items are everyone's."""
    from reviewer.store.codec import now

    per_item = plan_of(store, campaign)
    if per_item is None or store.sessions.is_gold(campaign["id"], trajectory_id):
        return None
    holders = store.sessions.holders(campaign["id"], trajectory_id, at or now())
    if reviewer in holders or len(holders - {reviewer}) < per_item:
        return None
    which = f"Campaign '{campaign['name']}'" if campaign.get("name") else "This campaign"
    return (f"{which} plans {per_item} reviewer(s) per item, and this item has them "
            "(their verdicts, or items handed to them): nothing was saved; take the next item (n).")


def reserve(store, campaign: dict[str, Any], trajectory_id: str, reviewer: str, at=None) -> bool:
    """Hold the item for `reviewer` for RESERVATION_MINUTES, releasing what they held before in the campaign,
    when the campaign plans reviewers per item and they may take it (`overlap_refusal`, read in the same
    transaction); whether it is held."""
    from reviewer.store.codec import now

    if plan_of(store, campaign) is None or not reviewer:
        return False
    at = at or now()

    def work() -> bool:
        if overlap_refusal(store, campaign, trajectory_id, reviewer, at) is not None:
            return False
        store.sessions.reserve(campaign["id"], trajectory_id, reviewer, at + timedelta(minutes=RESERVATION_MINUTES))
        return True

    return store.sessions.in_turn(work)


def hand_out(store, campaign: dict[str, Any], reviewer: str, at=None) -> str | None:
    """The next item `reviewer` should label in the campaign (queue order, among those they may take and have
    no verdict on), reserved for them; None when there is none."""
    per_item = plan_of(store, campaign)
    filters: dict[str, Any] = {"session_id": campaign["id"], "state": "todo"}
    if per_item is not None:
        filters["overlap"] = per_item
    for _ in range(3):  # another reviewer may take the item between the read and the reservation
        rows = store.queue.queue_items(reviewer, limit=1, **filters)
        if not rows:
            return None
        if per_item is None or reserve(store, campaign, rows[0]["trajectory_id"], reviewer, at):
            return rows[0]["trajectory_id"]
    return None


def overlap_progress(store, campaign: dict[str, Any]) -> dict[str, int] | None:
    """{'complete', 'items', 'gold'}: the campaign's items (gold left out) with at least its planned number
    of verdicts, of how many; None without a plan."""
    per_item = plan_of(store, campaign)
    if per_item is None:
        return None
    counts = store.sessions.verdict_counts(campaign["id"])
    gold = {g["trajectory_id"] for g in store.sessions.gold_items(campaign["id"])}
    regular = {tid: n for tid, n in counts.items() if tid not in gold}
    return {"complete": sum(n >= per_item for n in regular.values()), "items": len(regular), "gold": len(gold)}
