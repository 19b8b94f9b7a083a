"""Issue 45, item 6: the database and its WAL were created world-readable (0644). A process that opens a
database file creates it, its `.wal` (deleted at every checkpoint and created again) and the endpoint
file `<db>.server.json` readable by their user only (0600), and a folder it creates for the database
0700, whatever the umask it was started with (022 here, the usual one)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")

# Opens a new database in a new folder, writes (the WAL appears), checkpoints (DuckDB deletes the WAL),
# writes again (a new WAL), starts the command endpoint; prints the modes it saw meanwhile.
OPENER = """
import json, os, stat, sys
from pathlib import Path
from reviewer.store import Store
from reviewer.server_endpoint import CommandEndpoint, endpoint_path

db = Path(sys.argv[1])
def mode(p):
    return oct(stat.S_IMODE(os.stat(p).st_mode)) if os.path.exists(p) else None
wal = db.with_name(db.name + ".wal")
seen = {"umask_before": oct(os.umask(0o022))}
os.umask(0o022)
store = Store(db)
store.db.execute("CREATE TABLE scratch (x INTEGER)")
store.db.execute("INSERT INTO scratch VALUES (1)")
seen["db"], seen["wal"], seen["folder"] = mode(db), mode(wal), mode(db.parent)
store.db.execute("CHECKPOINT")
seen["wal_after_checkpoint"] = mode(wal)
store.db.execute("INSERT INTO scratch VALUES (2)")
seen["wal_again"] = mode(wal)
endpoint = CommandEndpoint(store.path).start()
seen["endpoint"] = mode(endpoint_path(db))
endpoint.stop()
store.close()
print(json.dumps(seen))
"""


def test_a_new_database_its_wal_and_its_endpoint_file_are_private(tmp_path):
    db = tmp_path / "team" / "new.duckdb"
    done = subprocess.run([sys.executable, "-c", OPENER, str(db)], capture_output=True, text=True, timeout=180,
                          cwd=tmp_path, env=ENV, preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["umask_before"] == "0o22"  # the process started with the usual umask
    assert seen["db"] == "0o600" and seen["wal"] == "0o600", seen
    assert seen["wal_after_checkpoint"] is None and seen["wal_again"] == "0o600", seen
    assert seen["endpoint"] == "0o600", seen
    assert seen["folder"] == "0o700", seen
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_an_existing_folder_and_file_keep_their_modes(tmp_path):
    """Only what the process creates is made private: a file or folder the user set up keeps its mode."""
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o750)
    folder.chmod(0o750)
    db = folder / "old.duckdb"
    subprocess.run([sys.executable, "-c", "import duckdb, sys; duckdb.connect(sys.argv[1]).close()", str(db)],
                   check=True, timeout=120, env=ENV, preexec_fn=lambda: os.umask(0o022))
    assert stat.S_IMODE(db.stat().st_mode) == 0o644
    subprocess.run([sys.executable, "-c", "import sys; from reviewer.store import Store; Store(sys.argv[1]).close()",
                    str(db)], check=True, timeout=180, env=ENV, preexec_fn=lambda: os.umask(0o022))
    assert stat.S_IMODE(db.stat().st_mode) == 0o644 and stat.S_IMODE(folder.stat().st_mode) == 0o750
