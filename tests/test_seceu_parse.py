"""SECEU reply parsing and the paper's normalisation rules (specs/seceu.md §3.1). No data needed."""

import math

import pytest

from empathybench.instruments.seceu.parse import normalise_allocation, option_index, parse_allocation

# Invented option words and story: no benchmark item content.
OPTIONS = ("Calm", "Glad", "Upset", "Bored")
STORY = "Sam waited 20 minutes for 3 friends who never came. Sam would feel:"


def test_json_in_the_prompted_format() -> None:
    reply = (
        'Sure. {"Emotion": [{"name": "Calm", "score": 1},{"name": "glad", "score": 2},'
        '{"name": "Upset", "score": 6},{"name": "Bored", "score": 1}]}<end>'
    )
    parsed = parse_allocation(reply, OPTIONS)
    assert parsed.values == (1, 2, 6, 1)
    assert parsed.method == "json"


def test_json_mapping_out_of_order_is_matched_by_name() -> None:
    parsed = parse_allocation('{"Upset": 5, "Bored": 2, "calm": 0, "GLAD": "3"}', OPTIONS)
    assert parsed.values == (0, 3, 5, 2)
    assert parsed.method == "json"


def test_json_list_of_four_numbers_is_taken_in_order() -> None:
    parsed = parse_allocation("scores: [4, 3, 2, 1]", OPTIONS)
    assert parsed.values == (4, 3, 2, 1)
    assert parsed.method == "json_positional"


def test_json_with_unknown_names_in_place_is_positional() -> None:
    reply = '[{"name": "Calmness", "score": 4}, {"name": "Glad", "score": 3}, {"name": "x", "score": 2}, {"score": 1}]'
    parsed = parse_allocation(reply, OPTIONS)
    assert parsed.values == (4, 3, 2, 1)
    assert parsed.method == "json_positional"


def test_name_number_pairs_in_free_text() -> None:
    reply = 'Here is my answer:\n1. **Calm**: 1\n2. Glad - 2\n3. Upset = 5.5\n4. "Bored" gets 1.5 points'
    parsed = parse_allocation(reply, OPTIONS)
    assert parsed.values == (1, 2, 5.5, 1.5)
    assert parsed.method == "names"


def test_step_by_step_wording_and_last_mention_wins() -> None:
    reply = (
        'step1. Assign emotion "Calm" a score of 1, total_score = total_score - 1 (9 remaining); '
        'step2. Assign emotion "Glad" a score of 1; step3. Assign emotion "Upset" a score of 7; '
        'step4. Assign emotion "Bored" a score of 1. On reflection, Glad: 0 and Calm: 2.'
    )
    parsed = parse_allocation(reply, OPTIONS)
    assert parsed.values == (2, 0, 7, 1)
    assert parsed.method == "names"


def test_option_words_inside_longer_words_do_not_match() -> None:
    reply = "Calmly: 9. Then (1) 2 (2) 3 (3) 4 (4) 1"
    parsed = parse_allocation(reply, OPTIONS)
    assert parsed.method == "first_numbers"
    assert parsed.values == (9, 2, 3, 4)


def test_named_scores_that_already_sum_to_ten_complete_the_answer() -> None:
    parsed = parse_allocation("Upset: 10", OPTIONS)
    assert parsed.values == (0, 0, 10, 0)
    assert parsed.method == "names_partial"


def test_first_four_numbers_skip_markers_echoed_story_and_the_total() -> None:
    reply = f"{STORY} (1) 2; (2) 1; (3) 5; (4) 2 -- these sum up to 10, rated out of 10."
    parsed = parse_allocation(reply, OPTIONS, ignore=(STORY,))
    assert parsed.values == (2, 1, 5, 2)
    assert parsed.method == "first_numbers"


def test_more_than_four_numbers_takes_the_first_four_and_says_so() -> None:
    parsed = parse_allocation("3 3 2 2 1", OPTIONS)
    assert parsed.values == (3, 3, 2, 2)
    assert parsed.note == "first 4 of 5 numbers"


@pytest.mark.parametrize("reply", ["", "   ", "I cannot rate feelings.", "Maybe 3 or 4, perhaps 2.", "Upset: 6"])
def test_no_response(reply: str) -> None:
    parsed = parse_allocation(reply, OPTIONS)
    assert parsed.values is None
    assert parsed.method == "none"


def test_option_index_ignores_case_markers_and_decoration() -> None:
    assert option_index("(3) UPSET", OPTIONS) == 2
    assert option_index("**glad**", OPTIONS) == 1
    assert option_index("feeling bored", OPTIONS) == 3
    assert option_index("Happy", OPTIONS) is None


def test_parse_needs_four_options() -> None:
    with pytest.raises(ValueError):
        parse_allocation("1 2 3 4", OPTIONS[:3])


# --- normalisation (§3.1) ---


def test_paper_example_negatives_are_shifted() -> None:
    result = normalise_allocation((-4, -2, -2, 2))
    assert result.vector == (0, 2, 2, 6)
    assert result.shifted and not result.rescaled and not result.no_response


def test_negatives_shifted_then_rescaled() -> None:
    result = normalise_allocation((-1, 0, 1, 2))  # -> (0, 1, 2, 3), sum 6 -> x 10/6
    assert result.shifted and result.rescaled
    assert all(math.isclose(a, b) for a, b in zip(result.vector, (0, 10 / 6, 20 / 6, 5), strict=True))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [((1, 1, 1, 1), (2.5, 2.5, 2.5, 2.5)), ((30, 30, 10, 30), (3, 3, 1, 3)), ((2, 2, 0, 0), (5, 5, 0, 0))],
)
def test_wrong_sums_are_rescaled_to_ten(raw: tuple[float, ...], expected: tuple[float, ...]) -> None:
    result = normalise_allocation(raw)
    assert result.rescaled and not result.shifted
    assert all(math.isclose(a, b) for a, b in zip(result.vector, expected, strict=True))
    assert math.isclose(sum(result.vector), 10)


def test_a_correct_answer_is_unchanged() -> None:
    result = normalise_allocation((3, 3, 1, 3))
    assert result.vector == (3, 3, 1, 3)
    assert not (result.shifted or result.rescaled or result.no_response)


@pytest.mark.parametrize("raw", [None, (), (0, 0, 0, 0), (-2, -2, -2, -2)])
def test_no_response_is_the_zero_vector_and_counted(raw: tuple[float, ...] | None) -> None:
    result = normalise_allocation(raw)
    assert result.vector == (0, 0, 0, 0)
    assert result.no_response


@pytest.mark.parametrize("raw", [(1, 2, 3), (1, 2, 3, 4, 5), (1, 2, 3, float("nan"))])
def test_malformed_raw_answers_are_rejected(raw: tuple[float, ...]) -> None:
    with pytest.raises(ValueError):
        normalise_allocation(raw)


def test_an_enumerated_list_of_the_options_is_not_an_answer() -> None:
    reply = "1. Calm; 2. Glad; 3. Upset; 4. Bored\n\nThe answer is: 3. Upset"
    assert parse_allocation(reply, OPTIONS).values is None
