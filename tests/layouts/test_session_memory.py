"""A closed browser session frees what its page held: the app is served in-process (Panel's server,
real HTTP and websocket), sessions are opened and closed with Bokeh's own client, and once the server
has destroyed them no ReviewState (nor the figures it reaches) is left alive. A strong reference from
a global registry (HoloViews' option trees, stream registry) kept every closed session alive before."""
from __future__ import annotations

import gc

import panel as pn
from bokeh.client import pull_session
from databases import own_copy
from served_app import free_port, listening, wait_until

from layouts.app import create_app
from reviewer.review_state import ReviewState


def alive_states(prefix: str = "mem") -> int:
    """ReviewStates alive of this test's pages (reviewers named `prefix`...): another test's state that a
    thread of its own still holds for a moment is not counted."""
    gc.collect()
    return sum(isinstance(o, ReviewState) and str(o.reviewer).startswith(prefix) for o in gc.get_objects())


def test_closed_sessions_leave_no_review_state_alive(demo_template, tmp_path):
    db = own_copy(demo_template, tmp_path)
    destroyed = []

    def app():
        pn.state.on_session_destroyed(lambda ctx: destroyed.append(ctx.id))
        return create_app(db)

    assert alive_states() == 0
    port = free_port()
    server = pn.serve({"reviewer": app}, port=port, address="127.0.0.1", threaded=True, show=False, start=True,
                      websocket_origin=[f"127.0.0.1:{port}"], check_unused_sessions=200, unused_session_lifetime=200)
    try:
        assert wait_until(lambda: listening(port))
        sessions = [pull_session(url=f"http://127.0.0.1:{port}/reviewer", arguments={"reviewer": f"mem{k}"}) for k in range(3)]
        assert alive_states() == 3  # each page made its review state
        for session in sessions:
            session.close()
        del sessions
        assert wait_until(lambda: len(destroyed) == 3), "the server never destroyed the closed sessions"
        assert wait_until(lambda: alive_states() == 0, timeout=10), f"{alive_states()} states kept"
    finally:
        server.stop()
