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


def markdown_to_safe_html(text: str | None) -> str:
    rendered = _md.render(text or "")
    return nh3.clean(rendered, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer nofollow")


def escape(text) -> str:
    return html.escape("" if text is None else str(text))
