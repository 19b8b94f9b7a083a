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

A session can also be built over the websocket: Bokeh builds one for any session id a token names that
has none yet, and its tokens are unsigned unless the server is given a secret. `sign_sessions` turns
Bokeh's own signing on with a secret made for this process (random, never written anywhere; the one
configured with BOKEH_SECRET_KEY / BOKEH_SIGN_SESSIONS is kept): only session ids and tokens the page
route issued open a session, in `panel serve reviewer` (which has no secret of its own) as in
`specreview serve`, and without a registry of issued ids to bound or forget. Signing is chosen over
such a registry because Bokeh checks it itself on every route that takes a token or a session id (the
page's `bokeh-token` / `bokeh-session-id` too), and a restarted server refuses the old tokens.
`guard_websockets` then refuses a Sec-WebSocket-Protocol header (which carries the token) longer than
MAX_TOKEN_CHARS before anything decodes it (431), and charges a websocket that builds a session (a
signed token whose session is gone, e.g. a page reconnecting after the server discarded it) to the
same per-client budget as page loads: refused at once (close 1013) when the budget is spent.

Logins end (reviewer/logins.py): `end_logins_at_logout` wraps Panel's `/logout` so that the login it
ends is recorded (its cookie then opens no page, no websocket and no session) and the websockets of
that user's open sessions are closed (they save nothing more); the page and websocket routes answer
a logged-out cookie as they answer no login.
"""
from __future__ import annotations

import gc
import logging
import secrets
import sys
import time

from bokeh.protocol.exceptions import ProtocolError
from bokeh.server.views.session_handler import SessionHandler
from bokeh.server.views.ws import WSHandler
from bokeh.util.token import check_token_signature, get_session_id, get_token_payload
from panel.auth import LogoutHandler
from panel.io.server import ComponentResourceHandler
from tornado.web import Application, HTTPError, RequestHandler
from tornado.websocket import WebSocketHandler

from reviewer import logins
from reviewer.page_limits import PageLoadLimit

log = logging.getLogger("specreview.app")

# The longest Sec-WebSocket-Protocol header (`bokeh, <token>`) or `bokeh-token` argument accepted. A
# page's token holds the page request's headers and cookies, compressed: about 1-3 KB from a browser.
MAX_TOKEN_CHARS = 16 * 1024
# Connections one session may hold at once. Each is sent the session's whole document when it opens
# (serialized on the event loop); a page holds one, and a second while it reconnects.
MAX_CONNECTIONS_PER_SESSION = 2

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


def _swap_routes(app: Application, base: type, mark: str, wrap) -> int:
    """Replace every route handler of `app` that subclasses `base` and is not yet marked `mark` by
    `wrap(handler)` (which sets `mark` on the class it makes); the number of routes changed."""
    changed = 0
    for rule in app.wildcard_router.rules:
        target = rule.target
        if isinstance(target, type) and issubclass(target, base) and not hasattr(target, mark):
            rule.target = wrap(target)
            changed += 1
    return changed


def send_small_messages_at_once(app: Application) -> int:
    """Make every websocket route of `app` turn Nagle's algorithm off on its connections; the number
    of routes changed."""
    return _swap_routes(app, WebSocketHandler, "no_delay", _no_delay)


class _LoggedOutRefused:
    """A route mixin: a request whose login cookie was ended by a logout has no current user (a page
    then redirects to the login form, a websocket is answered 403)."""

    @property
    def current_user(self):
        user = RequestHandler.current_user.fget(self)
        if user and logins.revoked(self.get_cookie(logins.COOKIE), self.application.settings.get("cookie_secret")):
            return None
        return user

    @current_user.setter
    def current_user(self, value) -> None:
        self._current_user = value


def _refuse(handler: RequestHandler, status: int, message: str, retry: float = 0.0) -> None:
    """Answer `handler`'s request here (an HTTPError would clear the Retry-After header)."""
    handler.set_status(status)
    if retry:
        handler.set_header("Retry-After", str(max(1, round(retry))))
    handler.set_header("Content-Type", "text/plain; charset=utf-8")
    handler.finish(message)


def _limited(handler: type[SessionHandler], limit: PageLoadLimit) -> type[SessionHandler]:
    class Limited(_LoggedOutRefused, handler):
        def prepare(self):
            self._page_client = None
            if len(self.get_query_argument("bokeh-token", "")) > MAX_TOKEN_CHARS:
                return _refuse(self, 400, "The session token is too long.\n")
            retry = limit.admit(self.request.remote_ip or "")
            if retry:
                return _refuse(self, 429, "Too many page loads from this address: try again in a few seconds.\n", retry)
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
    return _swap_routes(app, SessionHandler, "page_limit", lambda handler: _limited(handler, limit))


def sign_sessions(app: Application) -> bool:
    """Make `app` (a BokehTornado) issue and accept only signed session ids and tokens; True when it
    was changed, False when it signed them already (with the secret configured for Bokeh)."""
    if app.sign_sessions and app.secret_key:
        return False
    app._secret_key = secrets.token_urlsafe(32).encode()  # BokehTornado reads both on every use
    app._sign_sessions = True
    if not (app.sign_sessions and app.secret_key):  # Bokeh renamed them: refuse to serve unsigned sessions
        raise RuntimeError("bokeh's BokehTornado no longer reads _secret_key / _sign_sessions: sessions cannot be "
                           "signed with this Bokeh version (pyproject.toml pins the tested range)")
    return True


def _token_opens(app: Application, token: str, application_context) -> str:
    """What opening `token` does: "forged" (not a token, or not signed by `app`: refused, nothing
    built), "builds" (its session does not exist: opening it builds one), "joins" (an open session) or
    "crowded" (an open session with MAX_CONNECTIONS_PER_SESSION connections already: refused)."""
    try:
        session_id = get_session_id(token)
        if not check_token_signature(token, secret_key=app.secret_key, signed=app.sign_sessions):
            return "forged"
        session = application_context.get_session(session_id)
    except ProtocolError:
        return "builds"
    except Exception:
        return "forged"
    # each connection to a session is sent its whole document: a page needs one (two while it reconnects)
    return "joins" if session.connection_count < MAX_CONNECTIONS_PER_SESSION else "crowded"


def _guarded(handler: type[WSHandler], limit: PageLoadLimit) -> type[WSHandler]:
    class Guarded(_LoggedOutRefused, handler):
        async def prepare(self):
            self._charge = None
            if len(self.request.headers.get("Sec-WebSocket-Protocol", "")) > MAX_TOKEN_CHARS:
                return _refuse(self, 431, "The session token is too long.\n")
            prepared = super().prepare()
            if prepared is not None:
                await prepared
            return None

        def open(self, *args, **kwargs):
            token = getattr(self, "_token", None)
            opens = _token_opens(self.application, token, self.application_context) if token else ""
            if opens == "forged":  # refused here: Bokeh would log a traceback for each
                log.warning("refused a websocket session token not signed by this server (from %s)",
                            self.request.remote_ip)
                self.close(1008, "Invalid session token")
                return None
            if opens == "crowded":
                self.close(1008, "This page is already open in another connection")
                return None
            if opens == "builds":
                client = self.request.remote_ip or ""
                retry = limit.admit(client)
                if retry:
                    self.close(1013, f"Too many sessions from this address: try again in {max(1, round(retry))} s")
                    return None
                self._charge = (client, time.monotonic())
            try:
                return super().open(*args, **kwargs)
            except BaseException:
                self._settle()
                raise

        async def _async_open(self, token):
            try:
                return await super()._async_open(token)
            finally:
                self._settle()

        def _settle(self) -> None:
            charge, self._charge = getattr(self, "_charge", None), None
            if charge is not None:
                limit.done(charge[0], time.monotonic() - charge[1])

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{handler.__name__}"
    Guarded.session_guard = limit
    return Guarded


def guard_websockets(app: Application, limit: PageLoadLimit) -> int:
    """Bound the token and charge session building on every Bokeh websocket route of `app` (see the
    module docstring); the number of routes changed."""
    return _swap_routes(app, WSHandler, "session_guard", lambda handler: _guarded(handler, limit))


def _session_login(session, secret) -> str | None:
    try:
        cookies = get_token_payload(session.token).get("cookies") or {}
    except Exception:
        return None
    raw = cookies.get(logins.COOKIE)
    found = logins.signed_login(raw if isinstance(raw, str) else None, secret, max_age_days=3650)
    return found[0] if found else None


def close_sessions_of(app: Application, user: str) -> int:
    """Close the websockets of every open session `user` logged in to (they save nothing more) and let
    Bokeh discard the sessions; the number of sessions."""
    secret = app.settings.get("cookie_secret")
    closed = 0
    for context in list(getattr(app, "applications", {}).values()):
        for session in list(context.sessions):
            if _session_login(session, secret) != user:
                continue
            session.request_expiration()
            for connection in list(getattr(session, "_subscribed_connections", ())):
                connection._socket.close(1008, "Logged out")
            closed += 1
    return closed


def _ending_logins(handler: type[LogoutHandler]) -> type[LogoutHandler]:
    class EndingLogins(handler):
        def get(self, *args, **kwargs):
            user = logins.log_out(self.get_cookie(logins.COOKIE), self.application.settings.get("cookie_secret"))
            if user:
                closed = close_sessions_of(self.application, user)
                log.warning("%s logged out: their login ended, %d open session(s) closed", user, closed)
            return super().get(*args, **kwargs)

    EndingLogins.__name__ = EndingLogins.__qualname__ = f"EndingLogins{handler.__name__}"
    EndingLogins.ends_logins = True
    return EndingLogins


def end_logins_at_logout(app: Application) -> int:
    """Make every Panel logout route of `app` end the login server-side (see the module docstring);
    the number of routes changed."""
    return _swap_routes(app, LogoutHandler, "ends_logins", _ending_logins)


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
