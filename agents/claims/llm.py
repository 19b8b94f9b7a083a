"""Optional: a chat model finds claims the patterns miss; the deterministic checker judges them.

The model only extracts (structured JSON: what the sentence asserts and where); it never judges.
Its spans are re-anchored in the source text (the quoted phrase must occur there), so a model
cannot invent a claim the agent did not write; a claim whose span overlaps one the patterns found is
left to the patterns. A reply that is not the JSON asked for raises ClaimExtractionError (the caller
keeps the pattern claims and reports it), never a silent "no claims".

    extra = trajectory_llm_claims(chat_model, trajectory)     # {step index: [Claim]}
    check_trajectory(trajectory, spectrum, extra_claims=extra)
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agents.claims import CHECKED_KINDS
from agents.claims.extract import extract_claims
from agents.claims.lexicon import find_mentions
from agents.claims.types import FEATURE, QUANTITY, Claim

PROMPT = """Extract every checkable claim about the spectrum from the text below. Reply with JSON only:
{"claims": [{"quote": "<exact phrase from the text>", "kind": "feature" | "quantity",
  "line": "<line name, e.g. H-alpha>", "present": true | false, "line_kind": "emission" | "absorption" | null,
  "quantity": "ew" | "depth" | "fwhm" | "snr" | "ratio" | "z" | null, "value": <number or null>,
  "unit": "<unit or null>", "wavelength": <Angstrom or null>, "frame": "rest" | "observed" | null}]}
Do not judge whether the claims are true.

TEXT:
"""


class ClaimExtractionError(ValueError):
    """The model's reply is not the JSON claims asked for; the message quotes what came back."""


def _excerpt(text: str, n: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + "..."


def _json(text: str) -> dict:
    """The JSON object of a reply (bare, or in a ```json fence / surrounded by words)."""
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if m is None:
        raise ClaimExtractionError(f"the model's reply is not valid JSON (no object): {_excerpt(text)!r}")
    try:
        data = json.loads(m.group())
    except json.JSONDecodeError as err:
        raise ClaimExtractionError(f"the model's reply is not valid JSON ({err.msg}): {_excerpt(text)!r}") from err
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise ClaimExtractionError(f"the model's reply has no \"claims\" list: {_excerpt(text)!r}")
    return data


def _number(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def reply_text(reply: Any) -> str:
    content = getattr(reply, "content", reply)
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content or [])


def parse_claims(content: str, text: str) -> list[Claim]:
    """The claims of a model reply (PROMPT's JSON) anchored in `text`; quotes not in the text drop."""
    out = []
    for item in _json(content)["claims"]:
        if not isinstance(item, dict):
            continue
        quote = str(item.get("quote") or "")
        start = text.find(quote) if quote else -1
        if start < 0:
            continue  # not in the agent's text: the model made it up
        names = [n for m in find_mentions(str(item.get("line") or "")) for n in m.names]
        value = _number(item.get("value"))
        kind = QUANTITY if item.get("kind") == "quantity" and value is not None else FEATURE
        out.append(Claim(kind=kind, text=quote, start=start, end=start + len(quote), lines=names,
                         quantity=item.get("quantity") if kind == QUANTITY else None,
                         value=value, unit=item.get("unit"), frame=item.get("frame"),
                         polarity=-1 if item.get("present") is False else 1,
                         line_kind=item.get("line_kind"), wavelength=_number(item.get("wavelength")), source="llm"))
    return out


def llm_claims(chat_model, text: str, invoke: Callable[[str], Any] | None = None) -> list[Claim]:
    """Claims found by `chat_model` (any langchain chat model, e.g. ChatOpenAI) in `text`; `invoke`
    (prompt -> reply) replaces `chat_model.invoke` (e.g. with retries). Raises ClaimExtractionError."""
    reply = (invoke or chat_model.invoke)(PROMPT + text)
    return parse_claims(reply_text(reply), text)


def new_claims(found: list[Claim], known: list[Claim]) -> list[Claim]:
    """The claims of `found` whose span overlaps none of `known` (nor an earlier one of `found`)."""
    taken = [(c.start, c.end) for c in known]
    out = []
    for claim in found:
        if any(claim.start < end and start < claim.end for start, end in taken):
            continue
        out.append(claim)
        taken.append((claim.start, claim.end))
    return out


def with_llm_claims(chat_model, text: str, invoke: Callable[[str], Any] | None = None) -> list[Claim]:
    """The patterns' claims of `text`, then the model's claims the patterns missed (for check_text's
    `claims`). Raises ClaimExtractionError."""
    patterns = extract_claims(text)
    return patterns + new_claims(llm_claims(chat_model, text, invoke), patterns)


def trajectory_llm_claims(chat_model, trajectory, invoke: Callable[[str], Any] | None = None) -> dict[int, list[Claim]]:
    """{step index: the model's claims the patterns missed} over the checked steps of a trajectory
    (for agents.claims.check_trajectory's `extra_claims`). Raises ClaimExtractionError naming the
    step whose reply was not the JSON asked for."""
    out: dict[int, list[Claim]] = {}
    for step in trajectory.steps:
        if step.kind not in CHECKED_KINDS or not step.text:
            continue
        try:
            found = llm_claims(chat_model, step.text, invoke)
        except ClaimExtractionError as err:
            raise ClaimExtractionError(f"step {step.index}: {err}") from err
        extra = new_claims(found, extract_claims(step.text))
        if extra:
            out[step.index] = extra
    return out
