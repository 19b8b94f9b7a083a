"""Spec-o3 answer parsing (reference.md section 1.3).

Format-correct means: equal, non-zero counts of `<think>` and `</think>`; exactly one
`<answer>...</answer>`; inside it a `\\boxed{...}` whose upper-cased content is YES or NO. When the
format is wrong the prediction still comes from the fallbacks, in order: the last `<answer>` block's
boxed value, a YES/NO word inside it (YES first), the first `\\boxed{}` anywhere, YES/NO anywhere
(YES first), the last non-empty line, the whole text. An invalid boxed value (e.g. MAYBE) stays the
prediction; matching against the truth is exact after collapsing whitespace.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

ANSWER_RE = re.compile(r"<answer>(.*?)</answer>", re.S)
BOXED_RE = re.compile(r"\\boxed\{([^{}]*)\}")
YES_RE = re.compile(r"\bYES\b", re.I)
NO_RE = re.compile(r"\bNO\b", re.I)


@dataclass
class ParsedAnswer:
    prediction: str  # YES / NO, or whatever the fallback found (upper-cased, whitespace collapsed)
    format_correct: bool
    source: str  # which rule produced the prediction
    raw_answer: str  # the <answer> body (or the text the fallback used)

    def as_dict(self) -> dict:
        return asdict(self)


def _norm(text: str) -> str:
    return " ".join(text.split()).upper()


def _yes_no(text: str) -> str | None:
    if YES_RE.search(text):
        return "YES"
    if NO_RE.search(text):
        return "NO"
    return None


def parse_answer(text: str) -> ParsedAnswer:
    text = text or ""
    opens, closes = text.count("<think>"), text.count("</think>")
    answers = ANSWER_RE.findall(text)
    think_ok = opens == closes and opens > 0
    if len(answers) == 1:
        boxed = BOXED_RE.findall(answers[0])
        if boxed and _norm(boxed[0]) in ("YES", "NO") and think_ok:
            return ParsedAnswer(_norm(boxed[0]), True, "boxed", answers[0].strip())
    if answers:
        last = answers[-1]
        boxed = BOXED_RE.findall(last)
        if boxed:
            return ParsedAnswer(_norm(boxed[0]), False, "answer_boxed", last.strip())
        word = _yes_no(last)
        if word:
            return ParsedAnswer(word, False, "answer_word", last.strip())
    boxed = BOXED_RE.findall(text)
    if boxed:
        return ParsedAnswer(_norm(boxed[0]), False, "boxed_anywhere", boxed[0])
    word = _yes_no(text)
    if word:
        return ParsedAnswer(word, False, "word_anywhere", text.strip()[-200:])
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines:
        return ParsedAnswer(_norm(lines[-1]), False, "last_line", lines[-1].strip())
    return ParsedAnswer(_norm(text), False, "whole_text", text)


def is_correct(prediction: str, truth: str) -> bool:
    return _norm(prediction) == _norm(truth)


def reward(prediction: ParsedAnswer, truth: str, alpha: float = 0.2) -> float:
    """Spec-o3's score: accuracy + alpha * (-1 on a format error)."""
    return float(is_correct(prediction.prediction, truth)) - (0.0 if prediction.format_correct else alpha)
