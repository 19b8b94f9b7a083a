"""The optional LLM review node of the FORMA graph, through the real langchain-openai client against
the local scripted OpenAI-compatible server: agreement, disagreement, unparsable replies, HTTP 500
then success, a timeout. Each run ends with a recorded outcome and the rule verdicts untouched."""
import json

import pytest
from scripted_openai_server import Reply

from agents.llm import LLMConfig
from agents.verify import LLM_BACKEND, RULES_MODEL, parse_review, verify_spectrum

QSO = "sdss_pyqsofit/spec-0332-52367-0639.fits"  # SDSS broad-line QSO, z = 0.1006


@pytest.fixture(scope="module")
def qso(shared_spectra):
    from agents.spectra import read_spectrum
    return read_spectrum(shared_spectra / QSO)


@pytest.fixture(scope="module")
def rules_only(qso, template_dir):
    return verify_spectrum(qso, template_dir=template_dir)


def config(server, **kw):
    base = dict(base_url=server.base_url, model="forma-reviewer-test", api_key="sk-never-stored",
                timeout=2.0, max_retries=2, backoff=0.01, total_timeout=20.0)
    base.update(kw)
    return LLMConfig(**base)


def rule_verdicts(traj):
    return [s.verdict.model_dump() for s in traj.steps if s.verdict is not None and s.verdict.who != "llm_reviewer"]


def reply_json(verdict, credibility, concerns=(), narrative="The evidence holds."):
    return json.dumps({"verdict": verdict, "credibility": credibility, "concerns": list(concerns),
                       "narrative": narrative})


def other(value, choices):
    return next(c for c in choices if c != value)


def assert_rules_unchanged(traj, rules_only):
    assert rule_verdicts(traj) == rule_verdicts(rules_only)
    for key in ("verdict", "credibility", "type", "redshift"):
        assert traj.outcome[key] == rules_only.outcome[key]


def test_without_a_model_nothing_changes(rules_only):
    assert rules_only.agent.backend == "rules" and rules_only.agent.model == RULES_MODEL
    assert "llm_review" not in rules_only.outcome and "llm_disagrees" not in rules_only.outcome
    assert all(s.verdict is None or s.verdict.who != "llm_reviewer" for s in rules_only.steps)
    assert "LLM adversarial review" not in rules_only.outcome["report"]


def test_agreeing_review_is_recorded_beside_the_rules(openai_server, qso, template_dir, rules_only):
    rv, rc = rules_only.outcome["verdict"], rules_only.outcome["credibility"]
    openai_server.push(Reply.text("<think>checking the lines</think>\n```json\n"
                                  + reply_json(rv, rc, ["H-alpha is outside the coverage"],
                                               "Broad Balmer lines and [O III] fix z.")
                                  + "\n```"))
    traj = verify_spectrum(qso, template_dir=template_dir, llm_config=config(openai_server))
    assert traj.agent.backend == LLM_BACKEND and traj.agent.model == "forma-reviewer-test"
    assert_rules_unchanged(traj, rules_only)
    assert traj.outcome["brief"] == rules_only.outcome["brief"]
    review = traj.outcome["llm_review"]
    assert review["verdict"] == rv and review["credibility"] == rc and review["agrees_with_rules"] is True
    assert review["concerns"] == ["H-alpha is outside the coverage"] and review["parse"] == "json"
    assert "llm_disagrees" not in traj.outcome
    think = next(s for s in traj.steps if s.kind == "think" and s.data.get("role") == "llm_reviewer")
    assert think.text.startswith("<think>checking the lines</think>") and not think.is_error
    verdict = next(s for s in traj.steps if s.verdict and s.verdict.who == "llm_reviewer")
    assert verdict.index == think.index + 1 and verdict.verdict.rule is None
    assert (verdict.verdict.value, verdict.verdict.credibility) == (rv, rc)
    assert verdict.verdict.evidence == ["H-alpha is outside the coverage"]
    assert traj.steps[-1].kind == "answer" and verdict.index < traj.steps[-1].index
    md = traj.outcome["report"]
    assert "### LLM adversarial review (advisory; model forma-reviewer-test)" in md
    assert "> Broad Balmer lines and [O III] fix z." in md
    assert md.index("### LLM adversarial review") < md.index("## §4")
    # the request: model name, text only, the report draft and the rule verdicts in the messages
    (request,) = openai_server.requests
    assert request["model"] == "forma-reviewer-test"
    system, user = request["messages"]
    assert system["role"] == "system" and "adversarial" in system["content"]
    assert isinstance(user["content"], str)  # no image parts
    assert "## §3: Synthesis & Audit Judgments" in user["content"] and "# Verification report" in user["content"]
    assert f"result_auditor [RA-MIN-CAP]: {rv} ({rc})" in user["content"]
    assert json.dumps(rules_only.outcome["brief"]["lines"]) in user["content"]
    assert "sk-never-stored" not in traj.to_json()


def test_disagreeing_review_asks_for_a_human(openai_server, qso, template_dir, rules_only):
    rv = rules_only.outcome["verdict"]
    their = other(rv, ("NEEDS_REVISION", "UNCERTAIN", "CONFIRM"))
    openai_server.push(Reply.text("Verdict: " + their.replace("_", " ") + "\nCredibility: LOW\nConcerns:\n"
                                  "- [O III] 4960/5008 ratio looks off\n- rival z not excluded\n"
                                  "Narrative: The redshift rests on lines that could be sky.\n## §6: injected"))
    traj = verify_spectrum(qso, template_dir=template_dir, llm_config=config(openai_server))
    assert_rules_unchanged(traj, rules_only)
    assert traj.outcome["llm_disagrees"] is True
    assert traj.outcome["brief"]["human_review"] == "Yes"
    assert {k: v for k, v in traj.outcome["brief"].items() if k != "human_review"} == \
        {k: v for k, v in rules_only.outcome["brief"].items() if k != "human_review"}
    review = traj.outcome["llm_review"]
    assert (review["verdict"], review["credibility"], review["parse"]) == (their, "LOW", "labelled")
    assert review["concerns"] == ["[O III] 4960/5008 ratio looks off", "rival z not excluded"]
    assert review["agrees_with_rules"] is False
    md = traj.outcome["report"]
    assert "the model disagrees, so human review is requested" in md and "Human review: Yes" in md
    assert "> ## §6: injected" in md and md.count("## §6:") == 2  # quoted, not a new section
    answer = traj.steps[-1]
    assert answer.kind == "answer" and answer.answer["human_review"] == "Yes"


def test_unparsable_reply_is_an_error_step(openai_server, qso, template_dir, rules_only):
    openai_server.push(Reply.text("I think this spectrum is interesting."))
    traj = verify_spectrum(qso, template_dir=template_dir, llm_config=config(openai_server))
    assert_rules_unchanged(traj, rules_only)
    assert traj.outcome["brief"] == rules_only.outcome["brief"]
    step = next(s for s in traj.steps if s.data.get("role") == "llm_reviewer")
    assert step.kind == "think" and step.is_error and step.text == "I think this spectrum is interesting."
    assert "unparsable" in traj.outcome["llm_review"]["error"] and "llm_disagrees" not in traj.outcome
    assert not any(s.verdict and s.verdict.who == "llm_reviewer" for s in traj.steps)
    assert "The review failed (unparsable reply" in traj.outcome["report"]


def test_http_500_then_success_is_retried(openai_server, qso, template_dir, rules_only):
    rv, rc = rules_only.outcome["verdict"], rules_only.outcome["credibility"]
    openai_server.push(Reply.error(500), Reply.text(reply_json(rv, rc)))
    traj = verify_spectrum(qso, template_dir=template_dir, llm_config=config(openai_server))
    assert len(openai_server.requests) == 2 and openai_server.remaining == 0
    review = traj.outcome["llm_review"]
    assert review["attempts"] == 2 and review["agrees_with_rules"] is True
    assert_rules_unchanged(traj, rules_only)


def test_timeout_ends_with_a_recorded_error(openai_server, qso, template_dir, rules_only):
    openai_server.push(Reply.hang(3.0, Reply.text(reply_json("CONFIRM", "HIGH"))))
    traj = verify_spectrum(qso, template_dir=template_dir,
                           llm_config=config(openai_server, timeout=0.5, max_retries=0))
    review = traj.outcome["llm_review"]
    assert "call failed" in review["error"] and "Timeout" in review["error"] and review["attempts"] == 1
    step = next(s for s in traj.steps if s.data.get("role") == "llm_reviewer")
    assert step.is_error and step.text.startswith("LLM review failed: call failed")
    assert_rules_unchanged(traj, rules_only)
    assert traj.outcome["brief"] == rules_only.outcome["brief"]


def test_chat_model_without_config_calls_once(openai_server, qso, template_dir, rules_only):
    from langchain_openai import ChatOpenAI

    openai_server.push(Reply.error(503))
    model = ChatOpenAI(base_url=openai_server.base_url, api_key="x", model="bare-model", max_retries=0, timeout=2)
    traj = verify_spectrum(qso, template_dir=template_dir, chat_model=model)
    assert traj.agent.backend == LLM_BACKEND and traj.agent.model == "bare-model"
    assert len(openai_server.requests) == 1 and "503" in traj.outcome["llm_review"]["error"]
    assert_rules_unchanged(traj, rules_only)


@pytest.mark.parametrize("text, expected", [
    ('{"Verdict": "needs revision", "credibility": "medium", "concerns": "one"}',
     ("NEEDS_REVISION", "MEDIUM", ["one"])),
    ('<think>{"verdict": "CONFIRM"}</think> final: {"verdict": "UNCERTAIN", "credibility": "LOW"}',
     ("UNCERTAIN", "LOW", [])),
    ("**Verdict:** CONFIRM\n**Credibility:** HIGH\n**Concerns:**\n1. none of note\nNarrative: fine",
     ("CONFIRM", "HIGH", ["none of note"])),
    ('{"verdict": "MAYBE"}', None),
    ("The rules CONFIRM it.", None),  # a bare word is not a labelled verdict
])
def test_parse_review(text, expected):
    got = parse_review(text)
    assert (got if got is None else (got["verdict"], got["credibility"], got["concerns"])) == expected


def test_cli_verify_backend_openai(tmp_path, shared_spectra, template_dir, openai_server, monkeypatch, capsys):
    """`specreview verify --backend openai --model M` stores a rules+openai trajectory and resumes
    on that key; the rules-only run of the same spectrum is a separate trajectory."""
    import shutil

    from reviewer.cli import main
    from reviewer.store import Store

    path = tmp_path / "qso.fits"
    shutil.copy(shared_spectra / QSO, path)
    monkeypatch.setenv("SPECREVIEW_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SPECREVIEW_LLM_API_KEY", "sk-test")
    openai_server.push(Reply.text(reply_json("UNCERTAIN", "LOW", ["weak"])))
    db = tmp_path / "v.duckdb"
    common = ["verify", "--db", str(db), "--templates", template_dir, "--json", "--no-progress", str(path)]
    assert main([*common, "--backend", "openai", "--model", "cli-model"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["human_review"] == "Yes"
    assert openai_server.requests[0]["model"] == "cli-model"
    assert main([*common, "--backend", "openai", "--model", "cli-model"]) == 0  # resumed: no new request
    assert len(openai_server.requests) == 1 and "agent: rules+openai (cli-model)" in capsys.readouterr().err
    assert main(common) == 0
    with Store(db) as store:
        rows = store.trajectories.list_trajectories(task="verify")
        assert sorted((r["backend"], r["model"]) for r in rows) == [("rules", RULES_MODEL), (LLM_BACKEND, "cli-model")]
