"""Thin a polyline to what a raster of a given width can show, keeping every spike.

A 1-px line through N >> columns points paints, in each pixel column, the vertical run between
the lowest and highest point in that column plus the joins to its neighbours. Keeping the first,
lowest, highest and last point of each column (in their original order) paints the same pixels,
so narrow emission lines and cosmic-ray spikes stay visible while drawing gets cheaper.
"""
from __future__ import annotations

import numpy as np

_KEEP_PER_COLUMN = 4


def minmax_decimate(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) reduced to at most 4 points per pixel column over [x[0], x[-1]]; x must be sorted.

    Returns the input unchanged when it is already short enough.
    """
    n = x.size
    if columns < 1 or n <= _KEEP_PER_COLUMN * columns:
        return x, y
    span = x[-1] - x[0]
    if not span > 0:
        return x, y
    column = np.minimum(((x - x[0]) * (columns / span)).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    ends = np.r_[starts[1:], n] - 1
    owner = np.repeat(np.arange(starts.size), ends - starts + 1)
    keep = [starts, ends]
    for reduce in (np.minimum, np.maximum):
        extreme = reduce.reduceat(y, starts)
        hits = np.flatnonzero(y == extreme[owner])
        first = np.r_[True, owner[hits][1:] != owner[hits][:-1]]  # first hit in each column
        keep.append(hits[first])
    keep = np.unique(np.concatenate(keep))
    return x[keep], y[keep]
