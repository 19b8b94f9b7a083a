"""`specreview serve`: run the reviewer app (the same as `panel serve reviewer`) on a chosen database."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

APP_DIR = Path(__file__).resolve().parents[1]


def add_parser(sub):
    p = sub.add_parser("serve", help="run the reviewer web app")
    p.add_argument("--address", default="127.0.0.1", help="interface to listen on (default: localhost only)")
    p.add_argument("--port", type=int, default=5006)
    p.add_argument("--basic-auth", default=None, help="passed to panel serve (see README: team set-up)")
    p.add_argument("--cookie-secret", default=None)
    p.add_argument("--show", action="store_true", help="open a browser")
    return p


def run(args) -> int:
    env = dict(os.environ)
    if args.db:
        env["SPECREVIEW_DB"] = str(Path(args.db).expanduser().resolve())
    # One process only: DuckDB allows one read-write process per file (README explains).
    cmd = [sys.executable, "-m", "panel", "serve", str(APP_DIR), "--address", args.address,
           "--port", str(args.port), "--num-procs", "1"]
    if args.address not in ("127.0.0.1", "localhost"):
        cmd += ["--allow-websocket-origin", f"*:{args.port}"]
    if args.basic_auth:
        cmd += ["--basic-auth", args.basic_auth]
    if args.cookie_secret:
        cmd += ["--cookie-secret", args.cookie_secret]
    if args.show:
        cmd.append("--show")
    return subprocess.call(cmd, env=env)
