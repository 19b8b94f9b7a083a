"""Issue 47, items 1 and 6: campaigns with gold items and reviewers per item, on the demo's real DuckDB file
and spectra: the gold file checked whole, gold mixed in at its rate and not told apart in the queue's rows,
three reviewers with two per item never giving an item a third verdict."""
from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest

from reviewer.services import campaigns
from reviewer.services.campaigns import CampaignRefused, CampaignUsage, create_campaign, hand_out
from reviewer.services.gold import GoldFileError
from reviewer.services.items import find_campaign, trajectory
from reviewer.services.labels import LabelRefused, LabelService
from reviewer.services.listing import QueueListing
from reviewer.store.codec import now


def task_rows(store, task):
    """The demo's trajectories of `task` with their spectrum's file name, oldest first."""
    rows = store.trajectories.list_trajectories(task=task)
    names = {s["spectrum_id"]: s["file_name"] for s in store.spectra.list_spectra(limit=100)}
    return [{**r, "file_name": names[r["spectrum_id"]]} for r in sorted(rows, key=lambda r: (r["created_at"], r["id"]))]


def write_gold(tmp_path, lines, name="gold.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_gold_file_with_problems_is_refused_whole_naming_the_file_and_each_line(demo_store, tmp_path):
    a = task_rows(demo_store, "a")
    path = write_gold(tmp_path, [
        "file,task,answer",
        f"{a[0]['file_name']},a,YES",
        f"{a[1]['file_name']},a,MAYBE",  # line 3: not YES / NO
        "no-such-spectrum.fits,a,NO",  # line 4: not stored
        f"{a[2]['file_name']},zz,NO",  # line 5: no such task
        f"{a[0]['file_name']},a,NO",  # line 6: contradicts line 2
        f"{a[3]['file_name']},a,NO,extra",  # line 7: a field too many
    ])
    with pytest.raises(GoldFileError) as refused:
        create_campaign(demo_store, "g", task="a", reviewers=["ann", "bo"], gold_file=str(path), gold_rate=0.2)
    text = str(refused.value)
    assert text.startswith(f"{path}: 5 problem(s), nothing was written")
    for line, words in ((3, "'MAYBE' is not YES or NO"), (4, "'no-such-spectrum.fits' is not a stored spectrum"),
                        (5, "task 'zz' is not a task"), (6, "has another a answer on line 2"),
                        (7, "more fields than the header's 3")):
        assert f"line {line}: " in text and words in text, (line, text)
    assert demo_store.sessions.list_sessions() == []  # nothing half-written


@pytest.mark.parametrize(("lines", "words"), [
    (["spectrum_id,answer", "x,YES"], "line 1: the header lacks task"),
    (["task,answer", "a,YES"], "line 1: the header lacks file or spectrum_id"),
    (["file,task,class,z", "{verify},verify,GALAXY,abc"], "line 2: z 'abc' is not a number"),
    (["file,task,class,z", "{verify},verify,COMET,0.1"], "line 2: class 'COMET' is not one of STAR, GALAXY, QSO"),
    (["file,task,class,z", "{verify},verify,QSO,99"], "line 2: z 99.0 is outside"),
    ([], "empty: a header line"),
])
def test_each_kind_of_gold_file_problem_is_named(demo_store, tmp_path, lines, words):
    verify_name = task_rows(demo_store, "verify")[0]["file_name"]
    path = write_gold(tmp_path, [line.format(verify=verify_name) for line in lines])
    with pytest.raises(GoldFileError, match=re.escape(str(path))) as refused:
        create_campaign(demo_store, "g", task="verify", reviewers=["ann"], gold_file=str(path), gold_rate=0.2)
    assert words in str(refused.value)
    assert demo_store.sessions.list_sessions() == []


def test_a_missing_or_binary_gold_file_is_named(demo_store, tmp_path):
    with pytest.raises(GoldFileError, match=r"nope\.csv: no such file"):
        create_campaign(demo_store, "g", task="a", reviewers=[], gold_file=str(tmp_path / "nope.csv"), gold_rate=0.2)
    binary = tmp_path / "gold.csv"
    binary.write_bytes(b"file,task,answer\n\xff\xfe,a,YES\n")
    with pytest.raises(GoldFileError, match=r"gold\.csv: not UTF-8 text"):
        create_campaign(demo_store, "g", task="a", reviewers=[], gold_file=str(binary), gold_rate=0.2)


def test_usage_errors_refuse_before_anything_is_read(demo_store, tmp_path):
    with pytest.raises(CampaignUsage, match="needs known answers"):
        create_campaign(demo_store, "g", task="a", reviewers=[], gold_rate=0.2)
    with pytest.raises(CampaignUsage, match="needs at least 3 reviewers"):
        create_campaign(demo_store, "g", task="a", reviewers=["ann", "bo"], per_item=3)
    with pytest.raises(CampaignUsage, match="from 0 up to"):
        create_campaign(demo_store, "g", task="a", reviewers=[], gold_from=("survey",), gold_rate=1.0)
    with pytest.raises(CampaignRefused, match="no trajectory matches"):
        create_campaign(demo_store, "g", task="nope", reviewers=[])
    assert demo_store.sessions.list_sessions() == []


def queue_rows(store, reviewer, **filters):
    return store.queue.queue_items(reviewer, limit=500, **filters)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gold_is_mixed_in_at_its_rate_one_per_stretch_and_its_queue_rows_are_like_any_other(demo_store, tmp_path,
                                                                                                seed):
    a = task_rows(demo_store, "a")
    path = write_gold(tmp_path, ["file,task,answer"] + [f"{r['file_name']},a,{'YES' if i % 3 else 'NO'}"
                                                         for i, r in enumerate(a)])
    made = create_campaign(demo_store, f"gold-{seed}", task="a", reviewers=["ann", "bo"], gold_file=str(path),
                           gold_rate=0.25, limit=9, rng=random.Random(seed))
    # 9 other items and round(0.25 * 9 / 0.75) = 3 gold: 12 in the queue, one gold in each third of it
    assert len(made["items"]) == 12 and len(made["gold"]) == 3
    campaign = find_campaign(demo_store, f"gold-{seed}")
    gold_ids = {g["trajectory_id"] for g in demo_store.sessions.gold_items(campaign["id"])}
    assert gold_ids == {g["trajectory_id"] for g in made["gold"]}
    for k in range(3):
        assert len(gold_ids & set(made["items"][4 * k: 4 * k + 4])) == 1, made["items"]
    by_line = {r["file_name"]: ("YES" if i % 3 else "NO") for i, r in enumerate(a)}
    names = {r["id"]: r["file_name"] for r in a}
    for g in demo_store.sessions.gold_items(campaign["id"]):
        assert g["answer"] == by_line[names[g["trajectory_id"]]] and g["source"] == "file"
        assert g["origin"].startswith("gold.csv:") and g["task"] == "a"

    # The rows the page receives: the same columns for gold and other items, and a gold item's row is the
    # very row it has in the whole store's queue (its place in the campaign aside): nothing marks it.
    rows = queue_rows(demo_store, "ann", session_id=campaign["id"])
    listed = QueueListing(demo_store).page("ann", 0, 100, session_id=campaign["id"])
    assert [r["trajectory_id"] for r in rows] == made["items"] == [r["trajectory_id"] for r in listed]
    plain = {r["trajectory_id"]: r for r in queue_rows(demo_store, "ann", task="a")}
    keys = {frozenset(r) for r in rows}
    assert len(keys) == 1
    for row in rows:
        assert {k: v for k, v in row.items() if k != "position"} == plain[row["trajectory_id"]]
        assert not any("gold" in str(v).lower() for v in row.values())


def test_known_answers_from_the_survey_and_from_settled_consensus(demo_store):
    made = create_campaign(demo_store, "survey-gold", task="verify", reviewers=["ann"], gold_from=("survey",),
                           gold_rate=0.3, rng=random.Random(0))
    spectra = {s["spectrum_id"]: s for s in demo_store.spectra.list_spectra(limit=100)}
    traj = {r["id"]: r for r in task_rows(demo_store, "verify")}
    assert len(made["gold"]) == round(0.3 * 13)
    for g in made["gold"]:
        s = spectra[traj[g["trajectory_id"]]["spectrum_id"]]
        assert (g["answer"], g["answer_z"], g["source"]) == (s["pipeline_class"], s["pipeline_z"], "survey")

    labels = LabelService(demo_store)
    a = task_rows(demo_store, "a")
    agreed, single = a[0], a[1]
    for who in ("ann", "bo"):  # two reviewers agree: a settled consensus
        labels.write_verdict(who, trajectory(demo_store, agreed["id"]), "override", {"answer": "YES"})
    labels.write_verdict("ann", trajectory(demo_store, single["id"]), "override", {"answer": "YES"})  # one: not gold
    made = create_campaign(demo_store, "consensus-gold", task="a", reviewers=["cy"], gold_from=("consensus",),
                           gold_rate=0.1)
    assert [(g["trajectory_id"], g["answer"], g["source"]) for g in made["gold"]] == [(agreed["id"], "YES", "consensus")]


def say(labels, store, reviewer, tid, campaign, answer="YES"):
    """A verdict that says `answer`: an approval where the agent said it, else an override to it."""
    traj = trajectory(store, tid)
    own = store.trajectories.trajectory_summary(tid)["answer"]
    if own == answer:
        return labels.write_verdict(reviewer, traj, "approve", campaign=campaign)
    return labels.write_verdict(reviewer, traj, "override", {"answer": answer}, campaign=campaign)


def test_three_reviewers_two_per_item_no_item_gets_a_third_verdict_while_another_lacks_its_second(demo_store):
    made = create_campaign(demo_store, "overlap", task="a", reviewers=["ann", "bo", "cy"], per_item=2)
    campaign = find_campaign(demo_store, "overlap")
    labels = LabelService(demo_store)
    items = made["items"]
    order = ["ann", "bo", "cy", "cy", "ann", "cy", "bo", "bo", "ann", "cy"] * 6  # uneven paces
    handed = 0
    for who in order:
        tid = hand_out(demo_store, campaign, who)
        if tid is None:
            continue
        handed += 1
        say(labels, demo_store, who, tid, campaign)
        counts = demo_store.sessions.verdict_counts(campaign["id"])
        assert max(counts.values()) <= 2, counts
    counts = demo_store.sessions.verdict_counts(campaign["id"])
    assert counts == dict.fromkeys(items, 2) and handed == 2 * len(items)
    assert campaigns.overlap_progress(demo_store, campaign) == {"complete": len(items), "items": len(items), "gold": 0}
    for who in ("ann", "bo", "cy"):
        assert hand_out(demo_store, campaign, who) is None


def test_a_verdict_beyond_the_plan_is_refused_and_a_reservation_expires(demo_store):
    create_campaign(demo_store, "plan", task="a", reviewers=["ann", "bo", "cy"], per_item=2)
    campaign = find_campaign(demo_store, "plan")
    labels = LabelService(demo_store)
    first = hand_out(demo_store, campaign, "ann")
    assert hand_out(demo_store, campaign, "bo") == first  # two reviewers may hold it
    second = hand_out(demo_store, campaign, "cy")
    assert second != first  # not a third
    with pytest.raises(LabelRefused, match="plans 2 reviewer"):  # opened some other way: refused, not stored
        say(labels, demo_store, "cy", first, campaign)
    assert demo_store.sessions.verdict_counts(campaign["id"])[first] == 0
    assert first not in [r["trajectory_id"] for r in QueueListing(demo_store).page("cy", 0, 100, session_id=campaign["id"])]
    # bo walks away: past the reservation's time the item is free for cy, and bo's late verdict is refused
    later = now() + timedelta(minutes=campaigns.RESERVATION_MINUTES + 1)
    assert campaigns.overlap_refusal(demo_store, campaign, first, "cy", at=later) is None
    demo_store.sessions.reserve(campaign["id"], first, "bo", now() - timedelta(seconds=1))  # expired now
    say(labels, demo_store, "cy", first, campaign)
    say(labels, demo_store, "ann", first, campaign)
    with pytest.raises(LabelRefused, match="plans 2 reviewer"):
        say(labels, demo_store, "bo", first, campaign)
    say(labels, demo_store, "ann", first, campaign, answer="NO")  # a reviewer holding it may change their mind
    assert demo_store.sessions.verdict_counts(campaign["id"])[first] == 2


def test_the_item_a_reviewer_opens_is_held_for_them_and_the_one_before_released(demo_store):
    made = create_campaign(demo_store, "keys", task="a", reviewers=["ann", "bo", "cy"], per_item=1)
    campaign = find_campaign(demo_store, "keys")
    listing, items = QueueListing(demo_store), made["items"]
    first, _ = listing.neighbour(None, 1, "ann", session_id=campaign["id"], state="todo")
    assert demo_store.sessions.holders(campaign["id"], first, now()) == set()  # a look ahead holds nothing
    assert listing.hold(first, "ann", campaign["id"])  # opened: ann's
    assert demo_store.sessions.holders(campaign["id"], first, now()) == {"ann"}
    assert first not in [r["trajectory_id"] for r in listing.page("bo", 0, 100, session_id=campaign["id"])]
    assert listing.count("bo", session_id=campaign["id"]) == len(items) - 1
    assert not listing.hold(first, "bo", campaign["id"])  # bo opens it by its link: not bo's to hold
    assert demo_store.sessions.holders(campaign["id"], first, now()) == {"ann"}
    assert listing.hold(items[1], "ann", campaign["id"])  # ann moves on: the first is free again
    assert demo_store.sessions.holders(campaign["id"], first, now()) == set()
    assert listing.hold(first, "bo", campaign["id"])
    assert listing.hold(first, "bo", None)  # outside a campaign there is nothing to hold
