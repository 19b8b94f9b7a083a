"""Reading untrusted JSON: the nesting limit every import applies, JSON Lines files (plain or gzip)
read line by line with a problem per bad line, and one JSON document read with a size limit.

One reader for every JSONL file of trajectories: `specreview import sft|bench|trajectories|chat`
and the shipped demo trajectories (assets/trajectories/demo.jsonl.gz) all go through jsonl_rows."""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Arrays and objects inside one another, the row itself the first: a real row has a handful. Deeper ones
# are refused, since Python's JSON parser and every walk over a row recurse (100,000 levels: RecursionError).
MAX_JSON_DEPTH = 64
# Largest JSONL text read (after gunzip): far above a real export (the 70-trajectory demo is ~2 MB
# unzipped), small enough that a gzip bomb is refused before it fills memory.
MAX_JSONL_BYTES = 1 << 30
TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels (arrays and objects inside one another)"


def too_deep(value: Any) -> bool:
    """Whether `value`'s arrays and objects nest deeper than MAX_JSON_DEPTH (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack += [(child, depth + 1) for child in children if isinstance(child, dict | list | tuple)]
    return False


class JSONFileError(ValueError):
    """A whole file cannot be read as JSON text (not UTF-8, too large, not JSON)."""


def read_text(path: Path, max_bytes: int | None = None) -> str:
    """A file's UTF-8 text (gzip when it ends in .gz), JSONFileError when it is not text or is
    larger than `max_bytes` (checked before it is read whole)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read(max_bytes + 1) if max_bytes is not None else fh.read()
    except (gzip.BadGzipFile, EOFError) as exc:
        raise JSONFileError(f"not a readable gzip file ({exc})") from None
    if max_bytes is not None and len(raw) > max_bytes:
        raise JSONFileError(f"larger than the {max_bytes:,}-byte limit for one file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JSONFileError(f"not UTF-8 text (byte {exc.start})") from None


def jsonl_rows(path: Path, max_bytes: int | None = MAX_JSONL_BYTES) -> Iterator[tuple[str, Any, str | None]]:
    """(where, row, problem) per non-blank line of a .jsonl or .jsonl.gz file: `where` is
    `<file> line N` (physical lines from 1, blank ones counted); `problem` is set, and `row` None,
    for a line that is not JSON or nests deeper than MAX_JSON_DEPTH. Lines are split on \\n only:
    str.splitlines would also split on U+2028 etc., legal inside JSON strings."""
    text = read_text(path, max_bytes)
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path.name} line {n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield where, None, f"not valid JSON ({exc.msg} at column {exc.colno})"
            continue
        except RecursionError:
            yield where, None, TOO_DEEP
            continue
        if isinstance(row, dict | list) and too_deep(row):
            yield where, None, TOO_DEEP
        else:
            yield where, row, None


def read_json(path: Path, max_bytes: int) -> Any:
    """One JSON document from a file of at most `max_bytes`, nested at most MAX_JSON_DEPTH deep;
    JSONFileError (with line and column) otherwise."""
    text = read_text(path, max_bytes)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONFileError(f"not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})") from None
    except RecursionError:
        raise JSONFileError(TOO_DEEP) from None
    if isinstance(value, dict | list) and too_deep(value):
        raise JSONFileError(TOO_DEEP)
    return value
