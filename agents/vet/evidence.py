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


# -- answer margin: how close the deciding measurement sat to its threshold ------------------
MARGIN_CAP = 1.0  # a relative distance of 100 % or more counts as "far"; unmeasurable leaves sit there too


def _leaf_margin(crit: dict, values: dict[str, Measurement]) -> tuple[bool, float, dict[str, Any]]:
    """(holds, signed distance, which leaf): the distance of the quoted value from the threshold,
    relative to the threshold (absolute when the threshold is 0), capped at MARGIN_CAP; positive when
    the leaf holds, negative when it does not."""
    threshold = float(crit["value"])
    m = values.get(crit["measure"])
    info = {"measure": crit["measure"], "op": crit["op"], "threshold": threshold, "measured": None}
    if m is None or m.value is None:
        return False, -MARGIN_CAP, info
    value = float(quote(m.value))
    info["measured"] = value
    holds = OPS[crit["op"]](value, threshold)
    dist = min(abs(value - threshold) / (abs(threshold) if threshold else 1.0), MARGIN_CAP)
    return holds, dist if holds else -dist, info


def _margin(crit: dict, values: dict[str, Measurement]) -> tuple[bool, float, dict[str, Any]]:
    """An `all` group holds until its closest-to-failing child fails and fails until its farthest
    failing child flips (the minimum of the signed distances); an `any` group the other way round."""
    def key(r):
        return (r[0], r[1])

    if "all" in crit:
        return min((_margin(c, values) for c in crit["all"]), key=key)
    if "any" in crit:
        return max((_margin(c, values) for c in crit["any"]), key=key)
    return _leaf_margin(crit, values)


def decision_margin(task: dict, values: dict[str, Measurement]) -> dict[str, Any]:
    """How far the decision sat from flipping: the answer is YES when every requirement holds and no
    veto fires, so it is the `all` of the requirements and the negated vetoes, and its margin is that
    group's (see `_margin`): the relative distance (0 = on the threshold, MARGIN_CAP = far) of the
    measurement that decides it, with that measurement, its quoted value, the threshold and the rule
    (`require` or `veto`). Computed from the same quoted values as `decide`, so it never changes an answer."""
    parts = []
    rule = task["decision"]
    for crit in rule.get("require", []):
        holds, signed, info = _margin(crit, values)
        parts.append((holds, signed, {**info, "rule": "require"}))
    for crit in rule.get("veto", []):
        holds, signed, info = _margin(crit, values)
        parts.append((not holds, -signed, {**info, "rule": "veto", "veto": crit.get("id")}))
    if not parts:
        return {"value": MARGIN_CAP, "answer": "YES"}
    holds, signed, info = min(parts, key=lambda r: (r[0], r[1]))
    return {"value": round(abs(signed), 4), "answer": "YES" if holds else "NO", **info}


def evaluate(task: dict, arrays: Arrays) -> tuple[dict[str, Measurement], Decision]:
    """All measurements of every window, the derived values and the decision (for tests/bench)."""
    values: dict[str, Measurement] = {}
    for win in task["windows"]:
        for m in measure_window(task, win["id"], arrays):
            values[m.id] = m
    derive(task, values)
    return values, decide(task, values)
