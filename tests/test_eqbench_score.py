"""EQ-Bench scoring and aggregation (specs/eqbench.md §5, §6)."""

import json
from pathlib import Path
from typing import Any

import pytest

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.eqbench.prompts import emotion_labels, reference_scores
from empathybench.instruments.eqbench.score import (
    V2_ADJUST_CONSTANT,
    aggregate_iteration,
    aggregate_lm_eval,
    aggregate_pass,
    aggregate_pipeline,
    aggregate_pipeline_iterations,
    match_to_reference,
    scaled_difference,
    score_v1,
    score_v2,
)

PINS = "empathybench.instruments.eqbench"  # the package whose pins.json holds the files these tests read

LABELS = ["Calm", "Tense", "Bored", "Glad"]


def make_reference(scores: list[Any], labels: list[str] = LABELS) -> dict[str, Any]:
    reference: dict[str, Any] = {}
    for index, (label, score) in enumerate(zip(labels, scores, strict=True), start=1):
        reference[f"emotion{index}"] = label
        reference[f"emotion{index}_score"] = score
    return reference


def answers(values: list[Any], labels: list[str] = LABELS) -> dict[str, Any]:
    return dict(zip(labels, values, strict=True))


# §5.1 worked examples use the reference (0, 6, 0, 7), stored partly as strings.
V2_REFERENCE = make_reference([0, "6", 0, "7"])

# §5.1: f(d) for integer d, evaluated in double precision.
F_INTEGER = {
    1: 0.17288045824962817,
    2: 0.5406225272104954,
    3: 1.5045889072563854,
    4: 3.25,
    5: 4.995411092743614,
    6: 6.0,
    7: 7.0,
    8: 8.0,
    9: 9.0,
    10: 10.0,
}


@pytest.mark.parametrize(("d", "expected"), sorted(F_INTEGER.items()))
def test_scaled_difference_integer_values(d: int, expected: float) -> None:
    assert scaled_difference(d, "le5") == pytest.approx(expected, abs=1e-12)
    assert scaled_difference(d, "lt5") == pytest.approx(5.0 if d == 5 else expected, abs=1e-12)


def test_scaled_difference_zero_and_non_integer() -> None:
    assert scaled_difference(0) == 0.0
    assert scaled_difference(0.0, "lt5") == 0.0
    assert scaled_difference(4.5) == pytest.approx(6.5 / (1 + 2.718281828459045 ** (-0.6)), abs=1e-12)
    assert scaled_difference(5.5) == 5.5
    with pytest.raises(ValueError, match="sigmoid rule"):
        scaled_difference(1, "le4")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "le5", "lt5"),
    [
        ([0, 6, 0, 7], 10.0, 10.0),
        ([5, 2, 7, 8], -1.528257, -1.531688),
        ([0, 1, 0, 7], 6.264931, 6.2615),
        ([10, 0, 10, 0], -14.6741, -14.6741),
    ],
)
def test_v2_worked_examples(values: list[int], le5: float, lt5: float) -> None:
    assert score_v2(answers(values), V2_REFERENCE, "le5") == pytest.approx(le5, abs=1e-6)
    assert score_v2(answers(values), V2_REFERENCE, "lt5") == pytest.approx(lt5, abs=1e-6)


def test_v2_worked_example_difference_sums() -> None:
    # d = (5, 4, 7, 1): sum f = 15.418292 (<=) and 15.42288 (<).
    le5 = (10 - score_v2(answers([5, 2, 7, 8]), V2_REFERENCE, "le5")) / V2_ADJUST_CONSTANT  # type: ignore[operator]
    lt5 = (10 - score_v2(answers([5, 2, 7, 8]), V2_REFERENCE, "lt5")) / V2_ADJUST_CONSTANT  # type: ignore[operator]
    assert le5 == pytest.approx(15.418292, abs=1e-6)
    assert lt5 == pytest.approx(15.42288, abs=1e-5)


def test_v2_accepts_digit_strings_and_any_label_order() -> None:
    shuffled = {"Glad": "7", "Bored": "0", "Calm": "0", "Tense": "6"}
    assert score_v2(shuffled, V2_REFERENCE) == 10.0


def test_v2_out_of_range_answers_are_scored() -> None:
    # d = 15 counts linearly; the range is not checked upstream.
    assert score_v2(answers([15, 6, 0, 7]), V2_REFERENCE) == pytest.approx(10 - V2_ADJUST_CONSTANT * 15)


@pytest.mark.parametrize(
    "bad",
    [
        {"Calm": 0, "Tense": 6, "Bored": 0},  # 3 entries
        {"Calm": 0, "Tense": 6, "Bored": 0, "Glad": 7, "Total": 13},  # 5 entries
        {"Calm": 0, "Tense": 6, "Bored": 0, "Happy": 7},  # wrong label
        {"Calm": 0, "Tense": "6,5", "Bored": 0, "Glad": 7},  # German decimal comma
        {},
    ],
)
def test_v2_invalid_maps_are_unparseable(bad: dict[str, Any]) -> None:
    assert score_v2(bad, V2_REFERENCE) is None


def test_v2_case_sensitivity() -> None:
    lower = {"calm": 0, "Tense": 6, "Bored": 0, "Glad": 7}
    assert score_v2(lower, V2_REFERENCE) is None
    assert score_v2(lower, V2_REFERENCE, case_insensitive=True) == 10.0


def test_match_to_reference() -> None:
    assert match_to_reference(LABELS, LABELS) == {label: label for label in LABELS}
    assert match_to_reference(["calm", "Tense", "Bored", "Glad"], LABELS) is None
    assert match_to_reference(["calm", "CALM", "Bored", "Glad"], LABELS, case_insensitive=True) is None


V1_REFERENCE = make_reference([0, 6, 0, 4])


def test_v1_worked_example() -> None:
    assert score_v1(answers([5, 2, 7, 8]), V1_REFERENCE) == pytest.approx(-0.90909, abs=1e-5)
    assert score_v1(answers([0, 6, 0, 4]), V1_REFERENCE) == pytest.approx(10.0)
    # Normalisation makes the scale irrelevant.
    assert score_v1(answers([0, 3, 0, 2]), V1_REFERENCE) == pytest.approx(10.0)


def test_v1_zero_sum_and_invalid_maps_are_unparseable() -> None:
    assert score_v1(answers([0, 0, 0, 0]), V1_REFERENCE) is None
    assert score_v1({"Calm": 1, "Tense": 2, "Bored": 3}, V1_REFERENCE) is None


def test_v1_reproduces_the_v24_case_bug() -> None:
    # "tense" passes the lower-cased validity check but is skipped in the case-sensitive tally (§4).
    lowered = {"Calm": 0, "tense": 0, "Bored": 0, "Glad": 4}
    assert score_v1(lowered, V1_REFERENCE) is None
    # Normalised: Glad = 10 (|10 - 4| = 6); Tense's |0 - 6| is never added.
    assert score_v1(lowered, V1_REFERENCE, case_insensitive_validity=True) == pytest.approx(10 - 6)


def test_pass_aggregate() -> None:
    assert aggregate_pass({"1": 5.0, "2": None, "3": 7.0}).score == pytest.approx(60.0)
    assert aggregate_pass({"1": 5.0, "2": None, "3": 7.0}).n_parseable == 2
    empty = aggregate_pass({"1": None})
    assert (empty.score, empty.n_parseable) == (0.0, 0)


def test_selection_prefers_revised_only_if_not_worse_and_almost_as_parseable() -> None:
    first = {str(i): 5.0 for i in range(100)}
    better = {str(i): 6.0 for i in range(100)}
    assert aggregate_iteration(first, better).selected_pass == "revised"
    equal = dict(first)
    assert aggregate_iteration(first, equal).selected_pass == "revised"  # S_rev >= S_first
    worse = {str(i): 4.0 for i in range(100)}
    assert aggregate_iteration(first, worse).selected_pass == "first_pass"
    # P_rev = 95 >= 0.95 * 100: revised allowed; P_rev = 94: not.
    ninety_five = {str(i): (6.0 if i < 95 else None) for i in range(100)}
    ninety_four = {str(i): (6.0 if i < 94 else None) for i in range(100)}
    assert aggregate_iteration(first, ninety_five).selected_pass == "revised"
    assert aggregate_iteration(first, ninety_four).selected_pass == "first_pass"
    assert aggregate_iteration(first, None).selected_pass == "first_pass"


def test_pipeline_score_is_mean_over_parseable_and_rounded() -> None:
    per_item = {"1": 6.123456, "2": None, "3": 7.0}
    result = aggregate_pipeline(per_item, n_questions=3)
    assert result.score_unrounded == pytest.approx(65.61728)
    assert result.score == 65.62
    assert result.n_parseable == 2
    assert result.selected_pass == "first_pass"
    assert result.valid is False  # 2 / 3 < 0.8333


def test_pipeline_validity_threshold_is_143_of_171() -> None:
    def run(n_parseable: int) -> bool:
        per_item = {str(i): (5.0 if i < n_parseable else None) for i in range(171)}
        return aggregate_pipeline(per_item, n_questions=171).valid

    assert run(143) is True
    assert run(142) is False
    # Absent questions count against the run through n_questions, not through the dict.
    present_only = {str(i): 5.0 for i in range(142)}
    assert aggregate_pipeline(present_only, n_questions=171).valid is False
    assert aggregate_pipeline(present_only).valid is True  # n_questions defaults to the ids given


def test_multi_iteration_mean_v23_and_v24() -> None:
    one = ({"1": 5.0, "2": 7.0}, None)
    two = ({"1": 7.0, "2": None}, None)
    v23 = aggregate_pipeline_iterations([one, two], n_questions=2)
    assert v23.score == pytest.approx((60.0 + 70.0) / 2)
    assert v23.n_parseable == 1.5
    assert len(v23.iterations) == 2
    # v2.4: divide by the configured number of iterations, use only that many.
    assert aggregate_pipeline_iterations([one, two], n_questions=2, total_iterations=1).score == 60.0
    assert aggregate_pipeline_iterations([one], n_questions=2, total_iterations=2).score == 30.0
    with pytest.raises(ValueError, match="no iterations"):
        aggregate_pipeline_iterations([], n_questions=2)


def test_lm_eval_aggregate_counts_unparseable_as_zero() -> None:
    result = aggregate_lm_eval([8.0, None, -2.0, 6.0])
    assert result.eqbench == pytest.approx((80 + 0 - 20 + 60) / 4)
    assert result.percent_parseable == 75.0
    assert (result.n_items, result.n_parseable) == (4, 3)
    with pytest.raises(ValueError):
        aggregate_lm_eval([])


def _load(key: str) -> dict[str, Any]:
    path: Path = fetch_pinned(PINS, key).path
    return json.loads(path.read_text(encoding="utf-8"))


def test_worked_examples_on_the_real_item_1(mirror: Path) -> None:
    reference = _load("eqbench/v2/eq_bench_v2_questions_171.json")["1"]["reference_answer_fullscale"]
    labels = emotion_labels(reference)
    assert list(reference_scores(reference).values()) == [0.0, 6.0, 0.0, 7.0]
    assert score_v2(dict(zip(labels, [5, 2, 7, 8], strict=True)), reference, "le5") == pytest.approx(
        -1.528257, abs=1e-6
    )
    assert score_v2(dict(zip(labels, [0, 1, 0, 7], strict=True)), reference, "lt5") == pytest.approx(6.2615, abs=1e-6)


def test_v1_references_sum_to_10(mirror: Path) -> None:
    for qid, item in _load("eqbench/v1/eq_bench_v1_questions_60.json").items():
        assert sum(reference_scores(item["reference_answer"]).values()) == pytest.approx(10.0), qid


@pytest.mark.parametrize(("rule", "expected"), [("le5", 1.44), ("lt5", 1.42)])
def test_random_baseline_of_the_v2_references(mirror: Path, rule: str, expected: float) -> None:
    """§5.4: uniform random integer answers 0-10 give an expected +1.44 (<=) / +1.42 (<), not 0."""
    questions = _load("eqbench/v2/eq_bench_v2_questions_171.json")
    total = 0.0
    for item in questions.values():
        reference = reference_scores(item["reference_answer_fullscale"])
        expected_sum = sum(
            sum(scaled_difference(abs(u - r), rule) for u in range(11)) / 11  # type: ignore[arg-type]
            for r in reference.values()
        )
        total += 10 - V2_ADJUST_CONSTANT * expected_sum
    assert round(10 * total / len(questions), 2) == expected
