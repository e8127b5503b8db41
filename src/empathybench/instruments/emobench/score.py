"""EmoBench scoring (spec §5, §9): majority vote over samples, accuracies per task x language, per category, per
option order, invalid rate, baselines, and intervals (the project's item bootstrap; Wilson for one order x sample).

Accuracies are percent. en and zh are never pooled here.
"""

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Any

from empathybench.instruments.emobench.data import KNOWN_DEFECTIVE, Language, Task
from empathybench.stats.intervals import mean_metric, metric

UNPARSED = -1
Z95 = 1.959963984540054


def majority_vote(predictions: Iterable[int | None]) -> int:
    """The upstream vote over one item's samples (spec §5.3): the most frequent index, ties to the one seen first;
    if that is -1 (unparsed), the runner-up when there is one. Samples never run (None) are ignored."""
    counts = Counter(p for p in predictions if p is not None)  # Counter keeps first-seen order on ties
    ranked = counts.most_common()
    if not ranked:
        return UNPARSED
    if ranked[0][0] == UNPARSED and len(ranked) > 1:
        return ranked[1][0]
    return ranked[0][0]


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion (fractions 0-1)."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class ItemResult:
    """One item asked in one option order: the parsed answers of every sample (None = unparsed)."""

    task: Task
    language: Language
    qid: str
    category: str
    order: int
    label: int  # EA choice or EU emotion, 0-based in this order
    predictions: tuple[int | None, ...]
    question_type: str = ""  # EA: Action | Response
    cause_label: int = -1  # EU
    cause_predictions: tuple[int | None, ...] = ()  # EU

    def _vote(self, predictions: tuple[int | None, ...]) -> int:
        return majority_vote(UNPARSED if p is None else p for p in predictions)

    @property
    def first_correct(self) -> bool:
        """EA: the action; EU: the emotion."""
        return self._vote(self.predictions) == self.label

    @property
    def cause_correct(self) -> bool:
        return self.task == "EU" and self._vote(self.cause_predictions) == self.cause_label

    @property
    def correct(self) -> bool:
        """The headline per item: EA choice right; EU emotion AND cause right."""
        return self.first_correct and (self.task == "EA" or self.cause_correct)

    @property
    def answered(self) -> bool:
        """Every question has a parsed answer after the vote (EU: emotion and cause)."""
        if self._vote(self.predictions) == UNPARSED:
            return False
        return self.task == "EA" or self._vote(self.cause_predictions) != UNPARSED

    @property
    def answers(self) -> int:
        return len(self.predictions) + len(self.cause_predictions)

    @property
    def invalid(self) -> int:
        return sum(p is None for p in self.predictions) + sum(p is None for p in self.cause_predictions)


def _per_item(results: Sequence[ItemResult], pick: str) -> dict[str, float]:
    """Per qid: mean correctness over the orders it was asked in (samples are already voted)."""
    by_qid: dict[str, list[float]] = defaultdict(list)
    for result in results:
        by_qid[result.qid].append(1.0 if getattr(result, pick) else 0.0)
    return {qid: fmean(values) for qid, values in by_qid.items()}


def accuracy_metric(label: str, results: Sequence[ItemResult], pick: str, *, seed: int = 0) -> dict[str, Any]:
    """Accuracy in percent with its 95% interval: Wilson when each item was asked once (one order, one sample),
    otherwise the project's seeded item bootstrap over per-item mean correctness."""
    items = _per_item(results, pick)
    orders = {r.order for r in results}
    samples = {len(r.predictions) for r in results}
    if not items:
        return metric(label, None, None, n=0, method="no items", unit="%")
    if len(orders) == 1 and samples == {1}:
        successes = sum(items.values())
        low, high = wilson_interval(successes, len(items)) or (math.nan, math.nan)
        result = metric(
            label, 100 * successes / len(items), (100 * low, 100 * high), n=len(items), method="Wilson 95%", unit="%"
        )
        result.update(items={key: round(v, 6) for key, v in items.items()}, scale=100.0, paired_test="mcnemar")
        return result
    return mean_metric(label, items, scale=100.0, unit="%", paired_test="paired_t", seed=seed)


def _accuracy(results: Sequence[ItemResult], pick: str) -> float | None:
    items = _per_item(results, pick)
    return 100 * fmean(items.values()) if items else None


def summarize_condition(results: Sequence[ItemResult], *, seed: int = 0) -> dict[str, Any]:
    """Every figure of one task x language (x protocol x CoT) from its item results."""
    if not results:
        raise ValueError("no item results")
    task = results[0].task
    if any(r.task != task or r.language != results[0].language for r in results):
        raise ValueError("one condition holds one task and one language")
    headline = "EU joint accuracy (emotion and cause)" if task == "EU" else "EA accuracy"
    summary: dict[str, Any] = {
        "task": task,
        "language": results[0].language,
        "accuracy": accuracy_metric(headline, results, "correct", seed=seed),
        "n_items": len({r.qid for r in results}),
        "orders": sorted({r.order for r in results}),
        "samples": max(len(r.predictions) for r in results),
    }
    answers = sum(r.answers for r in results)
    summary["invalid_rate"] = 100 * sum(r.invalid for r in results) / answers if answers else None
    if task == "EU":
        summary["emotion_accuracy"] = accuracy_metric("EU emotion-only accuracy", results, "first_correct", seed=seed)
        summary["cause_accuracy"] = accuracy_metric("EU cause-only accuracy", results, "cause_correct", seed=seed)
    else:
        summary["by_question_type"] = {
            kind: accuracy_metric(f"EA {kind} accuracy", subset, "correct", seed=seed)
            for kind in sorted({r.question_type for r in results})
            if (subset := [r for r in results if r.question_type == kind])
        }
    summary["by_category"] = {
        category: accuracy_metric(f"{task} {category}", subset, "correct", seed=seed)
        for category in sorted({r.category for r in results})
        if (subset := [r for r in results if r.category == category])
    }
    per_order = {order: _accuracy([r for r in results if r.order == order], "correct") for order in summary["orders"]}
    summary["per_order_accuracy"] = per_order
    values = [v for v in per_order.values() if v is not None]
    summary["order_spread"] = (
        {"max_minus_min": max(values) - min(values), "sd": pstdev(values)} if len(values) > 1 else None
    )
    clean = [r for r in results if (r.task, r.language, r.qid) not in KNOWN_DEFECTIVE]
    if len(clean) != len(results):
        summary["accuracy_without_defective_items"] = _accuracy(clean, "correct")
    return summary


@dataclass(frozen=True)
class PresentedItem:
    """One item as shown in one order: what the trivial baselines need (no model answers)."""

    task: Task
    language: Language
    qid: str
    order: int
    choices: tuple[str, ...]
    label: int
    cause_choices: tuple[str, ...] = ()
    cause_label: int = -1


def _longest(choices: Sequence[str]) -> int:
    lengths = [len(choice) for choice in choices]
    return lengths.index(max(lengths))  # ties to the first


def baselines(presented: Sequence[PresentedItem]) -> dict[str, float]:
    """Percent accuracy of always-A, longest-option and uniform chance on these items (one task x language).

    EU counts joint correctness, as the headline does; orders are averaged per item, then items."""
    if not presented:
        return {}
    per_item: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for item in presented:
        first_a = item.label == 0
        first_long = _longest(item.choices) == item.label
        chance = 1 / len(item.choices)
        if item.task == "EU":
            first_a = first_a and item.cause_label == 0
            first_long = first_long and _longest(item.cause_choices) == item.cause_label
            chance /= len(item.cause_choices)
        per_item[item.qid].append((float(first_a), float(first_long), chance))
    means = [tuple(fmean(column) for column in zip(*rows, strict=True)) for rows in per_item.values()]
    return {
        "always_A": 100 * fmean(m[0] for m in means),
        "longest_option": 100 * fmean(m[1] for m in means),
        "chance": 100 * fmean(m[2] for m in means),
    }
