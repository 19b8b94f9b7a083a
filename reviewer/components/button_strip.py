"""A strip of small text buttons, one of them current, in a box of fixed height that scrolls.

New labels replace the buttons in place. A Bokeh button group re-renders on new labels, and a strip
that grows or shrinks with its labels makes BokehJS lay out the whole centre column (with the plot)
again: ~15 ms, and up to ~50 ms with the repaint, of every step or item switch that did it.
"""
from __future__ import annotations

from typing import ClassVar

import param
from panel.custom import JSComponent

ROW_PX = 20  # an 18 px button and the 2 px gap under it

STRIP_CSS = """
.sr-strip { display: flex; flex-wrap: wrap; align-content: flex-start; gap: 2px; height: 100%;
            overflow-y: auto; position: relative; }
.sr-strip button { flex: 0 0 auto; min-width: 32px; padding: 0 4px; font-size: 11px; line-height: 16px;
                   font-family: inherit; cursor: pointer; border: 1px solid #ccc; border-radius: 3px;
                   background: #fff; color: #333; }
.sr-strip button:hover { background: #eef2f8; }
.sr-strip button.sr-current { background: #1f4e9c; border-color: #1f4e9c; color: #fff; }
"""


def strip_height(rows: int) -> int:
    """The height in px of a strip showing `rows` rows of buttons (more scroll)."""
    return rows * ROW_PX - 2


class ButtonStrip(JSComponent):
    """`labels`: one button each (text, never HTML); `titles`: each button's title (its tooltip; the
    label where none is given); `value`: the index of the current one, set by a click or by the server.
    The current button is scrolled into view inside the strip, never the page."""

    labels = param.List(default=[], item_type=str)
    titles = param.List(default=[], item_type=str, doc="each button's title (tooltip), in the order of `labels`")
    value = param.Integer(default=None, allow_None=True, doc="index of the current button")

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "sr-strip";
      const mark = () => {
        [...box.children].forEach((b, i) => b.classList.toggle("sr-current", i === model.value));
        const current = box.children[model.value];
        if (!current) return;
        const top = current.offsetTop, bottom = top + current.offsetHeight;
        if (top < box.scrollTop) box.scrollTop = top;
        else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight;
      };
      const title = () => {
        [...box.children].forEach((b, i) => { b.title = model.titles[i] || b.textContent; });
      };
      const build = () => {
        box.replaceChildren(...model.labels.map((label, i) => {
          const button = document.createElement("button");
          button.type = "button";
          button.textContent = label;
          button.addEventListener("click", () => { model.value = i; });
          return button;
        }));
        title();
        mark();
      };
      model.on("labels", build);
      model.on("titles", title);
      model.on("value", mark);
      build();
      return box;
    }
    """
    _stylesheets: ClassVar = [STRIP_CSS]
