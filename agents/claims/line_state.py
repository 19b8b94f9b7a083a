"""The state of one line in a window (its EW, depth and peak, each with its sigma, read as absorption,
emission, strong or flat), and the thresholds that read it: shared by the claim checker (check.py) and
the redshift check (redshift.py), below both, so that neither imports the other for it (issue 49: the
two imported each other inside functions)."""
from __future__ import annotations

from typing import Any

import numpy as np

SIG_DETECT = 3.0
SIG_STRONG = 5.0
VISIBLE_EW = 2.0  # Angstrom: a line weaker than this is hard to see at survey resolution and S/N
VISIBLE_DEPTH = 0.10  # 10 % below (or above) the continuum: what an inspector reads as "a line"
HALF_WIDTH = {"broad": 40.0, "both": 15.0, "narrow": 10.0, None: 10.0}  # Angstrom, rest, by the line's kb width


class Unverifiable(Exception):
    """The claim cannot be checked on this spectrum (no pixels, no redshift, off the edge): said, not judged."""


def line_state(ctx: Any, centre: float, params: dict) -> dict:
    """EW (absorption positive), depth, emission peak, each with sigma, and the extreme's position, measured
    by `ctx.measurer` (ctx: an agents.claims.check.Context)."""
    m = ctx.measurer
    ew = m.run("equivalent_width", **params)
    depth = m.run("line_depth", **params)
    peak = m.run("emission_peak", **params)
    if ew.value is None or not ew.sigma:
        raise Unverifiable("not enough good pixels around the line")
    s_ew = ew.value / ew.sigma
    # the extreme must lie inside the core, not on its edge where a neighbour's wing would put it
    tol_pos = max(0.9 * (params["core"][1] - params["core"][0]) / 2, 4.0)

    def near(sign):
        c = m.run("centroid", sign=sign, **params).value
        return c is not None and abs(c - centre) <= tol_pos

    d_sig = (depth.value or 0.0) / (depth.sigma or np.inf)
    p_sig = (peak.value or 0.0) / (peak.sigma or np.inf)
    return {
        "ew": ew.value, "ew_sigma": ew.sigma, "window": ew.window,
        "absorption": s_ew >= SIG_DETECT or (d_sig >= 4.0 and (depth.value or 0) >= 0.03 and near(-1)),
        "emission": -s_ew >= SIG_DETECT or (p_sig >= 4.0 and (peak.value or 0) >= 0.03 and near(1)),
        "strong_absorption": s_ew >= SIG_STRONG and (depth.value or 0) >= VISIBLE_DEPTH and near(-1),
        "strong_emission": -s_ew >= SIG_STRONG and (peak.value or 0) >= VISIBLE_DEPTH and near(1),
        "flat": abs(s_ew) < 2.0 and 3.0 * ew.sigma < VISIBLE_EW and d_sig < 3.0 and p_sig < 3.0,
    }
