"""Spec-o3 vetting agent: one LangGraph loop, policies `rules` (offline) and `openai`.

Its names are imported when first used (PEP 562): the reviewer imports the renders of this package
(agents.vet.renders) at server start, and importing the graph with it brought LangGraph and
LangChain along, ~2 s of the first page on a fresh server.
"""
from importlib import import_module

_HOME = {"BACKENDS": "agents.vet.run", "vet_spectrum": "agents.vet.run",
         "ParsedAnswer": "agents.vet.answer", "parse_answer": "agents.vet.answer"}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(_HOME[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
