"""Identify a spectrum file's layout from its content (never from its name).

`load_fits` reads (and gunzips) the whole file and parses it with fitsraw; `fits_format` and
`text_format` name the layout. The format labels are the ones registered with specutils
(see loaders.py).
"""
from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from agents.settings import MAX_FILE_BYTES

from .errors import SpectrumReadError
from .fitsraw import RawFits

FITS_MAGIC = b"SIMPLE  ="
GZIP_MAGIC = b"\x1f\x8b"

LAMOST_LRS_IMAGE = "lamost-lrs-image"
LAMOST_LRS_TABLE = "lamost-lrs-table"
LAMOST_MRS = "lamost-mrs"
SDSS_SPEC = "sdss-spec"
DESI_COADD = "desi-coadd"
DESI_SPECTRA = "desi-spectra"
SPECREVIEW_TABLE = "specreview-table"
PICKLES_ASCII = "pickles-ascii"
ECSV = "ecsv-table"
ASCII_TABLE = "ascii-table"

FITS_FORMATS = (LAMOST_LRS_IMAGE, LAMOST_LRS_TABLE, LAMOST_MRS, SDSS_SPEC, DESI_COADD,
                DESI_SPECTRA, SPECREVIEW_TABLE)
TEXT_FORMATS = (PICKLES_ASCII, ECSV, ASCII_TABLE)
ALL_FORMATS = FITS_FORMATS + TEXT_FORMATS


def source_name(source: Any) -> str:
    """What error messages call the input: a path, or a stream's name."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return str(getattr(source, "name", "<stream>"))


def read_head(source: Any, path: str, n: int = 4096) -> bytes:
    """The first bytes of the (decompressed) input, to tell FITS from text."""
    raw = _raw_bytes(source, path, n)
    if raw.startswith(GZIP_MAGIC):
        try:
            # A truncated gzip still yields its first bytes; decompress only what we need.
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, n)
        except zlib.error as exc:
            raise SpectrumReadError(path, f"corrupt gzip stream ({exc})") from None
    return raw


def _raw_bytes(source: Any, path: str, n: int | None) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source if n is None else source[:n])
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        if not p.exists():
            raise SpectrumReadError(path, "file not found")
        if p.is_dir():
            raise SpectrumReadError(path, "is a directory, not a spectrum file")
        try:
            with open(p, "rb") as fh:
                return fh.read() if n is None else fh.read(n)
        except OSError as exc:
            raise SpectrumReadError(path, f"cannot open file ({exc.strerror or exc})") from None
    if hasattr(source, "read"):
        # Always from the start: identifiers (specutils') may have left the position anywhere.
        seekable = getattr(source, "seekable", lambda: False)()
        if seekable:
            source.seek(0)
        data = source.read() if n is None else source.read(n)
        if seekable:
            source.seek(0)
        if isinstance(data, str):
            data = data.encode("utf-8")
        return data
    raise SpectrumReadError(path, f"unsupported input type {type(source).__name__}")


def max_file_bytes() -> int:
    """The largest spectrum file, after decompression, that is read (SPECREVIEW_MAX_FILE_BYTES, default
    512 MB: a DESI coadd of 500 targets is ~200 MB). A 1.6 MB gzip bomb otherwise takes gigabytes."""
    return int(MAX_FILE_BYTES.text() or 512 * 2**20)


def read_all_bytes(source: Any, path: str) -> bytes:
    cap = max_file_bytes()
    if isinstance(source, (str, os.PathLike)) and Path(source).is_file() and Path(source).stat().st_size > cap:
        raise SpectrumReadError(path, f"file is larger than {cap} bytes (SPECREVIEW_MAX_FILE_BYTES)")
    raw = _raw_bytes(source, path, None)
    if len(raw) > cap:
        raise SpectrumReadError(path, f"file is larger than {cap} bytes (SPECREVIEW_MAX_FILE_BYTES)")
    if raw.startswith(GZIP_MAGIC):
        try:
            # read at most one byte past the cap: memory stays bounded whatever the stream expands to
            data = gzip.GzipFile(fileobj=io.BytesIO(raw)).read(cap + 1)
            if len(data) > cap:
                raise SpectrumReadError(path, f"decompresses to more than {cap} bytes (SPECREVIEW_MAX_FILE_BYTES): "
                                              "refused (a damaged file, or a gzip bomb)")
            return data
        except EOFError:
            raise SpectrumReadError(path, "truncated gzip file (compressed stream ends early)") from None
        except (OSError, zlib.error) as exc:
            raise SpectrumReadError(path, f"corrupt gzip stream ({exc})") from None
    return raw


def load_fits(source: Any, path: str) -> RawFits:
    """The whole (decompressed) file parsed into HDUs; damage raises SpectrumReadError."""
    return RawFits(read_all_bytes(source, path), path)


def fits_format(fits: RawFits, path: str) -> str:
    """Name the layout of a parsed FITS file, or raise 'unknown layout'."""
    names = fits.names
    primary = fits[0].header
    if primary.get("SRFORMAT") == SPECREVIEW_TABLE:
        return SPECREVIEW_TABLE
    if "COADD_B" in names or "COADD_R" in names:
        return LAMOST_MRS
    if any(f"{arm}_FLUX" in names for arm in "BRZ"):
        if "FIBERMAP" in names:
            fm = fits["FIBERMAP"].table()
            if fm.has("FIBERSTATUS") and not fm.has("COADD_FIBERSTATUS"):
                return DESI_SPECTRA
        return DESI_COADD
    if _is_lamost(primary):
        if primary.get("NAXIS", 0) == 2 and primary.get("NAXIS2", 0) >= 2:
            return LAMOST_LRS_IMAGE
        if len(fits) > 1 and fits[1].kind == "table":
            table = fits[1].table()
            if table.has("FLUX") and table.has("WAVELENGTH"):
                return LAMOST_LRS_TABLE
    if "COADD" in names and fits["COADD"].kind == "table":
        table = fits["COADD"].table()
        if table.has("flux") and table.has("loglam"):
            return SDSS_SPEC
    raise SpectrumReadError(path, "unknown FITS layout (not LAMOST LRS/MRS, SDSS/BOSS spec, "
                                  f"DESI coadd/spectra or SpecReview table; HDUs: "
                                  f"{', '.join(n or '?' for n in names)})")


def _is_lamost(header) -> bool:
    telescope = str(header.get("TELESCOP", "")).upper()
    desig = str(header.get("DESIG", "")).upper()
    return telescope.startswith("LAMOST") or desig.startswith("LAMOST")


_PICKLES_ROW = re.compile(r"^\s*\d{3,5}\.\d(?:\s*-?\d*\.\d{6})+\s*$")


FITS_NAME_SUFFIXES = (".fits", ".fits.gz", ".fit", ".fit.gz", ".fts", ".fts.gz")


def refuse_text_named_fits(path: str) -> None:
    """A text file whose name says FITS is a misnamed or damaged file, not a table: say so, rather than
    what a table reader makes of its words ('a header row but no data rows')."""
    if str(path).lower().endswith(FITS_NAME_SUFFIXES):
        raise SpectrumReadError(path, "not a FITS file (named as one, its content is text without a FITS header)")


def text_format(text: str, path: str) -> str:
    """Name the layout of a text table from its first lines."""
    lines = [ln for ln in text.splitlines()[:50] if ln.strip()]
    if not lines:
        raise SpectrumReadError(path, "empty text file (no rows)")
    if lines[0].startswith("# %ECSV"):
        return ECSV
    if all(_PICKLES_ROW.match(ln) for ln in lines[:20]):
        return PICKLES_ASCII
    return ASCII_TABLE


def sniff(source: Any, path: str) -> str:
    """The format label of any supported input (opens FITS headers only)."""
    head = read_head(source, path)
    if not head:
        raise SpectrumReadError(path, "empty file (0 bytes)")
    if head.startswith(FITS_MAGIC):
        return fits_format(load_fits(source, path), path)
    if b"\x00" in head:
        raise SpectrumReadError(path, "not FITS and not a text table (binary content)")
    refuse_text_named_fits(path)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        # The 4 KiB cut may split a multi-byte character; latin-1 never fails.
        text = head.decode("latin-1")
    if len(head) >= 4096 and "\n" in text:
        text = text[:text.rfind("\n")]  # the cut may leave half a row: judge whole rows only
    return text_format(text, path)


@lru_cache(maxsize=256)
def _sniff_cached(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        return sniff(path, path)
    except SpectrumReadError:
        return None


def identify(path: Any) -> str | None:
    """Cached format label for a path (None when unreadable); used by specutils identifiers."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _sniff_cached(str(path), st.st_mtime_ns, st.st_size)
