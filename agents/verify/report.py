"""Step 6: the six-section Markdown report and the JSON brief (FORMA 2.8)."""
from __future__ import annotations

from agents.tools.judgeable import quality_label
from agents.verify.analysis import template_z_err

C_KMS = 299792.458


def feature_score(audit, best) -> int:
    """signal_clarity 0-4: 4 real peak and >= 3 confirmed; 3 >= 2 confirmed, or 1 very strong line;
    2 one confirmed; 1 features but none confirmed; 0 nothing."""
    n = len(audit.confirmed_lines)
    if best is None:
        return 0
    strong = any((ln.snr or 0) >= 20 for ln in best.credible())
    if n >= 3:
        return 4
    if n >= 2 or (n == 1 and strong):
        return 3
    if n == 1:
        return 2
    return 1 if best.lines and any(ln.status != "MASKED" for ln in best.lines) else 0


def empty_brief(verdict: str) -> dict:
    """The brief when there is no class to give (no hypothesis, or the spectrum refused as
    unjudgeable): type UNKNOWN, no z, LOW credibility, a human to look."""
    return {"type": "UNKNOWN", "feature_score": 0, "redshift": None, "redshift_rms": None, "lines": "",
            "credibility": "LOW", "human_review": "Yes", "verdict": verdict}


def brief(syn, audit, pixels, features) -> dict:
    best = syn.best
    if best is None:  # no hypothesis at all (no template, no line match): features alone give no z
        return empty_brief(audit.verdict)
    z = best.systemic_z if best.systemic_z is not None else best.hypothesis.z
    supported = best.verdict == "SUPPORTED"
    score = feature_score(audit, best)
    human = audit.verdict != "CONFIRM" or audit.credibility == "LOW" or score <= 2
    return {
        "type": (best.spectype if supported
                 else "UNKNOWN" if audit.credibility == "LOW" and not best.credible() else best.spectype),
        "feature_score": score,
        "redshift": round(float(z), 6),
        "redshift_rms": round(float(best.systemic_z_err if best.systemic_z is not None
                                    else template_z_err(best.hypothesis)), 6),
        "lines": ", ".join(name for name, _ in audit.confirmed_lines),
        "credibility": audit.credibility,
        "human_review": "Yes" if human else "No",
        "verdict": audit.verdict,
    }


def _table(rows: list[list], header: list[str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join("" if c is None else str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def llm_section(review: dict, audit) -> str:
    """The model's adversarial review as a clearly-labelled subsection of §3. Its text is quoted
    (a model cannot add headings to the report) and the rules' verdict is restated as the one that
    stands."""
    head = f"### LLM adversarial review (advisory; model {review.get('model')})"
    if review.get("error"):
        return f"{head}\n\nThe review failed ({review['error']}). The rule verdicts above stand."
    lines = [head, "", f"Model verdict: **{review['verdict']}**, credibility **{review.get('credibility') or '-'}**. "
             f"Rules: {audit.verdict}, {audit.credibility} - the rules' verdict and credibility stand"
             + ("." if review.get("agrees_with_rules") else "; the model disagrees, so human review is requested.")]
    if review.get("concerns"):
        lines += ["", "Concerns:"] + [f"- {' '.join(str(c).split())}" for c in review["concerns"]]
    if review.get("narrative"):
        lines += [""] + ["> " + ln for ln in str(review["narrative"]).strip().splitlines()]
    return "\n".join(lines)


def markdown(meta: dict, pixels, continuum, features, results, fa, syn, audit, brief_: dict,
             llm_review: dict | None = None) -> str:
    name = meta.get("object_id") or meta.get("source_path") or "spectrum"
    s1 = [f"Coverage {pixels.wave_min_all:.0f}-{pixels.wave_max_all:.0f} Å, {pixels.wave.size} good pixels, "
          f"median S/N {pixels.median_snr:.1f}, spectrum quality {quality_label(pixels.median_snr)}.",
          f"Continuum: Chebyshev degree {continuum.degree}. {continuum.description}",
          f"Features: {sum(f.kind == 'emission' for f in features)} emission peaks, "
          f"{sum(f.kind == 'absorption' for f in features)} absorption troughs (CWT)."]
    if pixels.masked_ranges:
        s1.append("Masked: " + ", ".join(f"{a:.0f}-{b:.0f} Å" for a, b in pixels.masked_ranges[:8]))
    rows = []
    for r in results:
        n_keep = sum(1 for ln in r.lines if ln.audit == "KEEP")
        n_flag = sum(1 for ln in r.lines if ln.audit == "FLAG")
        weak = "; ".join(r.fatal) or ("" if r.verdict == "SUPPORTED" else "too few credible key lines")
        strong = ", ".join(ln.name for ln in r.credible()[:5])
        rows.append([r.idx, f"{r.hypothesis.z:.5f}", r.spectype, r.verdict, n_keep, n_flag, r.anchor, strong, weak])
    s2 = _table(rows, ["Idx", "z", "Classification", "Verdict", "N(KEEP)", "N(FLAG)", "Anchor", "Strengths",
                       "Weaknesses"])
    s3 = [f"Synthesis: best hypothesis {syn.best.idx if syn.best else None} "
          f"({syn.best.spectype if syn.best else '-'}), runner-up {syn.runner_up.idx if syn.runner_up else None}."]
    s3 += [f"- excluded #{e['idx']} {e['class']} z={e['z']}: {e['reason']}" for e in syn.excluded]
    s3.append(f"Result auditor: **{audit.verdict}**, credibility **{audit.credibility}** (the auditor wins).")
    s3 += [f"- {o.rule}: allows {o.cap} - {o.evidence}" for o in audit.outcomes]
    if llm_review is not None and not llm_review.get("skipped"):
        s3.append("\n" + llm_section(llm_review, audit))
    issues = [f"- {v.rule} {v.value} {v.line} @ {v.wl_obs:.1f} Å: {v.evidence}"
              for v in fa.verdicts if syn.best and v.hypothesis == syn.best.idx and v.value != "KEEP"]
    issues += [f"- {c}" for c in syn.concerns]
    s4 = "\n".join(issues) or "None found by the rules."
    z = brief_["redshift"]
    zerr = brief_["redshift_rms"]
    s5 = [f"Type: {brief_['type']}", f"Redshift: {z} ± {zerr}" if z is not None else "Redshift: none",
          f"Lines: {brief_['lines'] or 'none'}", f"Feature score (signal clarity): {brief_['feature_score']}/4",
          f"Credibility: {brief_['credibility']}", f"Human review: {brief_['human_review']}"]
    s6 = (f"{name} is a {brief_['type']} at z = {z} ({audit.verdict.replace('_', ' ').lower()}, "
          f"{brief_['credibility']} credibility)." if z is not None else f"{name}: no credible redshift.")
    return "\n\n".join([
        f"# Verification report: {name}",
        "## §1: Spectrum Basic Information\n\n" + "\n".join(f"- {x}" for x in s1),
        "## §2: Hypothesis Summary\n\n" + s2,
        "## §3: Synthesis & Audit Judgments\n\n" + "\n".join(s3),
        "## §4: Potential Issues\n\n" + s4,
        "## §5: Comprehensive Assessment\n\n" + "\n".join(f"- {x}" for x in s5),
        "## §6: Conclusion\n\n" + s6,
    ]) + "\n"
