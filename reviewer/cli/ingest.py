"""`specreview ingest PATH...`: register spectrum files (or folders, recursively) in the store."""
from __future__ import annotations

import argparse
import sys

from reviewer.cli.common import open_store
from reviewer.services.ingest import ingest_paths

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
    store = open_store(args)
    if store is None:
        return EXIT_ALL_FAILED
    try:
        try:
            summary = ingest_paths(store, args.paths, progress=not args.no_progress and sys.stderr.isatty(),
                                   match_radius=args.match_radius)
        except ValueError as err:  # the radius
            print(f"specreview ingest: {err}", file=sys.stderr)
            return EXIT_USAGE
        total = store.spectra.count_spectra()
        objects, match = store.objects.count_groups(), store.objects.last_match()
    finally:
        store.close()
    print(f"database: {store.path}")
    print(f"added: {summary.added}")
    print(f"already present: {summary.skipped_existing}")
    print(f"failed: {len(summary.failed)}")
    for where, problem in summary.failed:
        print(f"  {where}: {problem}")
    print(f"spectra in database: {total}")
    if match is not None:
        print(f"objects with several spectra: {objects} (cross-match within {match['radius_arcsec']:g} arcsec)")
    if summary.readable == 0:
        if not summary.failed:
            print("no spectrum files found", file=sys.stderr)
        return EXIT_ALL_FAILED
    return EXIT_OK
