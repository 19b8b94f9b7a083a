"""The tornado Application behind `panel serve reviewer`, and what `on_server_loaded` changes in it.

`panel serve` gives no reference to its Application, so it is looked up among live objects, once,
at server start. Besides the Content-Security-Policy (reviewer/csp.py), its websockets send small
messages at once: Bokeh writes each document patch as several websocket frames (a header, metadata,
the content), and with Nagle's algorithm on, a frame written while the previous one waits for its
acknowledgement is held back until it comes, which a browser delays by up to 40 ms (delayed ACK).
Measured in Chromium on the review screen: a step's text patch arrived 40 ms after its header in
about half of the `j` presses. Tornado documents `set_nodelay(True)` as the remedy.

Panel's component resource route (`/components/<module>/<class>/<attribute>/<path>`) imports the
module a request names; a module with a side effect at import (an `argparse` in a `__main__`, say)
then runs it, and `SystemExit` stops the server. `guard_component_route` lets that route answer only
for modules already imported from the packages the page is built of (importing one again runs
nothing), and 404 for every other name.

Page loads are limited per client (reviewer/page_limits.py): `limit_page_loads` wraps the routes that
build a session (Bokeh's SessionHandler subclasses: the page and its autoload script).
"""
from __future__ import annotations

import gc
import sys

from bokeh.server.views.session_handler import SessionHandler
from panel.io.server import ComponentResourceHandler
from tornado.web import Application, HTTPError
from tornado.websocket import WebSocketHandler

from reviewer.page_limits import PageLoadLimit

# the packages whose components the page declares resources for (stylesheets, templates, modules)
PAGE_PACKAGES = frozenset({"panel", "bokeh", "holoviews", "layouts", "reviewer"})


def tornado_application(application_context) -> Application | None:
    """The tornado Application serving `application_context` (None if there is none)."""
    for app in gc.get_objects():
        if isinstance(app, Application) and application_context in getattr(app, "applications", {}).values():
            return app
    return None


def _no_delay(handler: type[WebSocketHandler]) -> type[WebSocketHandler]:
    class NoDelay(handler):
        def open(self, *args, **kwargs):
            self.set_nodelay(True)
            return super().open(*args, **kwargs)

    NoDelay.__name__ = NoDelay.__qualname__ = f"NoDelay{handler.__name__}"
    NoDelay.no_delay = True
    return NoDelay


def send_small_messages_at_once(app: Application) -> int:
    """Make every websocket route of `app` turn Nagle's algorithm off on its connections; the number
    of routes changed."""
    changed = 0
    for rule in app.wildcard_router.rules:
        target = rule.target
        if isinstance(target, type) and issubclass(target, WebSocketHandler) and not getattr(target, "no_delay", False):
            rule.target = _no_delay(target)
            changed += 1
    return changed


def _limited(handler: type[SessionHandler], limit: PageLoadLimit) -> type[SessionHandler]:
    class Limited(handler):
        def prepare(self):
            self._page_client = None
            retry = limit.admit(self.request.remote_ip or "")
            if retry:  # answered here (an HTTPError would clear the Retry-After header)
                self.set_status(429)
                self.set_header("Retry-After", str(max(1, round(retry))))
                self.set_header("Content-Type", "text/plain; charset=utf-8")
                self.finish("Too many page loads from this address: try again in a few seconds.\n")
                return None
            self._page_client = self.request.remote_ip or ""
            return super().prepare()

        def on_finish(self):
            if self._page_client is not None:
                limit.done(self._page_client, self.request.request_time())
            return super().on_finish()

    Limited.__name__ = Limited.__qualname__ = f"Limited{handler.__name__}"
    Limited.page_limit = limit
    return Limited


def limit_page_loads(app: Application, limit: PageLoadLimit) -> int:
    """Put every session-building route of `app` under `limit`; the number of routes changed."""
    changed = 0
    for rule in app.wildcard_router.rules:
        target = rule.target
        if isinstance(target, type) and issubclass(target, SessionHandler) and not hasattr(target, "page_limit"):
            rule.target = _limited(target, limit)
            changed += 1
    return changed


def component_module_allowed(name: str) -> bool:
    """True when the component route may look `name` up: already imported, from PAGE_PACKAGES."""
    return name in sys.modules and name.split(".", 1)[0] in PAGE_PACKAGES


def guard_component_route() -> None:
    """Make Panel's component resource route refuse modules `component_module_allowed` does not allow
    (404, the answer for a module that does not exist). Once per process."""
    original = getattr(ComponentResourceHandler, "parse_url_path", None)
    if original is None:  # Panel changed the route's internals: refuse to serve rather than serve it open
        raise RuntimeError("panel.io.server.ComponentResourceHandler has no parse_url_path: the component route "
                           "cannot be restricted with this Panel version (pyproject.toml pins the tested range)")
    if getattr(original, "guarded", False):
        return

    def parse_url_path(self, path: str) -> str:
        if not component_module_allowed(path.split("/", 1)[0]):
            raise HTTPError(404, "Module not found")
        return original(self, path)

    parse_url_path.guarded = True
    ComponentResourceHandler.parse_url_path = parse_url_path
