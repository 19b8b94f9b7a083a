"""Rejected hypotheses are not claims (agents.claims.extract): which clauses, and which parts of a
clause, name a hypothesis or line the agent rejected. A table row whose status cell says NOT SUPPORTED /
REJECTED / EXCLUDED; a clause labelled as rejected by its first words ("excluded #2 GALAXY z=1.65304: ...",
"FA-SKY REMOVE Na D @ ..."); the subject of "... is rejected / was ruled out"; what a contrast rejects
("rival QSO z=0.6323 close in chi2 but excluded", "... fits well, yet was rejected"); the object of
"rules out ..."; and what follows "removed:"."""
from __future__ import annotations

import re

REJECT = (r"(?:excluded|rejected|ruled\s+out|discarded|dismissed|disfavou?red|eliminated|refuted|disproven|"
          r"not\s+supported|unsupported|removed?)")
REJECT_WORD = re.compile(rf"\b{REJECT}\b", re.IGNORECASE)
# a table cell that is nothing but a rejection status
REJECT_STATUS = re.compile(rf"[\W_]*(?:{REJECT}|fail(?:ed|s)?|✗|❌)[\W_]*", re.IGNORECASE)
# a clause labelled as rejected: the cue among its first words, after a bullet or a rule id
# ("- excluded #1 ...", "Rejected: ...", "FA-EDGE REMOVE Ca K @ 3971.9 Å: ...")
REJECT_LABEL = re.compile(rf"[\W_]*(?-i:[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\s+)?(?:(?:the|a|an|this|that|all|both|"
                          rf"hypothes[ie]s|solutions?|candidates?|alternatives?|redshifts?|lines?)\s+)?{REJECT}\b",
                          re.IGNORECASE)
# "<subject> is/was ... rejected": the subject is what was rejected
REJECT_PASSIVE = re.compile(rf"\b(?:is|are|was|were|be|been|being)\s+(?:(?:also|then|thus|therefore|hence|now|"
                            rf"clearly|firmly|safely|effectively|only|confidently)\s+)*{REJECT}\b", re.IGNORECASE)
# "<subject> ..., but / yet excluded": a contrast whose second half rejects the first (issue 50, item 7)
REJECT_CONTRAST = re.compile(rf"\b(?:but|yet|though|although|only\s+to\s+be)\s+(?:(?:is|are|was|were|then|later|"
                             rf"finally|ultimately|still|also|nevertheless|nonetheless)\s+)*{REJECT}\b", re.IGNORECASE)
# where the subject of a contrast starts: a comma, colon, semicolon or parenthesis, or a dash set off by spaces
CONTRAST_START = re.compile(r"[,:;(\[]|\s[-–—]\s")
# "... rules out / excludes <object>": the object is what was rejected
REJECT_ACTIVE = re.compile(r"\b(?:rules?\s+out|ruling\s+out|excludes|excluding|rejects|rejecting|disfavou?rs|"
                           r"disfavou?ring|eliminates|eliminating|refutes|refuting)\b", re.IGNORECASE)
SUBJECT_BOUNDARY = re.compile(r"[,:]|\s[-–—]\s|\b(?:so|thus|therefore|hence|because|since|and|but|while|whereas|"
                              r"which|that|so that)\b", re.IGNORECASE)
OBJECT_END = re.compile(r"[,:)\]]|\s[-–—]\s|\b(?:because|since|as|given|due to|owing to|and|but|while|whereas|"
                        r"which|so|thus|therefore|hence)\b", re.IGNORECASE)
AUX_ONLY = re.compile(r"[\s\W]*(?:(?:and|is|are|was|were|be|been|being|has|have|had|also|then|thus|therefore|hence|"
                      r"now|so|clearly|firmly|only)\b[\s\W]*)*", re.IGNORECASE)
REJECT_LIST = re.compile(r"(?:\s+\w+){0,2}\s*:")  # "removed: [O II], Mg b", "excluded only by: ..."


def rejected_clause(clause: str) -> bool:
    """A table row whose status cell says the hypothesis was rejected (NOT SUPPORTED, REJECTED,
    EXCLUDED ...), or a clause labelled as rejected by its first words ("excluded #2 GALAXY z=1.65",
    "FA-SKY REMOVE Na D @ 5891.1 Å: ...")."""
    row = clause.strip()
    if row.startswith("|") and row.count("|") >= 3:
        return any(REJECT_STATUS.fullmatch(cell.strip()) for cell in row.strip("|").split("|") if cell.strip())
    return bool(REJECT_LABEL.match(clause))


def rejected_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Parts of a clause that name a rejected hypothesis: the subject of "... is rejected / was ruled
    out / is not supported", the object of "rules out / excludes ...", and what a rejection
    lists after a colon ("3 lines removed: [O II], Mg b")."""
    spans = []
    for m in REJECT_PASSIVE.finditer(text, lo, hi):
        start = m.start()
        while True:  # back to the start of the subject: "... fits better and is excluded" has none of its own
            cuts = list(SUBJECT_BOUNDARY.finditer(text, lo, start))
            if not cuts:
                start = lo
                break
            start = cuts[-1].end()
            if not AUX_ONLY.fullmatch(text, start, m.start()):
                break
            start = cuts[-1].start()
        spans.append((start, m.end()))
    for m in REJECT_CONTRAST.finditer(text, lo, hi):
        # back over brackets ("close in chi2 (12.3) but excluded"), to the last boundary outside them
        depth, start = 0, lo
        for i in range(m.start() - 1, lo - 1, -1):
            ch = text[i]
            if ch in ")]":
                depth += 1
            elif ch in "([" and depth:
                depth -= 1
            elif depth == 0 and CONTRAST_START.match(text, i) and text[i + 1:m.start()].strip(" ,"):
                start = i + 1
                break
        spans.append((start, m.end()))
    for m in REJECT_ACTIVE.finditer(text, lo, hi):
        end = OBJECT_END.search(text, m.end(), hi)
        spans.append((m.start(), end.start() if end else hi))
    for m in REJECT_WORD.finditer(text, lo, hi):
        if REJECT_LIST.match(text, m.end(), hi):
            spans.append((m.start(), hi))
    return spans
