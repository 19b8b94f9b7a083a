"""Redshift hypotheses: the built-in engine (template scan + line matching), Redrock when asked.

`generate_hypotheses` returns the top N distinct (z, class) pairs with a score in 0-100. Template
candidates come from `agents.tools.templates` (Redrock PCA templates: a template directory, else the
bundled ones) and run whether or not the CWT found a feature; each template hypothesis's z is then
refined around its minimum (`refine_hypotheses`) with a statistical error. Line-matching candidates
come from pairing detected CWT features with the kb/forma line list, so the engine works without
templates. Scores follow FORMA: 100 / (1 + delta chi2), with
delta chi2 scaled by the best fit's reduced chi2 (survey ivar is often off by a constant factor).
"""
from __future__ import annotations

import os

import kb
from agents.tools import templates as tpl
from agents.tools.hypothesis import Hypothesis

C_KMS = 299792.458
SAME_Z_TOL = 0.005  # two hypotheses of one class closer than this are one hypothesis


def forma_lines() -> list[dict]:
    return kb.load("forma/lines")["lines"]


def _template_hypotheses(pixels, template_dir) -> list[Hypothesis]:
    templates = tpl.resolve_templates(template_dir)
    if not templates:
        return []
    cands = tpl.template_candidates(pixels.wave, pixels.flux, pixels.ivar, templates)
    if not cands:
        return []
    best = cands[0]
    red = max(best.chi2 / max(best.npix, 1), 1.0)
    out = []
    for c in cands:
        dchi2 = (c.chi2 - best.chi2) / red
        out.append(Hypothesis(c.z, c.spectype, c.subtype, 100.0 / (1.0 + dchi2), "template", c.chi2, dchi2))
    return out


def refine_hypotheses(pixels, hyps: list[Hypothesis], template_dir=None) -> None:
    """Refine each template hypothesis's z around its scan minimum (agents.tools.templates.refine_z,
    settings per class in kb/forma/rules.yaml `template_refine`): the template with polynomial terms
    for the continuum, on the pixels as observed, to a fraction of a pixel; a QSO without its Ly-alpha forest.
    Sets z (the refined one), z_scan, z_err (statistical) and `refined`; scores and chi2 stay the
    scan's (they compare classes over one pixel set). Minima more than `max_delta_chi2` (scaled)
    above the best keep their scanned z. A passive galaxy's z so comes from its
    absorption spectrum (Ca H+K, G band, Mg b, Na D and the 4000 A break) with an error."""
    settings = kb.load("forma/rules").get("template_refine", {})
    by_name = {t.name: t for t in tpl.resolve_templates(template_dir)}
    for h in hyps:
        cfg = settings.get(h.spectype)
        tmpl = by_name.get(f"{h.spectype}:{h.subtype}" if h.subtype else h.spectype)
        if h.source != "template" or cfg is None or tmpl is None or h.refined is not None:
            continue
        if (h.delta_chi2 or 0.0) > settings.get("max_delta_chi2", float("inf")):
            continue  # a minimum the template already rules out: tested as a rival, its z as scanned
        rest_min = cfg.get("rest_min")
        # the window: a few pixels about the scan's minimum, wider where pixels are left out (the
        # forest pulled the scan's minimum)
        cut = rest_min is not None and pixels.wave.size and pixels.wave[0] / (1 + h.z) < rest_min
        r = tpl.refine_z(pixels.wave, pixels.flux, pixels.ivar, tmpl, h.z,
                         half_kms=cfg["half_kms_cut"] if cut else cfg["half_kms"],
                         legendre_terms=cfg["legendre_terms"], rest_min=rest_min, coarse=bool(cut))
        if r is None:
            continue
        h.z_scan, h.z, h.z_err = h.z, r.z, r.z_err
        h.refined = {"template": tmpl.name, **r.as_dict()}


def _match_tolerance(g, ln: dict, pred: float, m: dict) -> float:
    """How far (A) feature g may sit from a line predicted at `pred`: n_sigma x (one pixel for the
    anchor's z, one for g's centre, g's width / S/N) plus the velocity such a line may sit off."""
    sigma = (2 * g.wavelength_err ** 2 + (g.fwhm_A / 2.3548 / max(g.snr, 1.0)) ** 2) ** 0.5
    broad = g.width_class == "broad" and ln.get("width") in ("broad", "both")
    v = m["velocity_allowance_kms"]["broad" if broad else "absorption" if ln["kind"] == "absorption" else "narrow"]
    return m["n_sigma"] * sigma + pred * v / C_KMS


def _line_hypotheses(features, max_anchor: int = 8) -> list[Hypothesis]:
    """Each strong feature read as each line of its kind; a z scores by the other features it explains,
    each feature explaining at most one line (the closest pairs first, key lines' offsets halved)."""
    lines = forma_lines()
    m = kb.load("forma/rules")["matching"]
    strong = sorted(features, key=lambda f: -f.snr)[:max_anchor]
    cands: list[Hypothesis] = []
    for f in strong:
        for ln in lines:
            if ln["kind"] != f.kind:
                continue
            z = f.wavelength / ln["rest"] - 1
            if not -0.005 <= z <= 6.0:
                continue
            pairs = []
            for li, ln2 in enumerate(lines):
                pred = ln2["rest"] * (1 + z)
                for gi, g in enumerate(features):
                    if g.kind != ln2["kind"]:
                        continue
                    off = abs(g.wavelength - pred)
                    if off < m["acceptable_offset_A"] and off < _match_tolerance(g, ln2, pred, m):
                        pairs.append((off * (0.5 if ln2["key"] else 1.0), li, gi))
            matched, score, broad, used_l, used_f = [], 0.0, False, set(), set()
            for _, li, gi in sorted(pairs):
                if li in used_l or gi in used_f:
                    continue
                used_l.add(li)
                used_f.add(gi)
                g, ln2 = features[gi], lines[li]
                matched.append(ln2["name"])
                score += min(g.snr, 30.0)
                broad |= g.width_class == "broad" and ln2.get("width") in ("broad", "both")
            if len(matched) < 2:
                continue
            matched.sort(key=lambda name: next(i for i, x in enumerate(lines) if x["name"] == name))
            if f.kind == "absorption" and abs(z) < 0.003:
                cls = "STAR"
            elif broad:
                cls = "QSO"
            else:
                cls = "GALAXY"
            cands.append(Hypothesis(z, cls, "", score, "lines", matched=matched))
    cands.sort(key=lambda h: -h.score)
    top = cands[0].score if cands else 1.0
    for h in cands:
        h.score = 100.0 * h.score / top
    return cands


def _distinct(hyps: list[Hypothesis]) -> list[Hypothesis]:
    out: list[Hypothesis] = []
    for h in hyps:
        if all(not (g.spectype == h.spectype and abs(g.z - h.z) < SAME_Z_TOL * (1 + h.z)) for g in out):
            out.append(h)
    return out


def generate_hypotheses(pixels, features, *, n: int = 6, template_dir=None,
                        engine: str = "builtin") -> list[Hypothesis]:
    """Top-n distinct hypotheses. The best of each class is always kept so the analysis can
    test the rivals (a STAR / GALAXY / QSO alternative is never dropped by the cut)."""
    if engine == "redrock":
        from agents.tools import redrock_adapter
        return redrock_adapter.redrock_hypotheses(pixels, n=n, template_dir=template_dir)
    tmpl = _distinct(_template_hypotheses(pixels, template_dir))
    lines = _distinct(_line_hypotheses(features))
    if tmpl:
        # line matches refine nothing here; they enter only when no template hypothesis is near
        extra = [h for h in lines[:3] if all(abs(h.z - t.z) > SAME_Z_TOL * (1 + h.z) for t in tmpl)]
        for h in extra:
            h.score = min(h.score, 1.0)  # ranked below every template minimum
        ranked = tmpl + extra
    else:
        ranked = lines
    top = ranked[:n]
    for cls in ("STAR", "GALAXY", "QSO"):
        if not any(h.spectype == cls for h in top):
            best = next((h for h in ranked if h.spectype == cls), None)
            if best is not None:
                top.append(best)
    refine_hypotheses(pixels, top, template_dir)
    return _distinct(top)  # two minima of one template may refine to one z


def default_template_dir() -> str | None:
    d = tpl.template_dir(None)
    return str(d) if d else os.environ.get("RR_TEMPLATE_DIR")
