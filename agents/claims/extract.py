"""Checkable claims in an agent's think/answer text, found by patterns (no model needed).

A sentence is cut into clauses (at . ; ! ? and line breaks, never inside a decimal number). In each:
1. "<kb measurement name> = value" (the rules policy's wording) becomes a MEASURE claim;
2. a quantity keyword (equivalent width, depth, FWHM, S/N, ratio, redshift, velocity) with a number
   and a unit becomes a QUANTITY claim about the nearest line named;
3. "A deeper / stronger / broader than B" becomes a COMPARISON;
4. a line, group or band named with a presence or absence cue ("Hα emission", "no TiO bands",
   "H-beta is absent", "an absorption line at 5890 Å") becomes a FEATURE claim.
Plans and criteria are not claims: clauses that say what the agent will do or look for ("I will
check", "zoom into", "whether", "if") and rule criteria ("(needs >= 7.50)") yield only MEASURE claims.
Rejected hypotheses are not claims either: a clause labelled as rejected ("excluded #2 GALAXY
z=1.65304: ...", "FA-SKY REMOVE Na D @ ..."), a table row whose status cell says NOT SUPPORTED /
REJECTED / EXCLUDED, the subject of "... is rejected / was ruled out", the object of "rules out ...",
what follows "removed:" and a redshift right after "not" / "rather than" yield no claim.
Units are parsed with astropy.units; the frame is what the text says (rest / observed) or None.
The patterns of two lines' order are in order.py; the words of negation and of a line's two senses, and how
far a plan or a negation reaches, in scope.py; what a rejection covers in rejected.py; the other words and
number forms the patterns are made of in vocabulary.py.
"""
from __future__ import annotations

import re

import astropy.units as u

from agents.claims.lexicon import Mention, find_mentions, measure_name_pattern
from agents.claims.order import (
    COMPARE,
    FOR_THAN,
    ORDER_WORD,
    PREDICATED,
    RANK_DOWN,
    RANK_UP,
    RANKED,
    SAID_OF,
    STRENGTH_ORDER,
    THAN_FOR,
)
from agents.claims.rejected import rejected_clause, rejected_spans
from agents.claims.scope import (
    ABSORPTION,
    EMISSION,
    NEG,
    NOT_NEG,
    both_denied,
    denied_sense,
    epistemic_should,
    senses,
    trailing_plan,
)
from agents.claims.types import COMPARISON, FEATURE, MEASURE, QUANTITY, Claim
from agents.claims.vocabulary import (
    ABBREV,
    AND_LINE,
    AND_NEXT,
    APPROX,
    ASIDE,
    AT_VALUE,
    BOUND_BEFORE,
    BROAD,
    CRITERION,
    FOR_LINE,
    FRAME_OBS,
    FRAME_REST,
    GT,
    ITS,
    KEYWORDS,
    LIMIT_BEFORE,
    LINE_TAIL,
    LISTED_VALUE,
    LOWER_BEFORE,
    LT,
    NUM,
    OF_LINE,
    PAIR_VALUES,
    PAREN,
    PLAN,
    POINTER,
    POSITION,
    PRESENT,
    REDSHIFT,
    REDSHIFT_BEFORE,
    RESPECTIVELY,
    SNR_PLACE,
    STRONG,
    SUBCLAUSE,
    UNNAMED,
    VALUE,
    VALUE_BEFORE,
    WHOLE_SNR,
    Z_NEGATED,
)


def _clauses(text: str) -> list[tuple[int, int]]:
    """Clause spans: cut at . ; ! ? and line breaks, but not at a decimal point or 'approx.'."""
    out, start = [], 0
    for m in re.finditer(r"[.;!?\n]|</?think>|</?answer>", text):
        if m.group() == "." and (0 < m.start() < len(text) - 1 and text[m.start() - 1].isdigit()
                                 and text[m.start() + 1].isdigit()):
            continue
        if m.group() == "." and text[max(0, m.start() - 6):m.start()].lower().endswith(("approx", "e.g", "i.e", "vs")):
            continue
        if m.group() == "." and re.search(r"\b(?:equiv|eq)$", text[max(0, m.start() - 6):m.start()], re.IGNORECASE) and \
                re.match(r"\s*widths?\b", text[m.end():], re.IGNORECASE):
            continue  # "equiv. width"
        if m.group() == "." and re.search(r"\b(?:max|min)$", text[max(0, m.start() - 4):m.start()], re.IGNORECASE) and \
                re.match(r"\s*[~≈]?\s*\d", text[m.end():]):
            continue  # "max. 3 Å": an abbreviated bound
        if m.start() > start:
            out.append((start, m.start()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _number(s: str) -> float:
    return float(s.replace("−", "-"))


def _decimals(s: str) -> int:
    mant, _, exp = s.lower().partition("e")  # "8.2e-05": 1 digit after the point, 5 more from the exponent
    return (len(mant.split(".")[1]) if "." in mant else 0) + (max(0, -int(exp)) if exp else 0)


def parse_unit(unit: str | None):
    """An astropy unit for a unit string as agents write it (None: dimensionless)."""
    if not unit:
        return None
    key = re.sub(r"\s+", "", unit).lower()
    if key in ("å", "a", "aa", "ang", "angstrom", "angstroms", "ångström", "ångströms", "ångstrom", "ångstroms"):
        return u.AA
    if key == "må":
        return u.mAA
    if key in ("%", "percent"):
        return u.percent
    if key.startswith("km"):
        return u.km / u.s
    return u.Unit(key)


def _frame(sentence: str, near: int | None = None) -> str | None:
    text = sentence if near is None else sentence[max(0, near - 40): near + 40]
    if FRAME_REST.search(text):
        return "rest"
    if FRAME_OBS.search(text):
        return "observed"
    return None if near is None else _frame(sentence)


def _value(m: re.Match) -> tuple[float, str, bool, int, float]:
    """(value, relation, hedged, decimals, spread): a range "3-5 Å" is its middle, spread 1."""
    value = _number(m.group("num"))
    hedged = False
    spread = 0.0
    if "num3" in m.re.groupindex and m.group("num3") and not (m.groupdict().get("num2")):
        second = _number(m.group("num3"))
        return 0.5 * (value + second), "=", False, _decimals(m.group("num")), 0.5 * abs(second - value)
    if "num2" in m.re.groupindex and m.group("num2"):
        second = _number(m.group("num2"))
        value, spread = 0.5 * (value + second), 0.5 * abs(second - value)
    mod = (m.group("mod") or "").lower()
    relation = "="
    post = {k: m.group(k) for k in ("post_lt", "post_gt", "plus", "closed") if k in m.re.groupindex}
    if post.get("closed") and spread:  # a lower and an upper bound: the range between them
        pass
    elif post.get("post_lt") and not spread:  # "3 Å or less", "3 Å at most"
        relation = "<"
    elif (post.get("post_gt") or post.get("plus")) and not spread:  # "3 Å or more", "3+ Å"
        relation = ">"
    elif mod and re.fullmatch(LT, mod, re.IGNORECASE):
        relation = "<"
    elif mod and re.fullmatch(GT, mod, re.IGNORECASE):
        relation = ">"
    elif mod:
        hedged = True
    if ("pre" in m.re.groupindex and m.group("pre")) or m.groupdict().get("hedge"):  # "approximately between 3 and 4 Å"
        hedged = True
    if m.groupdict().get("pm") and not spread and relation == "=":  # "3.4 ± 0.3 Å": the claim is 3.1-3.7 Å
        spread = abs(_number(m.group("pm")))
    return value, relation, hedged, _decimals(m.group("num")), spread


def _nearest(mentions: list[Mention], pos: int, lo: int, hi: int) -> Mention | None:
    inside = [m for m in mentions if lo <= m.start and m.end <= hi]
    before = [m for m in inside if m.end <= pos]
    if before:
        return before[-1]
    after = [m for m in inside if m.start >= pos]
    return after[0] if after else None


def _antecedent(text: str, mentions: list[Mention], lo: int) -> Mention | None:
    """The line an "its" at the start of a clause refers to: the last one named before the clause,
    in the same sentence (clauses are also cut at ';')."""
    before = [m for m in mentions if m.end <= lo]
    if not before or re.search(r"[.!?](?!\d)|\n", text[before[-1].end:lo]):
        return None
    return before[-1]


def _wave_value(num: str, unit: str) -> float:
    return float((_number(num) * parse_unit(unit)).to_value(u.AA))


class _Builder:
    def __init__(self, text: str):
        self.text = text
        self.claims: list[Claim] = []
        self.used: list[tuple[int, int]] = []

    def free(self, a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in self.used)

    def add(self, claim: Claim) -> None:
        self.claims.append(claim)
        self.used.append((claim.start, claim.end))

    def span(self, kind: str, a: int, b: int, **kw) -> Claim:
        return Claim(kind=kind, text=self.text[a:b], start=a, end=b, **kw)


def extract_claims(text: str) -> list[Claim]:
    """Every checkable claim in `text`, in order of appearance, with offsets into `text`."""
    b = _Builder(text)
    mentions = find_mentions(text)
    last_ew: Claim | None = None  # the equivalent width the clause before stated (for "...; B has b Å")
    records = _records(b, mentions)  # notes written as fields ('line: X; type: emission; EW: 3 A'), read whole
    for lo, hi in _clauses(text):
        clause = text[lo:hi]
        if any(s <= lo and hi <= e for s, e in records):
            last_ew = None
            continue
        if rejected_clause(clause):  # a rejected hypothesis or line, with the reasons it was rejected
            last_ew = None
            continue
        n = len(b.claims)
        found = _measures(b, lo, hi)
        # a clause that lists kb measurements ("In the H-beta zoom I measure: ...") names its lines
        # as labels of what was measured; plans and criteria state nothing about the spectrum, but a
        # plan or request in a trailing clause leaves the claim before it ("..., and the summary should
        # quote it"), and "should" before a value is a hedged estimate ("the EW should lie in 3-5 Å")
        end, hedge = hi, False
        if not (found or CRITERION.search(clause)) and PLAN.search(clause):
            cut = trailing_plan(clause, PLAN, lambda x, y, at=lo: any(at + x <= m.start and m.end <= at + y for m in mentions))
            hedge = cut is None and epistemic_should(clause, PLAN)
            end = lo + cut if cut is not None else hi if hedge else lo
        if not (found or CRITERION.search(clause)) and end > lo:
            _redshifts(b, lo, end)
            _parallel_pair(b, mentions, lo, end)
            _quantities(b, mentions, lo, end)
            if last_ew is not None and len(b.claims) == n:
                _elided_ew(b, mentions, last_ew, lo, end)
            _ranked(b, mentions, lo, end)
            _ew_order(b, mentions, lo, end)
            _comparisons(b, mentions, lo, end)
            _features(b, mentions, lo, end)
            if hedge:
                for c in b.claims[n:]:
                    c.hedged = c.hedged or c.kind == QUANTITY
        skip = rejected_spans(text, lo, hi)
        if skip:
            b.claims[n:] = [c for c in b.claims[n:] if all(c.end <= s or c.start >= e for s, e in skip)]
        ews = [c for c in b.claims[n:] if c.kind == QUANTITY and c.quantity == "ew"]
        # the next clause may leave the quantity out only after a semicolon, in the same sentence
        last_ew = ews[-1] if ews and hi < len(text) and text[hi] == ";" else None
    b.claims.sort(key=lambda c: c.start)
    return b.claims


# A record of fields about one line or about the redshift, as notes, logs and JSON-ish output write
# them: '{"line": "X", "status": "not detected", "type": "emission"}', 'line=X | type=absorption |
# EW=4 AA', 'line: X; mode: absorption; EW: >= 2 A', 'X | emission | detected: yes', '{"z": 0.1}'.
# Its fields are read together (the sense in one field, the detection in another), not cut into clauses
# at the separators. A key may carry the unit or the bound of its value (ew_angstrom, ew_max_A, fwhm_kms).
RECORD_SEGMENT = re.compile(r"""(?:"[^"\n]*"|'[^'\n]*'|\[[^\]\n]*\]|\([^)\n]*\)|[^,;|"'\[(\n])+""")
RECORD_FIELD = re.compile(r"""\s*["']?(?P<key>[A-Za-z][\w\s\[\]()/-]{0,24}?)["']?\s*[:=]\s*["']?(?P<val>.*?)["']?\s*$""",
                          re.DOTALL)
RECORD_LINE_KEY = re.compile(r"line|feature|species|ion|transition|name", re.IGNORECASE)
RECORD_TYPE_KEY = re.compile(r"type|mode|kind|sense|nature|profile", re.IGNORECASE)
RECORD_STATUS_KEY = re.compile(r"status|detected|detection|present|seen|visible", re.IGNORECASE)
RECORD_EW_KEY = re.compile(r"(?:ew|eqw|w_?λ|equivalent[\s_-]?width)(?:[\s_-]*(?P<bound>max|min|upper|lower|range))?"
                           r"(?:[\s_-]*(?P<unit>a|aa|å|ang|angstroms?))?", re.IGNORECASE)
RECORD_FWHM_KEY = re.compile(r"fwhm(?:[\s_-]*(?P<unit>km[\s_/]?s))?", re.IGNORECASE)
RECORD_Z_KEY = re.compile(r"z|redshift|z[\s_-]?(?:spec|sys|best|fit|lines?)", re.IGNORECASE)
RECORD_KIND = re.compile(r"(?P<em>emission|em)|(?P<ab>absorption|abs)", re.IGNORECASE)
RECORD_YES = re.compile(r"yes|y|true|detected|present|seen|visible|found|secure(?:ly\s+detected)?", re.IGNORECASE)
RECORD_NO = re.compile(r"no|n|false|none|absent|missing|undetected|non[\s-]?detect(?:ed|ion)|"
                       r"not\s+(?:detected|present|seen|visible|found)", re.IGNORECASE)


def _records(b: _Builder, mentions: list[Mention]) -> list[tuple[int, int]]:
    """Read every record of fields (one per line of text); return the spans read."""
    spans = []
    for row in re.finditer(r"[^\n]+", b.text):
        lo, hi = row.start(), row.end()
        lead = re.match(r"\s*(?:[-•*]\s+)?\{?", b.text[lo:hi])
        tail = re.search(r"\}?[\s.]*$", b.text[lo:hi])
        a, c = lo + lead.end(), lo + tail.start()
        if c > a and _record(b, mentions, a, c):
            spans.append((lo, hi))
            b.used.append((lo, hi))
    return spans


def _record(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> bool:
    segments = [m for m in RECORD_SEGMENT.finditer(b.text, lo, hi) if m.group().strip()]
    if len(segments) < 2 or rejected_clause(b.text[lo:hi]):
        return False
    line = kind = status = None
    values: list[tuple[str, re.Match, re.Match, int, int]] = []  # (quantity, key match, value match, start, end)
    keyed = 0
    for seg in segments:
        here = [m for m in mentions if seg.start() <= m.start and m.end <= seg.end()]
        f = RECORD_FIELD.match(seg.group())
        if f is None:  # a bare cell: the line, the sense or the detection
            cell = seg.group().strip().strip("\"'")
            cell_line = [m for m in here if re.fullmatch(r"(?:the\s+)?", b.text[seg.start():m.start].strip())]
            if len(here) == 1 and cell_line and LINE_TAIL.fullmatch(b.text, here[0].end, seg.end() - (
                    len(seg.group()) - len(seg.group().rstrip()))):
                if line is not None:
                    return False
                line = here[0]
            elif RECORD_KIND.fullmatch(cell):
                kind = "emission" if RECORD_KIND.fullmatch(cell).group("em") else "absorption"
            elif RECORD_YES.fullmatch(cell) or RECORD_NO.fullmatch(cell):
                status = 1 if RECORD_YES.fullmatch(cell) else -1
            else:
                return False
            continue
        keyed += 1
        key, val = f.group("key").strip(), f.group("val").strip()
        k0, v0 = seg.start() + f.start("key"), seg.start() + f.start("val")
        if any(m.start < v0 for m in here):
            return False  # a line named in a key: a list of lines, not a record of one
        if RECORD_LINE_KEY.fullmatch(key):
            if len(here) != 1 or line is not None:
                return False
            line = here[0]
        elif RECORD_TYPE_KEY.fullmatch(key) and RECORD_KIND.fullmatch(val):
            kind = "emission" if RECORD_KIND.fullmatch(val).group("em") else "absorption"
        elif RECORD_STATUS_KEY.fullmatch(key) and (RECORD_YES.fullmatch(val) or RECORD_NO.fullmatch(val)):
            status = 1 if RECORD_YES.fullmatch(val) else -1
        elif (km := RECORD_EW_KEY.fullmatch(key) or RECORD_FWHM_KEY.fullmatch(key) or RECORD_Z_KEY.fullmatch(key)):
            qty = "ew" if km.re is RECORD_EW_KEY else "fwhm" if km.re is RECORD_FWHM_KEY else "z"
            vm = VALUE.fullmatch(b.text, v0, v0 + len(val))
            if vm is None or here:
                return False
            values.append((qty, km, vm, k0, v0 + len(val)))
        elif here or re.search(r"\d", val):
            return False  # a field this reader does not know, holding a line or a number
    if keyed == 0 or not (values or status is not None):
        return False
    if (any(q != "z" for q, *_ in values) or status is not None) and line is None:
        return False
    sent = b.text[lo:hi]
    for qty, km, vm, a, c in values:
        value, relation, hedged, dec, spread = _value(vm)
        unit = vm.group("unit")
        if qty == "z":
            if unit:
                return False
            b.claims.append(b.span(QUANTITY, a, c, quantity="z", value=value, hedged=hedged, decimals=dec))
            continue
        unit = unit or (km.group("unit") and ("Å" if qty == "ew" else "km/s"))
        if not unit:
            continue
        bound = (km.groupdict().get("bound") or "").lower()
        if relation == "=" and not spread and bound in ("max", "upper"):
            relation = "<"
        elif relation == "=" and not spread and bound in ("min", "lower"):
            relation = ">"
        b.claims.append(b.span(QUANTITY, min(line.start, a), max(line.end, c), quantity=qty, lines=list(line.names),
                               value=value, relation=relation, unit=unit.strip(), hedged=hedged, decimals=dec,
                               spread=spread, line_kind=kind, frame=_frame(sent),
                               strength="broad" if BROAD.search(sent) else None))
    if status is not None:
        b.claims.append(b.span(FEATURE, line.start, line.end, lines=list(line.names), polarity=status, line_kind=kind,
                               strength="strong" if STRONG.search(sent) else None, frame=_frame(sent)))
    return True


def _measures(b: _Builder, lo: int, hi: int) -> int:
    n = 0
    for m in measure_name_pattern().finditer(b.text, lo, hi):
        v = re.compile(rf"\s*=\s*(?P<num>{NUM})(?:\s*(?P<unit>Å|A\b))?").match(b.text, m.end(), hi)
        if v and b.free(m.start(), v.end()):
            b.add(b.span(MEASURE, m.start(), v.end(), quantity=m.group(), value=_number(v.group("num")),
                         unit=v.group("unit"), decimals=_decimals(v.group("num"))))
            n += 1
    return n


def _redshifts(b: _Builder, lo: int, hi: int) -> None:
    for m in [*REDSHIFT.finditer(b.text, lo, hi), *REDSHIFT_BEFORE.finditer(b.text, lo, hi)]:
        if Z_NEGATED.search(b.text, lo, m.start()):  # "not at z = 0.37", "rather than z=1.6": an alternative denied
            continue
        if b.free(m.start(), m.end()):
            b.add(b.span(QUANTITY, m.start(), m.end(), quantity="z", value=_number(m.group("num")),
                         hedged=bool(m.groupdict().get("mod")), decimals=_decimals(m.group("num"))))


def _named_after(b: _Builder, mentions: list[Mention], pos: int, hi: int):
    """A line named right after a quantity word: "EW(H-alpha)", "the width of the [O III] line",
    "the equivalent widths of H-alpha and H-beta". Returns (mentions named, position after them)."""
    ab = ABBREV.match(b.text, pos, hi)
    pos = ab.end() if ab else pos
    pm = PAREN.match(b.text, pos, hi)
    if pm:
        inside = [m for m in mentions if pm.start() <= m.start and m.end <= pm.end()]
        return (inside[:1], pm.end()) if inside else ([], pos)
    nxt = next((m for m in mentions if pos < m.start <= pos + 40 and m.end <= hi), None)
    if nxt is not None and re.fullmatch(r"[ \t]+", b.text[pos:nxt.start]) and \
            re.match(r"\s*(?:=|:|≈|~|≃|∼)", b.text[LINE_TAIL.match(b.text, nxt.end, hi).end():hi]):
        return [nxt], LINE_TAIL.match(b.text, nxt.end, hi).end()  # "EW Hβ = 3.4 Å"
    if nxt is None or not OF_LINE.fullmatch(b.text, pos, nxt.start):
        return [], pos
    named, end = [nxt], LINE_TAIL.match(b.text, nxt.end, hi).end()
    more = next((m for m in mentions if end < m.start <= end + 12 and m.end <= hi), None)
    if more is not None and AND_LINE.fullmatch(b.text, end, more.start):
        named.append(more)
        end = LINE_TAIL.match(b.text, more.end, hi).end()
    aside = ASIDE.match(b.text, end, hi)
    if aside and not any(aside.start() <= m.start < aside.end() for m in mentions):
        end = aside.end()  # the aside says nothing of the value; a line named in it would be a list
    return named, end


def _quantities(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> None:
    for qty, pattern in KEYWORDS:
        for k in pattern.finditer(b.text, lo, hi):
            if not b.free(k.start(), k.end()):
                continue
            start = k.end()
            whole = None
            named: list[Mention] = []
            if qty == "snr":  # "S/N near 5500 Å is 20": the place is not the value
                place = SNR_PLACE.match(b.text, start, hi)
                start = place.end() if place else start
                whole = WHOLE_SNR.search(b.text, lo, k.start())  # "median S/N 3.8": the whole spectrum's
            elif qty in ("ew", "fwhm", "depth"):
                named, start = _named_after(b, mentions, start, hi)
            listed = _listed(b, mentions, start, hi) if qty in ("ew", "fwhm") and not named else []
            if listed:  # "Equivalent widths: Hβ 2.5 Å, Hα 2.9 Å"
                sent = b.text[lo:hi]
                b.used.append((k.start(), k.end()))  # "widths" is not read again as a width
                for m, val in listed:
                    value, relation, hedged, dec, spread = _value(val)
                    b.add(b.span(QUANTITY, m.start, val.end(), quantity=qty, lines=list(m.names), value=value,
                                 relation=relation, unit=val.group("unit").strip(), hedged=hedged, decimals=dec,
                                 spread=spread, line_kind=_kind(sent), frame=_frame(sent)))
                continue
            v = VALUE.match(b.text, start, min(hi, start + 60))
            pointed = False
            if qty in ("ew", "fwhm") and (v is None or v.group("unit") is None):
                # "a 20 Å equivalent width", "exceeds 8 Å in equivalent width": the number comes first
                before = VALUE_BEFORE.search(b.text, max(lo, k.start() - 40), k.start())
                if before and b.free(before.start(), k.end()):
                    v = before
                elif named:  # "At most 2 Å: that bounds the EW of X", the value opening the clause
                    first = VALUE.match(b.text, lo, k.start())
                    if first and first.group("unit") and POINTER.match(b.text, first.end(), k.start()) and \
                            not any(first.end() <= m.start < k.start() for m in mentions) and \
                            b.free(first.start(), k.end()):
                        v, pointed = first, True
            if v is None:
                continue
            pairs = _pairs(b, mentions, named, k, v, lo, hi) if qty in ("ew", "fwhm", "depth") else None
            unit = v.group("unit") or (pairs[1][1].group("unit") if pairs else None)  # "20 and 5 Å"
            if (qty in ("ew", "fwhm") and unit is None) or (qty == "velocity" and unit is None):
                continue
            if qty == "snr" and unit is not None:
                continue
            if qty == "ratio" and unit is not None and not unit.strip().startswith("%"):
                continue
            sent = b.text[lo:hi]
            if pairs:  # one value each: "the EWs of A and B are 20 and 5 Å", "... respectively"
                first_hedged = _value(v)[2]
                for m, val in pairs:
                    u_ = val.group("unit") or unit
                    value, relation, hedged, dec, spread = _value(val)
                    hedged = hedged or first_hedged  # "about 3 Å and 5 Å": both are eyeballed
                    b.add(b.span(QUANTITY, min(m.start, k.start(), val.start()), max(val.end(), m.end), quantity=qty,
                                 lines=list(m.names), value=value, relation=relation, unit=u_.strip() if u_ else None,
                                 hedged=hedged, decimals=dec, spread=spread, line_kind=_kind(sent), frame=_frame(sent)))
                continue
            value, relation, hedged, dec, spread = _value(v)
            if qty == "ew" and _wave_value(str(value + spread), unit) >= 1000.0:
                continue  # "the EW in the window 6540-6580 Å": a wavelength, not a width
            if qty == "ew" and v.start() >= k.end() and not spread:
                lower = LOWER_BEFORE.search(b.text, max(lo, k.start() - 30), k.start())
                bound = BOUND_BEFORE.search(b.text, max(lo, k.start() - 40), k.start())
                limit = LIMIT_BEFORE.search(b.text, max(lo, k.start() - 60), k.start())
                if relation == "<" and lower and _number(lower.group("num")) < value:  # "2 < EW(X) < 4 Å"
                    low = _number(lower.group("num"))
                    value, spread = 0.5 * (low + value), 0.5 * (value - low)
                    relation = "="
                elif relation == "=" and not hedged and bound:  # "X exceeds an EW of 3 Å"
                    relation = "<" if re.fullmatch(LT, bound.group("rel"), re.IGNORECASE) else ">"
                elif relation == "=" and not hedged and limit:  # "an upper limit on the EW of X is 3 Å"
                    relation = "<" if limit.group("which").lower() == "upper" else ">"
                elif relation == "=" and (sub := re.fullmatch(r"EW_(?P<b>max|upper|min|lower)", k.group(), re.I)):
                    relation = "<" if sub.group("b").lower() in ("max", "upper") else ">"  # "EW_max = 3 Å"
            line = named[0] if named else _nearest(mentions, k.start(), lo, hi)
            if line is None and ITS.search(b.text, lo, k.start()):
                line = _antecedent(b.text, mentions, lo)
            elif line is None and qty in ("ew", "fwhm", "depth") and b.text[lo - 1:lo] == ";":
                # "X seen in absorption; EW 1-2 A": after a semicolon, a quantity with no line is the
                # line's the clause before named, when it named one only
                line = _antecedent(b.text, mentions, lo)
                prev = b.text.rfind(";", 0, lo - 1) + 1
                start = max(prev, max((m.end() for m in re.finditer(r"[.!?](?!\d)|\n", b.text[:lo])), default=0))
                if line is not None and len({m.names[0] for m in mentions if start <= m.start and m.end <= lo}) != 1:
                    line = None
            lines = list(line.names) if line else []
            if qty == "ratio":
                pair = [m for m in mentions if lo <= m.start and m.end <= hi and m.what != "band"][:2]
                lines = ([n for m in pair for n in m.names][:2] if len(pair) == 2
                         else (list(pair[0].names)[:2] if pair else []))
                if len(lines) != 2:
                    continue
            v_start = v.start() + len(v.group()) - len(v.group().lstrip())
            a = min([k.start(), v_start] + ([line.start] if line and qty != "ratio" else [])
                    + [m.start for m in mentions if qty == "ratio" and lo <= m.start < k.start()])
            a = max(min(a, whole.start()) if whole else a, lo)
            end = max(v.end(), k.end())
            if pointed:
                end = max(end, named[-1].end)  # the value opened the clause: the claim runs to its line
            if not b.free(a, end):
                a = whole.start() if whole and b.free(whole.start(), end) else min(k.start(), v_start)
            b.add(b.span(QUANTITY, a, end, quantity=qty, lines=lines, value=value, relation=relation,
                         unit=unit.strip() if unit else None, hedged=hedged, decimals=dec, spread=spread,
                         strength="broad" if BROAD.search(sent) else None,
                         line_kind=_kind(sent), frame=_frame(sent)))


def _pairs(b: _Builder, mentions: list[Mention], named: list[Mention], k: re.Match, v: re.Match, lo: int,
           hi: int) -> list[tuple[Mention, re.Match]] | None:
    """Two lines with a value each, in the three orders reports use: "the EWs of A and B are a and
    b Å"; "EW ~ a Å for A and ~ b Å for B"; "A and B have EWs of a and b Å, respectively"."""
    if v.end() <= k.start():  # the value came first: "X comes in at a Å of EW and Y at b Å"
        joined = AND_NEXT.match(b.text, k.end(), hi)
        other = next((x for x in mentions if joined and x.start == joined.end() and x.end <= hi), None)
        val = AT_VALUE.match(b.text, LINE_TAIL.match(b.text, other.end, hi).end(), hi) if other else None
        first = _nearest([x for x in mentions if x.end <= v.start()], v.start(), lo, hi)
        return [(first, v), (other, val)] if val and first else None
    second = PAIR_VALUES.match(b.text, v.end(), hi)
    if len(named) == 2:
        return [(named[0], v), (named[1], second)] if second else None
    if named:
        return None
    first = _line_right_after(b, mentions, v.end(), hi)
    if first is not None:
        second = PAIR_VALUES.match(b.text, LINE_TAIL.match(b.text, first.end, hi).end(), hi)
        other = _line_right_after(b, mentions, second.end(), hi) if second else None
        return [(first, v), (other, second)] if other else None
    before = [m for m in mentions if lo <= m.start and m.end <= k.start()]
    if second and len(before) >= 2 and RESPECTIVELY.search(b.text, second.end(), hi) and \
            AND_LINE.fullmatch(b.text, LINE_TAIL.match(b.text, before[-2].end, hi).end(), before[-1].start):
        return [(before[-2], v), (before[-1], second)]
    return None


# one value of a pair, with its bound or range: "3.2 Å", "> 5 Å", "~2-3 Å"
PAIR_VALUE = re.compile(rf"(?:(?P<mod>{LT}|{GT}|{APPROX})\s*)?(?P<num>{NUM})(?:\s*(?:-|–|to)\s*(?P<num2>{NUM}))?"
                        rf"(?:\s*(?:±|\+/-|\+-)\s*{NUM})?(?:\s*(?P<unit>Å|Angstroms?|angstroms?|A\b|mÅ|nm))?",
                        re.IGNORECASE)
# a number that is a difference or a factor, not a line's value: "2 Å more than", "by 2 Å", "twice"
PAIR_NOT_VALUE_AFTER = re.compile(r"\s*(?:more|less|larger|smaller|higher|lower|greater|weaker|stronger|deeper|"
                                  r"times|x\b|×|above|below|in\s+excess|beyond|per)\b", re.IGNORECASE)
PAIR_NOT_VALUE_BEFORE = re.compile(r"\b(?:by|differ\w*|difference|offset|ratio|than)\s*(?:of\s+)?(?:only\s+)?$",
                                   re.IGNORECASE)
# a width that is not the equivalent width ("equivalent width", "equiv. width", "eq. width")
NOT_EW_WIDTH = r"(?<!equivalent\s)(?<!equivalent-)(?<!equiv\.\s)(?<!equiv\s)(?<!eq\.\s)\bwidths?\b"
OTHER_QUANTITY = re.compile(rf"\bFWHM\b|{NOT_EW_WIDTH}|\bdepths?\b|"
                            r"\bS/N\b|\bSNR\b|\bratios?\b|velocit|km\s*/?\s*s|\bredshift|\bz\s*[=≈~]",
                            re.IGNORECASE)


def _parallel_pair(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> None:
    """Two lines and two equivalent widths in one clause, in any arrangement a report uses ("EW(A) =
    a Å and EW(B) = b Å", "For A and B the EWs are a and b Å", "A: a Å, B: b Å (equivalent widths)",
    "A's EW is a Å, whereas B's is b Å", "a Å (A) and b Å (B)"): the values are read in the order the
    lines are named, the first to the first, as English lists parallel items. Only when the clause
    speaks of equivalent widths and of no other quantity, names exactly two lines once each, and holds
    exactly two numbers (other than the lines' own wavelengths) that are not differences or factors."""
    text = b.text
    if not KEYWORDS[0][1].search(text, lo, hi) or OTHER_QUANTITY.search(text, lo, hi):
        return
    here = [m for m in mentions if lo <= m.start and m.end <= hi]
    if len(here) != 2 or any(m.what != "line" for m in here) or here[0].names[0] == here[1].names[0] or \
            not all(b.free(m.start, m.end) for m in here):
        return
    values = [v for v in PAIR_VALUE.finditer(text, lo, hi)
              if not any(m.start <= v.start("num") < m.end for m in here)]
    if len(values) != 2 or not values[1].group("unit") or any(_number(v.group("num")) >= 1000 for v in values):
        return
    if not values[0].group("unit") and not re.fullmatch(r"\s*(?:,|and|&)\s*", text[values[0].end():values[1].start()]):
        return  # a shared unit only as in "3 and 5 Å"
    for v in values:
        if PAIR_NOT_VALUE_AFTER.match(text, v.end(), hi) or PAIR_NOT_VALUE_BEFORE.search(text, lo, v.start()):
            return
    sent = text[lo:hi]
    hedged_any = any(_value(v)[2] for v in values)
    for m, v in zip(here, values, strict=True):
        value, relation, hedged, dec, spread = _value(v)
        unit = v.group("unit") or values[1].group("unit")
        a, c = min(m.start, v.start()), max(m.end, v.end())
        b.claims.append(b.span(QUANTITY, a, c, quantity="ew", lines=list(m.names), value=value, relation=relation,
                               unit=unit.strip(), hedged=hedged or hedged_any, decimals=dec, spread=spread,
                               line_kind=_kind(sent), frame=_frame(sent)))
    b.used.append((lo, hi))  # the clause is read: no other claim from it


ELIDED_VALUE = re.compile(rf"\s*(?:(?:has|have|is|at|with|of|shows?|gives?|measures?|comes\s+in\s+at|"
                          rf"one\s+of|[:=])\s*)*(?:(?P<mod>{APPROX})\s*)?(?P<num>{NUM})\s*(?P<unit>Å|Angstroms?|A\b)"
                          rf"\s*$", re.IGNORECASE)


def _elided_ew(b: _Builder, mentions: list[Mention], prev: Claim, lo: int, hi: int) -> None:
    """A clause after a semicolon that leaves the quantity out: "X has an EW of a Å; Y has b Å", "EW(X)
    = a Å; Y: b Å". Only a clause that is a line, a plain verb or colon, and one value in Å, nothing else."""
    here = [m for m in mentions if lo <= m.start and m.end <= hi]
    if len(here) != 1 or here[0].what != "line" or not b.free(here[0].start, hi):
        return
    m = here[0]
    if re.search(r"\S", re.sub(r"(?i)\b(?:and|while|whereas|but|the|for|as\s+for)\b", "", b.text[lo:m.start])):
        return
    v = ELIDED_VALUE.match(b.text, LINE_TAIL.match(b.text, m.end, hi).end(), hi)
    if v is None or _number(v.group("num")) >= 1000:
        return
    value, relation, hedged, dec, spread = _value(v)
    b.add(b.span(QUANTITY, m.start, v.end() - (len(v.group()) - len(v.group().rstrip())), quantity="ew",
                 lines=list(m.names), value=value, relation=relation, unit=v.group("unit"), hedged=hedged,
                 decimals=dec, spread=spread, line_kind=prev.line_kind, frame=prev.frame))


def _listed(b: _Builder, mentions: list[Mention], pos: int, hi: int) -> list[tuple[Mention, re.Match]]:
    """A list after a quantity and a colon, each line with its value: "EWs: Hβ 2.5 Å, Hα 2.9 Å"."""
    colon = re.compile(r"\s*:\s*(?:the\s+)?").match(b.text, pos, hi)
    if colon is None:
        return []
    out, at = [], colon.end()
    while True:
        m = next((x for x in mentions if x.start == at and x.end <= hi), None)
        v = LISTED_VALUE.match(b.text, LINE_TAIL.match(b.text, m.end, hi).end(), hi) if m else None
        if v is None:
            return out if len(out) >= 2 else []
        out.append((m, v))
        sep = re.compile(r"\s*(?:,|;|and)\s*(?:and\s+)?(?:the\s+)?").match(b.text, v.end(), hi)
        if sep is None:
            return out if len(out) >= 2 else []
        at = sep.end()


def _line_right_after(b: _Builder, mentions: list[Mention], pos: int, hi: int) -> Mention | None:
    """The line a value is given for: "... 13 Å for H-delta"."""
    nxt = next((m for m in mentions if pos < m.start <= pos + 24 and m.end <= hi), None)
    return nxt if nxt is not None and FOR_LINE.fullmatch(b.text, pos, nxt.start) else None


def _comparisons(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> None:
    for m in COMPARE.finditer(b.text, lo, hi):
        first = _nearest([x for x in mentions if x.end <= m.start()], m.start(), lo, hi)
        second = next((x for x in mentions if x.start >= m.end() and x.end <= hi), None)
        if first is None or second is None or not b.free(first.start, second.end):
            continue
        if (m.group("verb") or m.group("lessverb") or m.group("times") or m.group("frac2")) and not re.fullmatch(
                r"\s*(?:(?:that|those)\s+of\s+)?(?:the\s+)?(?:(?:EW|W_?λ|equivalent\s+width)\s*(?:of\s+|[(\[{]\s*))?",
                b.text[m.end():second.start], re.IGNORECASE):
            continue  # "A exceeds 3 Å, and B ...": a verb of outdoing must take the other line (or its EW) as object
        word = re.sub(r"\s+", " ", (m.group("adj") or m.group("notas") or "").lower())
        qty = {"deeper": "depth", "shallower": "depth", "broader": "fwhm", "narrower": "fwhm",
               "wider": "fwhm", "deep": "depth", "broad": "fwhm", "wide": "fwhm"}.get(word.split(" ")[-1], "strength")
        less = (word in ("shallower", "weaker", "narrower", "fainter") or word.startswith("less")
                or (m.group("more") or "").lower() == "less" or m.group("passive") or m.group("frac")
                or m.group("notas") or m.group("lessverb") or m.group("frac2") or (m.group("verbmore") or "").lower() == "less"
                or (m.group("noun") or "").lower() in ("lower", "smaller"))
        relation = "<" if less else ">"
        b.add(b.span(COMPARISON, first.start, second.end, lines=[first.names[0], second.names[0]], quantity=qty,
                     relation=relation, line_kind=_kind(b.text[lo:hi])))


def _ew_order(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> None:
    """The order of two lines' strengths with no number: "EW(A) > EW(B)", "A has the larger equivalent
    width and B the smaller", "A is the stronger of the two", "A dominates over B". The line named
    just before the first comparative is its subject; a comparative before any line ("the larger EW
    is A's") is not read (it could go either way)."""
    said = SAID_OF.search(b.text, lo, hi)
    if not (KEYWORDS[0][1].search(b.text, lo, hi) or STRENGTH_ORDER.search(b.text, lo, hi) or said):
        return
    lines = [m for m in mentions if lo <= m.start and m.end <= hi and m.what != "band" and b.free(m.start, m.end)]
    names = list(dict.fromkeys(m.names[0] for m in lines))
    word = ORDER_WORD.search(b.text, lo, hi)
    if len(names) != 2 or word is None or re.match(r"\s*(?:than\s+)?[-+−]?\d", b.text[word.end():hi]):
        return  # "larger than 5 Å" is a bound
    before = [m for m in lines if m.end <= word.start()]
    if COMPARE.search(b.text, lo, hi):  # "A is more prominent than B": read as that
        return
    ft = FOR_THAN.match(b.text, word.end(), hi)
    if not before and ft:  # "the EW is larger for A than for B": the comparative before both lines
        first = next((m for m in lines if m.start == ft.end()), None)
        tail = LINE_TAIL.match(b.text, first.end, hi).end() if first else hi
        th = THAN_FOR.match(b.text, tail, hi)
        second = next((m for m in lines if th and m.start == th.end()), None)
        if first is not None and second is not None and first.names[0] != second.names[0]:
            b.add(b.span(COMPARISON, word.start(), second.end, lines=[first.names[0], second.names[0]],
                         quantity="strength", relation=">" if word.group("more") else "<",
                         line_kind=_kind(b.text[lo:hi])))
        return
    if not before:
        return
    if word.start() > lines[-1].start and not STRENGTH_ORDER.search(b.text, lo, hi) and \
            not _said_of(b.text, lines[-1], word):
        return  # "..., with a larger EW" after both lines names neither; "..., B is weaker" names B
    subject = before[-1].names[0]
    if re.search(r"\b(?:not|rather\s+than|instead\s+of|unlike)\s*$", b.text[lo:before[-1].start]):
        subject = names[1] if subject == names[0] else names[0]  # "A, not B, is the stronger"
    pred = PREDICATED.match(b.text, word.end(), hi)
    after = next((m for m in lines if pred and m.start == pred.end()), None)
    if after is not None:
        subject = after.names[0]  # "Of A and B, the stronger absorption is A": said of the line after it
    other = names[1] if subject == names[0] else names[0]
    relation = ">" if word.group("more") else "<"
    b.add(b.span(COMPARISON, lines[0].start, lines[-1].end, lines=[subject, other], quantity="strength",
                 relation=relation, line_kind=_kind(b.text[lo:hi])))




def _ranked(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> None:
    """Two lines listed after a ranking by strength or EW, its direction stated: the first named is the
    stronger when the largest comes first ("ranked by EW (largest first): A, B"), the weaker when the
    smallest does. Only a list of exactly two lines, nothing but separators between them."""
    r = RANKED.search(b.text, lo, hi)
    if r is None or not (KEYWORDS[0][1].search(b.text, lo, r.end()) or SAID_OF.search(b.text, lo, r.end())):
        return
    head = b.text[lo:r.end()]
    down, up = RANK_DOWN.search(head), RANK_UP.search(head)
    if bool(down) == bool(up):
        return
    listed = [m for m in mentions if r.end() <= m.start and m.end <= hi and m.what != "band"]
    if len(listed) != 2 or listed[0].start != r.end() or listed[0].names[0] == listed[1].names[0] or \
            not re.fullmatch(r"\s*(?:,|>|<|;|then|followed\s+by|and)\s*(?:then\s+)?(?:the\s+)?",
                             b.text[LINE_TAIL.match(b.text, listed[0].end, hi).end():listed[1].start]) or \
            not b.free(lo, hi):
        return
    b.add(b.span(COMPARISON, r.start(), listed[1].end, lines=[listed[0].names[0], listed[1].names[0]],
                 quantity="strength", relation=">" if down else "<", line_kind=_kind(b.text[lo:hi])))




def _said_of(text: str, line: Mention, word: re.Match) -> bool:
    """The comparative is said of the line right before it: "B is weaker", "B weaker", "B, by contrast, is
    far weaker", "B absorption appears weaker", "B has the smaller (EW)"."""
    return bool(re.fullmatch(r"(?:\s+(?:absorption|emission|line|feature))?\s*,?\s*(?:by\s+contrast\s*,?\s*)?"
                             r"(?:(?:is|are|appears?|looks?|seems?)\s+|(?:has|have|shows?|carries)\s+(?:the|a)\s+)?"
                             r"(?:(?:much|far|slightly|considerably|clearly|noticeably|somewhat|a\s+bit|visibly)\s+)?",
                             text[line.end:word.start()], re.IGNORECASE))


def _kind(text: str) -> str | None:
    em, ab = EMISSION.search(text), ABSORPTION.search(text)
    if em and ab:
        return "emission" if em.start() < ab.start() else "absorption"
    return "emission" if em else "absorption" if ab else None


def _subclauses(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    out, start = [], lo
    for m in SUBCLAUSE.finditer(text, lo, hi):
        out.append((start, m.start()))
        start = m.end() - 2 if m.group().rstrip().endswith(" no") else m.end()
    out.append((start, hi))
    return [(a, c) for a, c in out if c > a]


def _cue(text: str) -> bool:
    return bool(NEG.search(text) or _kind(text) or PRESENT.search(text))


def _joined_subclauses(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> list[tuple[int, int]]:
    """Subclauses, a line-only one joined to the cue-only one after it: "At the position of Hγ, no
    absorption can be seen" is one statement about H-gamma."""
    out: list[tuple[int, int]] = []
    for a, c in _subclauses(b.text, lo, hi):
        if out:
            pa, pc = out[-1]
            named_before = any(pa <= m.start and m.end <= pc for m in mentions)
            named_here = any(a <= m.start and m.end <= c for m in mentions)
            if named_before and not named_here and not _cue(b.text[pa:pc]) and _cue(b.text[a:c]):
                out[-1] = (pa, c)
                continue
        out.append((a, c))
    return out


def _features(b: _Builder, mentions: list[Mention], lo: int, hi: int) -> None:
    sentence = b.text[lo:hi]
    for a, c in _joined_subclauses(b, mentions, lo, hi):
        sub = b.text[a:c]
        here = [m for m in mentions if a <= m.start and m.end <= c and b.free(m.start, m.end)]
        sub = NOT_NEG.sub(lambda m: " " * len(m.group()), sub)  # same offsets, idioms blanked
        neg = bool(NEG.search(sub))
        kind = _kind(sub)
        # a negation that reaches one sense only ("in absorption and not in emission") denies that sense
        # and asserts the other; one that reaches both ("no absorption or emission") denies the line
        denied, asserted = senses(sub) if neg else (set(), set())
        split = denied_sense(denied, asserted)
        if neg and split is None and both_denied(denied, asserted):
            kind = None
        pos = POSITION.search(sub)
        if not here:
            un = UNNAMED.search(sub)
            if un and b.free(a + un.start(), a + un.end()):
                s = a + (NEG.search(sub).start() if neg and NEG.search(sub).start() < un.start() else un.start())
                b.add(b.span(FEATURE, s, a + un.end(), line_kind=un.group("kind").lower(), polarity=-1 if neg else 1,
                             wavelength=_wave_value(un.group("num"), un.group("unit")),
                             frame=_frame(sentence, un.start() + a - lo)))
            continue
        if not (kind or neg or PRESENT.search(sub) or any(m.what == "band" for m in here)):
            continue  # a line only named ("the Hα region") is not a claim
        for m in here:
            end = max(m.end, a + pos.end()) if pos and len(here) == 1 else m.end
            start = m.start
            ng = NEG.search(sub)
            if ng and a + ng.start() < m.start:
                start = a + ng.start()
            wave = _wave_value(pos.group("num"), pos.group("unit")) if pos and len(here) == 1 else None
            if split and m.what != "band":
                for sense, polarity in zip(split, (-1, 1), strict=True):
                    b.add(b.span(FEATURE, start, end, lines=list(m.names), polarity=polarity, line_kind=sense,
                                 strength="strong" if polarity > 0 and STRONG.search(sub) else None,
                                 wavelength=wave, frame=_frame(sentence)))
                continue
            b.add(b.span(FEATURE, start, end, lines=list(m.names), polarity=-1 if neg else 1,
                         strength="strong" if STRONG.search(sub) else None,
                         line_kind="band" if m.what == "band" else kind, wavelength=wave,
                         frame=_frame(sentence, (pos.start() + a - lo) if pos else None) if wave else _frame(sentence)))
