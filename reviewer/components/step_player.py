"""Play a trajectory's steps: first / previous / play-pause / next / last and speed, each button with a
title that says what it does.

Playback is the browser's timer, but every move is a message that names the item it was made for
(`item_key`): the server moves only the item on screen, so a tick sent just before another item
opened never moves the new item. A new item stops playback (`playing` is set False with it).
"""
from __future__ import annotations

from typing import ClassVar

import param
from panel.custom import JSComponent

# (action, glyph, title); the play button's title and glyph follow `playing`
BUTTONS = (
    ("slower", "−", "Slower: a longer pause between steps while playing"),
    ("first", "«", "First step"),
    ("previous", "‹", "Previous step (k)"),
    ("play", "▶", "Play the steps one after another (stops at the last step, or when another item opens)"),
    ("next", "›", "Next step (j)"),
    ("last", "»", "Last step"),
    ("faster", "+", "Faster: a shorter pause between steps while playing"),
)
PAUSE_TITLE = "Pause playback"
MOVES = ("first", "previous", "next", "last")
INTERVAL_MS = (300, 10_000)  # the speed buttons stay within these pauses

PLAYER_CSS = """
.sr-player-buttons { display: flex; gap: 3px; align-items: center; height: 100%; }
.sr-player-buttons button { min-width: 30px; height: 26px; padding: 0 6px; font-size: 15px; line-height: 20px;
                            font-family: inherit; cursor: pointer; border: 1px solid #ccc; border-radius: 3px;
                            background: #fff; color: #333; }
.sr-player-buttons button:hover:enabled { background: #eef2f8; }
.sr-player-buttons button:disabled { opacity: 0.45; cursor: default; }
.sr-player-buttons button[aria-pressed="true"] { background: #1f4e9c; border-color: #1f4e9c; color: #fff; }
.sr-player-speed { font-size: 11px; color: #666; margin-left: 4px; white-space: nowrap; }
"""


class StepPlayer(JSComponent):
    """`value`: the step on screen (set by the server); `end`: the last step; `item_key`: the item the
    moves are for; `playing`: set by the play button, cleared at the last step and on a new item."""

    value = param.Integer(default=0)
    end = param.Integer(default=0)
    playing = param.Boolean(default=False)
    inactive = param.Boolean(default=False, doc="fewer than two steps: nothing to play or move to")
    interval = param.Integer(default=1200, bounds=INTERVAL_MS, doc="pause between steps while playing (ms)")
    item_key = param.String(default="", doc="the item on screen: a move sent for another is dropped")
    buttons = param.List(default=[list(b) for b in BUTTONS], constant=True)
    pause_title = param.String(default=PAUSE_TITLE, constant=True)

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "sr-player-buttons";
      const speed = document.createElement("span");
      speed.className = "sr-player-speed";
      let timer = null;
      const move = (action) => model.send_msg({ action, key: model.item_key });
      const click = (action) => {
        if (action === "play") model.playing = !model.playing;
        else if (action === "slower") model.interval = Math.min(Math.round(model.interval * 1.5), 10000);
        else if (action === "faster") model.interval = Math.max(Math.round(model.interval / 1.5), 300);
        else move(action);
      };
      const buttons = {};
      for (const [action, glyph, title] of model.buttons) {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "sr-player-" + action;
        button.textContent = glyph;
        button.title = title;
        button.setAttribute("aria-label", title);
        button.addEventListener("click", () => click(action));
        buttons[action] = button;
        box.appendChild(button);
      }
      box.appendChild(speed);
      const playTitle = buttons.play.title;
      const tick = () => {
        if (model.value >= model.end) { model.playing = false; return; }
        move("next");
      };
      const update = () => {
        clearInterval(timer);
        timer = null;
        const on = model.playing && !model.inactive;
        if (on) timer = setInterval(tick, model.interval);
        const play = buttons.play;
        play.textContent = on ? "❚❚" : "▶";
        play.title = on ? model.pause_title : playTitle;
        play.setAttribute("aria-label", play.title);
        play.setAttribute("aria-pressed", String(on));
        for (const button of Object.values(buttons)) button.disabled = model.inactive;
        speed.textContent = (model.interval / 1000).toFixed(1) + " s/step";
      };
      model.on(["playing", "interval", "inactive"], update);
      model.on("remove", () => clearInterval(timer));
      update();
      return box;
    }
    """
    _stylesheets: ClassVar = [PLAYER_CSS]

    def __init__(self, on_move=None, **params):
        super().__init__(**params)
        self._on_move = on_move  # called with the step index a move asks for

    def _handle_msg(self, msg) -> None:
        if not isinstance(msg, dict) or msg.get("key") != self.item_key or msg.get("action") not in MOVES:
            return  # a move made for the item shown before, or noise
        target = {"first": 0, "previous": self.value - 1, "next": self.value + 1, "last": self.end}[msg["action"]]
        target = max(0, min(target, self.end))
        if msg["action"] == "next" and self.value >= self.end:
            self.playing = False
        if target != self.value and self._on_move is not None:
            self._on_move(target)
