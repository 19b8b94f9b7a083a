"""`read_spectrum` and `list_targets`: identify the layout from content and dispatch.

The single exit for errors: anything a reader, astropy or numpy raises on bad input leaves as
SpectrumReadError naming the file and the problem.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from specutils import Spectrum

from . import desi, lamost, sdss, tables
from .errors import SpectrumReadError
from .sniff import (
    FITS_FORMATS,
    FITS_MAGIC,
    fits_format,
    load_fits,
    read_all_bytes,
    read_head,
    refuse_text_named_fits,
    sniff,
    source_name,
    text_format,
)

FITS_READERS = {**lamost.READERS, **sdss.READERS, **desi.READERS, **tables.FITS_READERS}
TEXT_READERS = tables.TEXT_READERS
MULTI_TARGET_FORMATS = tuple(desi.READERS)


def read_spectrum(path: Any, target: str | int | None = None, *, expected_format: str | None = None
                  ) -> Spectrum:
    """Read one spectrum (see the package docstring for formats, meta keys and errors).

    ``path``: a file path, or a binary file object / bytes. ``target``: which spectrum of a
    multi-target file (DESI TARGETID, or row index when the file has no ids); must be None for
    single-spectrum files. ``expected_format``: a format label the file must have (specutils
    ``format=`` calls pass it); a mismatch raises.
    """
    name = source_name(path)
    with _read_errors(name):
        return _read(path, name, target, expected_format)


@contextmanager
def _read_errors(name: str) -> Iterator[None]:
    """The documented contract: no bare astropy/numpy traceback escapes a reader."""
    try:
        yield
    except SpectrumReadError:
        raise
    except MemoryError:
        raise SpectrumReadError(name, "file too large to read into memory") from None
    except Exception as exc:
        raise SpectrumReadError(name, f"unreadable ({type(exc).__name__}: {str(exc)[:160]})") from exc


def _check_expected(name: str, fmt: str, expected: str | None) -> None:
    if expected is not None and fmt != expected:
        raise SpectrumReadError(name, f"is not a {expected} file (its layout is {fmt})")


def _check_single(name: str, fmt: str, target) -> None:
    if target is not None and fmt not in MULTI_TARGET_FORMATS:
        raise SpectrumReadError(name, f"target {target!r} not in file: a {fmt} file holds one "
                                      "spectrum (target= is for multi-target DESI files)")


def _read(path: Any, name: str, target, expected: str | None) -> Spectrum:
    head = read_head(path, name)
    if not head:
        raise SpectrumReadError(name, "empty file (0 bytes)")
    if head.startswith(FITS_MAGIC):
        fits = load_fits(path, name)
        fmt = fits_format(fits, name)
        _check_expected(name, fmt, expected)
        _check_single(name, fmt, target)
        return FITS_READERS[fmt](fits, name, target)
    if b"\x00" in head:
        raise SpectrumReadError(name, "not FITS and not a text table (binary content)")
    refuse_text_named_fits(name)
    raw = read_all_bytes(path, name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    fmt = text_format(text, name)
    _check_expected(name, fmt, expected)
    _check_single(name, fmt, target)
    return TEXT_READERS[fmt](text, name, target)


def list_targets(path: Any) -> list[str]:
    """The `target=` values of a multi-target file (DESI TARGETIDs as strings, or row indices
    as strings when it has no ids); an empty list for single-spectrum files."""
    name = source_name(path)
    with _read_errors(name):
        head = read_head(path, name)
        if not head.startswith(FITS_MAGIC):
            sniff(path, name)  # raises for empty or binary junk; a text table holds one spectrum
            return []
        fits = load_fits(path, name)
        if fits_format(fits, name) in MULTI_TARGET_FORMATS:
            return desi.list_targets_desi(fits, name)
        return []


class FileSpectra:
    """The spectra of one file from one read of it: `targets` (list_targets', or [None] for a
    single-spectrum file) and `read(target)` (read_spectrum's spectrum and errors). A multi-target
    file is read, decompressed and parsed once for all its targets, not once per target (a DESI coadd
    of 500 targets was parsed 501 times by list_targets and read_spectrum)."""

    def __init__(self, path: Any):
        self.path, self.name = path, source_name(path)
        self._fits = self._format = None
        with _read_errors(self.name):
            if read_head(path, self.name).startswith(FITS_MAGIC):
                self._fits = load_fits(path, self.name)
                self._format = fits_format(self._fits, self.name)
        multi = self._format in MULTI_TARGET_FORMATS
        self.targets: list[str | None] = (list(desi.list_targets_desi(self._fits, self.name)) if multi else []) or [None]

    def read(self, target: str | None) -> Spectrum:
        if self._fits is None:  # a text table (or empty, or junk): read_spectrum says which
            return read_spectrum(self.path, target)
        with _read_errors(self.name):
            _check_single(self.name, self._format, target)
            return FITS_READERS[self._format](self._fits, self.name, target)


def file_format(path: Any) -> str:
    """The format label of a file (raises SpectrumReadError for unknown or damaged input)."""
    name = source_name(path)
    return sniff(path, name)


__all__ = ["FITS_FORMATS", "FileSpectra", "file_format", "list_targets", "read_spectrum"]
