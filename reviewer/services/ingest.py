"""Register spectrum files in the store: `ingest_paths(store, paths)`.

Files and folders (recursive) are read with `agents.spectra` and one `spectra` row is written per
spectrum (one per target in multi-target DESI files). A spectrum's id is a short hash of the file's
content and the target, so re-ingesting, or ingesting a copy at another path, adds nothing. A file is
written whole or not at all: one that fails part-way writes none of its rows (files are committed a
group at a time, and a group that fails is written again one file at a time).

At survey scale: each file's stat is stored beside its content hash (table file_stamps), and a walk
over folders ingested before passes a file whose stat is unchanged without reading it, so a walk that
stopped (Ctrl-C, a client gone) goes on at the cost of a stat per file done.

`ingest_stream` is the same walk, handing over each file's spectrum ids once they are stored, so that a
caller can start working on the first files while the later ones are read (`specreview vet` on paths).
"""
from __future__ import annotations

import contextlib
import hashlib
import math
import os
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from reviewer.services.same_object import add_to_groups, refresh_groups
from reviewer.services.same_object import match_radius as radius_of
from reviewer.services.sky import obs_mjd, survey_ids
from reviewer.services.spectra_cache import file_digest, file_stamp, is_racy
from reviewer.services.spectrum_files import find_spectrum_files
from reviewer.store import StoreUnavailable
from reviewer.store.repository import Store


@dataclass
class IngestSummary:
    added: int = 0  # spectra newly registered
    skipped_existing: int = 0  # spectra already in the store
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path[#target], problem)
    files_seen: int = 0
    # files in the folders walked that are not spectra by their names (a PNG, a README): not read
    skipped_files: list[str] = field(default_factory=list)
    linked: int = 0  # trajectories imported before their spectrum, linked to one this walk stored
    added_ids: list[str] = field(default_factory=list)
    # with_file_ids: each file's spectra's ids, new or not (what `vet` on paths vets); else left empty
    file_ids: dict[str, list[str]] = field(default_factory=dict)

    with_file_ids: bool = False
    stored_since: list[str] = field(default_factory=list)  # ids stored since the walk last handed them over

    def note_file(self, path: Path, sha: str, targets: Iterable[str | None]) -> None:
        """A file whose spectra are now in the store (registered by this walk and committed, or known)."""
        ids = ids_of_file(sha, targets)
        self.stored_since += ids
        if self.with_file_ids:
            self.file_ids[str(path)] = ids

    def take_stored(self) -> list[str]:
        ids, self.stored_since = self.stored_since, []
        return ids

    @property
    def readable(self) -> int:
        """Spectra that are in the store after this run (new or not)."""
        return self.added + self.skipped_existing


def spectrum_id_for(file_sha256: str, target: str | None) -> str:
    """The store's id of one spectrum: 16 hex chars of sha256(file sha256 + '#' + target)."""
    key = f"{file_sha256}#{'' if target is None else target}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def ids_of_file(sha: str, targets: Iterable[str | None]) -> list[str]:
    """The spectrum ids of a file's targets, in target order (the untargeted spectrum first)."""
    return [spectrum_id_for(sha, t) for t in sorted(targets, key=lambda t: (t is not None, str(t)))]


def file_sha256(path: Path) -> str:
    """The file's sha256 (hex), kept per state of its stat (reviewer.services.spectra_cache.file_digest): the
    check that a stored spectrum's file is unchanged, before it is shown or vetted, then costs a stat."""
    return file_digest(path)


def spectrum_record(spec: Any, path: Path, sha: str, target: str | None) -> dict[str, Any]:
    """The `spectra` row for one read spectrum (metadata enough to list and search without re-reading)."""
    meta = spec.meta
    wave = spec.spectral_axis.to_value("Angstrom")
    return {
        "spectrum_id": spectrum_id_for(sha, target),
        "source_path": str(path.resolve()),
        "file_name": path.name,
        "target": target,
        "survey": meta.get("survey"),
        "object_id": meta.get("object_id"),
        "ra": _finite(meta.get("ra")),
        "dec": _finite(meta.get("dec")),
        "pipeline_class": meta.get("pipeline_class"),
        "pipeline_subclass": meta.get("pipeline_subclass"),
        "pipeline_z": _finite(meta.get("pipeline_z")),
        "snr": _finite(meta.get("snr")),
        "n_pix": len(wave),
        "wave_min": float(wave.min()) if len(wave) else None,
        "wave_max": float(wave.max()) if len(wave) else None,
        "format": meta.get("format"),
        "wavelength_medium": meta.get("wavelength_medium"),
        "file_sha256": sha,
        "header": {str(k): str(v) for k, v in (meta.get("header") or {}).items()},
        "obs_mjd": obs_mjd(meta),
        "survey_ids": survey_ids(meta) or None,
    }


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _describe(exc: Exception) -> str:
    from agents.spectra import SpectrumReadError

    if isinstance(exc, SpectrumReadError):
        return exc.problem
    # A reader bug must not stop a 10,000-file ingest, but it must not pass for bad data either.
    return f"unexpected {type(exc).__name__}: {exc}"


WRITE_GROUP = 64  # files whose spectra are written in one transaction (a commit costs ~10 ms)
# stamps of known files written in one transaction: a walk over known content wrote them all at its
# end, in one statement (~5 KB of Python objects a file while it was built: 0.6 GB at 100k files)
STAMP_GROUP = 2000
STAT_CHUNK = 2000  # files stat-ed and looked up in the store at once


@dataclass
class _ReadFile:
    path: Path
    sha: str
    targets: list[str | None]
    records: list[dict[str, Any]]
    stamp: tuple | None


class _SpectrumWriter:
    """Writes read files' spectra a group at a time (WRITE_GROUP files per transaction), each file whole
    or not at all, with the stamps of the files hashed; counts a file in the summary once committed."""

    def __init__(self, store: Store, summary: IngestSummary):
        self.store, self.summary = store, summary
        self.files: list[_ReadFile] = []
        self.stamps: list[tuple[str, tuple, str]] = []  # known content: only the stamp to store
        self.written: dict[str, set[str | None]] = {}  # content committed since the store was looked up

    def looked_up(self) -> None:
        """The caller looked the store up: what was committed before is in its answer."""
        self.written = {}

    def targets_read(self, sha: str) -> set[str | None]:
        """The targets of a content read since the store was looked up: committed since, or waiting in
        the group being filled (a copy of it at another path)."""
        return self.written.get(sha) or next((set(f.targets) for f in self.files if f.sha == sha), set())

    def add(self, read: _ReadFile) -> None:
        self.files.append(read)
        if len(self.files) >= WRITE_GROUP:
            self.flush()

    def stamp(self, path: Path, stamp: tuple | None, sha: str) -> None:
        if stamp is not None and not is_racy(stamp):  # a stat a write could still hide behind is not kept
            self.stamps.append((str(path.resolve()), stamp, sha))
            if len(self.stamps) >= STAMP_GROUP:
                self.flush()

    def _write(self, files: list[_ReadFile], stamps: list[tuple[str, tuple, str]]) -> None:
        with self.store.transaction():
            self.store.spectra.add_spectra([record for read in files for record in read.records])
            self.store.spectra.put_file_stamps(stamps + [(str(f.path.resolve()), f.stamp, f.sha) for f in files
                                                         if f.stamp is not None and not is_racy(f.stamp)])

    def _count(self, read: _ReadFile) -> None:
        self.written[read.sha] = set(read.targets)
        self.summary.added += len(read.records)
        self.summary.added_ids += [r["spectrum_id"] for r in read.records]
        self.summary.note_file(read.path, read.sha, read.targets)

    def flush(self) -> None:
        files, self.files = self.files, []
        stamps, self.stamps = self.stamps, []
        if not files and not stamps:
            return
        try:
            self._write(files, stamps)
        except StoreUnavailable:
            raise  # read-only, damaged: no file after this one could be stored either; the caller says it once
        except Exception:  # one at a time: one bad file does not take its group with it
            for read in files:
                try:
                    self._write([read], [])
                except StoreUnavailable:
                    raise
                except Exception as exc:
                    self.summary.failed.append((str(read.path), f"not stored: {type(exc).__name__}: {exc}"))
                    continue
                self._count(read)
            with contextlib.suppress(Exception):  # stamps only save a later walk some reading
                self._write([], stamps)
            return
        for read in files:
            self._count(read)


def _hashed(paths: list[tuple[Path, tuple | None]], summary: IngestSummary) -> list[tuple[Path, tuple | None, str]]:
    """(path, stamp, content sha256) of each file; a file that cannot be read is counted and said."""
    out = []
    for path, stamp in paths:
        try:
            out.append((path, stamp, file_sha256(path) if stamp is None else file_digest(path, stamp)))
        except Exception as exc:
            summary.files_seen += 1
            summary.failed.append((str(path), _describe(exc)))
    return out


def _ingest_file(path: Path, sha: str, known: set[str | None], summary: IngestSummary, stamp: tuple | None,
                 writer: _SpectrumWriter, keep: Callable[[str, Any], None] | None = None) -> None:
    """Read every spectrum of one hashed file for the writer when its content is new (`known`: its
    targets, when stored or read before; then it is not opened again: a run over files ingested before
    only hashes them, and with their stamps stored not even that: `_unknown_files`). `keep(spectrum_id,
    spectrum)` is given each spectrum of a file read whole."""
    from agents.spectra import FileSpectra

    summary.files_seen += 1
    if known:
        summary.skipped_existing += len(known)
        summary.note_file(path, sha, known)
        writer.stamp(path, stamp, sha)
        return
    try:
        spectra = FileSpectra(path)  # read and parsed once for all its targets
        targets = [None if t is None else str(t) for t in spectra.targets]
    except Exception as exc:
        summary.failed.append((str(path), _describe(exc)))
        return
    records, read = [], []
    for target in targets:
        try:
            spec = spectra.read(target)
            records.append(spectrum_record(spec, path, sha, target))
            read.append(spec)
        except Exception as exc:
            # One unreadable fibre fails the whole file: nothing of a file is half-registered.
            where = str(path) if target is None or len(targets) == 1 else f"{path}#{target}"
            summary.failed.append((where, _describe(exc)))
            return
    writer.add(_ReadFile(path, sha, targets, records, stamp))
    if keep is not None:
        for record, spec in zip(records, read, strict=True):
            keep(record["spectrum_id"], spec)


def _unknown_files(store: Store, chunk: list[Path], summary: IngestSummary) -> list[tuple[Path, tuple | None]]:
    """The files of `chunk` to hash, each with its stat; those whose stat is the one stored when their
    content was last hashed, and whose content is registered, are counted as known without a read."""
    stamped = []
    for path in chunk:
        try:
            stamped.append((path, str(path.resolve()), file_stamp(path)))
        except OSError:
            stamped.append((path, None, None))  # _hashed says why
    stored = store.spectra.file_stamps([resolved for _, resolved, _ in stamped if resolved])
    same = {resolved: stored[resolved][1] for _, resolved, stamp in stamped
            if resolved in stored and stored[resolved][0] == stamp}
    targets = store.spectra.targets_for_files(list(same.values())) if same else {}
    todo = []
    for path, resolved, stamp in stamped:
        known = targets.get(same.get(resolved, ""))
        if known:
            summary.files_seen += 1
            summary.skipped_existing += len(known)
            summary.note_file(path, same[resolved], known)
        else:
            todo.append((path, stamp))
    return todo


def ingest_paths(store: Store, paths: Iterable[str | os.PathLike], progress: bool | TextIO = True,
                 match_radius: float | None = None, check: Callable[[], None] | None = None,
                 with_file_ids: bool = False) -> IngestSummary:
    """Register every spectrum under `paths` (files or folders); idempotent. See the module doc. When
    spectra were added, the same-object cross-match runs again (reviewer.services.same_object; `match_radius`
    in arcsec, default 1.5 or $SPECREVIEW_MATCH_ARCSEC). `progress`: a bar on stderr, or on the stream
    given; `check()`, called before each file read, may raise to stop the walk (a forwarded command
    whose client went away): the files read so far are written and cross-matched, and a later run goes
    on from there, passing them on a stat. `with_file_ids`: the summary lists each file's spectrum ids
    (1M files' ids are ~0.3 GB: kept only for a caller that needs them)."""
    walk = ingest_stream(store, paths, progress, match_radius, check, with_file_ids)
    while True:
        try:
            next(walk)
        except StopIteration as done:
            return done.value


def ingest_stream(store: Store, paths: Iterable[str | os.PathLike], progress: bool | TextIO = True,
                  match_radius: float | None = None, check: Callable[[], None] | None = None,
                  with_file_ids: bool = False, keep: Callable[[str, Any], None] | None = None
                  ) -> Generator[list[str], None, IngestSummary]:
    """`ingest_paths` as a generator: it yields the spectrum ids of the files walked as they are stored
    (known files' at once, new files' once their group is committed), and returns the summary. Closing
    it stops the walk as `check()` raising does: what was read is written and cross-matched. `keep(spectrum_id,
    spectrum)` is given each spectrum read (the new files'), before its id is yielded, for a caller that
    works on it next (reviewer.cli.vet)."""
    radius = radius_of(match_radius)  # a bad radius is refused before anything is read
    skipped: list[str] = []
    files, missing = find_spectrum_files(paths, skipped)
    summary = IngestSummary(failed=list(missing), with_file_ids=with_file_ids, skipped_files=skipped)
    writer = _SpectrumWriter(store, summary)
    bar = tqdm(total=len(files), desc="ingest", unit="file", disable=not progress, leave=False,
               file=progress if hasattr(progress, "write") else None)
    try:
        for start in range(0, len(files), STAT_CHUNK):
            chunk = [Path(f) for f in files[start:start + STAT_CHUNK]]
            todo = _unknown_files(store, chunk, summary)
            bar.update(len(chunk) - len(todo))
            if summary.stored_since:
                yield summary.take_stored()
            for start_part in range(0, len(todo), WRITE_GROUP):  # hashed, then looked up in one query
                part = todo[start_part:start_part + WRITE_GROUP]
                hashed = _hashed(part, summary)
                writer.looked_up()
                stored = store.spectra.targets_for_files([sha for _, _, sha in hashed])
                for path, stamp, sha in hashed:
                    if check is not None:  # before each file's read: a stop keeps every file read before it
                        check()
                    _ingest_file(path, sha, stored.get(sha) or writer.targets_read(sha), summary, stamp, writer, keep)
                    bar.update(1)
                    if summary.stored_since:
                        yield summary.take_stored()
                bar.update(len(part) - len(hashed))  # those that could not be hashed
        writer.flush()
        if summary.stored_since:
            yield summary.take_stored()
    except BaseException:  # stopped: what was read is still written (a failing store: nothing more to do)
        with contextlib.suppress(Exception):
            writer.flush()
        raise
    finally:  # a stopped walk's files are cross-matched now: a later run passes them as known
        bar.close()
        if match_radius is not None:  # asked for: every group again, at this radius
            refresh_groups(store, radius)
        elif summary.added:
            add_to_groups(store, summary.added_ids, radius)
        if summary.added:  # trajectories imported before these spectra were here
            summary.linked = link_waiting_trajectories(store)
    return summary


def stored_totals(store: Store) -> tuple[int, int, dict[str, Any] | None]:
    """What an ingest ends by reporting: the spectra stored, the same-object groups, and the last
    cross-match (its radius and when; None before the first)."""
    return store.spectra.count_spectra(), store.objects.count_groups(), store.objects.last_match()


def _file_and_target(source_path: str, target: str | None) -> tuple[str, str | None]:
    """The file name and target a trajectory's source path names ('.../coadd.fits#39627' carries its target)."""
    path, _, after = str(source_path).partition("#")
    return Path(path).name, target if target is not None else (after or None)


def link_waiting_trajectories(store: Store) -> int:
    """Link the trajectories stored without a spectrum (`specreview import trajectories` before the
    spectra were ingested) to the one stored spectrum with their file name and target; how many were
    linked. A name and target two stored spectra share (two files of one name) links nothing: the
    trajectory waits, unlinked, as before. Their triage signals are stored again with their spectra's."""
    waiting = store.trajectories.unlinked_with_file()
    if not waiting:
        return 0
    wanted = {row["id"]: _file_and_target(row["source_path"], row["target"]) for row in waiting}
    by_key: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for row in store.spectra.spectra_named([name for name, _ in wanted.values()]):
        by_key.setdefault((row["file_name"], row["target"]), []).append(row)
    links = []
    for tid, (name, target) in wanted.items():
        hits = by_key.get((name, None if target is None else str(target)), [])
        if len(hits) == 1:
            links.append((tid, hits[0]["spectrum_id"], hits[0]["source_path"]))
    linked = store.trajectories.link_spectra(links)
    if linked:
        from reviewer.services.triage import store_signals

        with contextlib.suppress(Exception):  # derived rows: the first read computes them otherwise
            store_signals(store, {sid for _, sid, _ in links})
    return linked
