"""The current verdict and score per reviewer and trajectory (tables current_reviews, current_ratings, schema 13)
are kept by the label writers: after any writes, and after an upgrade of a file with labels, they are what
the newest label rows say (by created_at, then the order written), whatever order and ids they came in."""
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import duckdb
import pandas as pd
from databases import undo_version_13
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reviewer.store import Store
from reviewer.store.schema import MIGRATIONS, migrate

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
REVIEW_KEY, RATING_KEY = ["trajectory_id", "reviewer"], ["trajectory_id", "rater", "rubric_version"]


def newest_rows(store, table: str, key: list[str], kept: list[str]) -> pd.DataFrame:
    """The newest row per key of a label table, found in pandas from every row (the reference)."""
    rows = store.db.frame(f"SELECT * FROM {table}")
    if rows.empty:
        return pd.DataFrame(columns=[*key, *kept])
    newest = rows.sort_values(["created_at", "seq"]).drop_duplicates(key, keep="last")
    return newest[[*key, *kept]].sort_values(key).reset_index(drop=True)


def kept_rows(store, table: str, key: list[str], kept: list[str]) -> pd.DataFrame:
    return store.db.frame(f"SELECT {', '.join([*key, *kept])} FROM {table}").sort_values(key).reset_index(drop=True)


def counted_pairs(current: pd.DataFrame, who: str, value: str) -> Counter:
    """{(a, b, a's value, b's value): n} over the trajectories both gave a value (a < b)."""
    both = current.merge(current, on="trajectory_id", suffixes=("_a", "_b"))
    both = both[both[f"{who}_a"] < both[f"{who}_b"]]
    return Counter(both[[f"{who}_a", f"{who}_b", f"{value}_a", f"{value}_b"]].itertuples(index=False, name=None))


def stored_pairs(store, table: str) -> Counter:
    return Counter({tuple(r[:-1]): r[-1] for r in store.db.execute(f"SELECT * FROM {table} WHERE n <> 0").fetchall()})


def assert_current_is_newest(store) -> None:
    for table, current, key, kept in (("reviews", "current_reviews", REVIEW_KEY, ["action"]),
                                      ("ratings", "current_ratings", RATING_KEY, ["rater_kind", "score"])):
        pd.testing.assert_frame_equal(kept_rows(store, current, key, kept), newest_rows(store, table, key, kept),
                                      check_dtype=False, obj=current)
    # the pairs counted as the labels were written are those of the newest rows
    verdicts = newest_rows(store, "reviews", REVIEW_KEY, ["action"])
    verdicts = verdicts[verdicts["action"] != "clear"]
    own = Counter((r, "", a, "") for r, a in verdicts[["reviewer", "action"]].itertuples(index=False, name=None))
    assert stored_pairs(store, "verdict_pair_counts") == own + counted_pairs(verdicts, "reviewer", "action")
    scores = newest_rows(store, "ratings", ["trajectory_id", "rater"], ["score"])  # whatever the rubric version
    assert stored_pairs(store, "rating_pair_counts") == counted_pairs(scores, "rater", "score")
    # what orders the Conflicts tab: each trajectory's newest current (not withdrawn) verdict time
    times = newest_rows(store, "reviews", REVIEW_KEY, ["action", "created_at"])
    times = times[times["action"] != "clear"].groupby("trajectory_id")["created_at"].max()
    ids = store.db.frame("SELECT DISTINCT trajectory_id FROM reviews")["trajectory_id"].tolist()
    assert store.reviews.latest_review_times(ids) == {t: v.to_pydatetime() for t, v in times.items()}


label_writes = st.lists(st.one_of(
    # verdict: reviewer, trajectory, action, minutes after T0 (equal times: the order written decides), id
    st.tuples(st.just("review"), st.sampled_from("ab"), st.integers(0, 2),
              st.sampled_from(("approve", "reject", "clear")), st.integers(0, 4), st.integers(0, 6)),
    # score: rater, trajectory, score, rubric version, minutes, id
    st.tuples(st.just("rating"), st.sampled_from("ab"), st.integers(0, 2), st.integers(0, 5),
              st.sampled_from(("1", "2")), st.integers(0, 4), st.integers(0, 6)),
), max_size=25)


def write(store, op: tuple) -> None:
    if op[0] == "review":
        _, who, t, action, minutes, n = op
        # a repeated id is a retried request: nothing new is written, whatever else it carries
        store.labels.add_review(f"t{t}", who, action, id=f"review-{n}", created_at=T0 + timedelta(minutes=minutes))
    else:
        _, who, t, score, rubric, minutes, n = op
        store.labels.add_rating(f"t{t}", who, score, rubric, id=f"rating-{n}",
                                created_at=T0 + timedelta(minutes=minutes))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=label_writes)
# an older verdict written later does not replace the newer; a retried id changes nothing
@example(ops=[("review", "a", 0, "reject", 3, 0), ("review", "a", 0, "approve", 1, 1),
              ("review", "a", 0, "clear", 4, 0)])
# the same time: the one written last is current; scores are current per rubric version
@example(ops=[("rating", "a", 0, 5, "1", 2, 0), ("rating", "a", 0, 1, "1", 2, 1), ("rating", "a", 0, 3, "2", 0, 2)])
def test_after_any_label_writes_the_current_rows_are_the_newest(tmp_path_factory, ops):
    store = Store(tmp_path_factory.mktemp("current") / "labels.duckdb")
    try:
        for op in ops:
            write(store, op)
        assert_current_is_newest(store)
    finally:
        store.close()


def test_a_label_written_inside_a_callers_transaction_goes_with_it(store):
    store.labels.add_review("t0", "a", "approve", created_at=T0)
    try:
        with store.transaction():
            store.labels.add_review("t0", "a", "reject", created_at=T0 + timedelta(minutes=1))
            raise RuntimeError("the caller's work failed")
    except RuntimeError:
        pass
    assert store.db.rows("SELECT action FROM current_reviews") == [{"action": "approve"}]
    assert_current_is_newest(store)


def test_threads_scoring_the_same_trajectories_leave_the_newest_current(store):
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def score(n: int) -> None:
        try:
            start.wait()
            for i in range(40):
                store.labels.add_rating(f"t{i % 3}", "a", (n + i) % 6, "1", created_at=T0 + timedelta(seconds=i))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=score, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.labels.count_labels("ratings") == 160
    assert_current_is_newest(store)


def test_a_version_12_file_with_labels_is_upgraded_with_its_current_rows(tmp_path):
    path = tmp_path / "v12.duckdb"
    with Store(path) as store:
        for op in [("review", "a", 0, "reject", 3, 0), ("review", "a", 0, "approve", 1, 1), ("review", "b", 0, "clear", 2, 2),
                   ("review", "b", 1, "approve", 0, 3), ("rating", "a", 0, 4, "1", 1, 0), ("rating", "a", 0, 2, "1", 0, 1),
                   ("rating", "a", 0, 5, "2", 0, 2)]:
            write(store, op)
        want = {t: kept_rows(store, t, k, c) for t, k, c in (("current_reviews", REVIEW_KEY, ["action"]),
                ("current_ratings", RATING_KEY, ["rater_kind", "score"]))}
    con = duckdb.connect(str(path))
    undo_version_13(con)
    assert migrate(con) == len(MIGRATIONS)
    con.close()
    with Store(path) as store:
        assert_current_is_newest(store)
        for table, key, kept in (("current_reviews", REVIEW_KEY, ["action"]),
                                 ("current_ratings", RATING_KEY, ["rater_kind", "score"])):
            pd.testing.assert_frame_equal(kept_rows(store, table, key, kept), want[table], check_dtype=False)
        assert len(want["current_reviews"]) == 3 and len(want["current_ratings"]) == 2

