"""The words and number forms the claim patterns are made of (agents.claims.extract): numbers and the
ways a value is approximated or bounded, units, labelled range ends, the pointers and asides between a
line and its value, quantity keywords, redshift and position forms, plans and criteria, presence and
strength words, frames. Regular expressions only: which claim a match makes is decided in extract.py
(the words of a rejected hypothesis are in rejected.py)."""
from __future__ import annotations

import re

NUM = r"[-+−]?\d+(?:\.\d+)?"
APPROX = (r"~|≈|≃|∼|about|approximately|approx\.?|roughly|around|nearly|close to|of order|some|an estimated|"
          r"in\s+the\s+(?:neighbou?rhood|vicinity)\s+of|on\s+the\s+order\s+of|of\s+the\s+order\s+of|something\s+like|"
          r"circa|order(?=\s+\d)|approach(?:es|ing)")
# bounds as reports phrase them; a negated bound is the other bound ("does not exceed" is at most,
# "no less than" at least), listed before the plain words that it contains
# A negated bound is the other bound, whatever carries the negation (not, never, cannot, n't); a
# comparative of strength against a number is a bound on the number ("weaker than 3 Å" is at most 3 Å,
# "stronger / deeper than 3 Å" at least); "upper / lower limit of", "capped at", "tops out at", "falls
# short of" name the bound they set. ASCII and "about" relations: <= =< ⩽ ≲ and >= => ⩾ ≳.
_NOT = (r"(?:(?:does|do|did|could|would|is|are|was|were)\s*n[o'’]?t|can(?:no|'|’)t|can\s+not|won['’]t|will\s+not|"
        r"never|not)\s+(?:be\s+)?")
# an intensifier before a bound leaves it a bound: "well / far / comfortably / clearly in excess of 3 Å"
_INTENSE = r"(?:(?:well|far|much|comfortably|clearly|significantly|substantially|safely)\s+)?"
LT = (r"(?:less|lower|smaller)\s+than\s+or\s+equal\s+to|at\s+the\s+very\s+most|bounded\s+above\s+by|"
      r"(?:a\s+)?max(?:imum(?:\s+of)?|\.)?(?=\s*[~≈]?\s*\d|$)|"
      rf"{_NOT}(?:go(?:es)?|rise|climb|get)\s+(?:above|over|beyond|past)|never\s+(?:goes|rises|climbs|gets)\s+(?:above|over|beyond|past)|"
      rf"{_INTENSE}(?:below|under|less\s+than|smaller\s+than|lower\s+than)|"
      r"<=|=<|⩽|≲|<|≤|less than|below|under|at most|at\s+or\s+below|no more than|smaller than|lower than|up to|"
      rf"{_NOT}(?:exceed(?:s|ing)?|(?:more|greater|larger|higher|stronger|bigger|deeper)\s+than|above|over|reach(?:es)?)|"
      r"not\s+exceeding|no\s+(?:greater|larger|stronger|higher|bigger|deeper)\s+than|"
      r"(?:stays?|remains?|keeps?)\s+(?:below|under|beneath)|(?:weaker|shallower|fainter)\s+than|"
      r"falls?\s+short\s+of|tops?\s+out\s+at|capped\s+at|(?:an?\s+)?upper\s+(?:limit|bound)\s+(?:of|at)|"
      r"(?:a\s+)?maximum\s+of|well\s+(?:below|under)")
GT = (r"(?:greater|larger|higher|more)\s+than\s+or\s+equal\s+to|bounded\s+below\s+by|"
      r"(?:a\s+)?min(?:imum(?:\s+of)?|\.)?(?=\s*[~≈]?\s*\d|$)|"
      rf"{_NOT}(?:go|drop|fall|dip|sink|get)\s+(?:below|under|beneath)|never\s+(?:goes|drops|falls|dips|sinks|gets)\s+(?:below|under|beneath)|"
      rf"{_INTENSE}(?:in\s+excess\s+of|beyond|upwards?\s+of|above|over|more\s+than|greater\s+than|larger\s+than)|"
      r">=|=>|⩾|≳|>|≥|more than|above|over|at least|at\s+or\s+above|exceeds?|exceeding|greater than|larger than|"
      rf"in\s+excess\s+of|{_NOT}(?:(?:less|smaller|lower|weaker|fainter|shallower)\s+than|below|under)|"
      r"no\s+(?:less|smaller|lower|weaker)\s+than|higher\s+than|(?:stronger|deeper|bigger)\s+than|"
      r"(?:stays?|remains?|keeps?)\s+(?:above|over)|"
      r"surpass(?:es|ing)?|goes\s+beyond|(?:an?\s+)?lower\s+(?:limit|bound)\s+(?:of|at)|(?:a\s+)?minimum\s+of|"
      r"at\s+(?:a\s+)?minimum|well\s+(?:above|over)")
# a bound written after the number: "3 Å or less", "3 Å at most", "3 Å or more", "3+ Å"
POST_LT = r"or\s+(?:less|below|lower|smaller|under)|at\s+(?:the\s+)?most|at\s+(?:the\s+)?maximum|tops"
POST_GT = r"or\s+(?:more|greater|above|higher|larger|over)|at\s+(?:the\s+)?least|at\s+(?:a\s+|the\s+)?minimum"
UNIT = r"Ångstr[öo]ms?|Å|Angstroms?|angstroms?|Ang\b|AA\b|A\b|nm|mÅ|km\s*/\s*s|km\s*s\^?-1|km\s*s⁻¹|per\s*cent|%"
# a label after an end of a range: "3 Å (min) - 5 Å (max)"
END_LABEL = r"(?:\s*\((?:min(?:imum)?|max(?:imum)?|lower|upper|low|high|lo|hi)\))?"
VALUE = re.compile(
    rf"\s*(?:(?:is|are|was|were|of|=|:|at|equals?|equal\s+to|measures?|measured|reaches|reaching|with|only|just|a|an|value|its|the|"
    rf"lies|lie|falls?|sits?|comes?(?:\s+to)?|out|amounts\s+to|in\s+the\s+range(?:\s+of)?|range|within|somewhere|"
    rf"found|in|constrained\s+to|(?:in\s+)?(?:the\s+)?interval|I\s+(?:get|find|measure|obtain)|"
    # words of estimating and of extent: "is estimated to be", "likely lies", "ranging from", "spans",
    # "is bounded by", "anywhere from", "is best put at", "is limited to"
    rf"estimated|determined|derived|inferred|likely|probably|to\s+be|as|ranging|ranges?|spans?|spanning|"
    rf"bracketed|anywhere|best|put|placed|limited\s+to|confined\s+to|has|have|must|could|may|might|can|should|be|"
    rf"plausibly|possibly|presumably|that|which|"
    # "runs / varies / stays between", "anything from", "in the window", "the EW in absorption is"
    rf"runs?|varies|vary|stays?|remains?|anything|window|(?:in\s+)?(?:absorption|emission)|"
    rf"came(?:\s+to)?|lands?|hovers?|inside|"
    # verbs of coming to a value: "clocks in at", "totals", "works out to", "turns out to be", "reads"
    rf"clocks?\s+in|registers?|totals?|works?\s+out(?:\s+to)?|turns?\s+out|reads?|stands?|settles?|pegged|"
    rf"pinned|yields?|gives?|returns?)\b\s*|(?:[=:,∈→⇒—]|\((?!\s*{NUM}\s*,\s*{NUM}\s*\)))\s*|"
    rf"\((?:in\s+the\s+)?(?:rest|observed|obs)[\s-]*(?:frame)?\)\s*|\(range\)\s*|"
    rf"(?P<hedge>{APPROX})\s+(?=(?:in|within|inside|at)\b)\s*)*"
    rf"(?:(?P<pre>{APPROX})\s+(?=between\b|from\b))?(?P<between>between\s+|from\s+|(?:bounded|bracketed)\s+by\s+)?(?P<bracket>\[\s*|(?:(?<=∈)|(?<=∈\s)|(?<=\bin\s))\(\s*)?"
    rf"(?P<mod>{LT}|{GT}|{APPROX}|near)?(?:\s*(?:{APPROX}))?(?:\s*(?:the|an?)\b)?\s*(?P<num>{NUM})"
    rf"(?P<plus>\+(?![-/\d]))?"
    rf"(?:\s*(?:Å|A\b|Angstroms?)?{END_LABEL}\s*(?:-|–|…|\.\.|to|through|up\s+to|(?(between)and|(?!))|(?(bracket),|(?!))|"
    # "no less than 3 and no more than 5 Å": two bounds that close a range
    rf"(?P<closed>,?\s*(?:and|but|yet)\s+(?:{LT})))"
    rf"\s*(?P<num2>{NUM})\s*(?(bracket)[\])]?|\]?))?"
    rf"(?:\s*\(?\s*(?:±|\+/-|\+-)\s*(?P<pm>{NUM})\s*\)?|"
    rf"\s*\(?\s*\^?\{{?\s*\+\s*\d+(?:\.\d+)?\s*\}}?\s*(?:_?\{{?\s*[-−]\s*\d+(?:\.\d+)?\s*\}}?|/\s*[-−]\s*\d+(?:\.\d+)?)\s*\)?)?"
    rf"\s*(?P<unit>{UNIT})?(?(num2){END_LABEL}|)"
    # "a 20 Å window", "30 Å redward": a stretch of spectrum, not a value
    rf"(?!\s*(?:-?\s*wide\b|windows?\b|regions?\b|box\b|aperture\b|bins?\b|(?:red|blue)ward\b|away\b|"
    rf"(?:either\s+)?side\b|on\s+either\b|from\s+the\s+(?:line|cent)))"
    rf"(?:\s*(?:(?P<post_lt>{POST_LT})|(?P<post_gt>{POST_GT}))\b"
    # "3 Å or more but 5 Å or less", "3 Å at the least and 5 Å at the most": two bounds after their numbers
    rf"(?:,?\s*(?:and|but)\s+(?P<num3>{NUM})\s*(?:{UNIT})?\s*(?:{POST_LT}|{POST_GT})\b)?)?"
    rf"(?!\s*(?:<|≤|⩽|≲|>|≥|⩾|≳))", re.IGNORECASE)  # "2 Å ≤ W": the lower end of a double bound, not a value
# the same number written before the quantity: "a 20 Å equivalent width", "exceeds 8 Å in equivalent width"
VALUE_BEFORE = re.compile(
    rf"(?P<mod>{APPROX}|{LT}|{GT})?\s*(?P<btw>between\s+)?(?P<num>{NUM})(?:\s*(?:Å|A\b)?\s*"
    rf"(?:-|–|to|through|(?(btw)and|(?!)))\s*(?P<num2>{NUM}))?\s*(?P<unit>{UNIT})"
    rf"\s*(?:(?:is|was|as|in|of|for|on|the|an?|its|total|emission|absorption)\s+)*$", re.IGNORECASE)
# the lower end of a double bound, before the quantity: "2 Å < EW(Hβ) < 4 Å"
LOWER_BEFORE = re.compile(rf"(?P<num>{NUM})\s*(?:{UNIT})?\s*(?:<=|=<|<|≤|⩽|≲)\s*$", re.IGNORECASE)
# a bound word right before "an EW of 3 Å": "Hβ exceeds an EW of 3 Å", "below an EW of 1 Å"
BOUND_BEFORE = re.compile(rf"\b(?P<rel>{LT}|{GT})\s+(?:an?\s+|the\s+|its\s+)?(?:(?:absorption|emission)\s+)?$",
                          re.IGNORECASE)
# a bound named as a noun before the quantity: "an upper limit on the EW of X is 3 Å", "the lower bound to
# X's equivalent width is 3 Å"
LIMIT_BEFORE = re.compile(r"\b(?P<which>upper|lower)\s+(?:limit|bound)\s+(?:on|to|for|of)\s+(?:the\s+|its\s+)?"
                          r"[^\d,;:()]{0,30}$", re.IGNORECASE)
# "EW(H-alpha)", "W_λ(Hβ)": the line written in parentheses right after the quantity
# (also in brackets or braces, "EW[Hα]", "EW_{Hα}", "W_λ[Na D]")
PAREN = re.compile(r"\s*(?:\(\s*([^()]{1,40}?)\s*\)|\[(?:[^\[\]]|\[[^\[\]]*\]){1,40}?\]|\{[^{}]{1,40}?\})")
# the quantity's symbol in parentheses after its name: "velocity width (FWHM) of", "equivalent width (EW) of"
ABBREV = re.compile(r"\s*\(\s*(?:FWHM|EWs?|W_?λ|W)\s*\)", re.IGNORECASE)
# the value first, then the quantity it is, pointed back to: "At most 2 Å: that bounds the EW of X", "from 3
# to 5 Å - that is where I put the EW of X", "4000 km/s is the FWHM of X"
POINTER = re.compile(r"\s*(?:(?:[:,]|\s[-–—])\s*(?:that|this|which|it)\b|(?:is|was|are|were)\s+(?:the|my|our)\b)[^\d]{0,50}$",
                     re.IGNORECASE)
# "... of H-alpha", "... for the [O III] 5007 line": a line named between the quantity and its value
# (also after a reduced relative clause: "the EW I measure for X", "the EW that we get for X", "the EW
# derived for X", "the EW associated with X")
OF_LINE = re.compile(r"\s+(?:(?:(?:that|which)\s+)?(?:(?:I|we)\s+)?(?:measure[ds]?|get|find|found|obtain(?:ed)?|"
                     r"derived?|estimated?|fitted|fit|determined|associated|adopted?)\s+)?"
                     r"(?:of|for|in|on|with)\s+(?:the\s+)?(?:(?:broad|narrow|strong|weak|prominent)\s+)?",
                     re.IGNORECASE)
AND_LINE = re.compile(r"\s*(?:and|&|,)\s+(?:the\s+|of\s+)?", re.IGNORECASE)
# an aside about the line between the line and its value, set off by commas, parentheses or dashes and
# holding no number: "the EW of X, which is in emission, is 3 Å", "the EW of X (a doublet) is 3 Å",
# "the EW of X - seen in absorption - is 3 Å"
ASIDE = re.compile(r"\s*(?:,(?P<comma>[^,\d()]{2,48}),|\((?P<paren>[^()\d]{2,40})\)|\s[-–—](?P<dash>[^\d–—]{2,48}?)\s?[-–—])",
                   re.IGNORECASE)
LINE_TAIL = re.compile(r"(?:\s+(?:in\s+)?(?:line|feature|emission|absorption|doublet|triplet|profile|component))*"
                       r"(?:\s*['’]s)?", re.IGNORECASE)
FOR_LINE = re.compile(r"\s+(?:for|in|of|at)\s+(?:the\s+)?", re.IGNORECASE)
LISTED_VALUE = re.compile(rf"\s*(?:[=:]\s*)?(?P<mod>{APPROX})?\s*(?P<num>{NUM})\s*(?P<unit>{UNIT})", re.IGNORECASE)
AND_NEXT = re.compile(r"\s*,?\s*and\s+(?:the\s+)?", re.IGNORECASE)
AT_VALUE = re.compile(rf"\s+(?:at|with|has|of)\s+(?:(?P<mod>{APPROX})\s*)?(?P<num>{NUM})\s*(?P<unit>{UNIT})", re.IGNORECASE)
RESPECTIVELY = re.compile(r"\brespectively\b", re.IGNORECASE)
PAIR_VALUES = re.compile(rf"\s*(?:and|,|&)\s*(?:(?P<mod>{APPROX})\s*)?(?P<num>{NUM})\s*(?P<unit>{UNIT})?",
                         re.IGNORECASE)
KEYWORDS = [
    # "W" alone is the EW symbol only with a relation or a value after it ("W < 1 Å", "W = 3 Å"), or a
    # line in parentheses ("W(Hβ)")
    # "EW_{Hα}", "EW_range", "EW_obs": the symbol with a subscript
    # "EQW", "REW" (rest EW), "W_0", "W_r", "W_lambda", "equiv. width", "eq. width"
    ("ew", re.compile(r"equivalent[\s-]widths?|\bEWs?\b|\bEW_(?:[A-Za-z]+\b)?(?=[{\s=:<>≤≥~≈])|W_?λ|"
                      r"\bEQWs?\b|\bREWs?\b|(?-i:\bW_?0\b|\bW_r\b|\bW_?lambda\b|\bW_lam\b)|"
                      r"\bequiv\.?\s*widths?|\beq\.\s*widths?|"
                      r"(?-i:\bW\b)(?=\s*(?:[<>=≤≥~≈]|no\b|in\s+excess|of\b|\d)|\()",
                      re.IGNORECASE)),
    ("fwhm", re.compile(r"\bFWHM\b|full[\s-]width at half[\s-](?:maximum|depth|max)|"
                        r"(?<!equivalent\s)(?<!equivalent-)(?<!equiv\.\s)(?<!equiv\s)(?<!eq\.\s)\bwidths?\b", re.IGNORECASE)),
    ("depth", re.compile(r"\bdepths?\b", re.IGNORECASE)),
    ("snr", re.compile(r"\bS/N\b|\bSNR\b|signal[\s-]to[\s-]noise(?:\s+ratio)?", re.IGNORECASE)),
    ("ratio", re.compile(r"\bratios?\b", re.IGNORECASE)),
    ("velocity", re.compile(r"(?:radial|line-of-sight)?\s*velocit(?:y|ies)|(?:blue|red)shifted by|offset of",
                            re.IGNORECASE)),
]
ITS = re.compile(r"\b(?:its|their)\b", re.IGNORECASE)
WHOLE_SNR = re.compile(r"\b(?:median|overall|global)\s+$", re.IGNORECASE)
SNR_PLACE = re.compile(r"\s*(?:per\s+pixel\s*)?"
                       r"(?:(?:near|around|at|in|about)\s*~?\d{4}(?:\.\d+)?\s*(?:Å|A\b|Angstroms?))")
# a redshift: "z" (with a subscript: z_spec, z_sys, z(lines)) or the word "redshift", then the words
# reports put before its value ("is", "of", ":", "equals", "was measured to be", "comes out as",
# "estimate of", "is consistent with", "is best put at"), then a decimal number with no unit after it
Z_SYMBOL = r"\bz(?:_?\{?(?:spec|sys|sp|obs|fit|best|em|abs|lines?|gal)\}?|\s*\((?:spec|sys|lines?|fit|best)\))?"
Z_WORDS = (r"(?:(?:is|of|was|at|equals?|equal\s+to|value|estimate[ds]?|measured|determined|derived|inferred|found|"
           r"to\s+be|as|comes|out|appears|seems|consistent\s+with|best|put|placed|near|I\s+(?:derive|find|get|measure|"
           r"obtain|adopt)|z|comes?\s+to|amounts?\s+to|stands?\s+at|lies|sits|settles?\s+(?:at|on)|"
           r"essentially|effectively|practically|basically|"
           # "the redshift of this galaxy:", "the redshift of the source is"
           r"of\s+(?:this|the)\s+(?:source|object|galaxy|quasar|QSO|AGN|star|target|system|spectrum))\b\s*|"
           r"[=:]\s*|\(z\)\s*)*")
REDSHIFT = re.compile(rf"(?:{Z_SYMBOL}\s*(?:=|≈|~|≃|∼|:)\s*|{Z_SYMBOL}\s+(?:value\s+)?(?:is|of|equals?|was)\s+{Z_WORDS}|"
                      rf"\bredshift(?:\s+(?:value|estimate)|ed\s+to)?\s*{Z_WORDS})(?:(?P<mod>{APPROX})\s*)?"
                      rf"(?P<num>\d+\.\d+(?:e[-+]?\d+)?|0)(?!\s*(?:km|Å|A\b|nm|%|per|mag))", re.IGNORECASE)
# the value before the word: "places the galaxy at 0.123 in redshift", "0.123 is the redshift I adopt"
REDSHIFT_BEFORE = re.compile(r"(?<![\d.])(?P<num>\d+\.\d+)\s+(?:in\s+redshift|(?:is|was)\s+(?:the|my|our)\s+"
                             r"(?:(?:adopted|best|final|preferred|systemic|spectroscopic)\s+)?redshift)\b", re.IGNORECASE)
POSITION = re.compile(rf"\b(?:at|near|around|centred at|centered at|centred on|centered on|located at|peaking at|"
                      rf"λ\s*=?)\s*(?:(?:{APPROX})\s*)?(?P<num>\d{{3,5}}(?:\.\d+)?)\s*"
                      rf"(?P<unit>Å|Angstroms?|A\b|nm)", re.IGNORECASE)
UNNAMED = re.compile(rf"\b(?P<kind>emission|absorption)(?:[\s-]+(?:line|feature|peak|trough|dip|band))?\s+"
                     rf"(?:is\s+|are\s+)?(?:seen\s+|present\s+|visible\s+)?(?:at|near|around|centred at|centered at)\s*"
                     rf"(?:(?:{APPROX})\s*)?(?P<num>\d{{3,5}}(?:\.\d+)?)\s*(?P<unit>Å|Angstroms?|A\b|nm)",
                     re.IGNORECASE)
# ("..., which would enter the mass estimate" states a consequence of a claim, not a plan)
PLAN = re.compile(r"\b(?:I will|I'll|let me|let's|next I|I need|need to|zoom(?:ing)? (?:in|into|to)|look(?:ing)? for|"
                  r"check(?:ing)? (?:for|whether|if)|whether|if\b|(?<!which\s)(?<!that\s)(?:would|should)|\bexpect\b|"
                  r"to confirm|to verify|"
                  r"to see|to check|criteri(?:a|on)|indicators?|key visual|"
                  r"are the deepest lines in the spectrum, with)", re.IGNORECASE)
CRITERION = re.compile(r"\(needs\s*[<>=]|zoom I measure:|not measurable")
PRESENT = re.compile(r"\b(?:present|detected|visible|seen|shows?|showing|strong|prominent|clear|clearly|obvious|"
                     r"evident|dominat\w*|deep|broad|narrow|weak|faint|distinct|conspicuous|pronounced|bands?)\b",
                     re.IGNORECASE)
STRONG = re.compile(r"\b(?:strong|prominent|obvious|conspicuous|pronounced|dominat\w*|deep|intense)\b", re.IGNORECASE)
BROAD = re.compile(r"\bbroad\b", re.IGNORECASE)
FRAME_REST = re.compile(r"rest[\s-]?frame|\(rest\)|rest wavelength|\brest\b", re.IGNORECASE)
FRAME_OBS = re.compile(r"observed|\bobs\b|observer", re.IGNORECASE)
Z_NEGATED = re.compile(r"\b(?:not|rather than|instead of|unlike|nor|neither|never|no longer)\s+(?:[\w#.+=-]+\s+){0,3}$",
                       re.IGNORECASE)
SUBCLAUSE = re.compile(r",?\s*\b(?:and no|with no|but no)\b|,\s*(?:but|while|whereas|although|though|however)\b|"
                       r"\b(?:but|while|whereas|although)\b|,")
