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


def test_the_evaluation_set_is_scored_with_a_models_claims_beside_the_patterns(tmp_path):
    """bench/claims_eval/score.py --extractor llm, through LLMExtractor and the real client against the
    scripted server: a sentence whose claim only the model finds is judged (a false one contradicted, a
    true one supported), a sentence whose reply is unusable keeps the patterns' verdict and is counted."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from shared_data import spectra_dir

    star = {"file": "desi_quasarnp/test_coadd.fits#16", "survey": "DESI", "class": "STAR", "context_z": None,
            "holdout_spectrum": True, "holdout_phrasing": True, "kind": "presence",
            "fact": "H-gamma EW 10.95 +- 1.12 A (absorption)", "template": "-"}
    rows = [{**star, "truth": False, "text": "The violet hydrogen trough is missing altogether."},
            {**star, "truth": True, "text": "The violet hydrogen trough is deep and wide."},
            {**star, "truth": True, "text": "Nothing to add about the continuum shape."}]
    replies = {rows[0]["text"]: {"claims": [{"quote": "The violet hydrogen trough is missing altogether",
                                             "kind": "feature", "line": "H-gamma", "present": False}]},
               rows[1]["text"]: {"claims": [{"quote": "The violet hydrogen trough is deep", "kind": "feature",
                                             "line": "H-gamma", "present": True, "line_kind": "absorption"}]}}

    def responder(body):
        text = body["messages"][-1]["content"].split("TEXT:\n", 1)[1]
        return Reply.text(json.dumps(replies[text]) if text in replies else "I would rather not.")

    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    script = Path(__file__).resolve().parents[3] / "bench" / "claims_eval" / "score.py"
    env = {**os.environ, "SPECREVIEW_SHARED_DATA": str(spectra_dir().parent)}

    def score(*extra):
        done = subprocess.run([sys.executable, str(script), "--set", str(path), *extra], env=env, text=True,
                              capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    plain = score()
    with ScriptedOpenAIServer(responder=responder) as server:
        env.update(SPECREVIEW_LLM_BASE_URL=server.base_url, SPECREVIEW_LLM_MODEL="extractor",
                   SPECREVIEW_LLM_API_KEY="sk-test")
        helped = score("--extractor", "llm")
        assert len(server.requests) == 3  # one request per sentence
    assert "extractor patterns," in plain and "extractor patterns+llm:extractor," in helped
    assert "model replies: 2 used, 1 unusable" in helped
    # the "all" row: group, sentences (false), spectra, P contra, R contra, P supp, R supp, true flagged
    every = {name: next(line for line in out.splitlines() if line.strip().startswith("all")).split()
             for name, out in (("patterns", plain), ("llm", helped))}
    assert every["patterns"][1:8] == ["3", "(1)", "1", "nan", "0.000", "nan", "0.000"]  # nothing judged
    assert every["llm"][1:8] == ["3", "(1)", "1", "1.000", "1.000", "1.000", "0.500"]  # the model's claims judged
