from pathlib import Path

from platformdirs import user_data_dir

from reviewer.store import Store, default_db_path, resolve_db_path


def test_default_is_in_the_user_data_folder(monkeypatch):
    monkeypatch.delenv("SPECREVIEW_DB", raising=False)
    assert default_db_path().parent == Path(user_data_dir("specreview", appauthor=False))
    assert default_db_path().suffix == ".duckdb"


def test_env_then_explicit_override(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECREVIEW_DB", str(tmp_path / "env" / "from-env.duckdb"))
    assert resolve_db_path() == (tmp_path / "env" / "from-env.duckdb").resolve()
    assert (tmp_path / "env").is_dir()  # parent created
    assert resolve_db_path(tmp_path / "x.duckdb") == (tmp_path / "x.duckdb").resolve()
    store = Store()
    assert store.path == (tmp_path / "env" / "from-env.duckdb").resolve() and store.path.exists()
    store.close()
