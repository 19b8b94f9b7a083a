"""Finding 2 (no request imports what it names, secrets stay out of the log) and finding 10 (the CSP
is on every page, with frame-ancestors and images limited to this server), over real HTTP."""
from __future__ import annotations

import pytest
import requests
from served_app import ServedApp, seeded_db

from reviewer.server_app import component_module_allowed

# modules whose import has a side effect (argparse at import: SystemExit), or that are simply not
# part of the page
HOSTILE_MODULES = ["unittest.__main__", "reviewer.cli.__main__", "pip.__main__", "this", "antigravity",
                   "__main__", "os"]


def test_the_rule_allows_only_imported_modules_of_the_page():
    import panel.template  # noqa: F401 - imported: its components declare resources

    assert component_module_allowed("panel.template")
    for name in HOSTILE_MODULES:
        assert not component_module_allowed(name)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("routes")
    db, _ = seeded_db(tmp)
    served = ServedApp(db, tmp / "panel.log", ("--cookie-secret", "do-not-log-" + "z" * 40))
    yield served
    served.stop()


def test_a_request_naming_a_module_imports_nothing_and_the_server_keeps_serving(app):
    base = f"http://127.0.0.1:{app.port}/components"
    for name in HOSTILE_MODULES:
        answer = requests.get(f"{base}/{name}/x/y/z", timeout=60)
        assert answer.status_code in (403, 404), (name, answer.status_code)
        assert app.proc.poll() is None, f"the server stopped after /components/{name}"
    assert requests.get(app.url, timeout=120).status_code == 200
    assert "do-not-log-" not in app.log_text() and "usage:" not in app.log_text()


def test_every_page_carries_the_policy_with_frame_ancestors_and_local_images(app):
    page = requests.get(app.url + "?reviewer=ann", timeout=120)
    policy = page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'self'" in policy
    img = next(d for d in policy.split(";") if d.strip().startswith("img-src")).split()
    assert set(img[1:]) <= {"'self'", "data:", "blob:"}
    # issue 45, item 6: connections (fetch, beacons, the websocket), forms and fonts stay on this server
    found = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
    assert found.get("connect-src") == ["'self'", "blob:"] and found.get("form-action") == ["'self'"], policy
    assert found.get("font-src") == ["'self'", "data:"], policy
