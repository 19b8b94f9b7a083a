"""Line names as agents write them (kb/line_aliases.yaml) and the kb task measurements by name.

`find_mentions(text)` returns every line, group or band mentioned, with its offsets, longest alias
first so "[O III] 5007" wins over "[O III]". A number written right after a name that is one of the
line's own wavelengths ("[O III] 5007", "Hα 6563") belongs to the name, not to a position claim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import kb


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    names: tuple[str, ...]  # canonical kb line names (a band: the band species)
    what: str  # line / group / band
    label: str  # the canonical key of the alias table


_WORD_START = r"(?:(?<![\w\[])|(?<=\w\[))"


def _boundary(alias: str) -> str:
    # word boundaries only where the alias starts/ends with a word character ("[O III]" ends with ])
    # (a bracket right after a symbol opens its argument, "EW[Hα]", not a forbidden line's name)
    left = _WORD_START if alias[0].isalnum() else ""
    right = r"(?![\w])" if alias[-1].isalnum() else ""
    return left + re.escape(alias).replace(r"\ ", r"[\s_-]?") + right


@lru_cache(maxsize=1)
def _table():
    data = kb.load("line_aliases")
    entries = []  # (alias, case_sensitive, names, what, label, numbers)
    for name, spec in data["lines"].items():
        nums = tuple(spec.get("numbers", []))
        entries += [(a, False, (name,), "line", name, nums) for a in spec.get("aliases", [])]
        entries += [(a, True, (name,), "line", name, nums) for a in spec.get("exact", [])]
    for name, spec in data["groups"].items():
        entries += [(a, False, tuple(spec["members"]), "group", name, ()) for a in spec["aliases"]]
    for name, spec in data["bands"].items():
        entries += [(a, True, (name,), "band", name, ()) for a in spec["aliases"]]
    entries.sort(key=lambda e: -len(e[0]))
    return entries


@lru_cache(maxsize=1)
def _pattern():
    # The aliases in table order (longest first: the first that matches at a position wins), in
    # branches by their first letter, each behind a lookahead on that letter (matched with the
    # aliases' own case rules): at a position the engine tries the aliases that can start there, not
    # all of them (~190), which made this the claim check's largest cost. The first letters are
    # distinct under case folding, so at most one branch can match at a position, and within it the
    # order is the table's: the same match as one alternation of every alias.
    branches: dict[str, tuple[list[str], set[str], set[str]]] = {}
    for i, (alias, exact, *_rest) in enumerate(_table()):
        body = _boundary(alias)
        parts, exact_first, any_case_first = branches.setdefault(alias[0].lower(), ([], set(), set()))
        parts.append(f"(?P<a{i}>{body})" if exact else f"(?P<a{i}>(?i:{body}))")
        (exact_first if exact else any_case_first).add(re.escape(alias[0]))
    word, other = [], []
    for letter, (parts, exact_first, any_case_first) in branches.items():
        first = "|".join(([f"[{''.join(sorted(exact_first))}]"] if exact_first else [])
                         + ([f"(?i:[{''.join(sorted(any_case_first))}])"] if any_case_first else []))
        (word if letter.isalnum() else other).append(f"(?=(?:{first}))(?:{'|'.join(parts)})")
    # An alias that starts with a word character starts a word (_boundary): that test, made once
    # before its branches, turns a position inside a word away with one look behind instead of one
    # per branch (most positions of a text are inside words).
    return re.compile(f"(?:{_WORD_START}(?:{'|'.join(word)})|(?:{'|'.join(other)}))")


_NUM_AFTER = re.compile(r"\s*(?:λ|lambda\s*)?\s*(\d{4})(?:\.\d+)?(?!\s*(?:Å|A\b|Angstrom|nm|km))")


def find_mentions(text: str) -> list[Mention]:
    table = _table()
    out = []
    for m in _pattern().finditer(text):
        i = int(m.lastgroup[1:])
        _alias, _, names, what, label, numbers = table[i]
        end = m.end()
        num = _NUM_AFTER.match(text, end)
        if num and numbers and int(num.group(1)) in numbers:
            end = num.end()  # "Hα 6563": the number names the line
        out.append(Mention(m.start(), end, names, what, label))
    return out


def band_specs(band: str) -> list[str]:
    return list(kb.load("line_aliases")["bands"][band]["specs"])


@lru_cache(maxsize=1)
def kb_lines() -> dict[str, dict]:
    """Canonical name -> kb line entry (rest wavelength, width class); emission entry preferred."""
    out: dict[str, dict] = {}
    for ln in kb.lines():
        if ln["kind"] == "sky":
            continue
        if ln["name"] not in out or ln["kind"] == "emission":
            out[ln["name"]] = ln
    return out


def rest_wave(name: str) -> float | None:
    ln = kb_lines().get(name)
    return None if ln is None else float(ln["wave"])


@lru_cache(maxsize=1)
def kb_measures() -> dict[str, list[tuple[str, dict]]]:
    """kb task measurement name -> [(task id, spec)], over every task (windows, derived values)."""
    out: dict[str, list[tuple[str, dict]]] = {}
    for tid, task in kb.tasks().items():
        for win in task["windows"]:
            for spec in win.get("measures", []):
                out.setdefault(spec.get("name", spec["id"]), []).append((tid, spec))
        for spec in task.get("derived", []):
            out.setdefault(spec.get("name", spec["id"]), []).append((tid, spec))
    return out


@lru_cache(maxsize=64)
def task_lines(task_id: str) -> tuple[str, ...]:
    """The kb lines a vetting task diagnoses: those its window measurements are named after (read
    as agents' line names are, so "He I 5876 emission equivalent width" is He I 5877 and the "Ca II
    H + H-epsilon blend" both lines), in the task's window order. Bands and continuum measures name
    no line. An unknown task has none."""
    task = kb.tasks().get(task_id)
    out: list[str] = []
    for win in (task or {}).get("windows", []):
        for spec in win.get("measures", []):
            for mention in find_mentions(spec.get("name", spec["id"])):
                if mention.what != "band":
                    out += [name for name in mention.names if name in kb_lines() and name not in out]
    return tuple(out)


@lru_cache(maxsize=1)
def measure_name_pattern() -> re.Pattern:
    names = sorted(kb_measures(), key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in names))


@lru_cache(maxsize=1)
def line_windows() -> dict[str, dict]:
    """Rest-frame core/blue/red windows per line, taken from the kb task measurements (whose
    windows were set for these lines on real spectra), keyed by canonical line name."""
    out: dict[str, dict] = {}
    for name, specs in kb_measures().items():
        for _tid, spec in specs:
            if spec.get("kind") not in ("equivalent_width", "emission_ew", "line_depth") or "core" not in spec:
                continue
            for line in kb_lines():
                if name.startswith(line + " ") and line not in out:
                    out[line] = {k: tuple(spec[k]) for k in ("core", "blue", "red")}
    return out
