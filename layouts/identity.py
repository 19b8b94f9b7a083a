"""Who is reviewing: the authenticated login when the server has one, else a name the page is given.

Without one, the name is `?reviewer=`, else the one this browser typed before (kept in a cookie by
reviewer.components.address), else the page asks for it.

Under any auth provider (`--basic-auth`, `--oauth-provider`) the reviewer is the user of the signed
`user` cookie that Panel's login handler sets (signed with `--cookie-secret`, so a client cannot
forge it), younger than Panel's login expiry (`pn.config.oauth_expiry`) and not ended by a logout
(reviewer/logins.py). Panel's own `pn.state.user` is not used: it answers "guest" for any request that carries
a non-empty `is_guest` cookie, and a client sets that cookie itself. A session without a verified
user is refused; it never falls back to `?reviewer=`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import panel as pn

from reviewer.logins import login_user
from reviewer.services.labels import LabelRefused, check_name


@dataclass(frozen=True)
class Identity:
    reviewer: str  # "" while the page must ask
    login: bool  # bound to the server's authenticated user: it cannot change in the page
    problem: str = ""  # why a given name was not used
    refused: bool = False  # the server requires a login and this session has none: no review page
    # under a login: whether it still holds (not expired, not ended by a logout), asked at each write
    login_holds: Callable[[], bool] | None = None


def login_required() -> bool:
    return bool(pn.config.oauth_provider or pn.config.basic_auth)


def authenticated_user(cookies: dict, cookie_secret: str | None) -> str | None:
    """The user name in the signed `user` cookie, or None (absent, unsigned, tampered, older than the
    login expiry, or logged out)."""
    raw = (cookies or {}).get("user")
    return login_user(raw if isinstance(raw, str) else None, cookie_secret)


def session_identity(url_name: str, remembered: str = "") -> Identity:
    """The reviewer of this browser session (see the module docstring). `url_name`: `?reviewer=`;
    `remembered`: the name this browser typed before (a cookie, never read under a login), used when
    the address names nobody; one that is not a valid name is dropped without a word."""
    if login_required():
        user = authenticated_user(pn.state.cookies, pn.config.cookie_secret)
        if not user:
            return Identity("", True, "This server requires a login, and this session has none: "
                                      "log in again (open /login).", refused=True)
        cookie, secret = (pn.state.cookies or {}).get("user"), pn.config.cookie_secret
        try:
            return Identity(check_name(user, "login name"), True,
                            login_holds=lambda: authenticated_user({"user": cookie}, secret) == user)
        except LabelRefused as err:
            return Identity("", True, f"Your login cannot be used as a reviewer name: {err}", refused=True)
    if not url_name:
        try:
            return Identity(check_name(remembered), False) if remembered else Identity("", False)
        except LabelRefused:
            return Identity("", False)
    try:
        return Identity(check_name(url_name), False)
    except LabelRefused as err:
        return Identity("", False, f"?reviewer= was not used: {err}")
