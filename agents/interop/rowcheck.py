"""Shape checks for imported rows: a bad row raises RowError naming the field and what was expected
(`conversations[3].from: expected one of 'system', 'human', 'gpt', got 'bot'`), never a bare
KeyError / StopIteration / TypeError from deep inside the conversion."""
from __future__ import annotations

import math
from typing import Any

JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
              type(None): "null"}


class RowError(ValueError):
    """One imported row is malformed; the message names the field and the expectation."""


def kind_of(value: Any) -> str:
    return next((name for t, name in JSON_TYPES.items() if type(value) is t), type(value).__name__)


def need(mapping: Any, key: str, where: str = "") -> Any:
    """mapping[key], or RowError naming the missing field."""
    if not isinstance(mapping, dict):
        raise RowError(f"{where or 'row'}: expected an object, got {kind_of(mapping)}")
    if key not in mapping:
        raise RowError(f"missing field {key!r}" + (f" in {where}" if where else ""))
    return mapping[key]


def need_type(value: Any, kind: type | tuple[type, ...], where: str, expected: str) -> Any:
    if not isinstance(value, kind):
        raise RowError(f"{where}: expected {expected}, got {kind_of(value)}")
    return value


def numbers(values: Any, where: str) -> list[float]:
    """A list of numbers (null allowed: a missing pixel); RowError at the first entry that is not."""
    if hasattr(values, "tolist") and not isinstance(values, (str, bytes)):  # numpy / pyarrow arrays
        values = values.tolist()
    need_type(values, (list, tuple), where, "an array of numbers")
    out = []
    for i, v in enumerate(values):
        if v is None:
            out.append(math.nan)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise RowError(f"{where}[{i}]: expected a number, got {kind_of(v)}")
        else:
            out.append(float(v))
    return out
