"""Issue 50, item 4, on real spectra of the shared corpus: audits that bite. A doublet member cannot
stand without its partner (fixed ratios), a QSO's broad Balmer line is fitted as broad and used,
credibility falls when an audit fails, and erasing a strong line that carried the answer defers it."""
import pytest

from agents.verify.evaluation import split_file

GAL_0295 = "sdss_gelato/spec-0295-51585-0596.fits"  # SDSS galaxy z 0.1379: [O III] 5008 S/N ~60, HIGH
GAL_8136 = "sdss_gelato/1237652899686318136.fits"  # SDSS galaxy z 0.0506: H-alpha, [N II], [O III], HIGH
QSO_8081 = "sdss_gelato/1237680240907518081.fits"  # SDSS QSO z 0.0805: narrow cores on a broad H-alpha
O3_4960, O3_5008 = 4960.3, 5008.2


def _pixels(shared_spectra, entry):
    from agents.spectra import blank_pipeline_labels, read_spectrum
    from agents.tools.features import good_pixels
    path, target = split_file(entry)
    return good_pixels(blank_pipeline_labels(read_spectrum(shared_spectra / path, target)))


def _verify(pixels, template_dir):
    from agents.verify.graph import verify_pixels
    return verify_pixels(pixels, {}, template_dir=template_dir)


def _best(traj) -> dict:
    """The chosen hypothesis's lines by name, with the feature auditor's verdicts."""
    from agents.verify.ablation import _best_lines
    _, lines = _best_lines(traj)
    fa = next(s for s in traj.steps if s.kind == "tool_result" and s.tool_name == "feature_audit")
    syn = next(s for s in traj.steps if s.verdict is not None and s.verdict.who == "synthesis")
    audit = {v["line"]: v for v in fa.data["feature_verdicts"] if v["hypothesis"] == syn.data["best_hypothesis_idx"]}
    return {ln["name"]: dict(ln, audit=audit.get(ln["name"], {}).get("value", "")) for ln in lines}


def _accepted(brief) -> bool:
    return brief["credibility"] in ("MEDIUM", "HIGH") and brief["human_review"] == "No"


def _erase(pixels, centre, half):
    from agents.verify.ablation import remove_range
    return remove_range(pixels, centre - half, centre + half)


def test_o3_4960_does_not_stand_without_5008(shared_spectra, template_dir):
    """Erasing [O III] 5008 (S/N ~60) from a real galaxy left [O III] 4960 LIKELY alone and the answer
    HIGH, though 4960/5008 = 1/2.98 (Storey & Zeippen 2000) makes 4960 without 5008 impossible; a
    residual wing next to the erased line must not be read as 5008 either."""
    px = _pixels(shared_spectra, GAL_0295)
    before = _verify(px, template_dir)
    z = before.outcome["brief"]["redshift"]
    assert _accepted(before.outcome["brief"]), before.outcome["brief"]
    after = _verify(_erase(px, O3_5008 * (1 + z), 16.0), template_dir)
    lines = _best(after)
    o3a, o3b = lines["[O III] 4960"], lines["[O III] 5008"]
    assert o3b["status"] != "LIKELY", o3b
    assert o3a["status"] != "LIKELY" or o3a["audit"] == "REMOVE", o3a
    assert not _accepted(after.outcome["brief"]), after.outcome["brief"]


def test_credibility_falls_when_a_doublet_audit_fails(shared_spectra, template_dir):
    """Erasing the weak member [O III] 4960 where 5008 stands at S/N ~60: 4960 must then show at
    ~1/3 of 5008, far above the noise; its absence is a failed doublet audit and the credibility
    falls to LOW with the rule named."""
    px = _pixels(shared_spectra, GAL_0295)
    z = 0.137922
    after = _verify(_erase(px, O3_4960 * (1 + z), 14.0), template_dir)
    b = after.outcome["brief"]
    assert b["credibility"] == "LOW" and b["human_review"] == "Yes", b
    caps = {s.verdict.who: s.verdict for s in after.steps if s.verdict is not None and s.verdict.who.startswith("RA-")}
    assert caps["RA-DOUBLET"].credibility == "LOW", caps["RA-DOUBLET"].evidence
    assert "[O III]" in " ".join(caps["RA-DOUBLET"].evidence)


def test_broad_halpha_of_a_low_z_qso_is_fitted_and_used(shared_spectra, template_dir):
    """SDSS QSO z 0.0805: the CWT reads the narrow cores (H-alpha 348 km/s, H-beta 385 km/s) and
    the QSO was excluded for want of a broad line (answer GALAXY). A broad component fitted under
    H-alpha (FWHM >= 1500 km/s) is recorded on the line and is the class evidence: QSO."""
    traj = _verify(_pixels(shared_spectra, QSO_8081), template_dir)
    b = traj.outcome["brief"]
    assert b["type"] == "QSO", b
    ha = _best(traj)["H-alpha"]
    assert (ha.get("broad_fwhm_kms") or 0) >= 1500, ha
    syn = next(s for s in traj.steps if s.kind == "tool_result" and s.tool_name == "analyse_hypothesis"
               and s.data["summary"]["class"] == "QSO")
    assert not any("QSO-NO-BROAD" in f for f in syn.data["summary"]["fatal"]), syn.data["summary"]


def test_ablating_the_strongest_carrying_line_defers_the_answer(shared_spectra, template_dir):
    """A HIGH galaxy answer: its strong lines are listed, the strongest carries it, and erasing that
    line ([N II] 6585, which its 6550 partner demands at 3.05x) rejects or defers the answer; before,
    it stayed HIGH."""
    from agents.verify.ablation import ablate, carrying_lines, deferred, line_range, strong_lines
    px = _pixels(shared_spectra, GAL_8136)
    before = _verify(px, template_dir)
    assert _accepted(before.outcome["brief"])
    strong = strong_lines(before)
    assert {"H-alpha", "[O III] 5008", "[N II] 6585"} <= {ln["name"] for ln in strong}, strong
    carried = carrying_lines(before)  # [N II] 6585, the strongest: H-alpha, H-beta, [O III] agree without it
    assert carried and carried[0]["name"] == strong[0]["name"], carried
    res = ablate(px, remove=line_range(carried[0]), template_dir=template_dir)
    assert deferred(res["before"], res["after"]), (carried[0]["name"], res["change"])


@pytest.mark.parametrize("entry", (GAL_0295, GAL_8136))
def test_galaxies_keep_their_answer_when_nothing_is_erased(shared_spectra, template_dir, entry):
    """The audits bite on contradictions, not on real galaxies: both stay accepted as observed."""
    b = _verify(_pixels(shared_spectra, entry), template_dir).outcome["brief"]
    assert b["type"] == "GALAXY" and _accepted(b), b
