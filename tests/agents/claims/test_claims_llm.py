"""The LLM extraction hook through the real langchain-openai client against the local scripted
OpenAI-compatible server: the model's claims are judged by the same checker; invented quotes drop."""
import json

from langchain_openai import ChatOpenAI
from scripted_openai_server import Reply, ScriptedOpenAIServer

from agents.claims import Context, check_text
from agents.claims.llm import llm_claims


def test_llm_claims_are_judged_by_the_checker(claims_set, set_measurers):
    text = "The blue zoom is dominated by Balmer troughs; the second one from the red end is wholly absent."
    reply = {"claims": [
        {"quote": "the second one from the red end is wholly absent", "kind": "feature", "line": "H-beta",
         "present": False, "line_kind": None},
        {"quote": "a phrase the agent never wrote", "kind": "feature", "line": "H-alpha", "present": True},
    ]}
    with ScriptedOpenAIServer() as server:
        server.push(Reply.text(json.dumps(reply)))
        model = ChatOpenAI(base_url=server.base_url, api_key="sk-test", model="extractor", max_retries=0)
        claims = llm_claims(model, text)
    assert len(claims) == 1 and claims[0].source == "llm" and claims[0].lines == ["H-beta"]
    (result,) = check_text(text, Context(set_measurers["A7V"], z=0.0, z_source="case"), claims)
    assert result.verdict == "contradicted"  # H-beta is a deep absorption line in this A7V star
