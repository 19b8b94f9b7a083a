"""`specreview ingest PATH...`: register spectrum files (or folders, recursively) in the store."""
from __future__ import annotations

import argparse

from reviewer.cli.common import open_store, progress_stream
from reviewer.cli.console import console_of
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE

SKIPPED_SHOWN = 20  # skipped files named one by one; past that, counted


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "ingest", help="register spectra (FITS, tables; files or folders) in the database",
        description="Register spectrum files in the database. Folders are walked recursively; "
        "re-running adds only what is new; files that are not spectra by their names (a PNG, a README) are "
        "skipped and counted. Exit 0 when every file was registered (or already was), 1 when any failed "
        "(each named with its reason), 2 for a wrong command line.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="spectrum file or folder")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--match-radius", type=float, default=None, metavar="ARCSEC",
                   help="radius of the same-object cross-match (default 1.5, or $SPECREVIEW_MATCH_ARCSEC); "
                        "given, the match runs again even when nothing was added")
    return p


def run(args: argparse.Namespace) -> int:
    from reviewer.services.ingest import ingest_paths, stored_totals

    console = console_of(args)
    store = open_store(args)
    if store is None:
        return EXIT_SOME_FAILED
    try:
        try:
            summary = ingest_paths(store, args.paths, progress=progress_stream(args) or False,
                                   match_radius=args.match_radius, check=console.check)
        except ValueError as err:  # the radius
            console.warn(f"specreview ingest: {err}")
            return EXIT_USAGE
        total, objects, match = stored_totals(store)
    finally:
        store.close()
    console.say(f"database: {store.path}")
    console.say(f"added: {summary.added}")
    console.say(f"already present: {summary.skipped_existing}")
    console.say(f"failed: {len(summary.failed)}")
    for where, problem in summary.failed:
        console.say(f"  {where}: {problem}")
    console.say(f"skipped (not spectrum files by their names): {len(summary.skipped_files)}")
    for where in summary.skipped_files[:SKIPPED_SHOWN]:
        console.say(f"  {where}")
    if len(summary.skipped_files) > SKIPPED_SHOWN:
        console.say(f"  ... and {len(summary.skipped_files) - SKIPPED_SHOWN} more")
    if summary.linked:
        console.say(f"trajectories linked to their spectra: {summary.linked} (imported before these were ingested)")
    console.say(f"spectra in database: {total}")
    if match is not None:
        console.say(f"objects with several spectra: {objects} (cross-match within {match['radius_arcsec']:g} arcsec)")
    if summary.readable == 0 and not summary.failed:
        console.warn("no spectrum files found")
        return EXIT_SOME_FAILED
    return EXIT_SOME_FAILED if summary.failed else EXIT_OK
