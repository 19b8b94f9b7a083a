"""The claims test set (claims_set.yaml): real spectra, sentences half true and half false, judged
by the checker; "contradicted" must have precision and recall >= 0.9, and sentences with nothing
checkable must come out unverifiable."""
import pytest

from agents.claims import Context, check_text


def _verdict(results) -> str:
    verdicts = [r.verdict for r in results]
    if "contradicted" in verdicts:
        return "contradicted"
    return "supported" if "supported" in verdicts else "unverifiable"


@pytest.fixture(scope="module")
def judged(claims_set, set_measurers):
    out = []
    for case in claims_set["cases"]:
        z = claims_set["spectra"][case["spec"]]["z"]
        results = check_text(case["text"], Context(set_measurers[case["spec"]], z=z, z_source="case"))
        out.append((case, results, _verdict(results)))
    return out


def test_the_set_is_large_balanced_and_varied(claims_set):
    cases = claims_set["cases"]
    true = sum(c["truth"] is True for c in cases)
    false = sum(c["truth"] is False for c in cases)
    assert true + false >= 80 and abs(true - false) <= 0.1 * (true + false)
    surveys = {claims_set["spectra"][c["spec"]]["survey"] for c in cases}
    classes = {claims_set["spectra"][c["spec"]]["class"] for c in cases}
    assert len(surveys) >= 4 and len(classes) >= 4


def test_contradicted_precision_and_recall(judged):
    flagged = [case for case, _, v in judged if v == "contradicted" and case["truth"] is not None]
    false = [case for case, _, _ in judged if case["truth"] is False]
    tp = sum(case["truth"] is False for case in flagged)
    precision = tp / max(len(flagged), 1)
    recall = tp / len(false)
    missed = [case["text"] for case, _, v in judged if case["truth"] is False and v != "contradicted"]
    wrong = [case["text"] for case in flagged if case["truth"] is not False]
    assert precision >= 0.9, wrong
    assert recall >= 0.9, missed


def test_true_sentences_are_supported_not_just_spared(judged):
    true = [(case, v) for case, _, v in judged if case["truth"] is True]
    supported = sum(v == "supported" for _, v in true)
    assert supported / len(true) >= 0.85, [c["text"] for c, v in true if v != "supported"]


def test_nothing_checkable_is_unverifiable(judged):
    for case, results, verdict in judged:
        if case["truth"] == "none":
            assert verdict == "unverifiable", (case["text"], [r.to_dict() for r in results])


def test_every_result_carries_its_measurement_and_window(judged):
    for case, results, _ in judged:
        for r in results:
            assert case["text"][r.claim.start:r.claim.end] == r.claim.text
            if r.verdict == "supported" and r.claim.kind != "feature":
                assert r.measured is not None and r.window is not None, r.to_dict()
