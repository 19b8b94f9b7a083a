"""The Content-Security-Policy rewrite of served pages (reviewer/csp.py), without a browser."""
import base64
import hashlib

from tornado.httputil import HTTPHeaders

from reviewer.csp import ContentSecurityPolicy, with_csp

PAGE = (b'<html><head><script src="static/bokeh.min.js"></script>'
        b'<script type="text/javascript">const s = "<script>not a tag";</script></head>'
        b'<body><span onclick="closeNav()" id="b">=</span><span onclick="go(&quot;x&quot;)">-</span>'
        b'<SCRIPT type="esms-options">{"shimMode": true}</SCRIPT></body></html>')


def sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_every_script_tag_gets_the_nonce_and_nothing_else_changes():
    page, policy = with_csp(PAGE, "N0nce")
    assert page.count(b'nonce="N0nce"') == 3
    assert b'"<script>not a tag"' in page  # text inside a script is not a tag
    assert page.replace(b' nonce="N0nce"', b"") == PAGE
    script_src = policy.split(";")[0].split()
    assert script_src[0] == "script-src" and "'nonce-N0nce'" in script_src
    assert "'unsafe-inline'" not in script_src
    # the page's own handlers, by the hash of their text (entities decoded, as the browser hashes it)
    assert script_src.index("'unsafe-hashes'") < script_src.index(sha("closeNav()"))
    assert sha('go("x")') in script_src
    assert "object-src 'none'" in policy


def test_no_handlers_no_unsafe_hashes_and_a_fresh_nonce_each_time():
    (_, first), (_, second) = with_csp(b"<html><script>1</script></html>"), with_csp(b"<html></html>")
    assert "'unsafe-hashes'" not in first
    assert first.split("'nonce-")[1].split("'")[0] != second.split("'nonce-")[1].split("'")[0]


def test_transform_rewrites_finished_html_only():
    def run(content_type, finishing=True):
        headers = HTTPHeaders({"Content-Type": content_type, "Content-Length": str(len(PAGE))})
        _, headers, body = ContentSecurityPolicy(None).transform_first_chunk(200, headers, PAGE, finishing)
        return headers, body

    headers, body = run("text/html")
    assert "'nonce-" in headers["Content-Security-Policy"] and b"nonce=" in body
    assert headers["Content-Length"] == str(len(body))
    for content_type, finishing in (("application/json", True), ("text/html", False)):
        headers, body = run(content_type, finishing)
        assert "Content-Security-Policy" not in headers and body == PAGE


def directives(policy: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}


def test_connections_forms_and_fonts_stay_on_this_server():
    """Issue 45, item 6: no connect-src, form-action or font-src. Injected markup or script could send
    what the page shows (fetch, a beacon, a websocket) or a form (the login's password) elsewhere."""
    policy = directives(with_csp(PAGE, "N0nce")[1])
    # Bokeh's websocket: 'self' matches ws:/wss: to this host; blob: is es-module-shims' own modules
    assert policy["connect-src"] == ["'self'", "blob:"]
    assert policy["form-action"] == ["'self'"]  # /login posts to itself
    assert policy["font-src"] == ["'self'", "data:"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'self'"]
