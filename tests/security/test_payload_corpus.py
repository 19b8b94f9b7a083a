"""Every payload of the corpus, through every function that turns untrusted text into page HTML:
parsed as a browser would, no element, attribute or URL that can run script or load from another
host survives (escaped text that merely reads like markup is fine)."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from security.payloads import ALL, SCRIPT_PAYLOADS

from reviewer.components.safe_text import escape, markdown_to_safe_html, plain_alert

FORBIDDEN_TAGS = {"script", "iframe", "svg", "math", "style", "body", "object", "embed", "link", "meta", "base"}


class LiveMarkup(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in FORBIDDEN_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            url = (value or "").strip().lower()
            if name.startswith("on"):
                self.found.append(f"{tag} {name}=")
            elif name == "srcdoc" or (name in ("href", "src", "action") and self.loads(tag, url)):
                self.found.append(f"{tag} {name}={url[:40]}")

    @staticmethod
    def loads(tag: str, url: str) -> bool:
        """A script URL anywhere, or a remote resource (a plain link to a web page is not a load)."""
        if url.startswith(("javascript:", "data:text/html")):
            return True
        return url.startswith(("http:", "https:", "//")) and tag != "a"


def live_markup(html: str) -> list[str]:
    parser = LiveMarkup()
    parser.feed(html)
    parser.close()
    return parser.found


def test_the_detector_sees_live_markup():
    assert live_markup('<img src=x onerror="1"><a href="&#106;avascript:x">a</a><script></script>') == [
        "img onerror=", "a href=javascript:x", "<script>"]
    assert live_markup("&lt;script&gt; &lt;img onerror=1&gt;") == []


@pytest.mark.parametrize("render", [markdown_to_safe_html, plain_alert, escape])
@pytest.mark.parametrize("payload", [*SCRIPT_PAYLOADS, ALL])
def test_no_payload_survives_as_markup(render, payload):
    assert live_markup(render(payload)) == [], payload
