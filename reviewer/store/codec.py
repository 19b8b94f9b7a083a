"""Conversions between Python values and the store's JSON / TIMESTAMPTZ columns."""
from __future__ import annotations

import json
import struct
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic_core import to_jsonable_python


def _fallback(obj: Any) -> Any:
    # numpy scalars/arrays, astropy quantities and the like: plain values, else their text.
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    return str(obj)


def to_json(value: Any) -> str | None:
    """JSON text for a JSON column; None stays SQL NULL. NaN/inf become null (JSON has neither)."""
    if value is None:
        return None
    plain = to_jsonable_python(value, fallback=_fallback, inf_nan_mode="null")
    return json.dumps(plain, ensure_ascii=False, allow_nan=False)


def from_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def utc(value: datetime | None) -> datetime | None:
    """An aware UTC datetime (DuckDB hands back zoneinfo UTC; naive input is taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def now() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


def png_size(png: bytes) -> tuple[int | None, int | None]:
    """(width, height) from a PNG's IHDR chunk; (None, None) when the bytes are not a PNG."""
    if len(png) >= 24 and png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR":
        width, height = struct.unpack(">II", png[16:24])
        return int(width), int(height)
    return None, None
