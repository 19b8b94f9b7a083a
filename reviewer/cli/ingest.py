"""`specreview ingest PATH...`: register spectrum files (or folders, recursively) in the store."""
from __future__ import annotations

import argparse

from reviewer.cli.common import open_store, progress_stream
from reviewer.cli.console import console_of

EXIT_OK, EXIT_ALL_FAILED, EXIT_USAGE = 0, 1, 2


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "ingest", help="register spectra (FITS, tables; files or folders) in the database",
        description="Register spectrum files in the database. Folders are walked recursively; "
        "re-running adds only what is new. Exit 0 if anything is readable, 1 if everything failed.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="spectrum file or folder")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--match-radius", type=float, default=None, metavar="ARCSEC",
                   help="radius of the same-object cross-match (default 1.5, or $SPECREVIEW_MATCH_ARCSEC); "
                        "given, the match runs again even when nothing was added")
    return p


def run(args: argparse.Namespace) -> int:
    from reviewer.services.ingest import ingest_paths

    console = console_of(args)
    store = open_store(args)
    if store is None:
        return EXIT_ALL_FAILED
    try:
        try:
            summary = ingest_paths(store, args.paths, progress=progress_stream(args) or False,
                                   match_radius=args.match_radius, check=console.check)
        except ValueError as err:  # the radius
            console.warn(f"specreview ingest: {err}")
            return EXIT_USAGE
        total = store.spectra.count_spectra()
        objects, match = store.objects.count_groups(), store.objects.last_match()
    finally:
        store.close()
    console.say(f"database: {store.path}")
    console.say(f"added: {summary.added}")
    console.say(f"already present: {summary.skipped_existing}")
    console.say(f"failed: {len(summary.failed)}")
    for where, problem in summary.failed:
        console.say(f"  {where}: {problem}")
    console.say(f"spectra in database: {total}")
    if match is not None:
        console.say(f"objects with several spectra: {objects} (cross-match within {match['radius_arcsec']:g} arcsec)")
    if summary.readable == 0:
        if not summary.failed:
            console.warn("no spectrum files found")
        return EXIT_ALL_FAILED
    return EXIT_OK
