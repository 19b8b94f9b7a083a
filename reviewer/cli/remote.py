"""Run a command through the app when the app is serving the database (reviewer/server_endpoint.py; its
endpoint file: reviewer/endpoint_file.py).

While `panel serve reviewer` runs, DuckDB's lock keeps every other process off the database. A command
that finds the lock held by the app (the pid in DuckDB's lock error is the pid in the endpoint file
`<db>.server.json`) sends its arguments to the app's local endpoint with the token from that file,
and prints what the app streams back; its exit code is the command's. Path arguments are made
absolute here first, since the app's working folder is not ours. Without an endpoint file nothing
changes: the command runs here (and says the database is locked if something else holds it).

An app that is busy (too many connections waiting, or too many commands running: 503 with
Retry-After) is asked again for up to BUSY_WAIT_S; then the command ends with a message and
BUSY_EXIT, having run nowhere. A connection the app closes before it answered counts as busy too.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
from pathlib import Path

from reviewer.cli.common import db_path, is_locked, lock_holder
from reviewer.cli.exits import EXIT_BUSY
from reviewer.endpoint_file import TOKEN_HEADER, UnsafeEndpoint, endpoint_path, read_endpoint_file
from reviewer.store import Store, StoreUnavailable

# Arguments that name files or folders (by dest or by metavar): made absolute before they travel.
PATH_DESTS = {"paths", "file", "out", "config", "labels", "plot", "templates", "images", "gold_file"}
PATH_METAVARS = {"PATH", "DIR", "FILE", "CSV", "PNG"}
# Either a path or a stored id: made absolute only when such a file or folder exists here.
PATH_OR_ID_METAVARS = {"PATH_OR_ID"}

READ_TIMEOUT_S = 60.0  # the app sends a heartbeat every second while a command runs
BUSY_WAIT_S = 5.0  # how long a busy app is asked again before the command gives up
BUSY_EXIT = EXIT_BUSY  # 75, EX_TEMPFAIL: nothing ran, try again later (reviewer/cli/exits.py)


class _Busy(Exception):
    """The app did not take the command: it is busy (503), or closed the connection before answering."""

    def __init__(self, why: str, retry_after: float = 1.0):
        super().__init__(why)
        self.retry_after = retry_after


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(command)
    return None


def _absolute(value: str) -> str:
    return os.path.abspath(os.path.expanduser(value))


def path_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict:
    """{dest: value} for every path argument given, made absolute against this process's folder."""
    sub = _subparser(parser, args.command)
    out: dict = {}
    if sub is None:
        return out
    for action in sub._actions:
        dest, metavar = action.dest, action.metavar
        metavars = set(metavar) if isinstance(metavar, tuple) else {metavar}
        value = getattr(args, dest, None)
        if dest == "db" or value is None or isinstance(value, bool):
            continue
        if dest in PATH_DESTS or metavars & PATH_METAVARS:
            convert = _absolute
        elif metavars & PATH_OR_ID_METAVARS:
            def convert(v: str) -> str:
                return _absolute(v) if os.path.exists(os.path.expanduser(v)) else v
        else:
            continue
        if isinstance(value, str):
            out[dest] = convert(value)
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[dest] = [convert(v) for v in value]
    return out


def served_endpoint(db: Path) -> dict | None:
    """The endpoint of the app holding `db`, or None when no app serves it (the command runs here)."""
    if not endpoint_path(db).exists():
        return None  # the usual case: no app, nothing to check
    try:
        Store(db)  # opens: nobody holds the file, the endpoint file is stale; the command reuses this
        return None
    except StoreUnavailable as exc:
        if not is_locked(exc):
            return None  # damaged, ...: the command says so
        holder = lock_holder(exc)
    try:
        return read_endpoint_file(db, lock_holder=holder)
    except UnsafeEndpoint as exc:
        print(f"specreview: not running through the app: {exc}", file=sys.stderr)
        return None


def forward_if_served(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int | None:
    """Run the command through the app serving its database and return its exit code; None when no
    app serves it (or the app is gone), and the caller runs the command here."""
    db = db_path(args)
    endpoint = served_endpoint(db)
    if endpoint is None:
        return None
    payload = {"argv": [str(a) for a in argv], "db": str(db), "paths": path_arguments(parser, args),
               "tty": {"stdout": sys.stdout.isatty(), "stderr": sys.stderr.isatty()}}
    return forward(endpoint, payload, db.name)


def forward(endpoint: dict, payload: dict, db_name: str) -> int | None:
    """POST the command to the endpoint and replay its output here; None when the app cannot be reached.
    A busy app is asked again until BUSY_WAIT_S has passed (then BUSY_EXIT, with a message)."""
    deadline = time.monotonic() + BUSY_WAIT_S
    while True:
        try:
            return _forward_once(endpoint, payload, db_name)
        except _Busy as busy:
            wait = min(max(busy.retry_after, 0.2), 1.0)
            if time.monotonic() + wait > deadline:
                print(f"specreview: the app serving {db_name} is busy ({busy}); nothing ran: "
                      "try again in a moment", file=sys.stderr)
                return BUSY_EXIT
            time.sleep(wait)
        except KeyboardInterrupt:
            print("\nspecreview: interrupted before the app took the command; nothing ran", file=sys.stderr)
            return 130


def _retry_after(resp: http.client.HTTPResponse) -> float:
    try:
        return float(resp.getheader("Retry-After") or 1)
    except ValueError:
        return 1.0


def _forward_once(endpoint: dict, payload: dict, db_name: str) -> int | None:
    body = json.dumps(payload).encode()
    conn = http.client.HTTPConnection("127.0.0.1", endpoint["port"], timeout=READ_TIMEOUT_S)
    try:
        try:
            conn.request("POST", "/run", body=body, headers={TOKEN_HEADER: endpoint["token"],
                                                             "Content-Type": "application/json"})
        except (TimeoutError, ConnectionRefusedError):
            return None  # nothing ran: the app has just stopped; run here
        except OSError as exc:  # closed before it read the request (broken pipe, reset): not taken
            raise _Busy(f"it closed the connection: {exc.strerror or exc}") from None
        resp = None
        try:
            try:
                resp = conn.getresponse()
            except (OSError, http.client.HTTPException) as exc:  # no answer at all: the command was not taken
                raise _Busy(f"it closed the connection without an answer: {exc}") from None
            if resp.status == 503:
                why = _error_text(resp.read(4096))
                raise _Busy(why, _retry_after(resp))
            if resp.status != 200:
                why = _error_text(resp.read(4096))
                print(f"specreview: the app serving {db_name} refused the command ({resp.status}): {why}",
                      file=sys.stderr)
                return 1
            print(f"specreview: the app is serving {db_name}; running through it", file=sys.stderr, flush=True)
            return _replay(resp)
        except KeyboardInterrupt:
            print("\nspecreview: interrupted; the app stops the command", file=sys.stderr)
            return 130
        except (OSError, http.client.HTTPException, ValueError) as exc:
            print(f"specreview: lost the app while the command ran ({exc}); see the app's log", file=sys.stderr)
            return 1
        finally:
            if resp is not None:
                resp.close()
    finally:
        conn.close()


def _error_text(body: bytes) -> str:
    """The app's reason from its JSON refusal ({"error": ...}), else the text as sent."""
    text = body.decode(errors="replace")
    try:
        return str(json.loads(text)["error"])
    except (ValueError, KeyError, TypeError):
        return text.strip() or "no reason given"


def _replay(resp: http.client.HTTPResponse) -> int:
    streams = {"out": sys.stdout, "err": sys.stderr}
    while True:
        line = resp.readline()
        if not line:
            print("specreview: the app closed the connection before the command finished; see its log",
                  file=sys.stderr)
            return 1
        line = line.strip()
        if not line:
            continue  # heartbeat
        frame = json.loads(line)
        if "exit" in frame:
            sys.stdout.flush()
            return int(frame["exit"])
        for name, stream in streams.items():
            if name in frame:
                stream.write(frame[name])
                stream.flush()
