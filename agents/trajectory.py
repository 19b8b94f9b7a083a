"""The one trajectory schema every agent writes and the reviewer reads.

A trajectory is: a reference to a spectrum, a task (a kb task id such as ``a`` or ``wd``, or
``verify`` for the FORMA pipeline), the agent that ran (name, backend, model, version), an ordered
list of steps and an outcome. Images are content-addressed PNG bytes: a ``tool_result`` step holds
the sha256 of its render, and the render can always be reproduced from the spectrum plus the tool
arguments, so a review never depends on a lost file.

Step text has a documented limit on import: MAX_STEP_TEXT_BYTES (1 MB of UTF-8 per text field).
"""
from __future__ import annotations

import hashlib
import math
import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

StepKind = Literal["prompt", "think", "tool_call", "tool_result", "verdict", "answer"]
SCHEMA_VERSION = 1

# How a run ended, `outcome["status"]`: "answered" (vet), "tool_limit" and "error" (vet), or UNJUDGEABLE
# (vet and verify): the spectrum is too poor to judge (agents/tools/judgeable.py), `outcome["reason"]`
# says why and no answer is given (no prediction, type or z: a refusal is not a NO). A verify outcome
# without a status is answered.
UNJUDGEABLE = "unjudgeable"

# Longest text one imported step may carry: 1 MB (1,000,000 bytes of UTF-8). A real think / answer /
# observation text is a few kB; a megabyte is a broken or hostile row that would bloat the database and
# stall every page that shows it. Imports (`specreview import sft|bench`, agents/interop/rowcheck.py
# check_text_sizes) refuse a row with any longer text field, naming the row, the field and this limit.
MAX_STEP_TEXT_BYTES = 1_000_000


def finite_or_none(value: Any) -> float | None:
    """A number read from an outcome (a redshift, a score) as a finite float, else None: the one place
    NaN, infinities, booleans and non-numbers become "none" before a label, a column or a widget sees
    them (a DESI sky fibre has no redshift; a JSON round trip would turn NaN into null anyway)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def utcnow() -> datetime:
    return datetime.now(UTC)


def image_sha(png: bytes) -> str:
    """Content address of a PNG: the same bytes are stored once."""
    return hashlib.sha256(png).hexdigest()


class AgentInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str  # "vet" or "verify"
    backend: str  # "rules", "openai", ...
    model: str | None = None  # model name for LLM backends; never the key
    version: str = "0.1.0"


class Verdict(BaseModel):
    """What an auditor or rule decided, and on which evidence."""

    model_config = ConfigDict(extra="forbid")

    who: str  # feature_auditor / result_auditor / synthesis / a rule id
    value: str  # KEEP / REMOVE / FLAG / CONFIRM / NEEDS_REVISION / UNCERTAIN
    rule: str | None = None
    credibility: str | None = None  # HIGH / MEDIUM / LOW
    evidence: list[str] = Field(default_factory=list)
    target: str | None = None  # the feature or line the verdict is about


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    kind: StepKind
    text: str = ""  # untrusted when it comes from a model: render escaped
    tool_name: str | None = None
    tool_args: dict[str, Any] | None = None
    label: str | None = None
    image_sha: str | None = None  # content address of the render (tool_result / prompt)
    is_error: bool = False  # a tool_result that reports an error
    verdict: Verdict | None = None
    answer: dict[str, Any] | None = None
    data: dict[str, Any] = Field(default_factory=dict)  # measurements, tables, timings
    created_at: datetime = Field(default_factory=utcnow)


class Trajectory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    spectrum_id: str | None = None  # the store's key, when known
    source_path: str | None = None
    target: str | None = None  # DESI TARGETID or row within a multi-spectrum file
    task: str  # kb task id, or "verify"
    agent: AgentInfo
    steps: list[Step] = Field(default_factory=list)
    outcome: dict[str, Any] = Field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    created_at: datetime = Field(default_factory=utcnow)
    # PNG bytes by sha256, for renders made eagerly; not part of the JSON form.
    images: dict[str, bytes] = Field(default_factory=dict, exclude=True, repr=False)

    def add(self, kind: StepKind, **fields: Any) -> Step:
        step = Step(index=len(self.steps), kind=kind, **fields)
        self.steps.append(step)
        return step

    def add_image(self, png: bytes) -> str:
        sha = image_sha(png)
        self.images.setdefault(sha, png)
        return sha

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> Trajectory:
        return cls.model_validate_json(text)

    # ---- questions a reviewer asks of a step, answered once here ---------------------------------
    def tool_redshift(self) -> float:
        """The redshift the agent's zoom tool worked at (Spec-o3's tool state): its ranges are rest-frame."""
        state = (self.steps[0].data.get("tool_state") or {}) if self.steps else {}
        try:
            return float(state.get("redshift") or 0.0)
        except (TypeError, ValueError):
            return 0.0

    def zoom_at(self, index: int) -> tuple[float, float] | None:
        """The observed-frame window the agent was looking at during step `index`: the latest zoom call
        at or before it (a reasoning step keeps the previous zoom on screen, as the agent had it), or
        None for the whole spectrum."""
        scale = 1.0 + self.tool_redshift()
        for step in reversed(self.steps[: index + 1]):
            if self._stands_alone(step):  # an audit's verdict is about its own feature, not the last zoom
                where = verdict_wavelength(step)
                return None if where is None else (where - VERDICT_HALF_WINDOW, where + VERDICT_HALF_WINDOW)
            if step.kind in ("tool_call", "tool_result") and step.tool_name in ZOOM_TOOLS:
                window = call_window(step.tool_args)
                return None if window is None else (window[0] * scale, window[1] * scale)
            if step.kind == "prompt":
                return None
        return None

    def render_index_at(self, index: int) -> int | None:
        """The step whose render goes with step `index`: its own, else the latest earlier one that has or
        makes a render (a stored image, a Spec-o3 prompt's overview, a zoom tool's result)."""
        vet = self.agent.name == "vet"
        for step in reversed(self.steps[: index + 1]):
            if self._stands_alone(step):
                return step.index if step.image_sha else None
            if step.image_sha or (step.kind == "prompt" and vet) or (
                    step.kind == "tool_result" and step.tool_name in ZOOM_TOOLS and not step.is_error):
                return step.index
        return None

    def _stands_alone(self, step: Step) -> bool:
        """A FORMA verdict or answer step: written after the analyses, about features of its own, so it
        shows its own window and render (or none), never the last analysis' (a Spec-o3 step keeps the
        agent's current zoom on screen, as the agent had it)."""
        return self.agent.name == "verify" and step.kind in ("verdict", "answer")

    def hypothesis_at(self, index: int) -> tuple[float, str] | None:
        """(z, class) of the redshift hypothesis step `index` is about: the step's own call when it
        names both, else the FORMA hypothesis analysis it is part of (the steps from an
        `analyse_hypothesis` call up to its result, such as the render of the hypothesis' window);
        None outside one."""
        for step in reversed(self.steps[: index + 1]):
            args = step.tool_args or {}
            if "z" in args and "class" in args:
                try:
                    return float(args["z"]), str(args["class"])
                except (TypeError, ValueError):
                    return None
            if step.kind == "tool_result" and step.tool_name == HYPOTHESIS_TOOL:
                return None  # an earlier analysis, finished before this step
        return None


# Tools whose calls show a window of the spectrum: Spec-o3's zoom tool and the FORMA graph's renders.
ZOOM_TOOLS = ("spectral_visualization_tool", "spectral_visualization", "render")
# The FORMA graph's test of one redshift hypothesis (arguments idx, z, class).
HYPOTHESIS_TOOL = "analyse_hypothesis"


VERDICT_HALF_WINDOW = 60.0  # Å either side of the feature an audit verdict is about
_WAVELENGTH_RE = re.compile(r"(\d{4,5}(?:\.\d+)?)\s*Å")


def verdict_wavelength(step: Step) -> float | None:
    """The observed wavelength a verdict step's evidence names first (FORMA's auditors cite the
    feature as "8985.6 Å ..."), or None."""
    if step.verdict is None:
        return None
    for text in [*(step.verdict.evidence or []), step.verdict.target or "", step.text or ""]:
        found = _WAVELENGTH_RE.search(str(text))
        if found:
            return float(found.group(1))
    return None


def call_window(args: dict[str, Any] | None) -> tuple[float, float] | None:
    """(min, max) of a zoom call: Spec-o3's `wavelength_range` or a render's `wave_min` / `wave_max`."""
    args = args or {}
    rng = args.get("wavelength_range")
    try:
        if isinstance(rng, (list, tuple)) and len(rng) == 2:
            lo, hi = float(rng[0]), float(rng[1])
        elif args.get("wave_min") is not None and args.get("wave_max") is not None:
            lo, hi = float(args["wave_min"]), float(args["wave_max"])
        else:
            return None
    except (TypeError, ValueError):
        return None
    return (lo, hi) if lo < hi else None
