import pytest

from agents.vet.answer import parse_answer, reward


@pytest.mark.parametrize("text, pred, ok, source", [
    ("<think>a</think><answer>\\boxed{YES} strong Balmer</answer>", "YES", True, "boxed"),
    ("<think>a</think><think>b</think><answer>\\boxed{ no }</answer>", "NO", True, "boxed"),
    # think tags unbalanced -> format error, boxed in the answer still the prediction
    ("<think>a<answer>\\boxed{YES}</answer>", "YES", False, "answer_boxed"),
    # two answers -> format error, the last one wins
    ("<think>a</think><answer>\\boxed{YES}</answer><answer>\\boxed{NO}</answer>", "NO", False, "answer_boxed"),
    # answer without boxed -> word inside it, YES first
    ("<think>a</think><answer>yes, it is; no doubt</answer>", "YES", False, "answer_word"),
    ("<think>a</think><answer>It is NOT... no</answer>", "NO", False, "answer_word"),
    # no answer tags -> first boxed anywhere
    ("<think>a</think> \\boxed{NO} then \\boxed{YES}", "NO", False, "boxed_anywhere"),
    # invalid boxed value stays the prediction
    ("<think>a</think><answer>\\boxed{MAYBE}</answer>", "MAYBE", False, "answer_boxed"),
    ("I think the answer is yes", "YES", False, "word_anywhere"),
    ("first line\n\n  final verdict unclear  \n", "FINAL VERDICT UNCLEAR", False, "last_line"),
    ("", "", False, "whole_text"),
])
def test_spec_o3_parsing_rules_and_fallbacks(text, pred, ok, source):
    parsed = parse_answer(text)
    assert (parsed.prediction, parsed.format_correct, parsed.source) == (pred, ok, source)


def test_reward_table():
    good = parse_answer("<think>x</think><answer>\\boxed{YES}</answer>")
    bad = parse_answer("\\boxed{YES}")
    assert reward(good, "YES") == 1.0 and reward(good, "NO") == 0.0
    assert reward(bad, "YES") == pytest.approx(0.8) and reward(bad, "NO") == pytest.approx(-0.2)
