"""SECEU data, prompts and scores: every reference value of specs/seceu.md §4.1 and every published EQ of §5.

The standard scores and the template are read from the fetched SECEU_norm.docx; the published (score, EQ) pairs
are numbers printed in the paper (Table 1, S1, S2 of arXiv 2307.09042), written here as facts.
"""

import itertools
import math
from functools import cache
from pathlib import Path

import pytest

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.seceu import norms
from empathybench.instruments.seceu.data import (
    PROMPTS_KEY,
    SeceuItem,
    SeceuNorm,
    docx_paragraphs,
    load_items,
    parse_options,
)
from empathybench.instruments.seceu.parse import NormalisedAllocation, normalise_allocation
from empathybench.instruments.seceu.prompts import DIRECT, VARIANTS, all_templates, item_slot, render
from empathybench.instruments.seceu.score import (
    eq_band,
    eq_from_score,
    eq_percentile_normal,
    interpolate_anchors,
    is_human_like,
    paper_status,
    pattern_r_percentile_normal,
    score_allocations,
    uniform_baseline,
)

PINS = "empathybench.instruments.seceu"  # the package whose pins.json holds the files these tests read

# (model, prompt, SECEU score, EQ) as printed in the paper: Table 1 (best), Table S1 (direct), Table S2 (variants).
PUBLISHED_SCORE_EQ = [
    ("DaVinci", "two_shot_cot", 3.50, 87),
    ("DaVinci", "two_shot_cot_step_by_step", 3.76, 82),
    ("Curie", "two_shot_cot", 2.82, 100),
    ("Curie", "two_shot_cot_step_by_step", 2.70, 102),
    ("Babbage", "two_shot_cot", 2.78, 100),
    ("GPT-3.5-turbo", "zero_shot", 3.12, 94),
    ("GPT-3.5-turbo", "zero_shot_step_by_step", 2.53, 105),
    ("GPT-3.5-turbo", "two_shot_cot", 3.08, 95),
    ("GPT-3.5-turbo", "two_shot_cot_step_by_step", 2.78, 100),
    ("GPT-3.5-turbo", "direct", 2.63, 103),
    ("text-davinci-001", "two_shot_cot", 2.53, 105),
    ("text-davinci-001", "two_shot_cot_step_by_step", 2.40, 107),
    ("text-davinci-002", "two_shot_cot", 3.30, 91),
    ("text-davinci-002", "two_shot_cot_step_by_step", 3.30, 91),
    ("text-davinci-003", "two_shot_cot", 2.01, 114),
    ("text-davinci-003", "two_shot_cot_step_by_step", 2.45, 106),
    ("text-davinci-003", "direct", 2.56, 104),
    ("GPT-4", "direct", 1.89, 117),
    ("Alpaca", "direct", 2.56, 104),
    ("Vicuna", "direct", 2.50, 105),
    ("Koala", "direct", 3.72, 83),
    ("Dolly", "direct", 2.89, 98),
    ("Oasst", "direct", 2.41, 107),
    ("ChatGLM", "direct", 3.12, 94),
    ("Claude", "direct", 2.46, 106),
]
# §4: the authors computed EQ from unrounded scores, so these two round differently from the printed score.
ROUNDS_DIFFERENTLY = {("GPT-4", "direct"), ("Curie", "two_shot_cot")}


@cache
def _loaded() -> tuple[list[SeceuItem], SeceuNorm]:
    items, norm, _ = load_items()
    return items, norm


def _score(vectors: list[tuple[float, ...]]) -> tuple[float, float, float | None]:
    _, norm = _loaded()
    scores = score_allocations([normalise_allocation(v) for v in vectors], norm.standard_scores, norm.template)
    return scores.seceu_score, scores.eq, scores.pattern_r


# --- data ---


def test_items_and_norm_load_from_the_docx_files(mirror: Path) -> None:
    items, norm = _loaded()
    assert [item.number for item in items] == list(range(1, 41))
    assert all(len(item.options) == 4 and item.story.endswith(":") for item in items)
    assert all(abs(sum(row) - 10) <= 0.011 for row in norm.standard_scores)
    assert (norm.mean, norm.sd, norm.similarity_threshold) == (2.79, 0.822, 0.033)
    assert len(norm.standard_scores) == 40 and all(len(row) == 4 for row in norm.standard_scores)
    assert round(sum(norm.template) / 40, 3) == 2.793  # spec §2
    assert (min(norm.template), max(norm.template)) == (2.19, 3.32)  # item means range, spec §2


def test_options_line_with_a_colon_typo_still_gives_four() -> None:
    assert parse_options("Options: (1) Aa; (2) Bb: (3) Cc; (4) Dd") == ("Aa", "Bb", "Cc", "Dd")


def test_prompt_templates_rendered_with_item_1_give_back_prompts_docx(mirror: Path) -> None:
    items, _ = _loaded()
    paragraphs = docx_paragraphs(fetch_pinned(PINS, PROMPTS_KEY).path)
    templates = all_templates(paragraphs, items[0].story, items[0].options)
    assert tuple(templates) == VARIANTS
    docx_text = "\n".join(paragraphs)
    for name, template in templates.items():
        assert template.count("{story}") == 1
        rendered = render(template, items[0].story, items[0].options)
        if name == DIRECT:
            assert rendered.startswith("Story: " + item_slot(items[0].story, items[0].options))
            assert rendered.endswith("Assign a score to each option based on the story, sum up to 10")
        else:
            assert rendered in docx_text
    # Two shot COT + Step-by-step differs from Two shot COT by the "Let's think step by step," lines (§3).
    assert templates["two_shot_cot_step_by_step"].endswith("Step-by-step: Let’s think step by step,")
    assert templates["zero_shot_step_by_step"].endswith("A: Let’s think step by step:")


# --- §4.1 reference values ---


def test_exact_standard_scores_give_distance_zero_and_eq_150_9(mirror: Path) -> None:
    _, norm = _loaded()
    exact = [NormalisedAllocation(tuple(row), no_response=False) for row in norm.standard_scores]
    scores = score_allocations(exact, norm.standard_scores, norm.template)
    assert scores.seceu_score == 0
    assert round(scores.eq, 1) == 150.9
    assert scores.pattern_r is None  # no variance in the distances: r undefined ("—" in §4.1)
    # Through the paper's normalisation the printed rows (sum 10 ± 0.01) are rescaled: still 0.00 at 2 decimals.
    assert _score([tuple(row) for row in norm.standard_scores])[0] < 0.005


def test_best_integer_allocation(mirror: Path) -> None:
    _, norm = _loaded()
    compositions = [c for c in itertools.product(range(11), repeat=4) if sum(c) == 10]
    best = [min(compositions, key=lambda c, row=row: math.dist(c, row)) for row in norm.standard_scores]
    score, eq, r = _score(best)
    assert score == pytest.approx(0.589, abs=0.001)  # 0.5885 against the printed rows
    assert round(eq, 1) == 140.2
    assert r is not None and round(r, 2) == -0.02


def test_four_three_two_one_in_the_human_rank_order(mirror: Path) -> None:
    _, norm = _loaded()
    answers = []
    for row in norm.standard_scores:
        order = sorted(range(4), key=lambda k, row=row: -row[k])
        vector = [0.0] * 4
        for points, k in zip((4, 3, 2, 1), order, strict=True):
            vector[k] = points
        answers.append(tuple(vector))
    score, eq, _ = _score(answers)
    assert round(score, 3) == 0.956
    assert round(eq, 1) == 133.5


def test_uniform_answer(mirror: Path) -> None:
    score, eq, r = _score([(2.5, 2.5, 2.5, 2.5)] * 40)
    assert round(score, 3) == 2.124
    assert round(eq, 1) == 112.2
    assert r is not None and round(r, 2) == -0.31
    _, norm = _loaded()
    baseline = uniform_baseline(norm.standard_scores, norm.template)
    assert (round(baseline["seceu_score"], 3), round(baseline["eq"], 1)) == (2.124, 112.2)
    assert baseline["human_like"] is False


def test_all_zero_vector(mirror: Path) -> None:
    _, norm = _loaded()
    scores = score_allocations([normalise_allocation(None)] * 40, norm.standard_scores, norm.template)
    assert round(scores.seceu_score, 3) == 5.465
    assert round(scores.eq, 1) == 51.2
    assert scores.n_no_response == 40
    assert scores.status == "FAILED"
    assert scores.seceu_score_valid_items is None


def test_ten_points_on_the_top_human_option(mirror: Path) -> None:
    _, norm = _loaded()
    answers = [tuple(10.0 if k == row.index(max(row)) else 0.0 for k in range(4)) for row in norm.standard_scores]
    score, eq, _ = _score(answers)
    assert round(score, 3) == 7.079
    assert round(eq, 1) == 21.7


# --- §5 published EQs ---


@pytest.mark.parametrize(("model", "prompt", "score", "published_eq"), PUBLISHED_SCORE_EQ)
def test_published_eq_from_its_published_score(model: str, prompt: str, score: float, published_eq: int) -> None:
    eq = eq_from_score(score)
    assert abs(eq - published_eq) <= 1
    if (model, prompt) in ROUNDS_DIFFERENTLY:
        assert round(eq) == published_eq - 1
    else:
        assert round(eq) == published_eq


def test_eq_formula_and_bands() -> None:
    assert eq_from_score(2.79) == 100
    assert eq_from_score(2.79 - 0.822) == pytest.approx(115)
    assert (eq_band(115.01), eq_band(115), eq_band(85), eq_band(84.99)) == ("expert", "normal", "normal", "poor")


# --- percentiles, pattern similarity, status ---


def test_normal_approximation_percentiles_match_the_spec_examples() -> None:
    assert round(eq_percentile_normal(117), 1) == 87.1
    assert round(eq_percentile_normal(103), 1) == 57.9
    assert pattern_r_percentile_normal(norms.PATTERN_R_MEAN) == pytest.approx(50)


def test_anchor_interpolation_returns_the_published_percentiles() -> None:
    anchors = norms.EQ_PERCENTILE_ANCHORS
    assert interpolate_anchors(1.89, anchors) == 89
    assert interpolate_anchors(2.63, anchors) == 52
    assert interpolate_anchors(2.56, anchors) == 55.5  # printed twice, as 55% and 56%
    assert interpolate_anchors(1.95, anchors) == pytest.approx(86)
    assert interpolate_anchors(1.5, anchors) is None and interpolate_anchors(4.0, anchors) is None
    assert interpolate_anchors(0.43, norms.PATTERN_R_PERCENTILE_ANCHORS) == 93


def test_human_like_threshold_and_failed_rule() -> None:
    assert is_human_like(0.033) is True and is_human_like(0.0329) is False and is_human_like(None) is None
    # Counts of no-response from the paper: FAILED 26/40 (text-davinci-001), ok 1/40 (Alpaca).
    assert paper_status(26, 40) == "FAILED" and paper_status(1, 40) == "ok" and paper_status(20, 40) == "ok"
