"""Spec-o3 vetting agent: one LangGraph loop, policies `rules` (offline) and `openai`."""
from agents.vet.answer import ParsedAnswer, parse_answer
from agents.vet.run import BACKENDS, vet_spectrum

__all__ = ["BACKENDS", "ParsedAnswer", "parse_answer", "vet_spectrum"]
