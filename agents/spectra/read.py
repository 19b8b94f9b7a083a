"""`read_spectrum` and `list_targets`: identify the layout from content and dispatch.

The single exit for errors: anything a reader, astropy or numpy raises on bad input leaves as
SpectrumReadError naming the file and the problem.
"""
from __future__ import annotations

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
    try:
        return _read(path, name, target, expected_format)
    except SpectrumReadError:
        raise
    except MemoryError:
        raise SpectrumReadError(name, "file too large to read into memory") from None
    except Exception as exc:  # the documented contract: no bare astropy/numpy traceback escapes
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
    try:
        head = read_head(path, name)
        if not head.startswith(FITS_MAGIC):
            sniff(path, name)  # raises for empty or binary junk; a text table holds one spectrum
            return []
        fits = load_fits(path, name)
        if fits_format(fits, name) in MULTI_TARGET_FORMATS:
            return desi.list_targets_desi(fits, name)
        return []
    except SpectrumReadError:
        raise
    except Exception as exc:
        raise SpectrumReadError(name, f"unreadable ({type(exc).__name__}: {str(exc)[:160]})") from exc


def file_format(path: Any) -> str:
    """The format label of a file (raises SpectrumReadError for unknown or damaged input)."""
    name = source_name(path)
    return sniff(path, name)


__all__ = ["FITS_FORMATS", "file_format", "list_targets", "read_spectrum"]
