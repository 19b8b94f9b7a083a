"""Optional: a chat model finds claims the patterns miss; the deterministic checker judges them.

The model only extracts (structured JSON: what the sentence asserts and where); it never judges.
Its spans are re-anchored in the source text (the quoted phrase must occur there), so a model
cannot invent a claim the agent did not write.
"""
from __future__ import annotations

import json
import re

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


def _json(text: str) -> dict:
    m = re.search(r"\{.*\}", text, re.DOTALL)
    return json.loads(m.group()) if m else {"claims": []}


def llm_claims(chat_model, text: str) -> list[Claim]:
    """Claims found by `chat_model` (any langchain chat model, e.g. ChatOpenAI) in `text`."""
    reply = chat_model.invoke(PROMPT + text)
    content = reply.content if isinstance(reply.content, str) else "".join(
        p.get("text", "") for p in reply.content if isinstance(p, dict))
    try:
        items = _json(content).get("claims", [])
    except json.JSONDecodeError:
        return []
    out = []
    for item in items:
        quote = str(item.get("quote") or "")
        start = text.find(quote) if quote else -1
        if start < 0:
            continue  # not in the agent's text: the model made it up
        names = [n for m in find_mentions(str(item.get("line") or "")) for n in m.names]
        kind = QUANTITY if item.get("kind") == "quantity" and item.get("value") is not None else FEATURE
        out.append(Claim(kind=kind, text=quote, start=start, end=start + len(quote), lines=names,
                         quantity=item.get("quantity") if kind == QUANTITY else None,
                         value=item.get("value"), unit=item.get("unit"), frame=item.get("frame"),
                         polarity=-1 if item.get("present") is False else 1,
                         line_kind=item.get("line_kind"), wavelength=item.get("wavelength"), source="llm"))
    return out
