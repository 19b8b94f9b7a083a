"""The FORMA pipeline as a LangGraph StateGraph, recording a trajectory as it goes.

State carries the working objects (pixels, features, hypotheses, results, audits) and the
Trajectory being written; each node appends its steps. Renders of the windows a node looked at are
recorded as `render` tool results with their arguments (deferred: the reviewer re-renders them from
the spectrum) or, with eager=True, as PNGs made by agents.tools.render.

With a model configured (`llm_config=` or `chat_model=`), an `llm_review` node runs between the
result auditor and the report writer (agents/verify/llm_review.py): its opinion is recorded beside
the rule verdicts and the trajectory's agent is backend "rules+openai" with the model's name (the
store's resume key); without one the graph skips that node and touches no network.
"""
from __future__ import annotations

import time
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from agents.tools import features as feat
from agents.tools.continuum import fit_continuum
from agents.tools.hypotheses import generate_hypotheses
from agents.tools.judgeable import assess, refuse
from agents.tools.measure import Arrays
from agents.trajectory import HYPOTHESIS_TOOL, AgentInfo, Trajectory, Verdict
from agents.verify import analysis, classify, feature_auditor, llm_review, report, result_auditor, synthesis

VERSION = "0.1.0"
RULES_MODEL = f"forma-rules-{VERSION}"  # the store's resume key (backend, model) for rule runs
LLM_BACKEND = "rules+openai"  # rules always decide; an OpenAI-compatible model reviews beside them
PROMPT = "Verify the class and redshift of this spectrum from its flux alone (FORMA protocol)."


class VerifyState(TypedDict, total=False):
    pixels: Any
    spectrum: Any
    meta: dict
    options: dict
    features: list
    continuum: Any
    hypotheses: list
    results: list
    feature_audit: Any
    synthesis: Any
    audit: Any
    brief: dict
    report: str
    trajectory: Trajectory
    timings: dict
    llm: dict  # {"chat_model", "config"} when a model is configured
    llm_review: Any  # llm_review.LLMReview


def _render(state: VerifyState, wave_min: float | None, wave_max: float | None, label: str) -> None:
    traj = state["trajectory"]
    args = {"wave_min": None if wave_min is None else round(float(wave_min), 1),
            "wave_max": None if wave_max is None else round(float(wave_max), 1), "label": label}
    traj.add("tool_call", tool_name="render", tool_args=args, label=label)
    sha = None
    if state["options"].get("eager_renders") and state.get("spectrum") is not None:
        try:
            from agents.tools.render import render_png
            sha = traj.add_image(render_png(state["spectrum"], wave_min, wave_max, label=label))
        except Exception as exc:  # a render failure must not cost the verification
            traj.add("tool_result", tool_name="render", tool_args=args, text=f"render failed: {exc}", is_error=True)
            return
    traj.add("tool_result", tool_name="render", tool_args=args, image_sha=sha, label=label,
             text="" if sha else "deferred render: reproduce from the spectrum and these arguments")


def _timed(name):
    def wrap(fn):
        def node(state: VerifyState) -> dict:
            t0 = time.perf_counter()
            out = fn(state) or {}
            timings = dict(state.get("timings", {}))
            timings[name] = round(time.perf_counter() - t0, 4)
            out["timings"] = timings
            return out
        node.__name__ = name
        return node
    return wrap


@_timed("visual_interpreter")
def visual_interpreter(state: VerifyState) -> dict:
    px = state["pixels"]
    traj = state["trajectory"]
    opts = state["options"]
    traj.add("prompt", text=PROMPT,
             data={"coverage": [px.wave_min_all, px.wave_max_all], "good_pixels": int(px.wave.size),
                   "median_snr": round(px.median_snr, 2), "masked_ranges": px.masked_ranges[:20]})
    _render(state, None, None, "full spectrum")
    args = {"wavelet": "mexh", "n_scales": feat.CWT_N_SCALES, "widths_px": [feat.CWT_MIN_WIDTH, feat.CWT_MAX_WIDTH],
            "snr_threshold": opts.get("snr_threshold", feat.CWT_SNR_THRESH),
            "min_ridge_length": opts.get("min_ridge_length", feat.CWT_MIN_RIDGE_LENGTH)}
    traj.add("tool_call", tool_name="cwt_features", tool_args=args)
    found = feat.detect_features(px, snr_threshold=args["snr_threshold"], min_ridge_length=args["min_ridge_length"])
    traj.add("tool_result", tool_name="cwt_features", text=f"{len(found)} features",
             data={"features": [f.as_dict() for f in found]})
    traj.add("tool_call", tool_name="continuum", tool_args={"model": "Chebyshev1D", "degrees": [1, 10]})
    cont = fit_continuum(px.wave, px.flux, found)
    traj.add("tool_result", tool_name="continuum", text=cont.description, data=cont.as_dict())
    return {"features": found, "continuum": cont}


@_timed("hypotheses")
def hypotheses(state: VerifyState) -> dict:
    opts = state["options"]
    traj = state["trajectory"]
    args = {"engine": opts.get("engine", "builtin"), "n": opts.get("n_hypotheses", 6)}
    traj.add("tool_call", tool_name="redshift_hypotheses", tool_args=args)
    hyps = generate_hypotheses(state["pixels"], state["features"], n=args["n"],
                               template_dir=opts.get("template_dir"), engine=args["engine"])
    traj.add("tool_result", tool_name="redshift_hypotheses", text=f"{len(hyps)} hypotheses",
             data={"hypotheses": [dict(idx=i, **h.as_dict()) for i, h in enumerate(hyps)]})
    return {"hypotheses": hyps}


def _key_window(res) -> tuple[float, float] | None:
    lines = [ln for ln in res.credible() if ln.key] or [ln for ln in res.lines if ln.key and ln.status != "MASKED"]
    if not lines:
        return None
    centre = max(lines, key=lambda ln: ln.snr or 0).predicted
    return centre - 150, centre + 150


@_timed("analysis")
def analyse(state: VerifyState) -> dict:
    traj = state["trajectory"]
    results = []
    for i, h in enumerate(state["hypotheses"]):
        traj.add("tool_call", tool_name=HYPOTHESIS_TOOL,
                 tool_args={"idx": i, "z": round(h.z, 6), "class": h.spectype})
        res = analysis.analyse(state["pixels"], state["features"], h, i,
                               use_fits=state["options"].get("use_fits", True))
        classify.apply_class_rules(res, state["features"])
        results.append(res)
        win = _key_window(res)
        if win and i < 3:
            _render(state, win[0], win[1], f"hypothesis {i}: {h.spectype} z={h.z:.4f}")
        traj.add("tool_result", tool_name=HYPOTHESIS_TOOL, text=f"#{i} {res.verdict}",
                 data={"summary": res.summary(), "lines": [ln.as_row() for ln in res.lines]})
    return {"results": results}


@_timed("feature_auditor")
def audit_features(state: VerifyState) -> dict:
    traj = state["trajectory"]
    fa = feature_auditor.audit(state["results"], state["pixels"], state["features"])
    for v in fa.verdicts:
        if v.value != "KEEP":
            traj.add("verdict", verdict=Verdict(who="feature_auditor", value=v.value, rule=v.rule,
                                               evidence=[v.evidence], target=f"#{v.hypothesis} {v.line}"))
    traj.add("tool_result", tool_name="feature_audit", text=f"spectrum quality: {fa.spectrum_quality}",
             data={"feature_verdicts": [v.as_dict() for v in fa.verdicts]})
    for r in state["results"]:  # removals and flags change the anchor and support
        analysis._systemic(r)
        classify.apply_class_rules(r, state["features"])
    return {"feature_audit": fa}


@_timed("synthesis")
def synthesise(state: VerifyState) -> dict:
    syn = synthesis.synthesise(state["results"])
    best = syn.best
    state["trajectory"].add(
        "verdict", text=f"best hypothesis #{best.idx if best else None}",
        verdict=Verdict(who="synthesis", value=best.verdict if best else "NONE", rule="SYN-RANK",
                        evidence=[f"#{e['idx']} {e['class']} z={e['z']}: {e['reason']}" for e in syn.excluded]
                        + syn.concerns,
                        target=None if best is None else f"#{best.idx} {best.spectype} z={best.hypothesis.z:.5f}"),
        data=syn.as_dict())
    return {"synthesis": syn}


@_timed("result_auditor")
def audit_result(state: VerifyState) -> dict:
    traj = state["trajectory"]
    res = result_auditor.audit_result(state["synthesis"], state["feature_audit"], state["pixels"], state["features"])
    for o in res.outcomes:
        traj.add("verdict", verdict=Verdict(who=o.rule, value="PASS" if o.cap == "HIGH" else f"CAP_{o.cap}",
                                           rule=o.rule, credibility=o.cap, evidence=[o.evidence]))
    traj.add("verdict", verdict=Verdict(who="result_auditor", value=res.verdict, rule="RA-MIN-CAP",
                                       credibility=res.credibility, evidence=res.human_review_reasons),
             data=res.as_dict())
    return {"audit": res}


def _draft(state: VerifyState):
    """(synthesis, audit, feature audit, brief, continuum, report) as the rules leave them."""
    syn = state.get("synthesis") or synthesis.Synthesis(None, None)
    audit = state.get("audit") or result_auditor.audit_result(syn, feature_auditor.FeatureAudit(), state["pixels"])
    fa = state.get("feature_audit") or feature_auditor.FeatureAudit()
    b = report.brief(syn, audit, state["pixels"], state.get("features", []))
    cont = state.get("continuum") or fit_continuum(state["pixels"].wave, state["pixels"].flux, [])
    md = report.markdown(state.get("meta", {}), state["pixels"], cont, state.get("features", []),
                         state.get("results", []), fa, syn, audit, b)
    return syn, audit, fa, b, cont, md


@_timed("llm_review")
def review_with_llm(state: VerifyState) -> dict:
    traj = state["trajectory"]
    llm = state["llm"]
    _, audit, _, b, _, md = _draft(state)
    verdicts = [s.verdict for s in traj.steps if s.verdict is not None]
    rev = llm_review.run_review(md, verdicts, b, chat_model=llm.get("chat_model"), cfg=llm.get("config"))
    data = {"model": rev.model, "attempts": rev.attempts, "elapsed_s": rev.elapsed_s, "role": llm_review.WHO}
    if rev.usage is not None:  # latency and tokens of the call (agents.usage), summed per run
        data["usage"] = rev.usage
    if not rev.ok:
        text = rev.raw or f"LLM review failed: {rev.error}"
        traj.add("think", text=text, is_error=True, data={**data, "error": rev.error})
        return {"llm_review": rev}
    traj.add("think", text=rev.raw, data={**data, "parse": rev.parse})
    traj.add("verdict", text=rev.narrative,
             verdict=Verdict(who=llm_review.WHO, value=rev.verdict, rule=None, credibility=rev.credibility,
                             evidence=rev.concerns),
             data={"model": rev.model, "agrees_with_rules": not rev.disagrees(audit.verdict, audit.credibility),
                   "rules": {"verdict": audit.verdict, "credibility": audit.credibility}})
    return {"llm_review": rev}


@_timed("report_writer")
def write_report(state: VerifyState) -> dict:
    traj = state["trajectory"]
    syn, audit, fa, b, cont, md = _draft(state)
    rev = state.get("llm_review")
    extra = {}
    if rev is not None:  # advisory: the rules' verdict and credibility stand, a disagreement asks a human
        review_out = rev.as_outcome(audit.verdict, audit.credibility)
        extra["llm_review"] = review_out
        if rev.disagrees(audit.verdict, audit.credibility):
            extra["llm_disagrees"] = True
            b["human_review"] = "Yes"
        md = report.markdown(state.get("meta", {}), state["pixels"], cont, state.get("features", []),
                             state.get("results", []), fa, syn, audit, b, llm_review=review_out)
    traj.add("answer", text=md, answer=b)
    traj.outcome.update({"brief": b, "report": md, "verdict": audit.verdict, "credibility": audit.credibility,
                         "type": b["type"], "redshift": b["redshift"], "z": b["redshift"], **extra})
    return {"brief": b, "report": md}


def _after_audit(state: VerifyState) -> str:
    return "llm_review" if state.get("llm") else "report_writer"


def build_graph():
    g = StateGraph(VerifyState)
    for name, fn in (("visual_interpreter", visual_interpreter), ("hypotheses", hypotheses), ("analysis", analyse),
                     ("feature_auditor", audit_features), ("synthesis", synthesise),
                     ("result_auditor", audit_result), ("llm_review", review_with_llm),
                     ("report_writer", write_report)):
        g.add_node(name, fn)
    g.add_edge(START, "visual_interpreter")
    g.add_edge("visual_interpreter", "hypotheses")  # the template scan always runs: features add evidence
    g.add_edge("hypotheses", "analysis")
    g.add_edge("analysis", "feature_auditor")
    g.add_edge("feature_auditor", "synthesis")
    g.add_edge("synthesis", "result_auditor")
    g.add_conditional_edges("result_auditor", _after_audit, ["llm_review", "report_writer"])
    g.add_edge("llm_review", "report_writer")
    g.add_edge("report_writer", END)
    return g.compile()


_GRAPH = None


def _graph():
    global _GRAPH
    if _GRAPH is None:
        _GRAPH = build_graph()
    return _GRAPH


def agent_info(llm_config=None, chat_model=None) -> AgentInfo:
    """Who ran: rules alone (backend "rules", model RULES_MODEL), or rules reviewed by a model
    (backend LLM_BACKEND, model = the model's name). The CLI's resume key is (backend, model)."""
    if llm_config is None and chat_model is None:
        return AgentInfo(name="verify", backend="rules", model=RULES_MODEL, version=VERSION)
    return AgentInfo(name="verify", backend=LLM_BACKEND, model=llm_review.model_name(chat_model, llm_config),
                     version=VERSION)


def verify_pixels(pixels, meta: dict | None = None, *, spectrum=None, spectrum_id: str | None = None,
                  llm_config=None, chat_model=None, **options) -> Trajectory:
    """Run the pipeline on prepared good pixels (agents.tools.features.Pixels). Options:
    template_dir, engine ("builtin" / "redrock"), n_hypotheses, use_fits, eager_renders,
    snr_threshold, min_ridge_length. `llm_config` (agents.llm.LLMConfig) or `chat_model` (any
    LangChain chat model) adds the LLM review; with neither, no model is called."""
    meta = dict(meta or {})
    traj = Trajectory(task="verify", source_path=meta.get("source_path"), target=meta.get("target"),
                      spectrum_id=spectrum_id, agent=agent_info(llm_config, chat_model))
    initial = {"pixels": pixels, "spectrum": spectrum, "meta": meta, "options": options,
               "trajectory": traj, "timings": {}}
    if llm_config is not None or chat_model is not None:
        initial["llm"] = {"chat_model": chat_model, "config": llm_config}
    t0 = time.perf_counter()
    state = _graph().invoke(initial)
    timings = dict(state.get("timings", {}))
    timings["total"] = round(time.perf_counter() - t0, 4)
    traj.outcome["timings"] = timings
    return traj


def verify_spectrum(spectrum, *, spectrum_id: str | None = None, llm_config=None, chat_model=None,
                    **options) -> Trajectory:
    """Verify a specutils Spectrum from agents.spectra.read_spectrum. Pipeline labels are blanked
    first: the decision uses the flux only. `llm_config` / `chat_model`: see verify_pixels. A
    spectrum with fewer than agents.spectra.core.MIN_FINITE_PIXELS finite pixels raises
    SpectrumReadError: there is nothing to verify. One too poor to judge (agents.tools.judgeable) is
    refused without running the pipeline or a model: status "unjudgeable", the reason, no type or z."""
    try:
        from agents.spectra import blank_pipeline_labels
        from agents.spectra.core import require_judgeable
        require_judgeable(spectrum, "verification")
        spectrum = blank_pipeline_labels(spectrum)
    except ImportError:  # readers not installed yet: refuse rather than peek at labels
        meta = dict(spectrum.meta or {})
        for k in ("pipeline_class", "pipeline_subclass", "pipeline_z"):
            meta[k] = None
        spectrum.meta = meta
    meta = dict(spectrum.meta or {})
    meta.pop("header", None)
    judgement = assess(Arrays.from_spectrum(spectrum))
    if not judgement.judgeable:
        traj = Trajectory(task="verify", source_path=meta.get("source_path"), target=meta.get("target"),
                          spectrum_id=spectrum_id, agent=agent_info(llm_config, chat_model))
        traj.add("prompt", text=PROMPT, data={"usable_pixels": judgement.usable_pixels})
        return refuse(traj, judgement, brief=report.empty_brief("UNJUDGEABLE"))  # readers of briefs: no class
    return verify_pixels(feat.good_pixels(spectrum), meta, spectrum=spectrum, spectrum_id=spectrum_id,
                         llm_config=llm_config, chat_model=chat_model, **options)
