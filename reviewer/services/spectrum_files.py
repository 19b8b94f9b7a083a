"""Which files under a folder are spectra to register (reviewer.services.ingest): by name, without
opening them, and without importing the spectrum readers (a command decides how to run a walk's
jobs before those imports: reviewer.cli.vet)."""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

SPECTRUM_SUFFIXES = (".fits", ".fits.gz", ".fit", ".fit.gz", ".fts", ".csv", ".ecsv", ".txt", ".dat")
# Files that sit beside spectra but are not spectra: docs, listings, and redrock/zbest label
# sidecars (the DESI reader picks those up itself for the coadd beside them).
_SKIP_PREFIXES = ("readme", "manifest", "license", "licence", "redrock-", "zbest-", "rrdetails-", "changelog")


def is_spectrum_candidate(path: Path) -> bool:
    name = path.name.lower()
    if name.startswith(".") or name.startswith(_SKIP_PREFIXES):
        return False
    return name.endswith(SPECTRUM_SUFFIXES)


def find_spectrum_files(paths: Iterable[str | os.PathLike], skipped: list[str] | None = None
                        ) -> tuple[list[str], list[tuple[str, str]]]:
    """Expand folders (recursively, sorted as paths: by folder, then name) into candidate files, each
    once (by its resolved path). Files named explicitly are always tried. Returns (files, [(path,
    problem)] for paths that do not exist). Paths are kept as text: at 1M files a Path object each,
    and a resolved one for the check, held most of a walk's memory. `skipped`, when given, gets the
    files of the folders that are not taken for spectra by their names (a PNG, a README; hidden files
    are not counted), so that a walk can say how many it passed over."""
    files: list[str] = []
    missing: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = []
            for p in path.rglob("*"):
                if not p.is_file():
                    continue
                if is_spectrum_candidate(p):
                    found.append(str(p))
                elif skipped is not None and not p.name.startswith("."):
                    skipped.append(str(p))
            files += sorted(found, key=lambda f: f.replace(os.sep, "\0"))  # "a/x" before "a-b/y", as Paths sort
        elif path.is_file():
            files.append(str(path))
        else:
            missing.append((str(raw), "no such file or folder"))
    seen: set[str] = set()
    unique = []
    for f in files:
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, missing
