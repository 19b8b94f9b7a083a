"""Images named by an imported row: a `data:image/png;base64,...` URL, or a path relative to the
folder of the file being imported (never outside it). Only PNG is stored: the store keeps renders as
content-addressed PNG bytes (agents/trajectory.py)."""
from __future__ import annotations

import base64
import binascii
from pathlib import Path

from agents.interop.rowcheck import RowError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Largest image one row may bring: a Spec-o3 full view is ~30-60 kB (reference: 800x480 px at dpi 80);
# 16 MB is a broken or hostile row, not a plot.
MAX_IMAGE_BYTES = 16 * 2**20
_DATA_PREFIX = "data:"


def is_data_url(ref: str) -> bool:
    return ref[:5].lower() == _DATA_PREFIX


def read_image(ref: str, base: Path, where: str) -> bytes:
    """The PNG bytes `ref` names (RowError naming `where` when it cannot be read, is not a PNG, is
    larger than MAX_IMAGE_BYTES or lies outside `base`)."""
    if not isinstance(ref, str) or not ref:
        raise RowError(f"{where}: expected a data URL or a relative path (string)")
    if is_data_url(ref):
        head, _, payload = ref.partition(",")
        if head.lower() != "data:image/png;base64":
            raise RowError(f"{where}: only base64 PNG data URLs (data:image/png;base64,...) are read, "
                           f"got {head[:40]!r}")
        if len(payload) * 3 // 4 > MAX_IMAGE_BYTES:
            raise RowError(f"{where}: image over the {MAX_IMAGE_BYTES:,}-byte limit")
        try:
            png = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise RowError(f"{where}: not valid base64") from None
    else:
        root = base.resolve()
        path = (base / ref).resolve()
        if root != path and root not in path.parents:
            raise RowError(f"{where}: image {ref} is outside {base.name}/; not read")
        if not path.is_file():
            raise RowError(f"{where}: image {ref} not found")
        if path.stat().st_size > MAX_IMAGE_BYTES:
            raise RowError(f"{where}: image {ref} is over the {MAX_IMAGE_BYTES:,}-byte limit")
        png = path.read_bytes()
    if not png.startswith(PNG_MAGIC):
        raise RowError(f"{where}: not a PNG image")
    return png


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
