"""The shape of `Store`: the opened file's lifecycle plus one repository per concern, all over the
same database object; callers name the repository (nothing is forwarded from Store itself)."""
from reviewer.store import Store
from reviewer.store.database import Database

LIFECYCLE = {"close", "close_all", "db", "is_open", "path", "probe", "schema_version", "transaction"}
REPOSITORIES = {"claims", "images", "labels", "objects", "queue", "reviews", "sessions", "spectra", "trajectories", "triage",
                "verdict_state"}


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
