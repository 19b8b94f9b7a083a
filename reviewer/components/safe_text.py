"""Untrusted text (agent output, annotations) to safe HTML.

Markdown is rendered with raw HTML disabled, then the result is cleaned by nh3 (an allow-list
sanitizer): no scripts, no event-handler attributes, and links only to http(s) and mailto.
"""
from __future__ import annotations

import html

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
ALLOWED_TAGS = {"p", "br", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "h1", "h2", "h3",
                "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a", "hr", "span", "del"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "td": {"align"}, "th": {"align"}}


# markdown-it's link and emphasis parsing grows faster than linearly on some inputs (1 MB of "[" or
# "![" took ~11 s, holding the server's thread; 5,000 "[" take ~0.2 s). Agent text past these bounds
# is shown as plain text: all of it, readable, in bounded time. Measured: 20,000 characters with 200
# "[" render in ~10 ms.
MARKDOWN_MAX_CHARS = 20_000
MARKDOWN_MAX_BRACKETS = 200
MARKDOWN_MAX_EMPHASIS = 2_000


def markdown_is_bounded(text: str) -> bool:
    return (len(text) <= MARKDOWN_MAX_CHARS and text.count("[") <= MARKDOWN_MAX_BRACKETS
            and text.count("*") + text.count("_") <= MARKDOWN_MAX_EMPHASIS)


def markdown_to_safe_html(text: str | None) -> str:
    text = text or ""
    if not markdown_is_bounded(text):
        return f'<pre class="sr-plain-text" style="white-space:pre-wrap;overflow-wrap:anywhere">{escape(text)}</pre>'
    rendered = _md.render(text)
    return nh3.clean(rendered, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer nofollow")


def escape(text) -> str:
    return html.escape("" if text is None else str(text))


_ALERT_STYLE = {"danger": "background:#f8d7da;color:#58151c;border:1px solid #f1aeb5",
                "warning": "background:#fff3cd;color:#664d03;border:1px solid #ffe69c"}


def plain_alert(text, kind: str = "danger") -> str:
    """A message as an alert box, as plain text: no Markdown (a link or an image in a message taken
    from a file or a request stays text), no markup."""
    if not text:
        return ""
    return (f'<div class="sr-alert sr-alert-{kind}" role="alert" style="{_ALERT_STYLE[kind]};padding:8px 12px;'
            f'border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere">{escape(text)}</div>')
