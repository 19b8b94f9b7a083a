"""A FORMA run (agents/interop/forma.py) as a verify trajectory whose steps play back like SpecReview's
own FORMA-protocol runs (agents/verify/graph.py): the same step kinds, tool names and data keys
(`render`, `cwt_features`, `redshift_hypotheses`, `analyse_hypothesis` with {idx, z, class},
`feature_audit`, verdicts by feature_auditor / synthesis / result_auditor, the report as the answer),
so the plot, the candidates list and the verdict badges read them unchanged. Stream logs are `think`
steps after their step's other steps. Nothing is made up: a step whose file is missing is left out and
the file is listed in `outcome["forma"]["missing"]`.
"""
from __future__ import annotations

import re
from typing import Any

from agents.interop.forma import FORMA_VERSION, MAX_FILES, STAGES, FormaError, FormaRun
from agents.interop.images import MAX_IMAGE_BYTES, PNG_MAGIC
from agents.interop.rowcheck import check_text_sizes
from agents.trajectory import HYPOTHESIS_TOOL, AgentInfo, Trajectory, Verdict

PROMPT = "Verify the class and redshift of this spectrum from its flux alone (FORMA protocol)."
BACKEND = "forma"
_VERDICT_RE = re.compile(r"\*\*\s*(NOT SUPPORTED|SUPPORTED)\s*\*\*", re.I)


def _md_table(text: str, first_header: str) -> list[dict[str, str]]:
    """Rows of the first Markdown table whose first header cell is `first_header` (case-insensitive)."""
    lines = [ln.strip() for ln in text.splitlines()]
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("|") else []
        if cells and cells[0].lower() == first_header.lower() and i + 1 < len(lines):
            rows = []
            for body in lines[i + 2:]:
                if not body.startswith("|"):
                    break
                vals = [c.strip() for c in body.strip("|").split("|")]
                rows.append(dict(zip(cells, vals, strict=False)))
            return rows
    return []


def _number(value: Any) -> float | None:
    try:
        return float(str(value).strip().lstrip("~").split()[0])
    except (ValueError, IndexError):
        return None


def _index(rel: str) -> int | None:
    found = re.match(r"(\d+)_", rel.rsplit("/", 1)[-1])
    return int(found.group(1)) if found else None


class _Build:
    def __init__(self, run: FormaRun):
        self.run = run
        self.missing: list[str] = []
        self.traj = Trajectory(id=run.digest(), task="verify",
                               agent=AgentInfo(name="verify", backend=BACKEND, model=None, version=FORMA_VERSION))

    def need(self, pattern: str, what: str, under: str | None = None) -> str | None:
        rel = self.run.first(pattern, under)
        if rel is None:
            self.missing.append(what)
        return rel

    def stream(self, stage: str | None) -> None:
        for rel in self.run.find(r"stream\.md"):
            head = rel.split("/", 1)[0] if "/" in rel else None
            if head == stage or (stage is None and head not in STAGES):
                self.traj.add("think", text=self.run.text(rel), data={"source": rel, "role": "stream log"})

    def render(self, wave_min: float | None, wave_max: float | None, label: str, png_rel: str | None = None) -> None:
        args = {"wave_min": None if wave_min is None else round(wave_min, 1),
                "wave_max": None if wave_max is None else round(wave_max, 1), "label": label}
        self.traj.add("tool_call", tool_name="render", tool_args=args, label=label)
        sha = None
        if png_rel is not None:
            png = self.run.files[png_rel].read_bytes()[: MAX_IMAGE_BYTES + 1]
            if png.startswith(PNG_MAGIC) and len(png) <= MAX_IMAGE_BYTES:
                sha = self.traj.add_image(png)
        self.traj.add("tool_result", tool_name="render", tool_args=args, image_sha=sha, label=label,
                      text="" if sha else "deferred render: reproduce from the spectrum and these arguments",
                      data={"source": png_rel} if png_rel else {})


def run_to_trajectory(run: FormaRun) -> tuple[Trajectory, list[str]]:
    """(trajectory, missing parts by name). FormaError names a file that cannot be read."""
    if run.too_many:
        raise FormaError(f"more than {MAX_FILES:,} files in the folder; not read")
    b = _Build(run)
    _visual_interpreter(b)
    hyps = _hypotheses(b)
    _feature_audit(b)
    synthesis = _synthesis(b, hyps)
    audit = _result_audit(b)
    _report(b, synthesis, audit)
    check_text_sizes(b.traj.model_dump(mode="json"))  # RowError naming the step's field and the limit
    return b.traj, b.missing


def _visual_interpreter(b: _Build) -> None:
    run, traj = b.run, b.traj
    snap = b.need(r".*_spectrum\.npz", f"visual_interpreter/{run.name}_spectrum.npz (the snapshot)")
    data = {"forma_name": run.name, **(run.snapshot(snap) if snap else {})}
    traj.add("prompt", text=PROMPT, data=data)
    plots = [p for p in run.find(r".*\.png") if p.startswith("visual_interpreter/")]
    b.render(None, None, "full spectrum", plots[0] if plots else None)
    found = [r for r in (run.first(r".*_emission\.csv"), run.first(r".*_absorption\.csv")) if r]
    if not found:
        b.missing.append(f"visual_interpreter/{run.name}_emission.csv and _absorption.csv (CWT features)")
    else:
        features = [row for rel in found for row in run.csv(rel)]
        traj.add("tool_call", tool_name="cwt_features", tool_args={"wavelet": "mexh", "source": found})
        traj.add("tool_result", tool_name="cwt_features", text=f"{len(features)} features",
                 data={"features": features})
    b.stream("visual_interpreter")


def _hypotheses(b: _Build) -> dict[int, dict[str, Any]]:
    """{idx: {idx, z, class, verdict}} from the synthesis overview table, completed by the
    single-hypothesis reports; then one analysis step per hypothesis folder entry."""
    run, traj = b.run, b.traj
    report = run.first(r"report\.md", "hypothesis_synthesis")
    table = _md_table(run.text(report), "Idx") if report and report.startswith("hypothesis_synthesis/") else []
    hyps: dict[int, dict[str, Any]] = {}
    for row in table:
        idx = _number(row.get("Idx"))
        if idx is not None:
            hyps[int(idx)] = {"idx": int(idx), "z": _number(row.get("z")), "class": row.get("Classification") or None,
                              "verdict": (row.get("Verdict") or "").upper() or None, "source": "forma"}
    line_files = {_index(r): r for r in run.find(r"\d+_lines\.csv")}
    reports = {_index(r): r for r in run.find(r"\d+_report\.md")}
    for idx in sorted(set(line_files) | set(reports)):
        hyps.setdefault(idx, {"idx": idx, "z": None, "class": None, "verdict": None, "source": "forma"})
    if not hyps:
        b.missing.append("single_hypothesis/{i}_lines.csv and {i}_report.md (the hypothesis analyses)")
        return hyps
    if not table:
        b.missing.append("hypothesis_synthesis/report.md overview table (the hypotheses' redshifts)")
    traj.add("tool_call", tool_name="redshift_hypotheses", tool_args={"engine": "redrock (FORMA)"})
    traj.add("tool_result", tool_name="redshift_hypotheses", text=f"{len(hyps)} hypotheses",
             data={"hypotheses": [hyps[i] for i in sorted(hyps)]})
    for idx in sorted(hyps):
        h = hyps[idx]
        traj.add("tool_call", tool_name=HYPOTHESIS_TOOL, tool_args={"idx": idx, "z": h["z"], "class": h["class"]})
        lines_rel = run.first(rf"{idx}_lines_cleaned\.csv") or line_files.get(idx)
        lines = run.csv(lines_rel) if lines_rel else []
        md = run.text(reports[idx]) if idx in reports else None
        if lines_rel is None:
            b.missing.append(f"single_hypothesis/{idx}_lines.csv")
        if md is None:
            b.missing.append(f"single_hypothesis/{idx}_report.md")
        found = _VERDICT_RE.search(md or "")
        verdict = h["verdict"] or (found.group(1).upper() if found else None)
        status = [str(ln.get("status") or "").upper() for ln in lines]
        likely = [ln for ln in lines if str(ln.get("status") or "").upper() == "LIKELY"
                  and _number(ln.get("fitted_center") or ln.get("predicted_obs")) is not None]
        if likely:
            best = max(likely, key=lambda ln: _number(ln.get("cwt_snr")) or 0)
            centre = _number(best.get("fitted_center") or best.get("predicted_obs"))
            b.render(centre - 150, centre + 150, f"hypothesis {idx}: {h['class']} z={h['z']}")
        summary = {"idx": idx, "z": h["z"], "class": h["class"], "source": "forma", "verdict": verdict,
                   **{f"n_{s.lower()}": status.count(s) for s in ("LIKELY", "MARGINAL", "NOT_FOUND", "MASKED")}}
        traj.add("tool_result", tool_name=HYPOTHESIS_TOOL, text=f"#{idx} {verdict or '(no verdict)'}",
                 data={"summary": summary, "lines": lines, "report": md, "source": lines_rel})
    b.stream("single_hypothesis")
    return hyps


def _feature_audit(b: _Build) -> None:
    rel = b.need(r"verdict\.json", "feature_auditor/verdict.json (the Feature Auditor's verdicts)", "feature_auditor")
    if rel is None or not rel.startswith("feature_auditor/"):
        return
    fa = b.run.json(rel)
    if not isinstance(fa, dict):
        raise FormaError(f"{rel}: expected a JSON object")
    for i, v in enumerate(fa.get("feature_verdicts") or []):
        if not isinstance(v, dict):
            raise FormaError(f"{rel}: feature_verdicts[{i}]: expected an object")
        value = str(v.get("recommendation") or "").upper()
        if value in ("REMOVE", "FLAG"):
            where = f"{v.get('wl_obs')} Å {v.get('feature_type') or ''}".strip()
            issues = "; ".join(str(x) for x in (v.get("issues") or []))
            b.traj.add("verdict", verdict=Verdict(who="feature_auditor", value=value, target=where,
                                                  credibility=None if v.get("confidence") is None
                                                  else str(v["confidence"]),
                                                  evidence=[f"{where}: {issues}" if issues else where]))
    b.traj.add("tool_result", tool_name="feature_audit", text=f"spectrum quality: {fa.get('spectrum_quality')}",
               data={**fa, "source": rel})
    b.stream("feature_auditor")


def _synthesis(b: _Build, hyps: dict[int, dict[str, Any]]) -> dict[str, Any]:
    run = b.run
    rels = [r for r in run.find(r".*\.json") if r.startswith("hypothesis_synthesis/")]
    catalog = run.first(r"catalog\.csv", "hypothesis_synthesis")
    report = run.first(r"report\.md", "hypothesis_synthesis")
    if not rels:
        b.missing.append("hypothesis_synthesis/*.json (the synthesis verdict)")
    if catalog is None:
        b.missing.append("hypothesis_synthesis/catalog.csv")
    if report is None or not report.startswith("hypothesis_synthesis/"):
        b.missing.append("hypothesis_synthesis/report.md")
        report = None
    if not rels and catalog is None and report is None:
        return {}
    syn = run.json(rels[0]) if rels else {}
    if not isinstance(syn, dict):
        raise FormaError(f"{rels[0]}: expected a JSON object")
    best = syn.get("best_hypothesis_idx")
    best_h = hyps.get(int(best)) if isinstance(best, int | float) and not isinstance(best, bool) else None
    excluded = [f"#{e.get('idx')} z={e.get('z')}: {e.get('reason')}" for e in syn.get("excluded_hypotheses") or []
                if isinstance(e, dict)]
    evidence = [str(x) for x in (syn.get("primary_evidence") if isinstance(syn.get("primary_evidence"), list)
                                 else [syn["primary_evidence"]] if syn.get("primary_evidence") else [])]
    b.traj.add("verdict", text=f"best hypothesis #{best}",
               verdict=Verdict(who="synthesis", value=(best_h or {}).get("verdict") or ("NONE" if best is None else "BEST"),
                               rule="FORMA-SYNTHESIS", credibility=None if syn.get("confidence") is None
                               else str(syn["confidence"]), evidence=excluded + evidence,
                               target=None if best is None else
                               f"#{best} {syn.get('classification')} z={syn.get('redshift')}"),
               data={**syn, "catalog": run.csv(catalog) if catalog else None,
                     "report": run.text(report) if report else None, "source": [*rels[:1], catalog, report]})
    b.stream("hypothesis_synthesis")
    return syn


def _result_audit(b: _Build) -> dict[str, Any]:
    rel = b.need(r"auditor_verdict\.json", "result_auditor/auditor_verdict.json (the Result Auditor's verdict)")
    if rel is None:
        return {}
    ra = b.run.json(rel)
    if not isinstance(ra, dict):
        raise FormaError(f"{rel}: expected a JSON object")
    revisions = [f"{r.get('line')}: {r.get('action')} ({r.get('reason')})" for r in ra.get("line_revisions") or []
                 if isinstance(r, dict)]
    issues = [str(x) for key in ("spectrum_issues", "key_issues") for x in (ra.get(key) or [])
              if isinstance(ra.get(key), list)]
    b.traj.add("verdict", verdict=Verdict(who="result_auditor", value=str(ra.get("verdict") or "UNCERTAIN").upper(),
                                          rule="FORMA-RESULT-AUDITOR",
                                          credibility=None if ra.get("calibrated_confidence") is None
                                          else str(ra["calibrated_confidence"]).upper(),
                                          evidence=revisions + issues),
               data={**ra, "source": rel})
    b.stream("result_auditor")
    return ra


def _brief(b: _Build) -> dict[str, Any] | None:
    rel = b.run.first(r".*_in_brief\.json")
    if rel is not None:
        brief = b.run.json(rel)
        if not isinstance(brief, dict):
            raise FormaError(f"{rel}: expected a JSON object")
        return brief
    row = b.run.brief_row
    if row is None:
        b.missing.append(f"{b.run.name}_in_brief.json (or its row of in_brief.csv)")
        return None
    return {"type": row.get("type"), "signal_clarity": _number(row.get("signal_clarity")),
            "redshift": _number(row.get("redshift")), "redshift_rms": _number(row.get("redshift_rms")),
            "lines": row.get("lines"), "confidence": row.get("confidence"), "human_review": row.get("human_review")}


def _report(b: _Build, synthesis: dict[str, Any], audit: dict[str, Any]) -> None:
    b.stream("report_writer")
    b.stream(None)
    rel = b.need(r"final_report\.md", "final_report.md (the Report Writer's report)")
    md = b.run.text(rel) if rel else ""
    brief = _brief(b)
    b.traj.add("answer", text=md, answer=brief)
    out: dict[str, Any] = {"report": md, "brief": brief,
                           "forma": {"name": b.run.name, "version": FORMA_VERSION, "missing": b.missing,
                                     "files": sorted(b.run.files)}}
    if audit:
        out["verdict"] = str(audit.get("verdict") or "").upper() or None
    credibility = audit.get("calibrated_confidence") or (brief or {}).get("confidence")
    if credibility is not None:
        out["credibility"] = str(credibility).upper()
    if brief:
        z = brief.get("redshift")
        out.update({"type": brief.get("type"), "redshift": z, "z": z})
    b.traj.outcome = out
