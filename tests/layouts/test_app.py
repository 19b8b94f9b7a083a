"""The page holds back background work no reviewer waits for while it is built (issue 48, item 3):
served, until its browser has shown it or its session ends; outside a server, only while it is made."""
from __future__ import annotations

import panel as pn
from bokeh.client import pull_session
from databases import own_copy
from served_app import free_port, listening, wait_until

from layouts.app import create_app
from reviewer.services import background


def test_a_page_made_outside_a_server_holds_nothing_back(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    create_app(db)
    assert background.pages_building() == 0


def test_a_served_page_holds_background_work_until_its_session_ends_when_no_browser_shows_it(demo_template, tmp_path):
    """Bokeh's own client opens the session and never says the page is shown (no browser): the page's
    hold lasts until the session ends (a browser's document_ready ends it sooner: bench_scale.py)."""
    db = own_copy(demo_template, tmp_path)
    port = free_port()
    server = pn.serve({"reviewer": lambda: create_app(db)}, port=port, address="127.0.0.1", threaded=True,
                      show=False, start=True, websocket_origin=[f"127.0.0.1:{port}"], check_unused_sessions=200,
                      unused_session_lifetime=200)
    try:
        assert wait_until(lambda: listening(port))
        session = pull_session(url=f"http://127.0.0.1:{port}/reviewer", arguments={"reviewer": "hold"})
        assert background.pages_building() == 1
        session.close()
        assert wait_until(lambda: background.pages_building() == 0), "the page's hold outlived its session"
    finally:
        server.stop()


def test_the_review_page_shows_the_servers_work_with_the_busy_light(demo_template, tmp_path):
    """Panel's LoadingSpinner changes its css_classes as the server begins and ends each key, and BokehJS lays
    the whole page out again for that (reviewer.components.panes.BusyLight changes its styles only)."""
    from reviewer.components.panes import BusyLight

    db = own_copy(demo_template, tmp_path)
    assert isinstance(create_app(db).busy_indicator, BusyLight)
