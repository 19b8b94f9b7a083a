"""Logins that end: the signed `user` cookie Panel's login handler sets is accepted only while younger
than Panel's login expiry (`pn.config.oauth_expiry` days: `--oauth-expiry-days` for `panel serve`,
`PANEL_OAUTH_EXPIRY` for `specreview serve`; tornado's own default would take it for 31 days),
and not after its user logged out.

`/logout` (Panel's LogoutHandler, wrapped by reviewer/server_app.py) records, in this process, the
second its user logged out: every `user` cookie of that user signed before it is refused from then on
(every browser of that login, not only the one that logged out), and so is the very cookie the logout
request carried (a login in the same second as the logout stays valid). The record lives as long as
the server process, and each entry only as long as a cookie it refuses could still be valid: after a
restart with the same cookie secret, a cookie of a login ended before the restart is accepted again
until it expires (start without `--cookie-secret-file` to end every login at a restart).
"""
from __future__ import annotations

import threading
import time

from tornado.web import decode_signed_value

COOKIE = "user"
_lock = threading.Lock()
_logged_out_at: dict[str, int] = {}  # user -> the second of their last logout
_revoked: dict[str, float] = {}  # the cookie a logout carried -> when the record may be dropped


def expiry_days() -> float:
    """How long a login lasts, in days: Panel's `oauth_expiry` (1 by default)."""
    import panel as pn

    try:
        days = float(pn.config.oauth_expiry)
    except (TypeError, ValueError):
        days = 1.0
    return days if days > 0 else 1.0


def signed_at(raw: str) -> int | None:
    """The second a version-2 tornado signed value was signed (its second field), or None."""
    parts = raw.split("|")
    if len(parts) < 3 or parts[0] != "2":
        return None
    length, _, stamp = parts[2].partition(":")
    if not (length.isdigit() and stamp.isdigit() and int(length) == len(stamp)):
        return None
    return int(stamp)


def signed_login(raw: str | None, secret: str | bytes | None, max_age_days: float) -> tuple[str, int] | None:
    """(user, second signed) of a login cookie signed with `secret` at most `max_age_days` ago, else None."""
    if not raw or not secret or len(raw) > 4096:
        return None
    decoded = decode_signed_value(secret, COOKIE, raw, max_age_days=max_age_days, min_version=2)
    stamp = signed_at(raw)
    if not decoded or stamp is None:
        return None
    return decoded.decode("utf-8", "replace").strip(), stamp


def revoked(raw: str | None, secret: str | bytes | None) -> bool:
    """True when `raw`, a validly signed login cookie, was ended by a logout."""
    found = signed_login(raw, secret, max_age_days=expiry_days())
    if found is None:
        return False
    user, stamp = found
    with _lock:
        return raw in _revoked or stamp < _logged_out_at.get(user, -1)


def login_user(raw: str | None, secret: str | bytes | None) -> str | None:
    """The user of the login cookie `raw`, or None: absent, unsigned, tampered, older than the login
    expiry, or ended by a logout."""
    found = signed_login(raw, secret, max_age_days=expiry_days())
    if found is None or revoked(raw, secret):
        return None
    return found[0] or None


def log_out(raw: str | None, secret: str | bytes | None, now: float | None = None) -> str | None:
    """End the login of cookie `raw` and every earlier login of its user; the user, or None when `raw`
    is no valid login."""
    found = signed_login(raw, secret, max_age_days=expiry_days())
    if found is None:
        return None
    user = found[0]
    now = time.time() if now is None else now
    with _lock:
        _logged_out_at[user] = max(_logged_out_at.get(user, -1), int(now))
        _revoked[raw] = now + expiry_days() * 86400.0
        for cookie in [c for c, until in _revoked.items() if until < now]:
            del _revoked[cookie]
    return user
