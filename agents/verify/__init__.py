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
from agents.verify.graph import LLM_BACKEND, RULES_MODEL, agent_info, build_graph, verify_pixels, verify_spectrum  # noqa: F401
from agents.verify.llm_review import LLMReview, parse_review  # noqa: F401
