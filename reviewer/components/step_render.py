"""The render the agent was looking at, beside the verdict: legible (>= 300 px wide), opened at full
size by a click or `v`, marked with SpecReview's line marks unless the reviewer asks for the picture
exactly as the agent saw it. Bound to the review state's item and step."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.review_state import ReviewState
from reviewer.services.renders import cached_step, owner_of_render, step_marks, step_render
from reviewer.services.spectra_cache import prefetch

# A 1x1 transparent PNG: steps without a render swap the picture's source instead of removing it.
BLANK_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da6300010000"
    "0500010d0a2db40000000049454e44ae426082")

# Spec-o3 renders are ~789x472 px (5:3): at 320 px their axis labels are still read.
RENDER_WIDTH_PX = 320
RENDER_ASPECT = 472 / 789
# The full-size view: over the page, centred, closed by its button, `v` or Escape (the keyboard).
FULL_SIZE_STYLES = {"position": "fixed", "top": "72px", "left": "50%", "transform": "translateX(-50%)",
                    "z-index": "1000", "background": "white", "padding": "8px", "border": "1px solid #888",
                    "box-shadow": "0 4px 24px rgba(0,0,0,0.35)", "max-width": "96vw", "max-height": "88vh",
                    "overflow": "auto"}


class StepRender(Viewer):
    """The current step's render (or the one the agent is still looking at), its caption, the
    'as the agent saw it' switch and the full-size view."""

    state = param.ClassSelector(class_=ReviewState)
    width = param.Integer(default=RENDER_WIDTH_PX)
    as_the_agent_saw = param.Boolean(default=False, doc="the render exactly as the agent saw it (its stored "
                                     "image where there is one), without the lines SpecReview marks on it")
    full_size = param.Boolean(default=False, doc="the render shown at its own size, over the page")

    def __init__(self, **params):
        super().__init__(**params)
        height = round(self.width * RENDER_ASPECT)
        # Fixed boxes that stay on the page: a picture appearing or disappearing would re-lay-out the page
        # on every step (+60 ms per step in Chromium), and move the verdict buttons beside it.
        self._caption = TextHTML("", css_classes=["sr-image-caption"], height=34, margin=(0, 5),
                                 width=self.width, styles={"overflow": "hidden"})
        self._image = pn.pane.PNG(BLANK_PNG, width=self.width, height=height, sizing_mode="fixed",
                                  css_classes=["sr-step-image"], margin=(0, 5))
        self._agent_view = pn.widgets.Checkbox.from_param(
            self.param.as_the_agent_saw, label="As the agent saw it (no marks)", disabled=True, margin=(0, 5),
            css_classes=["sr-agent-view"])
        self._open = pn.widgets.Button(label="Full size (v)", color="light", margin=(0, 5), disabled=True,
                                       css_classes=["sr-render-open"],
                                       description="Open the render at its own size (v; Escape closes it).")
        self._open.on_click(lambda _: self.toggle_full_size())
        self._full_image = pn.pane.PNG(BLANK_PNG, sizing_mode="fixed", css_classes=["sr-render-full-image"])
        close = pn.widgets.Button(label="Close (v / Esc)", color="light", css_classes=["sr-render-close"],
                                  description="Close the full-size render (v or Escape).")
        close.on_click(lambda _: setattr(self, "full_size", False))
        self._full = pn.Column(close, self._full_image, visible=False, css_classes=["sr-render-full"],
                               styles=FULL_SIZE_STYLES)
        self.state.param.watch(self._refresh, ["item", "step_index"])
        self.param.watch(self._refresh, "as_the_agent_saw")
        self.param.watch(self._show_full, "full_size")
        self._refresh()

    def toggle_full_size(self) -> None:
        if self.full_size or self._has_picture():
            self.full_size = not self.full_size

    def close(self) -> None:
        self.full_size = False

    def _has_picture(self) -> bool:
        return self._image.object != BLANK_PNG

    def _show_full(self, *_):
        self._full_image.object = self._image.object if self.full_size else BLANK_PNG
        self._full.visible = self.full_size

    def _refresh(self, *_):
        """SpecReview's marked copy by default where the step has lines to mark, else (or when asked) the
        picture exactly as the agent saw it."""
        state = self.state
        step = state.step
        if step is None:
            self._set_image(None, None, None)
            self._agent_view.disabled = True
            return
        item, owner = state.item, owner_of_render(state.item, step.index)
        marks = step_marks(item, owner) if owner is not None else ()
        self._agent_view.disabled = not marks
        marks = () if self.as_the_agent_saw else marks
        marked = bool(marks)
        known, png = cached_step(item, owner, marked=marked) if owner is not None else (True, None)
        if known or pn.state.curdoc is None or pn.state.curdoc.session_context is None:
            if not known:
                png = step_render(state.store, item, owner, marked=marked)
            self._set_image(png, owner, step.index, marks)
            return
        # Not rendered yet: the text shows now, the picture when a render process has drawn it (a key
        # press never waits ~40 ms for matplotlib). Bokeh documents take changes from other threads
        # only through add_next_tick_callback.
        self._image.object = BLANK_PNG  # never the previous step's picture beside this step's text
        self._caption.object = "<small><i>Rendering…</i></small>"
        doc, index = pn.state.curdoc, step.index

        def work():
            made = step_render(state.store, item, owner, marked=marked)

            def show():
                if state.item is item and state.step_index == index and marked == (
                        not self.as_the_agent_saw and not self._agent_view.disabled):
                    self._set_image(made, owner, index, marks)

            doc.add_next_tick_callback(show)

        prefetch(work)

    def _set_image(self, png, owner, index, marks=()) -> None:
        self._image.object = png if png is not None else BLANK_PNG
        self._open.disabled = png is None
        parts = []
        if png is not None and owner != index:
            parts.append(f"The render the agent is looking at (step {owner + 1}).")
        if png is not None and marks:
            parts.append(marks_caption(marks))
        self._caption.object = f"<small><i>{' '.join(parts)}</i></small>" if parts else ""
        if self.full_size:  # the full-size view follows the step (closed where there is no picture)
            if png is None:
                self.full_size = False
            else:
                self._full_image.object = png

    def __panel__(self):
        return pn.Column(self._image, self._caption, pn.Row(self._open, self._agent_view), self._full,
                         css_classes=["sr-step-render"], margin=0)


MARKS_NAMED = 4  # a caption names this many marked lines, then counts the rest


def marks_caption(marks) -> str:
    """The caption of a marked copy (HTML, names escaped): whose marks they are, and that the agent
    did not see them."""
    names = [escape(label) for label, _ in marks[:MARKS_NAMED]]
    more = f" and {len(marks) - MARKS_NAMED} more" if len(marks) > MARKS_NAMED else ""
    return (f"Lines marked by SpecReview ({', '.join(names)}{more}); "
            "the agent saw this picture without them.")
