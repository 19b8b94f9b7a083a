"""FORMA verification protocol as a LangGraph StateGraph (reference.md section 2).

visual_interpreter -> hypotheses -> analysis -> feature_auditor -> synthesis -> result_auditor ->
report_writer. Every node is a deterministic rule set by default and writes trajectory steps; the
optional LLM nodes (agents/verify/llm_review.py) add an adversarial review beside the rules.

    from agents.verify import verify_spectrum
    traj = verify_spectrum(spectrum)          # agents.trajectory.Trajectory, task="verify"
    traj.outcome["brief"]                     # the JSON brief
    traj = verify_spectrum(spectrum, llm_config=load_config())   # + adversarial LLM review
    traj.outcome["llm_review"], traj.outcome.get("llm_disagrees")
"""
from agents.lazy_exports import lazy_exports

# imported when first used (PEP 562): the reviewer imports this package's rule modules
# (agents.verify.analysis) at server start, and the graph would bring LangGraph along
_HOME = {**dict.fromkeys(("LLM_BACKEND", "RULES_MODEL", "agent_info", "build_graph", "verify_pixels",
                          "verify_spectrum"), "agents.verify.graph"),
         **dict.fromkeys(("LLMReview", "parse_review"), "agents.verify.llm_review")}
__all__ = sorted(_HOME)
__getattr__ = lazy_exports(__name__, _HOME)
