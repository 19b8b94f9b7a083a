"""Redrock adapter: hypotheses from `redrock.zfind` when the `redrock` extra is installed and
RR_TEMPLATE_DIR is set. Redrock is not on PyPI (it installs from desihub/redrock), so this module
only imports it on use; `available()` says whether it can run here."""
from __future__ import annotations

import contextlib
import os
import sys
import threading


def available() -> bool:
    if not os.environ.get("RR_TEMPLATE_DIR"):
        return False
    try:
        import redrock
        import redrock.zfind  # noqa: F401
    except ImportError:
        return False
    return True


def redrock_hypotheses(pixels, *, n: int = 6, template_dir=None):
    """Every Redrock minimum as a Hypothesis with FORMA's score = 100 / (1 + deltachi2)."""
    if not available():
        raise RuntimeError("Redrock is not installed (pip install the `redrock` extra from desihub/redrock) "
                           "or RR_TEMPLATE_DIR is not set")
    from redrock.targets import DistTargetsCopy, Target
    from redrock.targets import Spectrum as RRSpectrum
    from redrock.templates import load_dist_templates
    from redrock.zfind import zfind

    from agents.tools.hypothesis import Hypothesis

    sel = (pixels.wave >= 3600) & (pixels.wave <= 9800)
    wave, flux, ivar = pixels.wave[sel], pixels.flux[sel], pixels.ivar[sel]
    from scipy.sparse import identity
    spec = RRSpectrum(wave, flux, ivar, R=identity(wave.size, format="csr"))  # no resolution matrix: identity
    targets = DistTargetsCopy([Target(0, [spec])])
    tdir = str(template_dir or os.environ["RR_TEMPLATE_DIR"])
    key = (tdir, wave.size, float(wave[0]), float(wave[-1]))
    # Redrock narrates on stdout: keep --json clean. redirect_stdout swaps sys.stdout for the whole
    # process, so one call at a time (two overlapping swaps could restore each other's target and
    # leave stdout pointing at stderr); the lock also guards the template cache.
    with _ONE_AT_A_TIME, contextlib.redirect_stdout(sys.stderr):
        if key not in _TEMPLATE_CACHE:  # rebinning the templates costs seconds: once per wavelength grid
            _TEMPLATE_CACHE.clear()
            _TEMPLATE_CACHE[key] = load_dist_templates(targets.wavegrids(), templates=tdir)
        _scandata, zfit = zfind(targets, _TEMPLATE_CACHE[key], mp_procs=1, nminima=9)
    rows = zfit[zfit["targetid"] == 0]
    rows.sort("chi2")
    best = float(rows["chi2"][0]) if len(rows) else 0.0
    out = []
    for r in rows[:n]:
        # score as FORMA (100 / (1 + Redrock's deltachi2 to the next minimum)); delta_chi2 as the
        # built-in engine (chi2 above the best), which the synthesis compares
        h = Hypothesis(float(r["z"]), str(r["spectype"]).strip(), str(r["subtype"]).strip(),
                       100.0 / (1.0 + float(r["deltachi2"])), "redrock", float(r["chi2"]), float(r["chi2"]) - best)
        if "zerr" in rows.colnames and float(r["zerr"]) > 0:  # Redrock's own parabola on its fine z grid
            h.z_err = float(r["zerr"])  # the verify error adds the template's scatter (template_z_err)
        out.append(h)
    return out


_TEMPLATE_CACHE: dict = {}
_ONE_AT_A_TIME = threading.Lock()
