"""GIEBench scores (specs/giebench.md §3). Pure functions on per-item outcomes.

Accuracies are percentages over all items of a group; an answer that did not parse counts as wrong and stays
in the denominator (§2.3). Changes are percentage points of a condition minus Raw, with the items that flip
wrong->right and right->wrong and an exact McNemar p-value on those flips.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from empathybench.stats.contingency import mcnemar_exact_p

BASELINE = "Raw"


@dataclass(frozen=True)
class ItemOutcome:
    """One topic scored in every condition it was asked in."""

    item_id: str
    dimension: str
    identity: str
    correct: dict[str, bool]  # condition -> the parsed letter equals the gold letter
    valid: dict[str, bool]  # condition -> the reply gave a letter in A-D


def legacy_delta_pp(baseline_correct: int, condition_correct: int, denominator: int) -> float:
    """Δ as the released script printed it: each accuracy rounded to 3 decimals, difference x100, 1 decimal."""
    return round((round(condition_correct / denominator, 3) - round(baseline_correct / denominator, 3)) * 100, 1)


def _percent(numerator: int, denominator: int) -> float | None:
    return round(100 * numerator / denominator, 2) if denominator else None


def _groups(outcomes: Iterable[ItemOutcome], key: Callable[[ItemOutcome], str]) -> dict[str, list[ItemOutcome]]:
    grouped: dict[str, list[ItemOutcome]] = {}
    for outcome in outcomes:
        grouped.setdefault(key(outcome), []).append(outcome)
    return grouped


def accuracy_cell(outcomes: Sequence[ItemOutcome], condition: str, *, extra_denominator: int = 0) -> dict[str, Any]:
    """Accuracy of one group in one condition; `extra_denominator=1` is the published n+1 bug (§5.2)."""
    asked = [o for o in outcomes if condition in o.correct]
    n_correct = sum(o.correct[condition] for o in asked)
    n_valid = sum(o.valid[condition] for o in asked)
    cell: dict[str, Any] = {
        "n": len(asked),
        "n_correct": n_correct,
        "accuracy": _percent(n_correct, len(asked) + extra_denominator) if asked else None,
        "invalid_rate": _percent(len(asked) - n_valid, len(asked)),
    }
    if extra_denominator:
        cell["denominator"] = len(asked) + extra_denominator
    return cell


def change_cell(
    outcomes: Sequence[ItemOutcome], condition: str, *, legacy_denominator: int | None = None
) -> dict[str, Any]:
    """Condition minus Raw on the items asked in both: Δ in points, flips each way, McNemar p.

    With `legacy_denominator`, Δ is computed as the released script printed it (legacy_delta_pp).
    """
    paired = [o for o in outcomes if condition in o.correct and BASELINE in o.correct]
    wrong_to_right = sum(1 for o in paired if o.correct[condition] and not o.correct[BASELINE])
    right_to_wrong = sum(1 for o in paired if o.correct[BASELINE] and not o.correct[condition])
    if legacy_denominator is not None:
        baseline_correct = sum(o.correct[BASELINE] for o in paired)
        condition_correct = sum(o.correct[condition] for o in paired)
        delta = legacy_delta_pp(baseline_correct, condition_correct, legacy_denominator) if paired else None
    else:
        delta = round(100 * (wrong_to_right - right_to_wrong) / len(paired), 2) if paired else None
    return {
        "n": len(paired),
        "delta_pp": delta,
        "wrong_to_right": wrong_to_right,
        "right_to_wrong": right_to_wrong,
        "mcnemar_p": round(mcnemar_exact_p(wrong_to_right, right_to_wrong), 6),
    }


def condition_table(outcomes: Sequence[ItemOutcome], condition: str, *, legacy: bool = False) -> dict[str, Any]:
    """Overall, per-dimension and per-identity accuracy of one condition.

    Legacy mode uses n+1 per-dimension denominators as the published tables did; overall keeps n, and
    per-identity accuracy (not in the released code) keeps n.
    """
    overall = accuracy_cell(outcomes, condition)
    return {
        **overall,
        "by_dimension": {
            dimension: accuracy_cell(group, condition, extra_denominator=1 if legacy else 0)
            for dimension, group in sorted(_groups(outcomes, lambda o: o.dimension).items())
        },
        "by_identity": {
            identity: accuracy_cell(group, condition)
            for identity, group in sorted(_groups(outcomes, lambda o: o.identity).items())
        },
    }


def change_table(outcomes: Sequence[ItemOutcome], condition: str, *, legacy: bool = False) -> dict[str, Any]:
    """Overall, per-dimension and per-identity change from Raw; legacy mode as in `condition_table`."""

    def cell(group: Sequence[ItemOutcome], plus_one: bool) -> dict[str, Any]:
        if not legacy:
            return change_cell(group, condition)
        paired = sum(1 for o in group if condition in o.correct and BASELINE in o.correct)
        return change_cell(group, condition, legacy_denominator=paired + (1 if plus_one else 0))

    return {
        **cell(outcomes, plus_one=False),
        "by_dimension": {
            dimension: cell(group, plus_one=True)
            for dimension, group in sorted(_groups(outcomes, lambda o: o.dimension).items())
        },
        "by_identity": {
            identity: cell(group, plus_one=False)
            for identity, group in sorted(_groups(outcomes, lambda o: o.identity).items())
        },
    }


def score_outcomes(
    outcomes: Sequence[ItemOutcome], conditions: Sequence[str], *, legacy: bool = False
) -> dict[str, Any]:
    """Every table of §3 for the given conditions: accuracy per condition, and change from Raw."""
    result: dict[str, Any] = {
        "conditions": {condition: condition_table(outcomes, condition, legacy=legacy) for condition in conditions},
        "change_from_raw": {
            condition: change_table(outcomes, condition, legacy=legacy)
            for condition in conditions
            if condition != BASELINE and BASELINE in conditions
        },
    }
    return result
