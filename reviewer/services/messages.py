"""Text for the page from text the server made: no server paths.

A message shown to a reviewer names a file by its name only. Exceptions from readers and the system
can carry a file's whole path (`[Errno 5] ...: '/srv/data/x.fits'`); `without_paths` keeps the last
part of every absolute path in a text. (The CLI, which runs as the user on the user's files, prints
paths as they are.)
"""
from __future__ import annotations

import re

# a quoted absolute path (as exceptions quote them: spaces and all), then an unquoted one of two parts
# or more, not inside a word, a unit (erg/s/cm2) or a URL (http://h/x)
_QUOTED = re.compile(r"""(['"])/(?:[^'"\n]*/)?([^'"/\n]*)\1""")
_ABSOLUTE = re.compile(r"(?<![\w.~:/-])/(?:[^\s/'\"()<>\[\]:;,]+/)+([^\s/'\"()<>\[\]:;,]*)")


def without_paths(text: str) -> str:
    """`text` with each absolute path cut to its last part (a file's name)."""
    text = _QUOTED.sub(lambda m: f"{m.group(1)}{m.group(2) or '(a folder)'}{m.group(1)}", text)
    return _ABSOLUTE.sub(lambda m: m.group(1) or "(a folder)", text)
