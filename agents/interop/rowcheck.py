"""Shape checks for imported rows: a bad row raises RowError naming the field and what was expected
(`conversations[3].from: expected one of 'system', 'human', 'gpt', got 'bot'`), never a bare
KeyError / StopIteration / TypeError from deep inside the conversion. A text field longer than
agents.trajectory.MAX_STEP_TEXT_BYTES (1 MB) is refused the same way (check_text_sizes)."""
from __future__ import annotations

import math
from typing import Any

from agents.trajectory import MAX_STEP_TEXT_BYTES

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


def check_text_sizes(value: Any, where: str = "") -> None:
    """RowError at the first string anywhere in `value` (nested objects and arrays included) longer
    than MAX_STEP_TEXT_BYTES in UTF-8, naming its field (`conversations[2].value`) and the limit.
    Every text of an imported row can end up in a step (think / answer / observation text, a step's
    raw turn, the row's fields kept in the outcome), so every one is held to the step limit."""
    stack = [(where, value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            # a character is at most 4 bytes: only a long string needs encoding to be measured
            if len(node) * 4 > MAX_STEP_TEXT_BYTES:
                size = len(node.encode("utf-8", "surrogatepass"))
                if size > MAX_STEP_TEXT_BYTES:
                    raise RowError(f"{path or 'row'}: text of {size:,} bytes is over the "
                                   f"{MAX_STEP_TEXT_BYTES:,}-byte limit for one step's text "
                                   "(1 MB, agents.trajectory.MAX_STEP_TEXT_BYTES)")
        elif isinstance(node, dict):
            stack += [(f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(node.items()))]
        elif isinstance(node, (list, tuple)):
            stack += [(f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node)))]
