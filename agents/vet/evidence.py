"""Evidence for a vetting task, driven entirely by its kb/tasks/<id>.yaml entry.

A task declares diagnostic windows, each with measurements from the fixed vocabulary of
`agents.tools.measure`; derived values (mean_of / ratio_of / max_of / min_of); and a decision rule:
YES when every `require` criterion holds and no `veto` group holds. A criterion is a leaf
`{measure, op, value}` or a group `{all: [...]}` / `{any: [...]}`. A value that cannot be measured
makes its leaf false (a requirement that cannot be checked is not met; a veto that cannot be checked
does not fire). Adding a task is adding a YAML file.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

from agents.tools.measure import UNITS, Arrays, measure

OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
DERIVED = ("mean_of", "ratio_of", "max_of", "min_of")


def quote(value: float) -> str:
    """The one format numbers are quoted in (reasoning text and recorded data agree exactly)."""
    return f"{value:.2f}"


@dataclass
class Measurement:
    id: str
    name: str
    kind: str
    value: float | None
    unit: str = ""
    window: str | None = None

    @property
    def quoted(self) -> str | None:
        return None if self.value is None else quote(self.value)

    def describe(self) -> str:
        if self.value is None:
            return f"{self.name}: not measurable"
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.name} = {self.quoted}{unit}"

    def as_data(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "kind": self.kind, "unit": self.unit,
                "window": self.window, "value": None if self.value is None else round(self.value, 2)}


@dataclass
class Decision:
    answer: str  # YES / NO
    failed: list[str] = field(default_factory=list)  # requirement texts not met
    passed: list[str] = field(default_factory=list)
    vetoes: list[str] = field(default_factory=list)  # veto texts that fired


def measure_window(task: dict, window_id: str, arrays: Arrays) -> list[Measurement]:
    win = next(w for w in task["windows"] if w["id"] == window_id)
    out = []
    for spec in win.get("measures", []):
        params = {k: v for k, v in spec.items() if k not in ("id", "kind", "name", "unit")}
        out.append(Measurement(spec["id"], spec.get("name", spec["id"]), spec["kind"],
                               measure(arrays, spec["kind"], **params),
                               spec.get("unit", UNITS.get(spec["kind"], "")), window_id))
    return out


def derive(task: dict, values: dict[str, Measurement]) -> list[Measurement]:
    out = []
    for spec in task.get("derived", []):
        how = next(k for k in DERIVED if k in spec)
        parts = [values[i].value if i in values else None for i in spec[how]]
        value = None
        if how == "ratio_of":
            num, den = parts
            if num is not None and den not in (None, 0):
                value = num / den
        else:
            known = [p for p in parts if p is not None]
            # a mean over fewer lines than declared would change its meaning: require all
            if known and (how != "mean_of" or len(known) == len(parts)):
                value = {"mean_of": sum(known) / len(known), "max_of": max(known),
                         "min_of": min(known)}[how]
        m = Measurement(spec["id"], spec.get("name", spec["id"]), how, value, spec.get("unit", ""))
        values[m.id] = m
        out.append(m)
    return out


def _holds(crit: dict, values: dict[str, Measurement]) -> bool:
    if "all" in crit:
        return all(_holds(c, values) for c in crit["all"])
    if "any" in crit:
        return any(_holds(c, values) for c in crit["any"])
    m = values.get(crit["measure"])
    if m is None or m.value is None:
        return False
    # compare the quoted (2-decimal) value so the reasoning and the decision never disagree
    return OPS[crit["op"]](float(quote(m.value)), float(crit["value"]))


def describe_criterion(crit: dict, values: dict[str, Measurement]) -> str:
    if "all" in crit or "any" in crit:
        key = "all" if "all" in crit else "any"
        joiner = " and " if key == "all" else " or "
        return "(" + joiner.join(describe_criterion(c, values) for c in crit[key]) + ")"
    m = values.get(crit["measure"])
    name = m.name if m else crit["measure"]
    if m is None or m.value is None:
        return f"{name} not measurable (needs {crit['op']} {quote(float(crit['value']))})"
    return f"{name} = {m.quoted} (needs {crit['op']} {quote(float(crit['value']))})"


def decide(task: dict, values: dict[str, Measurement]) -> Decision:
    rule = task["decision"]
    decision = Decision("NO")
    for crit in rule.get("require", []):
        text = describe_criterion(crit, values)
        if crit.get("says"):
            text = f"{crit['says']}: {text}"
        (decision.passed if _holds(crit, values) else decision.failed).append(text)
    for crit in rule.get("veto", []):
        if _holds(crit, values):
            text = describe_criterion(crit, values)
            decision.vetoes.append(f"{crit.get('says', crit.get('id', 'veto'))}: {text}")
    decision.answer = "YES" if not decision.failed and not decision.vetoes else "NO"
    return decision


def evaluate(task: dict, arrays: Arrays) -> tuple[dict[str, Measurement], Decision]:
    """All measurements of every window, the derived values and the decision (for tests/bench)."""
    values: dict[str, Measurement] = {}
    for win in task["windows"]:
        for m in measure_window(task, win["id"], arrays):
            values[m.id] = m
    derive(task, values)
    return values, decide(task, values)
