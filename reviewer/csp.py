"""A Content-Security-Policy for the served pages. Model-written text reaches the page through Panel/Bokeh widgets; it is
escaped (reviewer/components/safe_text.py), and the CSP is the second line: HTML inserted into the DOM
after the page loaded (`<img src=x onerror=...>`, a `javascript:` link) runs nothing. Bokeh's page
itself needs inline `<script>` blocks (the embed script carries the session token, so it differs on
every request), and `script-src 'unsafe-inline'` would also allow every inline handler. Instead each
page gets a fresh nonce: every `<script>` tag the server wrote carries it, and script-src allows it (a
nonce makes browsers ignore 'unsafe-inline', so handlers are blocked). Panel's FastList template has
a few handler attributes of its own (`onclick="closeNav()"` and its like): their exact texts are
allowed by hash under 'unsafe-hashes' (the same text injected later only calls the same template
function). es-module-shims (Panel's JSComponent modules, our keyboard shortcuts) finds the nonce on
the page's scripts and gives it to the feature-detection script it runs in an iframe. 'unsafe-eval'
and blob: stay allowed: Bokeh's CustomJS callbacks compile code with `new Function`, and
es-module-shims loads modules from blob: URLs; neither lets injected markup run anything. The HTML
the server renders is trusted: it holds no model text (document contents arrive as JSON over the
websocket).

`specreview serve` builds its Bokeh server with the transform (tornado's `transforms` argument).
`panel serve reviewer` offers no hook for response headers, so there `on_server_loaded` finds the
server's tornado Application (reviewer/server_app.py) and adds the transform to it; if it cannot,
the app serves no review page (fail closed). The transform sees each finished response's headers and
body, and rewrites `text/html` ones only.
"""
from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets

from tornado.web import Application, OutputTransform

_SCRIPT_OPEN_RE = re.compile(rb"<script\b", re.I)
_SCRIPT_CLOSE_RE = re.compile(rb"</script", re.I)
_TAG_RE = re.compile(rb"<[A-Za-z][^>]*>", re.S)
_HANDLER_RE = re.compile(rb"""\son[a-z]+\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
# Styles stay as the browser's default: Bokeh styles elements inline and draws into canvases. Images
# come from this server or are inline (data:, blob:): a remote image in untrusted text loads nothing
# (no beacon); fonts likewise. Scripts connect (fetch, XHR, websockets, beacons) to this server only:
# 'self' also matches the page's own host over ws:/wss: (an http page's ws:, an https page's wss:), as
# CSP Level 3 says, and that is Bokeh's websocket (tests/ui/test_csp_browser.py: the app under it in
# Chromium); blob: too, since es-module-shims fetches the modules it rewrote from blob: URLs (the
# page's own objects: nothing leaves the browser). A form posts to this server only (the /login form
# posts to itself; injected markup cannot send a form, or a password manager's fill, elsewhere). No
# other site may frame the page (clickjacking of the verdict buttons).
CSP_FIXED = ("object-src 'none'; base-uri 'self'; img-src 'self' data: blob:; font-src 'self' data:; "
             "connect-src 'self' blob:; form-action 'self'; frame-ancestors 'self'")


class _Installed:
    """Whether this server process must serve its pages with the CSP, and whether it does: the app
    refuses to draw a review page when one is required and missing (fail closed)."""

    required = False
    installed = False


def require_csp() -> None:
    _Installed.required = True


def server_built_with_csp() -> None:
    """The server was built with ContentSecurityPolicy among its transforms (`specreview serve`)."""
    _Installed.installed = True


def csp_missing() -> bool:
    return _Installed.required and not _Installed.installed


def _sha256(data: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode("ascii") + "'"


def with_csp(page: bytes, nonce: str | None = None) -> tuple[bytes, str]:
    """(page with `nonce` on every script tag, its Content-Security-Policy): see the module docstring.
    Script contents are left as they are (a `<script` inside one is text, not a tag)."""
    nonce = nonce or secrets.token_urlsafe(18)
    attr = f' nonce="{nonce}"'.encode("ascii")
    out, markup, pos = [], [], 0
    while (m := _SCRIPT_OPEN_RE.search(page, pos)) is not None:
        markup.append(page[pos:m.start()])
        close = _SCRIPT_CLOSE_RE.search(page, m.end())
        end = len(page) if close is None else close.end()
        out += [page[pos:m.end()], attr, page[m.end():end]]
        pos = end
    out.append(page[pos:])
    markup.append(page[pos:])
    handlers = []
    for tag in _TAG_RE.findall(b"".join(markup)):  # handler attributes of the server's own tags
        for h in _HANDLER_RE.finditer(tag):
            value = (h.group(1) if h.group(1) is not None else h.group(2)).decode("utf-8", "replace")
            handlers.append(_sha256(html.unescape(value).encode("utf-8")))
    sources = ["'self'", f"'nonce-{nonce}'", "'unsafe-eval'", "blob:", "'report-sample'"]
    if handlers:
        sources += ["'unsafe-hashes'", *dict.fromkeys(handlers)]
    return b"".join(out), f"script-src {' '.join(sources)}; {CSP_FIXED}"


class ContentSecurityPolicy(OutputTransform):
    """Adds a nonce and the Content-Security-Policy header to a finished text/html response (a page
    written in several flushes is left alone: its later scripts are not known when the headers go)."""

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if finishing and headers.get("Content-Type", "").startswith("text/html") and \
                "Content-Security-Policy" not in headers:
            chunk, headers["Content-Security-Policy"] = with_csp(chunk)
            if "Content-Length" in headers:
                headers["Content-Length"] = str(len(chunk))
        return status_code, headers, chunk


def install_csp(app: Application) -> None:
    """Add ContentSecurityPolicy to a tornado Application (first in its transforms, so that it reads
    the page before a compressing transform gzips it)."""
    if ContentSecurityPolicy not in app.transforms:
        app.transforms.insert(0, ContentSecurityPolicy)
    _Installed.installed = True
