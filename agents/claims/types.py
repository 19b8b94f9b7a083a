"""What a claim is and what the checker says about it: plain dataclasses with to_dict/from_dict so
the store can keep them as JSON and the UI can highlight `text[start:end]`."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any

# kind of claim
FEATURE = "feature"  # a line or band named or placed, present (polarity +1) or absent (-1)
QUANTITY = "quantity"  # a measured number with its unit
COMPARISON = "comparison"  # line A deeper / stronger / broader than line B
MEASURE = "measure"  # "<kb measurement name> = value": the rules policy's own wording

VERDICTS = ("supported", "contradicted", "unverifiable")


@dataclass
class Claim:
    kind: str
    text: str  # the source text of the span
    start: int  # offsets into the step text; text == source[start:end]
    end: int
    lines: list[str] = field(default_factory=list)  # canonical kb line names (or a band species)
    quantity: str | None = None  # ew / depth / fwhm / snr / ratio / z / velocity / measure name
    value: float | None = None
    unit: str | None = None
    relation: str = "="  # = < > for quantities; > or < (first vs second line) for comparisons
    frame: str | None = None  # rest / observed, as the text says (None: not stated)
    polarity: int = 1  # -1: "no H-beta emission", "is absent"
    line_kind: str | None = None  # emission / absorption / band
    wavelength: float | None = None  # a position the text gives, in Angstrom, in `frame`
    hedged: bool = False  # "about", "~", "roughly": an eyeballed number
    decimals: int = 0  # digits after the point in the quoted number (its rounding)
    spread: float = 0.0  # half the width of a quoted range ("3-5 Å": value 4, spread 1)
    strength: str | None = None  # "strong" (strong, prominent, obvious, deep ...) / "broad", as the text says
    source: str = "pattern"  # pattern / llm

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Claim:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str  # supported / contradicted / unverifiable
    measured: float | None = None
    tolerance: float | None = None
    window: list[float] | None = None  # the measured region, observed frame, Angstrom (UI shading)
    view: list[float] | None = None  # the zoom in force at the step, observed frame
    reason: str = ""
    step_index: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)  # the claim too

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimResult:
        data = dict(data)
        claim = Claim.from_dict(data.pop("claim"))
        names = {f.name for f in fields(cls)}
        return cls(claim=claim, **{k: v for k, v in data.items() if k in names})


_ATOMS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """dataclasses.asdict's copy of a value (dataclasses as dicts, containers copied all the way down, anything else
    deep-copied), without its per-value dispatch: asdict was a quarter of a campaign's claim check."""
    if type(value) in _ATOMS:
        return value
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    return copy.deepcopy(value)


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def summarize(results: list[ClaimResult]) -> dict[str, int]:
    counts = {v: 0 for v in VERDICTS}
    for r in results:
        counts[r.verdict] += 1
    return counts


def summary_text(results: list[ClaimResult]) -> str:
    """"7 supported, 1 contradicted, 2 unverifiable" (the per-trajectory line of the review screen)."""
    counts = summarize(results)
    return ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
