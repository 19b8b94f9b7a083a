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
.sr-strip .sr-stage { flex: 0 0 auto; font-size: 10px; line-height: 18px; color: #555; font-weight: 600;
                      padding: 0 2px 0 6px; text-transform: uppercase; letter-spacing: 0.02em; }
.sr-strip .sr-stage:first-child { padding-left: 0; }
.sr-strip.sr-compact button { min-width: 20px; padding: 0 2px; font-size: 10px; }
/* a kind's colour as an inset bar, not a border: the button keeps its 18 px (3 rows hold 70 steps) */
.sr-strip button[data-kind="think"] { box-shadow: inset 0 -2px 0 #1f4e9c; }
.sr-strip button[data-kind="tool_call"] { box-shadow: inset 0 -2px 0 #8e44ad; }
.sr-strip button[data-kind="tool_result"] { box-shadow: inset 0 -2px 0 #16a085; }
.sr-strip button[data-kind="verdict"] { box-shadow: inset 0 -2px 0 #d35400; }
.sr-strip button[data-kind="answer"] { box-shadow: inset 0 -2px 0 #27ae60; }
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
    groups = param.List(default=[], doc="[[first button index, name], ...]: a small heading before each group")
    kinds = param.List(default=[], doc="each button's kind (its colour mark), in the order of `labels`; optional")
    compact = param.Boolean(default=False, doc="narrow buttons, so that a long strip (70 steps) fits in 3 rows")
    toggles = param.Boolean(default=False, doc="a click on the current button makes none current (value None)")

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "sr-strip";
      let buttons = [];  // the buttons only (group headings sit between them)
      const scroll = () => {
        const current = buttons[model.value];
        if (!current) return;
        const top = current.offsetTop, bottom = top + current.offsetHeight;
        if (top < box.scrollTop) box.scrollTop = top;
        else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight;
      };
      const mark = () => {
        buttons.forEach((b, i) => b.classList.toggle("sr-current", i === model.value));
        // offsetTop makes the browser lay the page out: read it at the next frame, when the layout
        // is made anyway, not in the middle of a patch (the first button needs no reading at all)
        if (model.value === 0) box.scrollTop = 0;
        else requestAnimationFrame(scroll);
      };
      const title = () => {
        buttons.forEach((b, i) => { b.title = model.titles[i] || b.textContent; });
      };
      const build = () => {
        box.classList.toggle("sr-compact", model.compact);
        const headings = new Map(model.groups.map(([at, name]) => [at, name]));
        const children = [];
        buttons = model.labels.map((label, i) => {
          if (headings.has(i)) {
            const head = document.createElement("span");
            head.className = "sr-stage";
            head.textContent = headings.get(i);
            children.push(head);
          }
          const button = document.createElement("button");
          button.type = "button";
          button.textContent = label;
          if (model.kinds[i]) button.dataset.kind = model.kinds[i];
          button.addEventListener("click", () => { model.value = (model.toggles && model.value === i) ? null : i; });
          children.push(button);
          return button;
        });
        box.replaceChildren(...children);
        title();
        mark();
      };
      // an item switch changes labels, groups and kinds in one patch: build once, after all of them
      let pending = false;
      const rebuild = () => {
        if (pending) return;
        pending = true;
        queueMicrotask(() => { pending = false; build(); });
      };
      model.on(["labels", "groups", "kinds", "compact"], rebuild);
      model.on("titles", title);
      model.on("value", mark);
      build();
      return box;
    }
    """
    _stylesheets: ClassVar = [STRIP_CSS]
