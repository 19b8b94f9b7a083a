"""A damaged database file (seven kinds) or one locked by another process: the store says so in a
sentence naming the file, the CLI exits 1 with that sentence (no traceback), and the app serves a
page that says it instead of a blank one."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from reviewer.cli import main
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store, StoreUnavailable


@pytest.fixture(scope="module")
def good_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.duckdb"
    with Store(path) as store:
        seed_demo_if_empty(store)
    return path.read_bytes()


def damaged(raw: bytes) -> dict[str, bytes]:
    rng = random.Random(7)
    spotted = bytearray(raw)  # 4 KiB of noise every 64 KiB past the header: some hit data blocks
    for start in range(16384, len(raw), 65536):
        spotted[start:start + 4096] = bytes(rng.getrandbits(8) for _ in range(min(4096, len(raw) - start)))
    return {"truncated": raw[: len(raw) // 2], "zeroed": bytes(len(raw)),
            "random": bytes(rng.getrandbits(8) for _ in range(len(raw))),
            "header overwritten": b"X" * 4096 + raw[4096:], "overwritten in places": bytes(spotted),
            "text file": b"this is not a database\n" * 200, "empty": b""}


@pytest.mark.parametrize("kind", list(damaged(b"x" * 20000)))
def test_a_damaged_file_is_named_and_refused_everywhere(kind, good_bytes, tmp_path, capsys):
    path = tmp_path / f"{kind.replace(' ', '-')}.duckdb"
    path.write_bytes(damaged(good_bytes)[kind])
    with pytest.raises(StoreUnavailable, match=path.name):
        store = Store(path)
        store.probe()
    assert main(["session", "list", "--db", str(path)]) == 1
    err = capsys.readouterr().err
    assert path.name in err and "Traceback" not in err
    from layouts.app import create_app

    page = create_app(path)
    shown = page.main[0].object
    assert path.name in shown and str(path.parent) not in shown and not hasattr(page, "state")


def test_a_database_locked_by_another_process_is_said_in_the_page(tmp_path):
    path = tmp_path / "locked.duckdb"
    Store(path).close()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        from layouts.app import create_app

        page = create_app(path)
        assert "lock" in page.main[0].object.lower() and str(tmp_path) not in page.main[0].object
        assert main(["session", "list", "--db", str(path)]) == 1
    finally:
        holder.kill()
        holder.wait()
    assert os.path.exists(path)
