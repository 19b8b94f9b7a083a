"""Finding 8: agent text that makes Markdown parsing slow (1 MB of "[" or "![") is shown as plain
text, whole and escaped; ordinary agent text is still rendered as Markdown. Finding 9 (alerts): a
message with Markdown in it is shown as text (no live link, no remote image)."""
from __future__ import annotations

import pytest

from reviewer.components.safe_text import markdown_is_bounded, markdown_to_safe_html, plain_alert


@pytest.mark.parametrize("hostile", ["[" * 1_000_000, "![" * 500_000, "*a" * 500_000, "[a](" * 300,
                                     "x" * 30_000 + "**bold**"])
def test_pathological_text_is_shown_as_plain_text(hostile):
    assert not markdown_is_bounded(hostile)
    html = markdown_to_safe_html(hostile + "<script>alert(1)</script>")
    assert html.startswith('<pre class="sr-plain-text"') and "<script>" not in html
    assert "&lt;script&gt;" in html


def test_ordinary_agent_text_is_still_markdown():
    text = "H-alpha is **strong** at [6563 A](https://example.org); see `EW = 38 A`.\n\n- one\n- two"
    assert markdown_is_bounded(text)
    html = markdown_to_safe_html(text)
    assert "<strong>strong</strong>" in html and "<li>one</li>" in html and "<code>" in html


def test_alerts_are_plain_text():
    html = plain_alert("bad file [click](http://evil.example) ![x](http://evil.example/beacon.png) <b>b</b>")
    assert "<a " not in html and "<img" not in html and "<b>" not in html
    assert "[click](http://evil.example)" in html
