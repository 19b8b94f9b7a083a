"""Text drawing and measuring with caches, for a figure that redraws the same labels again and again.

matplotlib lays out and rasterises every glyph of every label on every draw (~0.6 ms per label,
two thirds of a whole frame). Tick labels ("4000", "5000", ...), axis labels and titles repeat
between calls, so each distinct (string, font, angle) is rasterised once into a coverage sprite
and afterwards only blended into the frame. The one difference from matplotlib: a sprite is placed
at the nearest whole pixel instead of the exact sub-pixel position (a shift of at most half a
pixel). Anything unusual (mathtext, colours other than opaque black, clip paths) falls back to
matplotlib's own drawing.

`FastText` goes one step further for labels that are drawn on every frame: it also caches where
each line of the text goes relative to its anchor, so drawing it skips matplotlib's text layout.
"""
from __future__ import annotations

import math
import threading

import numpy as np
from matplotlib import artist as martist
from matplotlib import colors as mcolors
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.text import Text
from matplotlib.transforms import Bbox

_MAX_ENTRIES = 4096
_sprites: dict = {}
_extents: dict = {}
_lock = threading.Lock()


def _font_key(prop) -> tuple:
    return (tuple(prop.get_family()), prop.get_style(), prop.get_variant(), prop.get_weight(),
            prop.get_stretch(), prop.get_size_in_points(), prop.get_file(), prop.get_math_fontfamily())


def _has_shaping_options(mtext) -> bool:
    """Font features or a language (matplotlib >= 3.10) change glyph shaping: not cached."""
    if mtext is None:
        return False
    return bool(getattr(mtext, "get_fontfeatures", lambda: None)()
                or getattr(mtext, "get_language", lambda: None)())


def _remember(cache: dict, key, value):
    with _lock:
        if len(cache) >= _MAX_ENTRIES:
            cache.clear()  # labels are few; a full cache means a stream of one-off strings
        cache[key] = value
    return value


class SpriteTextRenderer(RendererAgg):
    """RendererAgg whose plain-text drawing goes through the sprite cache."""

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        rgb = gc.get_rgb()
        alpha = gc.get_alpha() if (len(rgb) == 3 or gc.get_forced_alpha()) else rgb[3]
        if (ismath or gc.get_clip_path()[0] is not None or tuple(rgb[:3]) != (0.0, 0.0, 0.0)
                or alpha != 1.0 or _has_shaping_options(mtext)):
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        self.draw_black_text(x, y, s, prop, angle, gc.get_antialiased(), gc.get_clip_rectangle())

    def draw_black_text(self, x, y, s, prop, angle, antialiased=True, clip=None):
        """Opaque black plain text with its origin at (x, y) (y down, as draw_text takes it)."""
        key = (s, _font_key(prop), float(angle), bool(antialiased), self.dpi)
        sprite = _sprites.get(key)
        if sprite is None:
            sprite = _remember(_sprites, key, self._rasterise(s, prop, angle, antialiased))
        coverage, row_offset, col_offset = sprite
        if coverage is None:
            return
        self._blend(coverage, round(y) + row_offset, round(x) + col_offset, clip)

    def _rasterise(self, s, prop, angle, antialiased):
        """Coverage (uint8) of `s` drawn with its origin at a whole pixel, and that origin's offset.

        The glyphs' pixels depend only on the origin being whole, not on where it is in the
        scratch canvas. Horizontal text (the stats box and titles: new strings on most frames)
        gets a canvas just around its box instead of a square around any rotation of it (for a
        title, ~60 x 700 pixels instead of 1000 x 1000), sized from the font size without
        measuring the string (a FreeType layout of its own); if anything touches that canvas's
        edge, the measured square one is used after all."""
        if angle == 0:
            em = math.ceil(prop.get_size_in_points() * self.dpi / 72)
            pad = em + 4  # room for ascenders, descenders and overhangs beyond the glyph advances
            found = self._rasterise_at(s, prop, angle, antialiased, 2 * em * len(s) + 2 * pad, 2 * em + 2 * pad,
                                       pad, pad + em)
            if found is not None:
                return found
        width, height, descent = self.get_text_width_height_descent(s, prop, ismath=False)
        half = math.ceil(max(width, height) + descent) + 4
        return self._rasterise_at(s, prop, angle, antialiased, 2 * half, 2 * half, half, half, edge_ok=True)

    def _rasterise_at(self, s, prop, angle, antialiased, width, height, x, y, edge_ok=False):
        """`_rasterise` on a width x height canvas with the origin at column x, row y (down); None
        when the text reaches the canvas edge (it may be cut) unless `edge_ok`."""
        scratch = RendererAgg(width, height, self.dpi)
        gc = scratch.new_gc()
        gc.set_foreground((0.0, 0.0, 0.0, 1.0))
        gc.set_antialiased(antialiased)
        RendererAgg.draw_text(scratch, gc, x, y, s, prop, angle)
        gc.restore()
        alpha = np.asarray(scratch.buffer_rgba())[:, :, 3]
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        if rows.size == 0:
            return None, 0, 0
        r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
        if not edge_ok and (r0 == 0 or c0 == 0 or r1 == height or c1 == width):
            return None
        return alpha[r0:r1, c0:c1].copy(), int(r0) - y, int(c0) - x

    def _blend(self, coverage, row, col, clip):
        """Black over the frame with `coverage` as alpha, top-left at (row, col) (rows go down)."""
        frame = np.asarray(self.buffer_rgba())
        top, left = 0, 0
        bottom, right = frame.shape[0], frame.shape[1]
        if clip is not None:  # display coordinates, y up
            left, right = max(left, math.floor(clip.x0)), min(right, math.ceil(clip.x1))
            top = max(top, math.floor(frame.shape[0] - clip.y1))
            bottom = min(bottom, math.ceil(frame.shape[0] - clip.y0))
        r0, c0 = max(row, top), max(col, left)
        r1 = min(row + coverage.shape[0], bottom)
        c1 = min(col + coverage.shape[1], right)
        if r0 >= r1 or c0 >= c1:
            return
        cover = coverage[r0 - row:r1 - row, c0 - col:c1 - col].astype(np.uint16)[:, :, None]
        region = frame[r0:r1, c0:c1]
        keep = 255 - cover
        region[:, :, :3] = (region[:, :, :3] * keep + 127) // 255
        region[:, :, 3:] = cover + (region[:, :, 3:] * keep + 127) // 255


class SpriteCanvas(FigureCanvasAgg):
    """FigureCanvasAgg that draws with a SpriteTextRenderer."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = SpriteTextRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


def _anchor(text) -> np.ndarray:
    return text.get_transform().transform(text.get_unitless_position())


def _text_layout(text, renderer, anchor):
    """(box offsets, [(line, dx, dy)] or None when not plain text) relative to the anchor, cached
    by what decides them: the string, font, rotation, alignment and line spacing."""
    key = (text.get_text(), _font_key(text.get_fontproperties()), text.get_rotation(),
           text.get_rotation_mode(), text.get_horizontalalignment(), text.get_verticalalignment(),
           text.get_linespacing(), text.get_usetex(), renderer.dpi)
    layout = _extents.get(key)
    if layout is None:
        box = text.get_window_extent(renderer)
        offsets = (box.x0 - anchor[0], box.y0 - anchor[1], box.x1 - anchor[0], box.y1 - anchor[1])
        _, info, _ = text._get_layout(renderer)
        lines = []
        for item in info:  # (line, metrics, (x, y)) since matplotlib 3.11, (line, wh, x, y) before
            line = item[0]
            dx, dy = item[2] if len(item) == 3 else item[2:4]
            clean, ismath = text._preprocess_math(line)
            lines.append((clean, dx, dy))
            if ismath or text.get_usetex():
                lines = None
                break
        layout = _remember(_extents, key, (offsets, lines))
    return layout


def text_extent(text, renderer) -> Bbox:
    """`text.get_window_extent(renderer)`, cached: a text's box relative to its anchor point is
    measured once and then moved to wherever the anchor is now."""
    if not text.get_visible():
        return Bbox.unit()  # what get_window_extent answers; not cached
    anchor = _anchor(text)
    (x0, y0, x1, y1), _ = _text_layout(text, renderer, anchor)
    return Bbox([[anchor[0] + x0, anchor[1] + y0], [anchor[0] + x1, anchor[1] + y1]])


class FastText(Text):
    """A Text that, drawn by a SpriteTextRenderer, places cached sprites at cached offsets.

    Same pixels as Text.draw through SpriteTextRenderer.draw_text, without the per-draw layout.
    Boxed, clipped, coloured, math, TeX or path-effect texts take the ordinary path.
    """

    @martist.allow_rasterization
    def draw(self, renderer):
        if not self.get_visible() or not self.get_text():
            return
        if (not isinstance(renderer, SpriteTextRenderer) or self._bbox_patch or self.get_clip_on()
                or self.get_path_effects() or self.get_alpha() not in (None, 1.0)
                or mcolors.to_rgba(self.get_color()) != (0.0, 0.0, 0.0, 1.0)
                or _has_shaping_options(self)):
            return super().draw(renderer)
        anchor = _anchor(self)
        if not np.all(np.isfinite(anchor)):
            return
        _, lines = _text_layout(self, renderer, anchor)
        if lines is None:
            return super().draw(renderer)
        height = renderer.height
        for line, dx, dy in lines:
            renderer.draw_black_text(anchor[0] + dx, height - (anchor[1] + dy), line,
                                     self._fontproperties, self.get_rotation(), self._antialiased)
        self.stale = False
