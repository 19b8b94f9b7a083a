"""Global keyboard shortcuts: a tiny JSComponent that forwards key presses to Python.

Neither Bokeh nor Panel has global key bindings. This listens on `document`, ignores keys typed
into inputs, text areas, selects and contentEditable elements (so typing a comment never fires an
action), and sends the key to `_handle_msg`, which sets `last_key` and calls the handler for it.
"""
from __future__ import annotations

import panel as pn
import param
from panel.custom import JSComponent

from reviewer.activity import IDLE_S, REPORT_S

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
    ("Shift+Y / Shift+N", "first look (a campaign with one): my own answer YES / NO, before the agent's is shown"),
    ("c / p / x", "judge the step on screen: correct / partly / incorrect (failure-mode tags: the boxes under it)"),
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
    // Active time (reviewer.activity): counted while the page is visible, focused and in use (an input
    // within IDLE_MS); its running total goes to Python every REPORT_MS while it grows, with each key,
    // and when a pointer goes down (before a button's click reaches the server).
    function activeClock(onTick) {
      let total = 0, last = performance.now(), lastInput = last;
      const inUse = (now) => document.visibilityState === "visible" && document.hasFocus() && now - lastInput < IDLE_MS;
      const tick = () => {
        const now = performance.now();
        if (inUse(now)) total += now - last;
        last = now;
        onTick(Math.round(total));
        return Math.round(total);
      };
      const input = () => { tick(); lastInput = performance.now(); };
      return { tick, input };
    }
    export function render({ model, el }) {
      // a window narrower than this starts with the queue and metadata folded: the spectrum gets the room
      if (window.innerWidth < NARROW_WINDOW_PX && window.closeNav && document.getElementById("sidebar")) window.closeNav();
      const sendWindow = () => model.send_msg({ window: [window.innerWidth, window.innerHeight] });
      let resizing = null;
      const onResize = () => { clearTimeout(resizing); resizing = setTimeout(sendWindow, 150); };
      const marker = document.createElement("span");
      marker.className = "sr-keyboard";
      marker.style.display = "none";
      const clock = activeClock(total => { marker.dataset.activeMs = total; });
      let sent = -1;
      const report = () => {
        const total = clock.tick();
        if (total !== sent) { sent = total; model.send_msg({ active: total }); }
      };
      const onKey = (ev) => {
        clock.input();
        if (ev.ctrlKey || ev.altKey || ev.metaKey || typingTarget(ev)) return;
        if (ev.key === "f") model.send_msg({ full_window: fullWindow() });
        // the key carries the active total: one message, the time counted before the key acts
        sent = clock.tick();
        model.send_msg({ key: ev.key, active: sent });
      };
      const onPointerDown = () => { clock.input(); report(); };
      const onInput = () => clock.input();
      const onVisibility = () => clock.tick();
      document.addEventListener("keydown", onKey);
      document.addEventListener("pointerdown", onPointerDown, true);
      for (const kind of ["pointermove", "wheel"]) document.addEventListener(kind, onInput, { passive: true });
      document.addEventListener("visibilitychange", onVisibility);
      window.addEventListener("blur", onVisibility);
      window.addEventListener("focus", onVisibility);
      window.addEventListener("resize", onResize);
      const ticking = setInterval(() => clock.tick(), 1000);
      const reporting = setInterval(report, REPORT_MS);
      model.on("remove", () => {
        document.removeEventListener("keydown", onKey);
        document.removeEventListener("pointerdown", onPointerDown, true);
        for (const kind of ["pointermove", "wheel"]) document.removeEventListener(kind, onInput);
        document.removeEventListener("visibilitychange", onVisibility);
        window.removeEventListener("blur", onVisibility);
        window.removeEventListener("focus", onVisibility);
        window.removeEventListener("resize", onResize);
        clearInterval(ticking);
        clearInterval(reporting);
      });
      setTimeout(() => { sendWindow(); report(); }, 0);  // after the model is attached: a message sent while rendering is lost
      return marker;
    }
    """.replace("NARROW_WINDOW_PX", str(NARROW_WINDOW_PX)).replace("IDLE_MS", str(IDLE_S * 1000)).replace(
        "REPORT_MS", str(REPORT_S * 1000))

    def __init__(self, handlers: dict | None = None, **params):
        super().__init__(**params)
        self._handlers = dict(handlers or {})
        self._on_active = None

    def on_active(self, handler) -> None:
        """`handler(total_ms)` receives the page's running total of active milliseconds (reviewer.activity)."""
        self._on_active = handler

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
        key, size, full, active = msg.get("key"), msg.get("window"), msg.get("full_window"), msg.get("active")
        if "active" in msg and self._on_active is not None:  # no document change: the review state's, bounded there
            self._on_active(active)
        if isinstance(key, str) and len(key) <= 12:
            self.press(key)
            return
        if "active" in msg:  # a report of the active time alone
            return
        # what follows changes the document: under a hold, sent at its next tick with its lock (a message
        # is handled outside it, and Bokeh refuses a change made there)
        with pn.io.hold():
            if isinstance(size, list) and len(size) == 2 and all(type(v) is int for v in size):
                # a client's numbers: bounded to what a screen is, so no message makes a huge figure
                self.window_size = (min(max(size[0], 0), WINDOW_MAX_PX), min(max(size[1], 0), WINDOW_MAX_PX))
            elif isinstance(full, bool):
                self.full_window = full
