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
    ("[ / ]", "nudge z by -50 / +50 km/s (Shift: 500 km/s); the nudged z is your candidate"),
    ("f", "full-window spectrum: fold / unfold both side panels"),
    ("v / Esc", "the agent's render at full size / close it"),
    ("?", "show / hide this help"),
]
ALIASES = {"ArrowRight": "j", "ArrowDown": "j", "ArrowLeft": "k", "ArrowUp": "k"}


# Below this window width the left panel (queue, metadata) starts folded; its button (top left) opens it.
NARROW_WINDOW_PX = 1600
WINDOW_MAX_PX = 4000  # the largest window size taken from the browser (an 8K screen at 2x is 3840 x 2160)


class Keyboard(JSComponent):
    """Forwards single key presses (no Ctrl/Alt/Meta) outside text inputs to Python handlers."""

    last_key = param.String(default="", doc="the last key received (after aliases)")
    presses = param.Integer(default=0, doc="count of keys received; lets tests wait for delivery")
    window_size = param.Tuple(default=(0, 0), length=2, doc="the browser window's (width, height) in px")
    full_window = param.Boolean(default=False, doc="the full-window spectrum mode (`f`): side panels folded")

    _esm = """
    const IGNORED = new Set(["INPUT", "TEXTAREA", "SELECT"]);
    function typingTarget(ev) {
      const path = ev.composedPath ? ev.composedPath() : [ev.target];
      return path.some(el => el && el.tagName && (IGNORED.has(el.tagName) || el.isContentEditable));
    }
    // The side panels are the page template's (its openNav / closeNav fold them). The window's size and
    // the full-window mode go to Python, which fits the plot's height to them.
    const PANELS = [["sidebar", "openNav", "closeNav"], ["right-sidebar", "openNavRight", "closeNavRight"]];
    let unfold = null;  // the panels the full-window mode folded, to unfold them again
    function fullWindow() {
      if (unfold === null) {
        unfold = PANELS.filter(([id]) => {
          const el = document.getElementById(id);
          return el && !el.classList.contains("hidden");
        });
        unfold.forEach(([, , close]) => window[close] && window[close]());
      } else {
        unfold.forEach(([, open]) => window[open] && window[open]());
        unfold = null;
      }
      return unfold !== null;
    }
    export function render({ model, el }) {
      // a window narrower than this starts with the queue and metadata folded: the spectrum gets the room
      if (window.innerWidth < NARROW_WINDOW_PX && window.closeNav && document.getElementById("sidebar")) window.closeNav();
      const sendWindow = () => model.send_msg({ window: [window.innerWidth, window.innerHeight] });
      let resizing = null;
      const onResize = () => { clearTimeout(resizing); resizing = setTimeout(sendWindow, 150); };
      const onKey = (ev) => {
        if (ev.ctrlKey || ev.altKey || ev.metaKey || typingTarget(ev)) return;
        if (ev.key === "f") model.send_msg({ full_window: fullWindow() });
        model.send_msg({ key: ev.key });
      };
      document.addEventListener("keydown", onKey);
      window.addEventListener("resize", onResize);
      model.on("remove", () => {
        document.removeEventListener("keydown", onKey);
        window.removeEventListener("resize", onResize);
      });
      setTimeout(sendWindow, 0);  // after the model is attached: a message sent while rendering is lost
      const marker = document.createElement("span");
      marker.className = "sr-keyboard";
      marker.style.display = "none";
      return marker;
    }
    """.replace("NARROW_WINDOW_PX", str(NARROW_WINDOW_PX))

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
        if not isinstance(msg, dict):
            return
        key, size, full = msg.get("key"), msg.get("window"), msg.get("full_window")
        if isinstance(key, str) and len(key) <= 12:
            self.press(key)
            return
        # what follows changes the document: under a hold, sent at its next tick with its lock (a message
        # is handled outside it, and Bokeh refuses a change made there)
        with pn.io.hold():
            if isinstance(size, list) and len(size) == 2 and all(type(v) is int for v in size):
                # a client's numbers: bounded to what a screen is, so no message makes a huge figure
                self.window_size = (min(max(size[0], 0), WINDOW_MAX_PX), min(max(size[1], 0), WINDOW_MAX_PX))
            elif isinstance(full, bool):
                self.full_window = full
