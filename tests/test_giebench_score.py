"""GIEBench scores (specs/giebench.md §3), including the legacy n+1 denominators of the published tables."""

import csv
from pathlib import Path

import pytest

from empathybench.instruments.giebench.score import (
    ItemOutcome,
    accuracy_cell,
    change_cell,
    legacy_delta_pp,
    score_outcomes,
)
from empathybench.stats.contingency import mcnemar_exact_p

CONDITIONS = ("Raw", "ID", "COT")
PUBLISHED_DIR = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "giebench" / "derived"
# Items per dimension inferred from the published tables (spec §1); the tables divided by n + 1.
ITEMS_PER_DIMENSION = {
    "Country": 96,
    "Orientation": 81,
    "Age": 92,
    "Gender": 67,
    "Personality": 107,
    "Skin": 100,
    "Faith": 95,
    "Education": 103,
    "Economy": 99,
    "Party": 99,
    "Occupation": 60,
}


def outcome(item_id: str, dimension: str, identity: str, raw: bool, id_: bool, cot: bool) -> ItemOutcome:
    correct = {"Raw": raw, "ID": id_, "COT": cot}
    return ItemOutcome(item_id, dimension, identity, correct, dict.fromkeys(CONDITIONS, True))


@pytest.fixture
def outcomes() -> list[ItemOutcome]:
    return [
        outcome("1", "Age", "young", raw=False, id_=False, cot=True),
        outcome("2", "Age", "young", raw=True, id_=True, cot=True),
        outcome("3", "Age", "older people", raw=False, id_=True, cot=True),
        outcome("4", "Age", "older people", raw=True, id_=False, cot=False),
        outcome("5", "Party", "green", raw=False, id_=False, cot=True),
    ]


def test_accuracy_per_condition_dimension_and_identity(outcomes: list[ItemOutcome]) -> None:
    result = score_outcomes(outcomes, CONDITIONS)
    raw, cot = result["conditions"]["Raw"], result["conditions"]["COT"]
    assert (raw["n"], raw["n_correct"], raw["accuracy"]) == (5, 2, 40.0)
    assert cot["accuracy"] == 80.0
    assert raw["by_dimension"]["Age"]["accuracy"] == 50.0
    assert raw["by_dimension"]["Party"]["accuracy"] == 0.0
    assert cot["by_identity"]["older people"]["accuracy"] == 50.0
    assert cot["by_identity"]["young"]["accuracy"] == 100.0


def test_change_from_raw_with_flips_each_way(outcomes: list[ItemOutcome]) -> None:
    changes = score_outcomes(outcomes, CONDITIONS)["change_from_raw"]
    cot = changes["COT"]
    assert (cot["wrong_to_right"], cot["right_to_wrong"], cot["delta_pp"]) == (3, 1, 40.0)
    assert cot["by_dimension"]["Age"]["delta_pp"] == 25.0
    assert changes["ID"]["wrong_to_right"] == 1 and changes["ID"]["right_to_wrong"] == 1
    assert changes["ID"]["delta_pp"] == 0.0
    assert "Raw" not in changes


def test_legacy_mode_divides_each_dimension_by_n_plus_one(outcomes: list[ItemOutcome]) -> None:
    legacy = score_outcomes(outcomes, CONDITIONS, legacy=True)
    age = legacy["conditions"]["Raw"]["by_dimension"]["Age"]
    assert (age["denominator"], age["accuracy"]) == (5, 40.0)  # 2 of 4, published as 2 / 5
    assert legacy["conditions"]["Raw"]["accuracy"] == 40.0  # overall keeps n (§3)
    assert legacy["conditions"]["Raw"]["by_identity"]["young"]["accuracy"] == 50.0
    # Δ per dimension as printed: round(acc, 3) differences over n + 1 = 5: 0.6 - 0.4.
    assert legacy["change_from_raw"]["COT"]["by_dimension"]["Age"]["delta_pp"] == 20.0
    assert legacy["change_from_raw"]["COT"]["delta_pp"] == 40.0


def test_unparsed_answers_stay_in_the_denominator() -> None:
    items = [
        ItemOutcome("1", "Age", "young", {"Raw": True}, {"Raw": True}),
        ItemOutcome("2", "Age", "young", {"Raw": False}, {"Raw": False}),
    ]
    cell = accuracy_cell(items, "Raw")
    assert (cell["accuracy"], cell["invalid_rate"]) == (50.0, 50.0)


def test_mcnemar_exact() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(5, 5) == 1.0
    assert mcnemar_exact_p(10, 0) == pytest.approx(2 / 1024)
    assert mcnemar_exact_p(0, 10) == mcnemar_exact_p(10, 0)


def test_change_cell_ignores_items_missing_a_condition() -> None:
    items = [ItemOutcome("1", "Age", "young", {"Raw": False, "COT": True}, {"Raw": True, "COT": True})]
    items.append(ItemOutcome("2", "Age", "young", {"COT": True}, {"COT": True}))
    assert change_cell(items, "COT")["n"] == 1


def _reachable(printed: float, wrong_to_right: int, right_to_wrong: int, n: int, denominator: int) -> bool:
    """Is there a Raw count for which the legacy computation prints `printed`?"""
    feasible = range(right_to_wrong, n - wrong_to_right + 1)
    return any(legacy_delta_pp(c, c + wrong_to_right - right_to_wrong, denominator) == printed for c in feasible)


@pytest.mark.parametrize(
    ("dimension", "printed", "wrong_to_right", "right_to_wrong"),
    [
        ("Party", 85.0, 85, 0),  # GPT-4-turbo, Raw -> COT (spec §4.1)
        ("Country", -5.2, 17, 22),  # GPT-3.5-turbo, Raw -> COT
        ("Gender", 7.4, 16, 11),  # GPT-3.5-turbo, Raw -> COT
        ("Faith", 57.3, 58, 3),  # GPT-4-turbo, Raw -> COT
        ("Occupation", 31.2, 24, 5),  # GPT-4-turbo, Raw -> COT
    ],
)
def test_legacy_mode_reproduces_published_cells(
    dimension: str, printed: float, wrong_to_right: int, right_to_wrong: int
) -> None:
    n = ITEMS_PER_DIMENSION[dimension]
    assert _reachable(printed, wrong_to_right, right_to_wrong, n, n + 1)


def test_correct_denominators_do_not_reproduce_them() -> None:
    # Party: 85/99 would print 85.9, the published 85.0 needs the n+1 bug.
    assert not _reachable(85.0, 85, 0, 99, 99)
    assert legacy_delta_pp(14, 99, 100) == 85.0


@pytest.mark.skipif(not PUBLISHED_DIR.is_dir(), reason="shared/datasets/giebench/derived is not here")
@pytest.mark.parametrize("table", ["published_raw_to_cot_delta.csv", "published_raw_to_id_delta.csv"])
def test_legacy_mode_reproduces_every_published_cell(table: str) -> None:
    checked = 0
    with (PUBLISHED_DIR / table).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["check"] != "ok":
                continue  # the two known errors of the paper's tables (spec §4)
            dimension = row["dimension"]
            n = ITEMS_PER_DIMENSION.get(dimension, 999)
            denominator = n + 1 if dimension in ITEMS_PER_DIMENSION else 999
            printed = float(row["delta_acc_pct"])
            flips = int(row["n_wrong_to_right"]), int(row["n_right_to_wrong"])
            assert _reachable(printed, *flips, n, denominator), row
            checked += 1
    assert checked > 250
