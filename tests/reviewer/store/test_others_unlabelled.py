"""ReviewRepository.others_label_unlabelled (blind review's "would the team's figures hide anything?",
reviewer.services.labels.LabelService.sees_team_figures): after any sequence of verdicts (withdrawals
included), scores of people and LLM judges, and resolutions, in the whole store and in a campaign, it says
what the current labels say, found in Python from the rows the Stats tab reads. The whole store's answer is
read from the counts kept on write, a campaign's from its labels: both checked against the same reference."""
import random

import pytest

PEOPLE = ("ann", "bob", "cal")


def reference(store, reviewer: str, session: str | None) -> bool:
    """Another's current verdict or resolution where `reviewer` has no current verdict, or another person's
    current score where `reviewer` has none, from the label rows in the scope (the scores of one rubric
    version: with two on one trajectory the whole store's answer may say yes where this says no, see below)."""
    verdicts = {(r["trajectory_id"], r["reviewer"]) for r in store.reviews.current_reviews(session)}
    mine = {t for t, who in verdicts if who == reviewer}
    scores = store.reviews.ratings_frame(session)
    scored = {t for t, who in zip(scores["trajectory_id"], scores["rater"], strict=True) if who == reviewer}
    others_scored = {t for t, who, kind in zip(scores["trajectory_id"], scores["rater"], scores["rater_kind"], strict=True)
                     if who != reviewer and kind == "human"}
    scope, params = store.reviews._scope(session, "resolutions")
    resolved = {t for t, in store.db.execute(f"SELECT item_id FROM resolutions WHERE item_kind = 'trajectory' "
                                             f"AND merger <> ? {scope}", [reviewer, *params]).fetchall()}
    return (any(who != reviewer and t not in mine for t, who in verdicts) or bool(resolved - mine)
            or bool(others_scored - scored))


@pytest.mark.parametrize("seed", range(3))
def test_others_label_unlabelled_says_what_the_current_labels_say(demo_store, seed):
    store = demo_store
    rnd = random.Random(seed)
    ids = [r["trajectory_id"] for r in store.queue.queue_items(limit=6)]
    sid = store.sessions.create_session(f"zq-{seed}", "verdicts", ids, list(PEOPLE), blind=True)
    answers = []
    for _ in range(30):
        tid, who, session = rnd.choice(ids), rnd.choice(PEOPLE), rnd.choice((None, sid))
        kind = rnd.random()
        if kind < 0.45:
            store.labels.add_review(tid, who, rnd.choice(("approve", "reject", "clear", "clear")), session_id=session)
        elif kind < 0.85:
            judge = rnd.random() < 0.3
            store.labels.add_rating(tid, "judge-x" if judge else who, rnd.randint(0, 5), "v1",
                                    rater_kind="llm" if judge else "human", session_id=session)
        else:
            store.reviews.add_resolution("trajectory", tid, who, "approve", merger_comment="why", session_id=session)
        for reviewer in (*PEOPLE, "dee", ""):
            for scope in (None, sid):
                answer = store.reviews.others_label_unlabelled(reviewer, scope)
                assert answer == reference(store, reviewer, scope), (reviewer, scope)
                answers.append(answer)
    assert set(answers) == {True, False}  # both answers met along the way


def test_a_second_rubric_version_errs_towards_hiding(demo_store):
    """The whole store counts a person's current scores per rubric version: a trajectory scored under two
    versions counts twice, so the answer may be yes (the blind view) where a trajectory count says no; never
    the other way."""
    store = demo_store
    tid = store.queue.queue_items(limit=1)[0]["trajectory_id"]
    store.labels.add_rating(tid, "ann", 3, "v1")
    store.labels.add_rating(tid, "bob", 2, "v1")
    assert not store.reviews.others_label_unlabelled("ann")
    store.labels.add_rating(tid, "bob", 4, "v2")
    assert store.reviews.others_label_unlabelled("ann") and not reference(store, "ann", None)


def test_the_answer_leaves_no_result_open_on_the_threads_cursor(demo_store):
    """A frame read right after it on the same thread (the Stats tab's blind view reads the judges' scores next)
    is not refused as an "unfinished result" of this one."""
    from reviewer.services.campaigns import create_campaign

    campaign = create_campaign(demo_store, "scoped", task="a", reviewers=["ann"])
    for session in (None, campaign["id"]):
        demo_store.reviews.others_label_unlabelled("ann", session)
        assert demo_store.reviews.scores_where_people_scored(session).empty
