"""One connection per file per process, a cursor per thread, transactions on that cursor."""
import threading

import duckdb
import pytest

from reviewer.store import Store


def test_eight_threads_hundred_writes_each(store):
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(n: int) -> None:
        try:
            start.wait()
            for i in range(100):
                # the same reviewer names from every thread: registering them races too
                store.labels.add_rating(f"traj-{i % 7}", f"rev-{i % 3}", (n + i) % 6, "v1", id=f"{n}-{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.labels.count_labels("ratings") == 800
    assert store.db.scalar("SELECT count(DISTINCT id) FROM ratings") == 800
    assert store.labels.list_reviewers() == ["rev-0", "rev-1", "rev-2"]


def test_two_stores_on_one_file_share_the_connection(tmp_path):
    path = tmp_path / "shared.duckdb"
    a = Store(path)
    b = Store(str(tmp_path / "." / "shared.duckdb"))
    assert a.db._shared is b.db._shared
    a.labels.add_review("t1", "ann", "approve")
    assert b.labels.latest_review("t1", "ann")["action"] == "approve"
    a.close()
    with pytest.raises(duckdb.ConnectionException, match="already closed"):  # b shared a's connection
        b.labels.latest_review("t1", "ann")
    c = Store(path)  # the file is released and can be opened again
    assert c.labels.latest_review("t1", "ann")["action"] == "approve"
    c.close()


def test_each_thread_gets_its_own_cursor(store):
    seen = []

    def grab():
        seen.append(store.db.cursor())

    threads = [threading.Thread(target=grab) for _ in range(3)]
    for t in threads:
        t.start()
        t.join()
    main = store.db.cursor()
    assert main is store.db.cursor()
    assert len({id(c) for c in [*seen, main]}) == 4


def test_transaction_rolls_back_every_write(store):
    with pytest.raises(RuntimeError, match="boom"), store.transaction():
        store.labels.add_review("t1", "ann", "approve")
        store.labels.add_vi_label("s1", "ann", quality=2)
        assert store.labels.count_labels("reviews") == 1  # visible inside the transaction
        raise RuntimeError("boom")
    assert store.labels.count_labels("reviews") == 0
    assert store.labels.count_labels("vi_labels") == 0
    assert store.labels.list_reviewers() == []
    # the reviewer cache must not believe 'ann' exists after the rollback
    store.labels.add_review("t1", "ann", "approve")
    assert store.labels.list_reviewers() == ["ann"]


def test_transaction_commits_and_nests(store):
    with store.transaction():
        store.labels.add_review("t1", "ann", "approve")
        with store.transaction():
            store.labels.add_review("t2", "ann", "reject")
    assert store.labels.count_labels("reviews") == 2


def test_uncommitted_writes_are_invisible_to_other_threads(store):
    inside, checked = threading.Event(), threading.Event()
    counts = []

    def reader():
        inside.wait()
        counts.append(store.labels.count_labels("reviews"))
        checked.set()

    t = threading.Thread(target=reader)
    t.start()
    with store.transaction():
        store.labels.add_review("t1", "ann", "approve")
        inside.set()
        checked.wait(timeout=10)
    t.join()
    assert counts == [0]
    assert store.labels.count_labels("reviews") == 1


def test_memory_store_is_private():
    a, b = Store(":memory:"), Store(":memory:")
    a.labels.add_review("t1", "ann", "approve")
    assert b.labels.count_labels("reviews") == 0
    a.close()
    b.close()


def test_concurrent_retries_of_the_same_ids_write_each_once(store):
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(50):
                store.labels.add_review(f"t{i}", "ann", "approve", id=f"req-{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.labels.count_labels("reviews") == 50
