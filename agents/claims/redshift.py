"""A redshift claim is checked by its lines (FORMA's line-by-line analysis, forma.txt 2.9): at the
claimed z, do the major kb lines that the spectrum covers show up where they must? Two or more
significant lines: supported (the measured z is their mean); three or more covered and none there:
the claim's lines are not there, contradicted; anything else: unverifiable."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import kb
from agents.claims.measure import line_params

HALF_REST = 10.0  # Angstrom, rest frame: narrow enough for galaxy lines, wide enough for z errors of ~0.002


def check_redshift(claim, ctx, result):
    from agents.claims.check import HALF_WIDTH, _Unverifiable, line_state

    z = claim.value
    lo, hi = ctx.measurer.coverage
    local = replace(ctx, z=z)
    covered, found, window = 0, [], None
    seen_rest = set()
    for ln in kb.lines():
        if ln["kind"] == "sky" or not ln.get("major") or ln["wave"] in seen_rest:
            continue
        seen_rest.add(ln["wave"])
        centre = ln["wave"] * (1 + z)
        half = HALF_WIDTH[ln.get("width")] if ln["kind"] == "emission" else HALF_REST
        params = line_params(centre, half * (1 + z))
        if params["blue"][0] < lo or params["red"][1] > hi:
            continue
        covered += 1
        try:
            st = line_state(local, centre, params)
        except _Unverifiable:
            continue
        if st["strong_emission"] or st["strong_absorption"]:
            c = local.measurer.run("centroid", sign=1 if st["strong_emission"] else -1, **params).value
            found.append((ln["name"], c / ln["wave"] - 1))
            window = window or (params["blue"][0], params["red"][1])
    names = ", ".join(n for n, _ in found)
    if len(found) >= 2:
        zs = float(np.mean([zz for _, zz in found]))
        return result(claim, "supported", ctx, zs, 0.002 * (1 + z), window, f"lines found at z={z:g}: {names}")
    if covered >= 3 and not found:
        return result(claim, "contradicted", ctx, None, None, (lo, hi),
                      f"none of the {covered} major lines covered at z={z:g} is there")
    return result(claim, "unverifiable", ctx, reason=f"{covered} major lines covered, found: {names or 'none'}")
