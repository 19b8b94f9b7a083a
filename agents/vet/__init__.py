"""Spec-o3 vetting agent: one LangGraph loop, policies `rules` (offline) and `openai`.

Its names are imported when first used (PEP 562): the reviewer imports the renders of this package
(agents.vet.renders) at server start, and importing the graph with it brought LangGraph and
LangChain along (~1 s of a fresh server's first page).
"""
from agents.lazy_exports import lazy_exports

_HOME = {"BACKENDS": "agents.vet.run", "vet_spectrum": "agents.vet.run",
         "ParsedAnswer": "agents.vet.answer", "parse_answer": "agents.vet.answer"}
__all__ = sorted(_HOME)
__getattr__ = lazy_exports(__name__, _HOME)
