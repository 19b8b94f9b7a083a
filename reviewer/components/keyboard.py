"""Global keyboard shortcuts: a tiny JSComponent that forwards key presses to Python.

Neither Bokeh nor Panel has global key bindings. This listens on `document`, ignores keys typed
into inputs, text areas, selects and contentEditable elements (so typing a comment never fires an
action), and sends the key to `_handle_msg`, which sets `last_key` and calls the handler for it.
"""
from __future__ import annotations

import panel as pn
import param
from panel.custom import JSComponent

# The documented key map (README and the `?` help overlay show this same table).
KEY_MAP = [
    ("n", "next item in the queue"),
    ("b", "previous item in the queue"),
    ("j / →", "next step"),
    ("k / ←", "previous step"),
    ("0-5", "rubric score"),
    ("a", "approve"),
    ("o", "override"),
    ("r", "reject"),
    ("u", "undo my last verdict on the item on screen"),
    ("+ / -", "zoom the spectrum in / out"),
    ("?", "show / hide this help"),
]
ALIASES = {"ArrowRight": "j", "ArrowDown": "j", "ArrowLeft": "k", "ArrowUp": "k"}


class Keyboard(JSComponent):
    """Forwards single key presses (no Ctrl/Alt/Meta) outside text inputs to Python handlers."""

    last_key = param.String(default="", doc="the last key received (after aliases)")
    presses = param.Integer(default=0, doc="count of keys received; lets tests wait for delivery")

    _esm = """
    const IGNORED = new Set(["INPUT", "TEXTAREA", "SELECT"]);
    function typingTarget(ev) {
      const path = ev.composedPath ? ev.composedPath() : [ev.target];
      return path.some(el => el && el.tagName && (IGNORED.has(el.tagName) || el.isContentEditable));
    }
    export function render({ model, el }) {
      const onKey = (ev) => {
        if (ev.ctrlKey || ev.altKey || ev.metaKey || typingTarget(ev)) return;
        model.send_msg({ key: ev.key });
      };
      document.addEventListener("keydown", onKey);
      model.on("remove", () => document.removeEventListener("keydown", onKey));
      const marker = document.createElement("span");
      marker.className = "sr-keyboard";
      marker.style.display = "none";
      return marker;
    }
    """

    def __init__(self, handlers: dict | None = None, **params):
        super().__init__(**params)
        self._handlers = dict(handlers or {})

    def on(self, key: str, handler) -> None:
        self._handlers[key] = handler

    def press(self, key: str) -> None:
        """Act on a key as if it had been pressed (used by the JS side and by tests)."""
        key = ALIASES.get(key, key)
        # one patch message for everything a key changes: the browser lays the page out once, not
        # once per changed pane (an `n` changes some twenty models)
        with pn.io.hold():
            self.last_key = key
            self.presses += 1
            handler = self._handlers.get(key)
            if handler is not None:
                handler()

    def _handle_msg(self, msg) -> None:
        key = msg.get("key") if isinstance(msg, dict) else None
        if isinstance(key, str) and len(key) <= 12:
            self.press(key)
