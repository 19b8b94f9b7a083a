"""The payload corpus: untrusted text as an attacker would write it into a spectrum header, an agent's
answer, a comment or a name. Each one that runs sets `window.__xss` (or loads a remote image), so a
page that shows them all and still has `window.__xss` undefined ran none. Reused by the sanitizer
tests and by the browser tests, so a later change re-runs every attack."""
from __future__ import annotations

SCRIPT_PAYLOADS = [
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 2">',
    "[details](javascript:window.__xss=3)",
    '<svg onload="window.__xss = 4"></svg>',
    '<a href="javascript:window.__xss=5">click</a>',
    "<iframe srcdoc=\"<script>parent.__xss = 6</script>\"></iframe>",
    '"><script>window.__xss = 7</script>',
    "<details open ontoggle=\"window.__xss = 8\">",
    "<math><mtext><table><mglyph><style><img src=x onerror=\"window.__xss=9\">",
    '<a href="&#106;avascript:window.__xss=10">entity</a>',
    "![x](javascript:window.__xss=11)",
    "<body onload=\"window.__xss = 12\">",
    "<style>@import 'https://evil.example/x.css';</style>",
    "<img src=\"https://evil.example/beacon.png\">",
    "![beacon](https://evil.example/beacon.png)",
    "`<script>` in code is text; <scr<script>ipt>window.__xss = 13</script>",
]

ALL = "\n\n".join(SCRIPT_PAYLOADS)


def header_bomb(fits_bytes: bytes, cards: int, key: str = "HISTORY") -> bytes:
    """`fits_bytes` (a real uncompressed FITS file) with `cards` more `key` cards in its primary header,
    as the attack wrote them (150,000 HISTORY cards: a 12 MB header), the header padded to its blocks."""
    block, card_len = 2880, 80
    pos = 0
    while fits_bytes[pos:pos + 8] != b"END     ":
        pos += card_len
    end_of_header = (pos // block + 1) * block
    kept = fits_bytes[:pos]
    filler = b"".join(f"{key:<8}{f'step {i} of a pipeline that never ends':<72}".encode("ascii")
                      for i in range(cards))
    header = kept + filler + b"END".ljust(card_len)
    header += b" " * (-len(header) % block)
    return header + fits_bytes[end_of_header:]


def table_bomb_steps(steps: int = 150, chars: int = 19_900) -> list[str]:
    """The Transcript bomb's step texts: `steps` Markdown tables of just under the per-step Markdown cap
    (reviewer.components.safe_text.MARKDOWN_MAX_CHARS), ~3 MB in all, as a chat import carried them."""
    rows = ["| row | value | note |", "|---|---|---|"]
    while sum(len(r) + 1 for r in rows) < chars:
        rows.append(f"| {len(rows)} | {len(rows) * 7} | cell {len(rows)} |")
    table = "\n".join(rows)[:chars]
    return [f"Step {i}: the table I measured\n\n{table}" for i in range(steps)]
