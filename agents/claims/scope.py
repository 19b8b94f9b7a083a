"""How far a clause's plan words and negations reach (claims-8, issue 20, item 3).

Three questions extract.py asks of a clause before reading it:
- a plan or a request in a trailing coordinate or relative clause ("..., and the summary should quote
  it", "..., which I will check later", "... - we need to carry this over") that names no line and
  holds no number says nothing about the value before it: the clause up to it is read as a claim;
- "should" before a value ("the EW should lie somewhere in 3-5 Å", "should be about 3 Å") is the
  writer's hedged estimate, unless the clause sets an expectation (for an A star, typical, if ...);
- a negation that reaches one sense of a line only ("in absorption and not in emission", "an
  absorption (not emission) line") denies that sense, and asserts the other one.
It also holds the words these questions are asked of: negations (NEG, and NOT_NEG for idioms that negate
nothing about a line) and the two senses of a line (EMISSION, ABSORPTION). Only `re`.
"""
from __future__ import annotations

import re
from collections.abc import Callable

# -- the words of negation and of the two senses of a line ------------------------------------------
NEG = re.compile(r"\b(?:no|not|none|absent|absence|lacks?|lacking|without|missing|neither|nor|undetected|"
                 r"non-detection|free of|"
                 # "cannot be seen", "never shows", "devoid of", "invisible", "undetectable", "fails to appear",
                 # "nothing (is emitted)", "zero emission"
                 # (only with a verb of seeing or being there: "the fit cannot converge at Hα", "nothing unusual
                 # about Hα" deny nothing)
                 r"cannot\s+(?:be\s+)?(?:seen|detected|found|identified|discerned|spotted|see|detect|find|identify|"
                 r"discern|spot|make\s+out)|"
                 r"never\s+(?:(?:is|was|been)\s+)?(?:shows?|shown|appears?|seen|detected|visible|present|emits?|absorbs?|"
                 r"in\s+(?:emission|absorption))|"
                 r"fail(?:s|ed)?\s+to\s+(?:appear|show|register|materiali[sz]e|be\s+(?:seen|detected|visible))|"
                 r"nothing\s+(?:(?:is|was)\s+)?(?:seen|detected|visible|emitted|absorbed|found|present|there|in\s+(?:emission|"
                 r"absorption)|at)|devoid|invisible|unseen|undetectable|"
                 r"zero\s+(?=(?:emission|absorption|flux|signal|EW|equivalent))|"
                 # idioms of a non-detection: "below the detection limit", "lost in the noise", "consistent with
                 # zero", "indistinguishable from the continuum"
                 r"below\s+(?:the\s+)?(?:detection|noise)(?:\s+(?:limit|threshold|level))?|"
                 r"(?:lost|buried|hidden)\s+in\s+(?:the\s+)?noise|consistent\s+with\s+zero|"
                 r"indistinguishable\s+from\s+(?:the\s+)?(?:continuum|noise)"
                 r")\b|n't\b", re.IGNORECASE)
# idioms whose negation word negates nothing about a line ("without any doubt", "not only")
# ("not as strong as expected" says the line is there, weaker than something)
NOT_NEG = re.compile(r"\b(?:without\s+(?:any\s+)?doubt|no\s+doubt|not\s+only|nothing\s+but|not\s+least|"
                     r"(?:not|nowhere\s+near)\s+(?:quite\s+|nearly\s+|at\s+all\s+)?(?:as|so)\s+\w+\s+as|"
                     # two negations that assert: "one cannot miss", "impossible to miss", "not absent"
                     r"(?:cannot|can['’]?t|can\s+not|could\s*n['’]?o?t)\s+(?:be\s+)?(?:miss(?:ed)?|overlooked|ignored)|"
                     r"(?:impossible|hard)\s+to\s+(?:miss|overlook)|no\s+mistaking|"
                     r"not\s+(?:absent|missing|undetected|invisible|negligible)|"
                     # a bound on widths or strengths, not an absence: "no permitted line broader than 1500 km/s
                     # (H-alpha 318 km/s)" (the verify pipeline's QSO-NO-BROAD) says H-alpha is there, narrow
                     r"no\s+(?:\w+\s+){0,2}(?:lines?|features?)\s+(?:broader|narrower|wider|stronger|weaker|deeper)\s+than|"
                     # the "NO" inside a rule's name (QSO-NO-BROAD)
                     r"(?<=\w-)no(?=-\w))\b",
                     re.IGNORECASE)
EMISSION = re.compile(r"\bemission|\bemitting|\bin emission|\bemission[\s-]line|\bpeaks?\b|\bspikes?\b|"
                      r"\bemit(?:s|ted|ter|ters)?\b|\b(?:bumps?|humps?|glow(?:s|ing)?)\b|\bexcess(?:\s+flux)?\b",
                      re.IGNORECASE)
ABSORPTION = re.compile(r"\babsorption|\babsorbing|\btroughs?\b|\bdips?\b|\bdepressions?\b|\bdeep\b|"
                        r"\babsorb(?:s|ed|er|ers)?\b", re.IGNORECASE)

# where a trailing clause starts: ", and / but / so / which / that / where ...", a dash set off by
# spaces, or " and " before a new subject
TRAIL_CUT = re.compile(r",\s*(?:and|but|so|which|that|where|though|yet)\b|\s[-–—]\s|"
                       r"\s+and\s+(?=(?:I|we|the|this|that|it|so|then)\b)", re.IGNORECASE)
# "should" before a value: "should lie / fall / be / come out (at / in / between ...)"
SHOULD_VALUE = re.compile(r"should\s+(?:(?:probably|likely|then|therefore|thus|roughly)\s+)?"
                          r"(?:be|lie|fall|sit|land|come\s+out|amount\s+to)\b", re.IGNORECASE)
# an expectation or a method, not an estimate: "for an A star", "typical", "expected", "if", "measured on"
EXPECTATION = re.compile(r"\b(?:for\s+(?:an?|the|such\s+an?)\s+(?:\w+\s+){0,2}(?:star|dwarf|giant|galaxy|"
                         r"quasar|QSO|AGN|type|class|object|source)|typical(?:ly)?|expect\w*|predict\w*|"
                         r"theor\w*|models?|templates?|if|unless|whether|would|ought)\b|"
                         r"should\s+(?:\w+\s+)?be\s+(?:measured|computed|derived|fitted|fit|checked|taken|"
                         r"estimated|done|used|compared|integrated)\b", re.IGNORECASE)


def trailing_plan(clause: str, plan: re.Pattern, named: Callable[[int, int], bool]) -> int | None:
    """The end of the claim before a trailing plan or request (an offset into `clause`), or None when
    the plan is not in a trailing clause, or that clause names a line (`named(a, b)`) or holds a number."""
    first = plan.search(clause)
    if first is None:
        return None
    cuts = [c for c in TRAIL_CUT.finditer(clause, 0, first.start())]
    if not cuts:
        return None
    cut = cuts[-1]
    if plan.search(clause, 0, cut.start()) or re.search(r"\d", clause[cut.start():]) or \
            named(cut.start(), len(clause)) or not clause[:cut.start()].strip():
        return None
    return cut.start()


# the quantity is the subject of "should": "the EW (of X) should", "its equivalent width should", "EW(X) should"
SHOULD_SUBJECT = re.compile(r"(?:\bEWs?|equivalent[\s-]widths?|W_?λ|\bFWHM|\bwidths?|\bredshift|\bz)"
                            r"(?:\s*[(\[{][^)\]}]{0,30}[)\]}])?(?:\s+(?:of|for)\s+[^,;:\d]{1,40}?)?\s+$", re.IGNORECASE)


def epistemic_should(clause: str, plan: re.Pattern) -> bool:
    """Every plan word of the clause is a "should" before a value with the quantity as its subject ("the
    EW of X should lie in 3-5 Å"; not "X should be in emission"), and nothing sets an expectation."""
    found = list(plan.finditer(clause))
    return bool(found) and all(m.group().lower() == "should" and SHOULD_VALUE.match(clause, m.start())
                               and SHOULD_SUBJECT.search(clause, 0, m.start()) for m in found) \
        and not EXPECTATION.search(clause)


# what ends a negation's reach forward: a conjunction or a punctuation mark before the next sense word
NEG_BREAK = re.compile(r"\b(?:and|but|while|whereas|or|though|although|yet|so|it|it's|which|that)\b|[,;:()–—]|\s-\s",
                       re.IGNORECASE)
# negations said of what comes before them: "emission: none", "the absorption is absent / undetected / below the
# detection limit / lost in the noise"
AFTER_NEG = re.compile(r"none|absent|absence|missing|undetect\w*|invisible|unseen|below|lost|buried|hidden|"
                       r"consistent|indistinguishable|non-detection", re.IGNORECASE)


def senses(sub: str) -> tuple[set, set]:
    """(denied, asserted): the senses of a line a clause denies and those it states outside any negation.
    A negation reaches forward to the next sense word when nothing but words without a conjunction stand
    between ("not in emission", "an absorption (not emission) line", "does not emit"), and "or / nor"
    carries it on ("no absorption or emission"); otherwise it is said of the sense word before it ("the
    absorption is not seen and the emission is strong")."""
    words = sorted([(m.start(), m.end(), "emission") for m in EMISSION.finditer(sub)]
                   + [(m.start(), m.end(), "absorption") for m in ABSORPTION.finditer(sub)])
    hit = [False] * len(words)
    for n in NEG.finditer(sub):
        nxt = next((i for i, w in enumerate(words) if w[0] >= n.end()), None)
        prv = next((i for i in range(len(words) - 1, -1, -1) if words[i][1] <= n.start()), None)
        if prv is not None and AFTER_NEG.match(n.group()):
            hit[prv] = True
        elif nxt is not None and not NEG_BREAK.search(sub, n.end(), words[nxt][0]):
            hit[nxt] = True
            while nxt + 1 < len(words) and re.fullmatch(r"\s*(?:,|or|nor)\s*(?:in\s+)?", sub[words[nxt][1]:words[nxt + 1][0]],
                                                        re.IGNORECASE):
                nxt += 1
                hit[nxt] = True
        elif prv is not None:
            hit[prv] = True
    denied = {w[2] for w, h in zip(words, hit, strict=True) if h}
    asserted = {w[2] for w, h in zip(words, hit, strict=True) if not h}
    return denied, asserted


def denied_sense(denied: set, asserted: set) -> tuple[str, str] | None:
    """(denied, asserted) of `senses` when a negation reaches every mention of one sense of a line and
    none of the other: "Hα in absorption and not in emission" -> ("emission", "absorption")."""
    if len(denied) == 1 and len(asserted) == 1 and not denied & asserted:
        return next(iter(denied)), next(iter(asserted))
    return None


def both_denied(denied: set, asserted: set) -> bool:
    """"No absorption or emission at X" (of `senses`): both senses named, every one denied."""
    return denied == {"emission", "absorption"} and not asserted
