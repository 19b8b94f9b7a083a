"""Which spectrograph arm each pixel of a merged multi-arm spectrum came from (no Panel, no SQL).

DESI (b, r, z cameras) and LAMOST MRS (blue, red) files hold one spectrum per arm; the readers merge
them onto one ascending grid (desi.merge_arms, lamost.read_mrs). What the merge keeps of the arms
is `meta["arm_pixels"]`: [[name, start, stop], ...], blue to red, one contiguous pixel run per arm
(small and JSON-safe, so the meta stays printable). `arm_ids` is the one place that turns it into a
per-pixel array, for the viewer's per-arm colours and toggles.

In a DESI overlap (b/r ~5660-5930 A, r/z ~7470-7720 A, DESI data model) a merged pixel is the
inverse-variance mean of both arms; it is given to one arm by splitting the overlap at its middle,
which keeps each arm one run (as prospect draws each camera up to the overlap's middle).
"""
from __future__ import annotations

import itertools

import numpy as np


def arm_runs(grid: np.ndarray, arms: list[tuple[str, float, float]]) -> list[list]:
    """[[name, start, stop]] pixel runs on the merged ascending `grid` for arms given as
    (name, first wavelength, last wavelength); an overlap is split at its middle."""
    arms = sorted(arms, key=lambda a: a[1])
    cuts = [0]
    for (_, _, prev_hi), (_, next_lo, _) in itertools.pairwise(arms):
        middle = 0.5 * (next_lo + prev_hi) if next_lo < prev_hi else next_lo
        cuts.append(int(np.searchsorted(grid, middle, side="left")))
    cuts.append(int(grid.size))
    return [[name, cuts[k], cuts[k + 1]] for k, (name, _, _) in enumerate(arms)]


def arm_ids(spectrum) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(arm names blue to red, per-pixel index into them; -1 where no arm) of a spectrum read from a
    multi-arm file; None for a single-arm spectrum (or one whose runs do not fit its pixels)."""
    runs = (getattr(spectrum, "meta", None) or {}).get("arm_pixels") or []
    n = len(spectrum.spectral_axis)
    if len(runs) < 2 or runs[-1][2] != n:
        return None
    ids = np.full(n, -1, dtype=np.int8)
    for k, (_name, start, stop) in enumerate(runs):
        ids[int(start):int(stop)] = k
    return tuple(str(r[0]) for r in runs), ids
