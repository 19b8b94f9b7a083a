"""`specreview` command line. Each subcommand lives in its own module of this package and
registers itself with `add_parser(subparsers)` / `run(args)`; `main` only dispatches. Every command
exits with the codes of reviewer/cli/exits.py (0 all done, 1 some inputs failed, 2 usage, 75 busy,
130 interrupted)."""
from __future__ import annotations

import argparse
import gc
import importlib
import sys

from reviewer.cli.console import Cancelled, Console
from reviewer.cli.exits import EXIT_INTERRUPTED, EXIT_SOME_FAILED

# subcommand name -> module in this package. A module listed here must define
# `add_parser(subparsers)` and `run(args) -> int`.
SUBCOMMANDS = {
    "ingest": "ingest",
    "serve": "serve",
    "session": "session",
    "reviewers": "reviewers",
    "judge": "judge",
    "export": "export",
    "vet": "vet",
    "eval": "eval",
    "verify": "verify",
    "claims": "claims",
    "ablate": "ablate",
    "import": "import_rows",
    "triage": "triage",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="specreview", description="SpecReview: vet and verify spectra with agents, review and export their labels.")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS.values():
        mod = importlib.import_module(f"reviewer.cli.{module}")
        p = mod.add_parser(sub)
        p.add_argument("--db", default=None, help="DuckDB file (default: $SPECREVIEW_DB or the per-user data folder)")
        p.set_defaults(_run=mod.run)
    return parser


# Subcommands that never go through a running app (reviewer/cli/remote.py): they do not use its database.
LOCAL_ONLY = {"serve"}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in LOCAL_ONLY:
        from reviewer.cli.remote import forward_if_served

        code = forward_if_served(parser, args, sys.argv[1:] if argv is None else list(argv))
        if code is not None:  # the app serving this database ran it
            return code
    return run_args(args)


def run_args(args: argparse.Namespace, console: Console | None = None) -> int:
    """Run parsed arguments in this process, writing to `console` (the process's own streams by
    default; the app runs a forwarded command with its client's: reviewer/server_endpoint.py)."""
    from reviewer.store import StoreUnavailable

    args.console = console or Console.of_this_process()
    try:
        return int(args._run(args) or 0)
    except StoreUnavailable as exc:  # a damaged or locked database: say so, no traceback
        args.console.warn(f"specreview: {exc}")
        return EXIT_SOME_FAILED
    except Cancelled:
        args.console.warn("specreview: interrupted: its client went away")
        return EXIT_INTERRUPTED


def script() -> None:
    """The `specreview` command (and `python -m reviewer.cli`): `main`, then an exit that leaves the
    process's objects to the system. A campaign's process held enough of them that the interpreter's
    collections at exit took ~0.65 s; gc.freeze() puts them out of those collections' reach
    (docs/benchmarks.md, issue 22). Not in `main`: a process that goes on after it (a test) must still
    collect them."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    script()
