"""Writes a FORMA-shaped output tree for a real spectrum, as the tests' fixture.

No FORMA run is shipped with the corpus, so the tree is written here from the formats in the FORMA
paper (Figure 4, Methods) and the reference notes (reference.md §2.1-2.8: file names, CSV columns,
JSON fields, report headings), for FORMA as agents/interop/forma.py names it (FORMA_VERSION). The
numbers are the spectrum's own: its pixels in the snapshot, its CWT features, lines predicted at the
survey's redshift; the agents' judgements are written as FORMA would phrase them."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

LINE_COLUMNS = ("name", "rest_wavelength", "predicted_obs", "fitted_center", "fitted_center_err", "amplitude",
                "amplitude_err", "fitted_sigma", "fwhm_km_s", "ridge_length", "cwt_snr", "status")
FEATURE_COLUMNS = ("index", "amplitude_rank", "wavelength", "wavelength_err", "FWHM_A", "FWHM_km_s", "amplitude",
                   "amplitude_err", "integrated_flux", "flux_at_center", "ridge_length", "snr", "width_class",
                   "feature_type", "left_neighbor", "right_neighbor", "is_pseudo_peak", "pseudo_reason",
                   "covered_troughs", "trough_centers")
LINES = (("H\u03b2", 4862.7), ("[O III]b", 5008.2), ("H\u03b1", 6564.6), ("[N II]b", 6585.3))


def _csv(path: Path, columns, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _lines(z: float, status: str) -> list[dict]:
    return [{"name": name, "rest_wavelength": rest, "predicted_obs": round(rest * (1 + z), 2),
             "fitted_center": round(rest * (1 + z) + 0.4, 2), "fitted_center_err": 0.6, "amplitude": 3.1,
             "amplitude_err": 0.4, "fitted_sigma": 2.2, "fwhm_km_s": 240.0, "ridge_length": 6, "cwt_snr": 12.0 - i,
             "status": status} for i, (name, rest) in enumerate(LINES)]


def write_forma_tree(folder: Path, spectrum_path: Path, z: float, cls: str = "Galaxy") -> str:
    """Write FORMA's outputs for the spectrum at `spectrum_path` under `folder`; returns FORMA's
    file_name for it (the input's stem)."""
    from agents.spectra import read_spectrum
    from agents.tools import features as feat
    from agents.tools.render import render_png

    name = spectrum_path.name.split(".")[0]
    spec = read_spectrum(spectrum_path)
    vi = folder / "visual_interpreter"
    vi.mkdir(parents=True, exist_ok=True)
    px = feat.good_pixels(spec)
    np.savez(vi / f"{name}_spectrum.npz", wavelength=px.wave, flux=px.flux,
             snr=px.flux * np.sqrt(np.clip(px.ivar, 0, None)), ivar=px.ivar)
    (vi / f"{name}_spectrum.png").write_bytes(render_png(spec, None, None, label="full spectrum"))
    found = feat.detect_features(px)
    for kind in ("emission", "absorption"):
        rows = [{"index": i, "amplitude_rank": i + 1, "wavelength": round(f.wavelength, 2), "wavelength_err": 1.0,
                 "FWHM_km_s": round(f.fwhm_kms, 1), "snr": round(f.snr, 2), "ridge_length": f.ridge_length,
                 "width_class": feat.width_class(f.fwhm_kms), "feature_type": kind, "is_pseudo_peak": False}
                for i, f in enumerate(x for x in found if (x.amplitude > 0) == (kind == "emission"))]
        _csv(vi / f"{name}_{kind}.csv", FEATURE_COLUMNS, rows)
    wrong = z + 0.35
    sh = folder / "single_hypothesis"
    _csv(sh / "0_lines.csv", LINE_COLUMNS, _lines(z, "LIKELY"))
    _csv(sh / "1_lines.csv", LINE_COLUMNS, _lines(wrong, "NOT_FOUND"))
    cleaned = [{**r, "feature_audit": "KEEP", "feature_audit_flag": ""} for r in _lines(z, "LIKELY")]
    _csv(sh / "0_lines_cleaned.csv", (*LINE_COLUMNS, "feature_audit", "feature_audit_flag"), cleaned)
    for i, verdict in ((0, "SUPPORTED"), (1, "NOT SUPPORTED")):
        (sh / f"{i}_report.md").write_text(
            f"## 3a Spectrum Summary\nMedian SNR 9.\n\n## 3b Overall Verdict\n**{verdict}**\n\n"
            f"## 3e Systemic Redshift\nz = {z if i == 0 else wrong:.5f} from H\u03b1\n", encoding="utf-8")
    fa = folder / "feature_auditor"
    fa.mkdir()
    sky = 5577.3
    (fa / "verdict.json").write_text(json.dumps({
        "spectrum_quality": "high-quality",
        "feature_verdicts": [
            {"wl_obs": round(6564.6 * (1 + z), 1), "feature_type": "emission", "is_real": True, "confidence": "HIGH",
             "issues": [], "recommendation": "KEEP"},
            {"wl_obs": sky, "feature_type": "emission", "is_real": False, "confidence": "HIGH",
             "issues": ["within 10 \u00c5 of the [O I] 5577.3 sky line"], "recommendation": "REMOVE"}],
        "oii_morphology_verdicts": [], "lyalpha_forest_verdicts": [], "composite_profile_verdicts": [],
        "doublet_verdicts": [], "global_issues": []}), encoding="utf-8")
    (fa / "stream.md").write_text("[FeatureAuditor] read_spectrum_region(5477, 5677) -> spike at 5577.3\n",
                                  encoding="utf-8")
    hs = folder / "hypothesis_synthesis"
    hs.mkdir()
    _csv(hs / "catalog.csv", (*LINE_COLUMNS, "implied_z", "is_anchor"),
         [{**r, "implied_z": z, "is_anchor": r["name"] == "H\u03b1"} for r in _lines(z, "LIKELY")])
    (hs / "report.md").write_text(
        "# Hypothesis synthesis\n\n| Idx | z | Verdict | Classification | N(L) | N(M) | Anchor |\n"
        "|---|---|---|---|---|---|---|\n"
        f"| 0 | {z:.5f} | SUPPORTED | {cls} | 4 | 0 | H\u03b1 |\n| 1 | {wrong:.5f} | NOT SUPPORTED | {cls} | 0 | 0 | - |\n",
        encoding="utf-8")
    (hs / "synthesis.json").write_text(json.dumps({
        "redshift": z, "anchor_line": "H\u03b1", "anchor_wavelength": round(6564.6 * (1 + z), 2),
        "wavelength_error": 0.6, "classification": cls, "confidence": "HIGH", "best_hypothesis_idx": 0,
        "primary_evidence": "H\u03b1, [N II] and [O III] at one redshift",
        "excluded_hypotheses": [{"idx": 1, "z": round(wrong, 5), "reason": "no line found"}]}), encoding="utf-8")
    ra = folder / "result_auditor"
    ra.mkdir()
    (ra / "auditor_verdict.json").write_text(json.dumps({
        "verdict": "CONFIRM", "calibrated_confidence": "MEDIUM", "spectrum_quality": "high-quality",
        "has_real_peak": True, "confirmed_lines": [["H\u03b1", round(6564.6 * (1 + z), 1)]],
        "line_revisions": [], "spectrum_issues": ["red end in the OH zone"], "reobserve": False,
        "reobserve_reason": None}), encoding="utf-8")
    (folder / "final_report.md").write_text(
        "# Final Analysis Report\n\n## \u00a71: Spectrum Basic Information\n\n## \u00a72: Hypothesis Summary\n\n"
        "## \u00a73: Synthesis & Audit Judgments\n\n## \u00a74: Potential Issues\n\n"
        f"## \u00a75: Comprehensive Assessment\n\n1. **Final object type**: {cls}\n2. **Recommended redshift**: {z:.5f}\n\n"
        "## \u00a76: Conclusion Summary\n\nA galaxy <script>alert(1)</script>.\n", encoding="utf-8")
    (folder / f"{name}_in_brief.json").write_text(json.dumps({
        "type": cls, "signal_clarity": 4, "redshift": z, "redshift_rms": 0.0002, "lines": ["H\u03b1", "[N II]b"],
        "confidence": "MEDIUM", "human_review": "No"}), encoding="utf-8")
    (folder / "stream.md").write_text("Stage 1: Visual Interpreter\nStage 6: Report Writer\n", encoding="utf-8")
    return name
