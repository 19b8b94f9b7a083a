"""`specreview serve`: run the reviewer app (what `panel serve reviewer` shows) on a chosen database,
with a team server's defaults.

The Bokeh server is built in this process with the app's Content-Security-Policy as a tornado
transform (reviewer/csp.py), so no page is ever served without it. The websocket accepts only the
origins named here: a page on another host, even of the same site, cannot open it with a reviewer's
cookies. A login (`--basic-auth`, or `--oauth-provider` with Panel's PANEL_OAUTH_* variables) makes
the signed login the reviewer's name (layouts/identity.py). The cookie secret is read from the
environment or a file, never from the command line (which `ps` and logs show).

SIGTERM and SIGINT (Ctrl-C) stop the server cleanly: the IOLoop stops at its next turn, the server is
stopped (the app's unload hook: reviewer/app_hooks.on_server_unloaded), the command endpoint and its
file `<db>.server.json` are removed, background work is dropped and the render processes end; the
exit code is 0. A second signal while it stops ends the process at once. A database the server cannot
open as it starts (another process holds it) stops it at once, with the message, and exit code 1.
"""
from __future__ import annotations

import logging
import os
import secrets
import signal
import sys
from pathlib import Path

from agents.settings import DB
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE

APP_DIR = Path(__file__).resolve().parents[1]
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_parser(sub):
    p = sub.add_parser("serve", help="run the reviewer web app")
    p.add_argument("--address", default="127.0.0.1", help="interface to listen on (default: localhost only)")
    p.add_argument("--port", type=int, default=5006)
    p.add_argument("--allow-origin", action="append", default=[], metavar="HOST[:PORT]",
                   help="an exact origin reviewers open the app from (repeatable; required off localhost), "
                        "e.g. review.example.org or review.example.org:5006")
    p.add_argument("--basic-auth", default=None, metavar="CREDENTIALS_JSON",
                   help="require a login: a JSON file of user names and passwords (README: Serving a team)")
    p.add_argument("--oauth-provider", default=None, help="require a login through this OAuth provider (Panel's)")
    p.add_argument("--cookie-secret-file", default=None, metavar="FILE",
                   help="the secret that signs login cookies (else $PANEL_COOKIE_SECRET; else a fresh one, "
                        "so logins end when the server restarts)")
    p.add_argument("--num-threads", type=int, default=4, help="threads serving page events (default 4)")
    p.add_argument("--show", action="store_true", help="open a browser")
    return p


def websocket_origins(address: str, port: int, allowed: list[str]) -> list[str]:
    """The exact HOST:PORT origins the websocket accepts (no wildcards)."""
    origins = [o if ":" in o else f"{o}:{port}" for o in allowed]
    if any("*" in o for o in origins):
        raise ValueError("--allow-origin takes exact host names; a wildcard would let other hosts in")
    if address in LOOPBACK or not allowed:
        origins += [f"localhost:{port}", f"127.0.0.1:{port}"]
    return list(dict.fromkeys(origins))


def cookie_secret(path: str | None) -> str:
    if path:
        secret = Path(path).expanduser().read_text().strip()
        if len(secret) < 32:
            raise ValueError(f"{Path(path).name}: a cookie secret has at least 32 characters")
        return secret
    return os.environ.get("PANEL_COOKIE_SECRET") or secrets.token_hex(32)


def run(args) -> int:
    if args.db:
        DB.set_for_children(str(Path(args.db).expanduser().resolve()))  # what the app's pages open
    login = bool(args.basic_auth or args.oauth_provider)
    if args.address not in LOOPBACK and not login:
        print("specreview serve: listening beyond localhost needs a login (--basic-auth or --oauth-provider); "
              "without one anybody could write labels under any name", file=sys.stderr)
        return EXIT_USAGE
    if args.address not in LOOPBACK and not args.allow_origin:
        print("specreview serve: name the address reviewers open the app at with --allow-origin HOST[:PORT]",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        origins = websocket_origins(args.address, args.port, args.allow_origin)
        secret = cookie_secret(args.cookie_secret_file) if login else None
    except (OSError, ValueError) as err:
        print(f"specreview serve: {err}", file=sys.stderr)
        return EXIT_USAGE
    import panel as pn
    from panel.io.application import build_single_handler_application
    from panel.io.server import get_server

    from reviewer.csp import ContentSecurityPolicy, server_built_with_csp
    from reviewer.server_app import guard_component_route

    pn.config.nthreads = args.num_threads
    if args.basic_auth:
        pn.config.basic_auth = args.basic_auth  # read by layouts/identity.py for every session
    # One process only: DuckDB allows one read-write process per file (README explains).
    guard_component_route()  # before the first request (app_hooks does it again: once is enough)
    # the directory app, as `panel serve reviewer` builds it: main.py and app_hooks.py
    app = build_single_handler_application(str(APP_DIR))
    server = get_server({"reviewer": app}, address=args.address, port=args.port, websocket_origin=origins,
                        basic_auth=args.basic_auth, oauth_provider=args.oauth_provider, cookie_secret=secret,
                        transforms=[ContentSecurityPolicy], show=args.show, start=False)
    server_built_with_csp()
    print(f"specreview serve: http://{args.address}:{args.port}/reviewer (websocket origins: {', '.join(origins)})",
          file=sys.stderr)
    stop_on_signals(server)  # after get_server: Panel's own SIGINT handler only stops the loop
    server.start()
    code = EXIT_OK
    try:
        server.io_loop.start()
    except KeyboardInterrupt:  # a SIGINT that arrived before the handler was in place
        pass
    except SystemExit as stop:  # the app could not open its database (reviewer/app_hooks.DatabaseUnavailable)
        print(stop.code if isinstance(stop.code, str) else f"specreview serve: stopped ({stop.code})",
              file=sys.stderr, flush=True)
        code = EXIT_SOME_FAILED
    finally:
        shut_down(server)
    return code


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def stop_on_signals(server) -> None:
    """SIGTERM and SIGINT stop the server's IOLoop (from the signal handler, only a callback is
    scheduled: the loop returns at its next turn and `run` shuts the server down); a second one while
    it shuts down ends the process at once (the signals' default actions are back)."""
    loop = server.io_loop.asyncio_loop

    def stop(signum, frame) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
        print(f"specreview serve: {signal.Signals(signum).name}: stopping", file=sys.stderr, flush=True)
        loop.call_soon_threadsafe(server.io_loop.stop)

    for sig in STOP_SIGNALS:
        signal.signal(sig, stop)


def shut_down(server) -> None:
    """Stop the server once its loop has returned: the app's unload hook ends the endpoint (its file
    removed) and the background work (render processes included); both again here, in case the hook
    did not run or failed (each is a no-op the second time)."""
    from reviewer.server_endpoint import stop_endpoint
    from reviewer.services import background

    log = logging.getLogger("specreview.serve")
    try:
        server.stop()
    except Exception:
        log.exception("stopping the server failed; ending the endpoint and the background work anyway")
    for step in (stop_endpoint, background.stop):
        try:
            step()
        except Exception:
            log.exception("%s failed while the server stopped", step.__qualname__)
    print("specreview serve: stopped", file=sys.stderr, flush=True)
