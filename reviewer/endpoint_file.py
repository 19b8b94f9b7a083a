"""The endpoint file, `<db>.server.json`: how a `specreview` command finds the app serving its database
(reviewer/cli/remote.py reads it) and how the app says where it listens (reviewer/server_endpoint.py
writes it). Below both, so that the command line and the server's endpoint, which runs commands,
do not import each other for it (issue 49: cli -> remote -> server_endpoint -> cli was a cycle)."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from pathlib import Path

TOKEN_HEADER = "X-SpecReview-Token"
ENDPOINT_SUFFIX = ".server.json"
FORMAT_VERSION = 1


def endpoint_path(db: str | os.PathLike) -> Path:
    """`<db>.server.json`, next to the database file."""
    db = Path(db)
    return db.with_name(db.name + ENDPOINT_SUFFIX)


def write_endpoint_file(db: Path, port: int, token: str) -> Path:
    """Write the endpoint file, readable and writable by the user only. Written under a new name
    (O_CREAT|O_EXCL, mode 0600) and renamed over any old one, so a reader never sees half of it.
    Any file already there is stale: this process holds the database's lock."""
    path = endpoint_path(db)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    body = json.dumps({"version": FORMAT_VERSION, "pid": os.getpid(), "port": port, "token": token,
                       "db": str(db), "started_at": time.time()})
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, body.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def remove_endpoint_file(db: Path, pid: int | None = None) -> None:
    """Remove the endpoint file if it is this process's (or `pid`'s)."""
    path = endpoint_path(db)
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == (pid or os.getpid()):
            path.unlink()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but another user's: not our app
        return False
    return True


class UnsafeEndpoint(RuntimeError):
    """The endpoint file is there but must not be trusted (others may read it, someone else owns it)."""


def read_endpoint_file(db: Path, lock_holder: int | None = None) -> dict | None:
    """The endpoint of the app serving `db`, or None when there is none or the file is stale (its pid
    is dead, or is not the process DuckDB says holds the lock). Raises UnsafeEndpoint when the file
    is not a regular file of this user's that only they can read."""
    path = endpoint_path(db)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    import stat

    if not stat.S_ISREG(st.st_mode):
        raise UnsafeEndpoint(f"{path.name} is not a regular file")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UnsafeEndpoint(f"{path.name} belongs to another user")
    if st.st_mode & 0o077:
        raise UnsafeEndpoint(f"{path.name} can be read or written by others (mode {stat.S_IMODE(st.st_mode):o}); "
                             "the app writes it with mode 600")
    try:
        info = json.loads(path.read_text())
        pid, port, token = int(info["pid"]), int(info["port"]), str(info["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # half-written or foreign: not an endpoint
    if not pid_alive(pid) or (lock_holder is not None and lock_holder != pid):
        return None
    if info.get("db") and Path(info["db"]) != Path(db):
        return None
    return {"pid": pid, "port": port, "token": token, "db": info.get("db"), "path": path}
