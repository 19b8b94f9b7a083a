"""Patterns of the order of two lines' strengths (used by extract.py; only `re`).

"A is stronger than B", "A dominates B", "B is not as deep as A", "the EW of A is twice that of B", "the EW is
larger for A than for B", "A has the larger EW and B the smaller", "ranked by EW (largest first): A, B".
"""
from __future__ import annotations

import re

# one of two lines singled out: "the stronger of the two", "A is the stronger absorber, B the weaker"
STRENGTH_ORDER = re.compile(r"\bof\s+the\s+(?:two|pair)\b|\bdominat\w*\s+over\b|"
                            r"\bthe\s+(?:strong|weak|larg|bigg|deep|small)er\b(?!\s+(?:than|of\s+(?:them|all)))",
                            re.IGNORECASE)
# a comparative of strength with no "than" after it: "A is strong while B is weaker", "A is stronger; ..."
SAID_OF = re.compile(r"\b(?:stronger|weaker|deeper|shallower|more\s+prominent|less\s+prominent)\b(?!\s+(?:than|of\b))|"
                     r"\b(?:strength|intensity)\b", re.IGNORECASE)  # or "A > B (absorption strength)"
# ("A's EW is well above B's", "B's EW lies below that of A": above / below between the two lines)
ORDER_WORD = re.compile(r"(?P<more>\b(?:larger|greater|bigger|higher|stronger|deeper|above)\b|>|≥|\bexceeds?\b|"
                        r"\bdominat\w*\s+over\b)|(?P<less>\b(?:smaller|lower|weaker|shallower|less|below)\b|<|≤)",
                        re.IGNORECASE)
# "A <comparative> than B" with the sense or the word line between ("stronger absorption than", "deeper
# in absorption than", "more intense than", "stronger compared to"); "more absorption / EW than"; verbs
# of one line outdoing another ("A dominates B", "B is outweighed by A"); a factor ("twice as strong as")
COMPARE = re.compile(
    r"\b(?P<adj>deeper|shallower|stronger|weaker|broader|narrower|wider|brighter|fainter|"
    r"(?:more|less)\s+(?:prominent|intense|pronounced|conspicuous|strong|deep|broad|wide|bright))"
    r"(?:\s+(?:in\s+)?(?:absorption|emission))?(?:\s+(?:lines?|features?))?"
    r"\s+(?:than|compared\s+(?:to|with)|relative\s+to)\b"
    r"|\b(?P<more>more|less)\s+(?:absorption|emission|equivalent\s+width|EW|strongly|intensely|absorbing|emitting)"
    r"\s+than\b|\b(?:absorbs?|emits?)\s+(?P<verbmore>more|less)\s+than\b"  # "A absorbs more than B"
    r"|\b(?P<noun>greater|larger|higher|bigger|lower|smaller)\s+(?:(?:absorption|emission|line)\s+)?"
    r"(?:(?<=absorption\s)|(?<=emission\s)|strength\s+|intensity\s+)than\b"
    r"|\b(?P<verb>dominates|overpowers|overwhelms|outweighs|outstrips|outdoes|surpasses|exceeds|outshines|"
    r"overshadows|eclipses|outranks|beats|leads|tops|edges\s+out|exceeding|surpassing|outstripping)\b(?!\s+over)"
    r"|\b(?:is|are)\s+(?P<passive>dominated|outweighed|overpowered|overwhelmed|outshone|overshadowed|eclipsed|"
    r"exceeded|outstripped|surpassed|outranked|outdone|beaten|topped)\s+by\b"
    # "the EW of A is twice that of B", "B's EW is half that of A"
    r"|\b(?:(?P<times>twice|double|triple|(?:two|three|four|five|several|many|\d+(?:\.\d+)?)\s*(?:times|x|×))|"
    r"(?P<frac2>half|a\s+third|a\s+quarter|a\s+fraction))(?!\s+as\b)\s+(?:of\s+)?(?:(?:that|those)\s+of\b)?"
    r"|\b(?P<factor>twice|thrice|(?:two|three|four|five|several|many|\d+(?:\.\d+)?)\s*(?:times|x|×)|"
    r"(?P<frac>half|a\s+third|a\s+quarter|a\s+fraction))\s+as\s+(?:strong|deep|intense|prominent|large)\s+as\b"
    # "B is not as strong as A", "B is not nearly so deep as A": B is the weaker
    r"|\b(?:not|nowhere\s+near)\s+(?:quite\s+|nearly\s+|at\s+all\s+)?(?:as|so)\s+(?P<notas>strong|deep|broad|wide|intense|prominent|"
    r"pronounced|bright|large)\s+as\b"
    # verbs of falling behind the other line: "B falls short of A", "B trails A", "B lags behind A"
    r"|\b(?P<lessverb>falls?\s+short\s+of|trails|lags\s+behind|(?:falls?|comes?\s+in|ranks?)\s+below)\b",
    re.IGNORECASE)
# lines listed in order of strength: "ranked by EW (largest first): A, B", "in decreasing order of EW: A, B"
RANKED = re.compile(r"\b(?:rank(?:ed|ing)|ordered|sorted|listed|in\s+(?P<dir>decreasing|descending|increasing|ascending)"
                    r"\s+order)\b[^:\d]{0,60}:\s*", re.IGNORECASE)
RANK_DOWN = re.compile(r"\b(?:(?:largest|strongest|highest|deepest|biggest|greatest)\s+first|decreasing|descending)\b",
                       re.IGNORECASE)
RANK_UP = re.compile(r"\b(?:(?:smallest|weakest|lowest|shallowest|least)\s+first|increasing|ascending)\b", re.IGNORECASE)
# a comparative before both lines, each after a preposition: "the EW is larger for A than for B", "greater in A
# than in B"
FOR_THAN = re.compile(r"\s+(?:for|in|at)\s+(?:the\s+)?", re.IGNORECASE)
THAN_FOR = re.compile(r"\s+than\s+(?:(?:for|in|at)\s+)?(?:the\s+|that\s+of\s+(?:the\s+)?)?", re.IGNORECASE)
# a comparative predicated of the line after it: "the stronger (absorption / line / one) is A"
PREDICATED = re.compile(r"(?:\s+(?:absorption|emission|line|feature|one|absorber|emitter|of\s+the\s+two))*\s*"
                        r"(?:is|was|:)\s+(?:the\s+)?", re.IGNORECASE)
