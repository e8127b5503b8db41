"""`judge validate` figures on a small case computed by hand, and the stratified --limit."""

from pathlib import Path

import pytest

from empathybench.instruments.empathetic.data import load_released
from empathybench.instruments.empathetic.validate import ValidationCase, stratified_cases, validation_report
from empathybench.stats.agreement import weighted_kappa


def _case(source: str, human: int, judge: int | None, words: int) -> ValidationCase:
    return ValidationCase(source, "sad", "negative", words, human, judge)


CASES = [
    _case("human", 3, 3, 10),
    _case("human", 2, 3, 20),
    _case("chatgpt_empathy", 3, 3, 30),
    _case("chatgpt_empathy", 1, 2, 40),
    _case("chatgpt_empathy", 3, 3, 50),
    _case("human", 1, None, 60),  # unparseable: left out of every figure
]


def test_hand_computed_case() -> None:
    report = validation_report(CASES, {"provider": "openai", "model": "gpt-4o-mini"})
    assert (report["n_cases"], report["n_rated"], report["n_unparseable"]) == (6, 5, 1)
    assert report["accuracy"] == pytest.approx(3 / 5)
    # Rows human Bad/Okay/Good, columns judge.
    assert report["confusion_matrix"]["counts"] == [[0, 1, 0], [0, 0, 1], [0, 0, 3]]
    # Linear weights: observed disagreement (0.5 + 0.5) / 5 = 0.2; expected 8 / 25 = 0.32; kappa 1 - 0.2/0.32.
    assert report["weighted_kappa_linear"] == pytest.approx(0.375)
    assert report["by_source"]["human"] == {"n": 2, "good_pct_judge": 100.0, "good_pct_human": 50.0, "accuracy": 0.5}
    assert report["by_source"]["chatgpt_empathy"]["good_pct_judge"] == pytest.approx(66.67)
    assert report["ranking"]["human"] == ["chatgpt_empathy", "human"]
    assert report["ranking"]["judge"] == ["human", "chatgpt_empathy"]
    assert report["ranking"]["kendall_tau"] == pytest.approx(-1.0)
    assert report["ranking"]["reproduced"] is False
    # Word ranks 1..5 against judge ranks (3.5, 3.5, 3.5, 1, 3.5): rho = -2.5 / sqrt(10 * 5).
    assert report["length_bias"]["spearman_words_vs_judge"] == pytest.approx(-2.5 / 50**0.5)
    preference = report["self_preference"]
    assert preference["judge_family"] == "openai" and preference["own_sources"] == ["chatgpt_empathy"]
    assert preference["good_gap_pp_own"] == 0.0
    assert preference["good_gap_pp_others"] == 50.0
    assert set(report["valence"]["judge"]["negative"]) == {"human", "chatgpt_empathy"}


def test_quadratic_kappa_and_perfect_agreement() -> None:
    assert weighted_kappa([1, 2, 3], [1, 2, 3], (1, 2, 3)) == pytest.approx(1.0)
    # Quadratic weights on the same case: observed (0.25 + 0.25) / 5 = 0.1; expected (0.25 + 4 + 1 + 0.75) / 25.
    assert weighted_kappa([3, 2, 3, 1, 3], [3, 3, 3, 2, 3], (1, 2, 3), "quadratic") == pytest.approx(1 - 0.1 / 0.24)


def test_stratified_limit_covers_sources_and_emotions(mirror: Path) -> None:
    prompts, _ = load_released()
    pairs = stratified_cases(prompts, 160)
    assert len(pairs) == 160
    assert {source for _, source in pairs} == {
        "human",
        "chatgpt_empathy",
        "llama_empathy",
        "gemini_empathy",
        "mixtral_empathy",
    }
    assert len({prompt.emotion for prompt, _ in pairs}) == 32
