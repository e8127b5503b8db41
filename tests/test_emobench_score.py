"""EmoBench scoring (specs/emobench.md §5, §9): vote, accuracies, intervals, per-order spread, baselines."""

from pathlib import Path

import pytest

from empathybench.instruments.emobench.data import load_ea_items, load_eu_items
from empathybench.instruments.emobench.score import (
    ItemResult,
    PresentedItem,
    baselines,
    majority_vote,
    summarize_condition,
    wilson_interval,
)
from empathybench.stats.intervals import mean_interval


@pytest.mark.parametrize(
    ("predictions", "vote"),
    [
        ([2, 2, 1], 2),
        ([1, 2, 2, 1], 1),  # a tie goes to the value seen first
        ([-1, -1, 0], 0),  # -1 wins: the runner-up
        ([-1, -1, 3, 0], 3),  # runner-up ties: first seen
        ([-1], -1),
        ([None, None], -1),  # samples never run are ignored
        ([None, 2, None], 2),
    ],
)
def test_majority_vote(predictions: list[int | None], vote: int) -> None:
    assert majority_vote(predictions) == vote


def test_wilson_matches_the_spec_example() -> None:
    low, high = wilson_interval(119.5, 200)  # spec §6.2: GPT-4 EU en, [52.8, 66.3]
    assert (round(100 * low, 1), round(100 * high, 1)) == (52.8, 66.3)
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)


def _eu(qid: str, order: int, emotions: tuple[int | None, ...], causes: tuple[int | None, ...]) -> ItemResult:
    category = "complex_emotions" if int(qid) <= 2 else "perspective_taking"
    return ItemResult("EU", "zh", qid, category, order, 0, emotions, cause_label=1, cause_predictions=causes)


def test_eu_condition_votes_per_question_and_scores_jointly() -> None:
    results = [
        _eu("1", 0, (0, 0, 1), (1, 1, 1)),  # both right
        _eu("1", 1, (0, 0, 0), (2, 2, 1)),  # emotion right, cause wrong
        _eu("2", 0, (None, None, 0), (1, None, 1)),  # unparsed vote falls to the runner-up: right
        _eu("2", 1, (3, 3, 3), (1, 1, 1)),  # emotion wrong
        _eu("3", 0, (0, 0, 0), (1, 1, 1)),
        _eu("3", 1, (0, 0, 0), (1, 1, 1)),
        _eu("74", 0, (1, 1, 1), (0, 0, 0)),  # a known-defective zh item
        _eu("74", 1, (1, 1, 1), (0, 0, 0)),
    ]
    summary = summarize_condition(results, seed=3)
    # per item over orders: q1 0.5, q2 0.5, q3 1, q74 0 -> 50 %
    assert summary["accuracy"]["value"] == pytest.approx(50.0)
    assert summary["emotion_accuracy"]["value"] == pytest.approx(100 * (1 + 0.5 + 1 + 0) / 4)
    assert summary["cause_accuracy"]["value"] == pytest.approx(100 * (0.5 + 1 + 1 + 0) / 4)
    assert summary["per_order_accuracy"] == {0: 75.0, 1: 25.0}
    assert summary["order_spread"]["max_minus_min"] == pytest.approx(50.0)
    assert summary["invalid_rate"] == pytest.approx(100 * 3 / 48)
    assert summary["accuracy_without_defective_items"] == pytest.approx(100 * 2 / 3)
    assert summary["by_category"]["complex_emotions"]["value"] == pytest.approx(50.0)
    # several orders: the project's item bootstrap over per-item means, seeded
    metric = summary["accuracy"]
    assert metric["method"].startswith("percentile bootstrap") and "seed 3" in metric["method"]
    expected = mean_interval([0.5, 0.5, 1.0, 0.0], scale=100.0, seed=3)
    assert metric["ci95"] == [round(expected[0], 4), round(expected[1], 4)]
    assert summarize_condition(results, seed=3)["accuracy"]["ci95"] == metric["ci95"]


def test_single_order_and_sample_uses_wilson_and_ea_splits_by_question_type() -> None:
    results = [
        ItemResult("EA", "en", str(n), "Personal-Self", 0, 2, (2 if n % 4 else 1,), "Action" if n % 2 else "Response")
        for n in range(1, 21)
    ]
    summary = summarize_condition(results)
    assert summary["accuracy"]["value"] == pytest.approx(75.0)
    assert summary["accuracy"]["method"] == "Wilson 95%"
    low, high = wilson_interval(15, 20)
    assert summary["accuracy"]["ci95"] == [round(100 * low, 4), round(100 * high, 4)]
    assert summary["by_question_type"]["Action"]["value"] == pytest.approx(100.0)
    assert summary["by_question_type"]["Response"]["value"] == pytest.approx(50.0)
    assert summary["order_spread"] is None and "emotion_accuracy" not in summary
    with pytest.raises(ValueError):
        summarize_condition([*results, ItemResult("EA", "zh", "1", "x", 0, 0, (0,))])


def test_baselines_on_the_unshuffled_items_match_the_spec(mirror: Path) -> None:
    """spec §5.4: always-A and chance on the 2025 items in file order."""
    eu, ea = load_eu_items(), load_ea_items()
    figures = {}
    for language in ("en", "zh"):
        figures["EU", language] = baselines(
            [
                PresentedItem(
                    "EU",
                    language,
                    i.qid,
                    0,
                    i.emotion_choices,
                    i.emotion_label_index,
                    i.cause_choices,
                    i.cause_label_index,
                )
                for i in eu
                if i.language == language
            ]
        )
        figures["EA", language] = baselines(
            [PresentedItem("EA", language, i.qid, 0, i.choices, i.label_index) for i in ea if i.language == language]
        )
    assert round(figures["EU", "en"]["always_A"], 1) == 9.5
    assert round(figures["EU", "zh"]["always_A"], 1) == 24.5
    assert round(figures["EA", "en"]["always_A"], 1) == round(figures["EA", "zh"]["always_A"], 1) == 13.5
    assert round(figures["EU", "en"]["chance"], 2) == 3.75 and round(figures["EU", "zh"]["chance"], 2) == 3.74
    assert figures["EA", "en"]["chance"] == pytest.approx(25.0)
    assert 0 <= figures["EU", "en"]["longest_option"] <= 100


def test_baselines_average_orders_per_item_and_break_length_ties_to_the_first() -> None:
    items = [
        PresentedItem("EA", "en", "1", 0, ("aa", "bbbb", "cc", "dddd"), 1),  # longest: b (first of the two)
        PresentedItem("EA", "en", "1", 1, ("bbbb", "aa", "cc", "dddd"), 0),
        PresentedItem("EA", "en", "2", 0, ("a", "b", "c", "d"), 3),
    ]
    figures = baselines(items)
    assert figures["always_A"] == pytest.approx(100 * (0.5 + 0) / 2)
    assert figures["longest_option"] == pytest.approx(100 * (1 + 0) / 2)
    assert figures["chance"] == pytest.approx(25.0)
    assert baselines([]) == {}
