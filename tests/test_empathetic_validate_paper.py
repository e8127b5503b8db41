"""`judge validate` figures on all 10,000 released replies for a judge that copies the human rating.

Such a judge must reproduce the paper's headline statistics (specs/empathetic_responding.md §4.2) in the
validation report's source, ranking and valence sections, and agree perfectly at item level.
"""

from pathlib import Path

import pytest

from empathybench.instruments.empathetic.data import load_released
from empathybench.instruments.empathetic.validate import ValidationCase, stratified_cases, validation_report


def test_a_judge_copying_the_human_ratings_reproduces_the_paper(mirror: Path) -> None:
    prompts, _ = load_released()
    pairs = stratified_cases(prompts, None)
    assert len(pairs) == 10_000
    cases = [
        ValidationCase(
            source, p.emotion, p.valence, len(p.replies[source].split()), p.ratings[source], p.ratings[source]
        )
        for p, source in pairs
    ]
    report = validation_report(cases, {"provider": "openai", "model": "gemini-1.0-pro"})

    assert (report["n_rated"], report["n_unparseable"], report["n_reasked"]) == (10_000, 0, 0)
    assert report["accuracy"] == 1.0
    assert report["weighted_kappa_linear"] == pytest.approx(1.0)
    assert report["weighted_kappa_quadratic"] == pytest.approx(1.0)
    assert report["confusion_matrix"]["counts"] == [
        [1111, 0, 0],
        [0, 3116, 0],
        [0, 0, 5773],
    ]  # spec §4.2 summed over sources
    good = {s: e["good_pct_judge"] for s, e in report["by_source"].items()}
    assert good == {
        "human": 49.3,
        "chatgpt_empathy": 64.75,
        "llama_empathy": 60.95,
        "gemini_empathy": 54.05,
        "mixtral_empathy": 59.6,
    }
    ranking = report["ranking"]
    assert ranking["judge"] == ["chatgpt_empathy", "llama_empathy", "mixtral_empathy", "gemini_empathy", "human"]
    assert ranking["reproduced"] is True and ranking["kendall_tau"] == pytest.approx(1.0)
    assert ranking["pairs_ordered_alike"] == ranking["pairs"] == 10

    # §4.2: Good increase and 2x2 Yates p per valence; positive-only Gemini is the one non-significant gain.
    valence = report["valence"]["judge"]
    assert valence == report["valence"]["human"]
    assert valence["positive"]["gemini_empathy"]["good_increase_pct"] == pytest.approx(5.95)
    assert valence["positive"]["gemini_empathy"]["p"] == pytest.approx(0.215, abs=0.001)
    assert valence["positive"]["chatgpt_empathy"]["good_increase_pct"] == pytest.approx(36.34)
    assert valence["negative"]["chatgpt_empathy"]["good_increase_pct"] == pytest.approx(27.07)
    assert valence["negative"]["mixtral_empathy"]["p"] == pytest.approx(9.95e-05, rel=0.01)
    assert valence["negative"]["human"]["good_increase_pct"] is None
    assert report["length_bias"]["spearman_words_vs_judge"] == report["length_bias"]["spearman_words_vs_human"]

    preference = report["self_preference"]
    assert (preference["judge_family"], preference["own_sources"]) == ("gemini", ["gemini_empathy"])
    assert preference["good_gap_pp_own"] == preference["good_gap_pp_others"] == 0.0
