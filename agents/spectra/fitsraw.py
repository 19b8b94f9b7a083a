"""A minimal read-only FITS parser over bytes, for speed.

astropy.io.fits builds a Column object per table column and parses every card it touches: for a
DESI coadd (19 HDUs, an 81-column FIBERMAP) or an SDSS spec file (a 126-column SPECOBJ) that is
25-30 ms per read. Spectra need a handful of keys and columns, so this module walks the 2880-byte
header blocks itself and views data with np.frombuffer (~1-3 ms per file). It supports what the
survey files use: images (BITPIX 8/16/32/64/-32/-64, BSCALE/BZERO) and binary tables with
fixed-width columns (L, X, B, I, J, K, E, D, A; repeat counts; TZERO/TSCAL). Tile-compressed
images (ZIMAGE = T, the masks in DESI spectra-* files) are delegated to astropy.

Every structural problem raises SpectrumReadError with a specific text (truncated header or data,
missing END card, bad NAXISn), so damaged files fail cleanly.
"""
from __future__ import annotations

import io
import re
from typing import Any

import numpy as np

from .errors import SpectrumReadError

BLOCK = 2880
# Most cards one header may have. Survey headers hold a few hundred (SDSS spec files ~500, the largest
# in the shared corpus 502; DESI and LAMOST fewer); a long IRAF or pipeline HISTORY reaches a few
# thousand. A header past this is no spectrum's: reading and showing it would cost the server in
# proportion to its size (an attack: 150,000 HISTORY cards, 12 MB).
MAX_HEADER_CARDS = 10_000
_BITPIX = {8: ">u1", 16: ">i2", 32: ">i4", 64: ">i8", -32: ">f4", -64: ">f8"}
_TFORM = re.compile(r"^\s*(\d*)\s*([LXBIJKAEDCMPQ])")
_TCODE = {"L": "i1", "B": "u1", "I": ">i2", "J": ">i4", "K": ">i8", "E": ">f4", "D": ">f8",
          "C": ">c8", "M": ">c16"}
_TSIZE = {"L": 1, "B": 1, "I": 2, "J": 4, "K": 8, "E": 4, "D": 8, "C": 8, "M": 16, "A": 1,
          "P": 8, "Q": 16}


def parse_value(text: str) -> Any:
    """A card's value field as a Python value (str, bool, int, float) or None."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("'"):
        i, chars = 1, []
        while i < len(text):
            if text[i] == "'":
                if text[i + 1:i + 2] == "'":
                    chars.append("'")
                    i += 2
                    continue
                break
            chars.append(text[i])
            i += 1
        return "".join(chars).rstrip()
    text = text.split("/", 1)[0].strip()
    if text == "T":
        return True
    if text == "F":
        return False
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text.replace("D", "E").replace("d", "e"))
    except ValueError:
        return text or None


class RawHeader:
    """Card images of one header; values parsed on demand."""

    def __init__(self, text: str):
        self.text = text
        self._parsed: dict[str, Any] = {}
        self._values: dict[str, str] = {}
        for start in range(0, len(text), 80):
            card = text[start:start + 80]
            key = card[:8].strip()
            if key and card[8:10] == "= " and key not in self._values:
                self._values[key] = card[10:]

    def get(self, key: str, default: Any = None) -> Any:
        key = key.upper()
        if key in self._parsed:
            value = self._parsed[key]
        else:
            raw = self._values.get(key)
            if raw is None:
                return default
            value = self._parsed[key] = parse_value(raw)
        return default if value is None else value

    def __contains__(self, key: str) -> bool:
        return key.upper() in self._values

    def __getitem__(self, key: str) -> Any:
        if key.upper() not in self._values:
            raise KeyError(key)
        return parse_value(self._values[key.upper()])

    def keys(self):
        return self._values.keys()


class RawTable:
    """Columns of a binary table, decoded on access to native-endian numpy arrays."""

    def __init__(self, hdu: RawHDU, buf: bytes | memoryview):
        h = hdu.header
        self.nrows = int(h.get("NAXIS2", 0))
        rowlen = int(h.get("NAXIS1", 0))
        nfields = int(h.get("TFIELDS", 0))
        self._fields: dict[str, tuple[int, str, int, Any, Any]] = {}
        self._units: dict[str, Any] = {}
        self._cache: dict[str, np.ndarray] = {}
        self.names: list[str] = []
        offset = 0
        for i in range(1, nfields + 1):
            name = str(h.get(f"TTYPE{i}", f"col{i}")).strip()
            form = str(h.get(f"TFORM{i}", ""))
            m = _TFORM.match(form)
            if not m:
                raise SpectrumReadError(hdu.path, f"HDU {hdu.name}: unsupported column format {form!r}")
            repeat = int(m.group(1)) if m.group(1) else 1
            code = m.group(2)
            size = (repeat + 7) // 8 if code == "X" else _TSIZE[code] * (1 if code in "PQ" else repeat)
            self._fields[name.upper()] = (offset, code, repeat, h.get(f"TZERO{i}"), h.get(f"TSCAL{i}"))
            self._units[name.upper()] = h.get(f"TUNIT{i}")
            self.names.append(name)
            offset += size
        if offset != rowlen:
            raise SpectrumReadError(hdu.path, f"HDU {hdu.name}: columns take {offset} bytes per row, "
                                              f"NAXIS1 says {rowlen}")
        self._rows = np.frombuffer(buf, dtype=np.uint8, count=self.nrows * rowlen).reshape(
            self.nrows, rowlen) if rowlen else np.zeros((self.nrows, 0), np.uint8)
        self.hdu_name = hdu.name
        self.path = hdu.path

    def __len__(self) -> int:
        return self.nrows

    def has(self, name: str) -> bool:
        return name.upper() in self._fields

    def unit(self, name: str) -> str | None:
        value = self._units.get(name.upper())
        return str(value).strip() or None if value is not None else None

    def col(self, name: str) -> np.ndarray:
        """Column as (nrows,) or (nrows, repeat) array; strings decoded to str; scaled."""
        key = name.upper()
        if key not in self._cache:
            self._cache[key] = self._decode(name)
        return self._cache[key]

    def _decode(self, name: str) -> np.ndarray:
        try:
            offset, code, repeat, tzero, tscal = self._fields[name.upper()]
        except KeyError:
            raise SpectrumReadError(self.path, f"HDU {self.hdu_name} lacks the {name} column") from None
        if code in "PQX":
            raise SpectrumReadError(self.path, f"HDU {self.hdu_name}: column {name} has an unsupported "
                                               "variable-length/bit format")
        width = _TSIZE[code] * repeat
        raw = np.ascontiguousarray(self._rows[:, offset:offset + width])
        if code == "A":
            arr = raw.view(f"S{repeat}").ravel()
            return np.char.decode(np.char.rstrip(arr), "ascii", "replace").astype(str)
        arr = raw.view(_TCODE[code]).reshape(self.nrows, repeat) if self.nrows else np.zeros(
            (0, repeat), _TCODE[code])
        if code == "L":
            arr = arr == ord("T")
        else:
            arr = arr.astype(arr.dtype.newbyteorder("="))
            if tscal not in (None, 1, 1.0) or (tzero not in (None, 0, 0.0) and code in "EDCM"):
                arr = arr * (1.0 if tscal is None else float(tscal)) + (0.0 if tzero is None else float(tzero))
            elif tzero not in (None, 0, 0.0):
                if code == "K" and int(tzero) == 2**63:
                    arr = arr.view(np.uint64) ^ np.uint64(2**63)
                else:
                    arr = arr.astype(np.int64) + int(tzero)
        return arr[:, 0] if repeat == 1 else arr


class RawHDU:
    def __init__(self, path: str, raw: bytes, index: int, header: RawHeader, data_start: int,
                 data_size: int):
        self.path = path
        self._raw = raw
        self.index = index
        self.header = header
        self.data_start = data_start
        self.data_size = data_size
        xt = str(header.get("XTENSION", "")).strip().upper()
        self.kind = "primary" if index == 0 else ("table" if xt == "BINTABLE" else
                                                  "image" if xt == "IMAGE" else xt.lower() or "unknown")
        if self.kind == "table" and header.get("ZIMAGE") is True:
            self.kind = "compressed-image"
        self.name = str(header.get("EXTNAME", "PRIMARY" if index == 0 else "")).strip().upper()
        self._table: RawTable | None = None
        self.parent: RawFits | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        h = self.header
        naxis = int(h.get("ZNAXIS" if self.kind == "compressed-image" else "NAXIS", 0))
        prefix = "ZNAXIS" if self.kind == "compressed-image" else "NAXIS"
        return tuple(int(h.get(f"{prefix}{i}", 0)) for i in range(naxis, 0, -1))

    def image(self) -> np.ndarray | None:
        """Image data (C order: NAXISn ... NAXIS1), scaled, native byte order."""
        if self.kind == "compressed-image":
            return self._astropy_data()
        if self.kind not in ("primary", "image"):
            raise SpectrumReadError(self.path, f"HDU {self.name or self.index} is not an image")
        shape = self.shape
        if not shape or 0 in shape:
            return None
        bitpix = int(self.header.get("BITPIX", 0))
        if bitpix not in _BITPIX:
            raise SpectrumReadError(self.path, f"HDU {self.name or self.index}: BITPIX {bitpix} invalid")
        count = int(np.prod(shape))
        arr = np.frombuffer(self._raw, dtype=_BITPIX[bitpix], count=count, offset=self.data_start)
        arr = arr.reshape(shape)
        bscale = self.header.get("BSCALE", 1)
        bzero = self.header.get("BZERO", 0)
        if bscale != 1 or (bzero != 0 and bitpix < 0):
            return arr.astype(np.float64) * float(bscale) + float(bzero)
        if bzero != 0:
            return arr.astype(np.int64) + int(bzero)
        return arr.astype(arr.dtype.newbyteorder("="))

    def table(self) -> RawTable:
        if self.kind != "table":
            raise SpectrumReadError(self.path, f"HDU {self.name or self.index} is not a binary table")
        if self._table is None:
            self._table = RawTable(self, memoryview(self._raw)[self.data_start:self.data_start
                                                               + self.data_size])
        return self._table

    def _astropy_data(self):
        # One astropy parse per file, shared by the HDUs (DESI spectra-* have three masks).
        if self.parent is None:
            raise SpectrumReadError(self.path, "compressed image outside a parsed file")
        return np.array(self.parent.astropy()[self.index].data)


class RawFits:
    """All HDUs of a FITS byte string; `fits["NAME"]`, `"NAME" in fits`, `fits[0]`."""

    def __init__(self, raw: bytes, path: str):
        self.path = path
        self.hdus: list[RawHDU] = []
        pos, n = 0, len(raw)
        while pos < n:
            if self.hdus and not raw[pos:pos + 8].strip(b"\x00 "):
                break  # zero / blank padding after the last HDU
            header, data_start = _read_header(raw, pos, path, len(self.hdus))
            size = _data_size(header, path)
            if data_start + size > n:
                raise SpectrumReadError(path, "truncated FITS file (data shorter than the header says)")
            self.hdus.append(RawHDU(path, raw, len(self.hdus), header, data_start, size))
            pos = data_start + (size + BLOCK - 1) // BLOCK * BLOCK
        if not self.hdus:
            raise SpectrumReadError(path, "not a FITS file (no header)")
        self.names = [h.name for h in self.hdus]
        self._raw = raw
        self._astropy = None
        for hdu in self.hdus:
            hdu.parent = self

    def astropy(self):
        """The same bytes opened by astropy (only for tile-compressed images)."""
        if self._astropy is None:
            from astropy.io import fits
            self._astropy = fits.open(io.BytesIO(self._raw), memmap=False)
        return self._astropy

    def __contains__(self, name: str) -> bool:
        return name.upper() in self.names

    def __getitem__(self, key) -> RawHDU:
        if isinstance(key, int):
            return self.hdus[key]
        try:
            return self.hdus[self.names.index(key.upper())]
        except ValueError:
            raise SpectrumReadError(self.path, f"missing HDU {key}") from None

    def __len__(self) -> int:
        return len(self.hdus)


def _read_header(raw: bytes, pos: int, path: str, index: int) -> tuple[RawHeader, int]:
    start = pos
    while True:
        block = raw[pos:pos + BLOCK]
        if len(block) < BLOCK and not block:
            raise SpectrumReadError(path, f"truncated FITS file (header of HDU {index} has no END card)")
        for i in range(0, len(block), 80):
            if block[i:i + 8] == b"END     " or block[i:i + 80].rstrip() == b"END":
                text = raw[start:pos + i].decode("ascii", "replace")
                return RawHeader(text), pos + BLOCK if len(block) == BLOCK else pos + len(block)
        if len(block) < BLOCK:
            raise SpectrumReadError(path, f"truncated FITS file (header of HDU {index} has no END card)")
        pos += BLOCK
        if (pos - start) // 80 > MAX_HEADER_CARDS:
            raise SpectrumReadError(path, f"header of HDU {index} has more than {MAX_HEADER_CARDS:,} cards "
                                          f"(a spectrum's has a few hundred): refused unread")


def _data_size(h: RawHeader, path: str) -> int:
    try:
        naxis = int(h.get("NAXIS", 0))
        if naxis == 0:
            return 0
        dims = [int(h.get(f"NAXIS{i}", 0)) for i in range(1, naxis + 1)]
        bitpix = abs(int(h.get("BITPIX", 8)))
    except (TypeError, ValueError):
        raise SpectrumReadError(path, "corrupt FITS header (NAXIS/BITPIX not numbers)") from None
    if any(d < 0 for d in dims):
        raise SpectrumReadError(path, "corrupt FITS header (negative NAXISn)")
    gcount = int(h.get("GCOUNT", 1) or 1)
    pcount = int(h.get("PCOUNT", 0) or 0)
    return bitpix // 8 * gcount * (pcount + int(np.prod(dims)))
