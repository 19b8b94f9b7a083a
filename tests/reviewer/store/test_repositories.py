"""The shape of `Store`: the opened file's lifecycle plus one repository per concern, all over the
same database object; callers name the repository (nothing is forwarded from Store itself)."""
from reviewer.store import Store
from reviewer.store.database import Database

LIFECYCLE = {"close", "close_all", "db", "is_open", "path", "probe", "schema_version", "transaction"}
REPOSITORIES = {"claims", "images", "labels", "objects", "queue", "reviews", "sessions", "spectra", "step_judgments",
                "trajectories", "triage",
                "verdict_state", "vi_state"}


def test_store_is_the_lifecycle_and_its_repositories(store):
    public = {name for name in dir(store) if not name.startswith("_")}
    assert public == LIFECYCLE | REPOSITORIES
    assert not hasattr(Store, "__getattr__")
    assert isinstance(store.db, Database)
    for name in REPOSITORIES:
        assert getattr(store, name).db is store.db, name


def test_repositories_share_one_transaction(store, make_trajectory):
    traj = make_trajectory()
    try:
        with store.transaction():
            store.trajectories.save_trajectory(traj)
            store.labels.add_review(traj.id, "ann", "approve")
            raise RuntimeError("abandon the block")
    except RuntimeError:
        pass
    assert store.trajectories.load_trajectory(traj.id) is None
    assert store.labels.count_labels("reviews") == 0


def test_every_repository_method_is_called_outside_its_own_module(store):
    """The store's surface is what the app, another repository or at least a test uses: a method nobody
    calls is dead weight a schema change must still carry (the two task-table methods were; removed)."""
    import inspect
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    files = {p: p.read_text(encoding="utf-8") for folder in ("reviewer", "agents", "layouts", "bench", "tests")
             for p in (root / folder).rglob("*.py")}
    unused = []
    for name, repo in vars(store).items():
        if not type(repo).__name__.endswith("Repository"):
            continue
        own = Path(inspect.getsourcefile(type(repo))).resolve()
        elsewhere = "\n".join(text for path, text in files.items() if path.resolve() != own)
        unused += [f"{name}.{method}" for method, _ in inspect.getmembers(type(repo), inspect.isfunction)
                   if not method.startswith("_") and not re.search(rf"\b{method}\b", elsewhere)]
    assert unused == []


def test_a_frame_read_through_arrow_is_the_frame_duckdb_gives(store, make_trajectory):
    """Database.frame (Arrow, for large reads) gives what DuckDB's df() gives: values and dtypes (text,
    integers, doubles with NULL, timestamps, booleans), in one transaction with the writes before it;
    only a nullable boolean comes as objects."""
    import pandas as pd

    for i in range(3):
        store.trajectories.save_trajectory(make_trajectory(task="a" if i else "wd"))
    sql = ("SELECT id, task, answer_z, created_at, answer IS NULL AS no_answer, length(id) AS n "
           "FROM trajectories WHERE task = ? OR ? ORDER BY id")
    want = store.db.execute(sql, ["a", True]).df()
    got = store.db.frame(sql, ["a", True])
    pd.testing.assert_frame_equal(got, want)
    with store.db.transaction():
        store.db.execute("DELETE FROM trajectories WHERE task = 'wd'")
        assert set(store.db.frame("SELECT task FROM trajectories")["task"]) == {"a"}  # sees its own write
    nullable = store.db.frame("SELECT CASE WHEN n > 0 THEN true END AS b FROM (VALUES (1), (0)) v(n) ORDER BY n DESC")["b"]
    assert list(nullable) == [True, None] and nullable.dtype == object


def test_text_read_as_categories_keeps_every_value_with_the_categories_sorted(store):
    """`categories`: the columns come as pandas categories (codes, not a string per row), their
    categories in sorted order whatever order the rows came in, each row's value and NULL kept."""
    sql = "SELECT t, n FROM (VALUES ('wd', 1), ('a', 2), (NULL, 3), ('wd', 4), ('cv', 5)) v(t, n) ORDER BY n"
    plain, coded = store.db.frame(sql), store.db.frame(sql, categories=("t",))
    assert coded["t"].dtype == "category" and list(coded["t"].cat.categories) == ["a", "cv", "wd"]
    assert [None if v != v else v for v in coded["t"]] == [None if v != v else v for v in plain["t"]]
    assert list(coded["n"]) == [1, 2, 3, 4, 5]


def test_the_open_time_probe_reads_with_a_small_buffer_pool_and_gives_the_limit_back(tmp_path, make_trajectory):
    """The probe hashes every row of every table; DuckDB would keep all those blocks cached (at 1M
    trajectories most of a CLI's peak memory), so it runs under PASS_MEMORY_LIMIT, and afterwards the
    connection has its default limit again."""
    with Store(tmp_path / "probe.duckdb") as store:
        store.trajectories.save_trajectory(make_trajectory())
        setting = "SELECT current_setting('memory_limit')"
        default = store.db.scalar(setting)
        seen = []
        execute = store.db.execute
        store.db.execute = lambda sql, params=None: (
            seen.append(execute(setting).fetchone()[0]) if "sum(hash(t))" in sql else None, execute(sql, params))[1]
        store.db._shared.probed = False
        store.probe()
        assert seen and all(limit.endswith("MiB") and float(limit.split()[0]) < 200 for limit in seen)
        assert store.db.scalar(setting) == default


def test_a_connection_the_app_serves_keeps_its_memory_limit_during_a_pass(tmp_path, make_trajectory):
    """DuckDB's memory limit is the whole database's: where the app serves the file (pinned), reviewers'
    queries run beside a probe or an export, so the pass does not shrink it."""
    from reviewer.store.connection import pin

    path = tmp_path / "served.duckdb"
    with Store(path) as store:
        store.trajectories.save_trajectory(make_trajectory())
        setting = "SELECT current_setting('memory_limit')"
        default = store.db.scalar(setting)
        pin(path)
        try:
            with store.db.memory_limit("64MB"):
                assert store.db.scalar(setting) == default
        finally:
            pin(path, False)
        with store.db.memory_limit("64MB"):
            assert store.db.scalar(setting) != default
        assert store.db.scalar(setting) == default


def test_a_frame_follows_a_scalar_and_an_export_on_the_same_thread(store, tmp_path):
    """DuckDB keeps a result not read to its end open on the thread's cursor and refuses that cursor's
    next relation ("unfinished result"): every helper reads its result whole."""
    assert store.db.scalar("SELECT count(*) FROM reviews") == 0
    assert store.db.frame("SELECT 1 AS one")["one"].tolist() == [1]
    store.reviews.copy_table_to_parquet("reviews", tmp_path / "reviews.parquet")
    assert store.db.frame("SELECT 2 AS two")["two"].tolist() == [2]
