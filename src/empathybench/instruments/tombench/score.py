"""ToMBench's figures from item records (pure): each try's vote, the item's majority against the key, and accuracy
overall, per task (data file), per ability and per ability category, each with its item-bootstrap 95% interval.

get_results.py counts an item right when the most common mapped answer equals the key; its per-task and
per-ability shares are these figures' values (its ability keys are the data's labels: `by_label`).
"""

from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from empathybench.instruments.support import mean_metric
from empathybench.instruments.tombench.parse import Parser, majority, vote_of

# The breakdowns keep no per-item values (summary.json stays small); the headline metrics keep them for pairing.
GROUPS = (("by_task", "task"), ("by_ability", "abilities"), ("by_category", "categories"), ("by_label", "label"))


def item_votes(tries: Sequence[Mapping[str, Any]], parser: Parser) -> list[str | None]:
    return [vote_of(str(t["answer"]), str(t["method"]), parser) for t in tries]


def is_correct(tries: Sequence[Mapping[str, Any]], key: str, parser: Parser) -> bool:
    return majority(item_votes(tries, parser)) == key


def accuracy(label: str, correct: Mapping[str, float], *, seed: int, keep_items: bool = True) -> dict[str, Any]:
    """Percent correct over items (per-item values 0/1, or a share when an item stands for several languages)."""
    binary = all(value in (0.0, 1.0) for value in correct.values())
    entry = mean_metric(
        label, correct, scale=100.0, unit="%", paired_test="mcnemar" if binary else "paired_t", seed=seed
    )
    if not keep_items:
        entry["items"] = None
    return entry


def _groups(record: Mapping[str, Any], field: str) -> Iterable[str]:
    value = record[field]
    return value if isinstance(value, list) else [value]


def language_figures(
    records: Sequence[Mapping[str, Any]], condition: str, parser: Parser, *, seed: int, label: str
) -> dict[str, Any]:
    """Every figure of one language in one condition, read with `parser` (the other parser's accuracy beside)."""
    other: Parser = "strict" if parser == "upstream" else "upstream"
    correct = {r["question_id"]: float(is_correct(_tries(r, condition), r["key"], parser)) for r in records}
    tries = [t for r in records for t in _tries(r, condition)]
    figures: dict[str, Any] = {
        "accuracy": accuracy(label, correct, seed=seed),
        f"accuracy_{other}_parser": round(
            100 * fmean(is_correct(_tries(r, condition), r["key"], other) for r in records), 4
        ),
        "n_items": len(records),
        "n_tries": len(tries),
        "n_fallback_tries": sum(t["method"] == "fallback" for t in tries),
        "methods": {m: sum(t["method"] == m for t in tries) for m in ("[[X]]", "[X]", "last letter", "fallback")},
        "chance": round(100 * fmean(1 / r["n_options"] for r in records), 4),
    }
    for name, field in GROUPS:
        members: dict[str, dict[str, float]] = {}
        for record in records:
            for group in _groups(record, field):
                members.setdefault(group, {})[record["question_id"]] = correct[record["question_id"]]
        figures[name] = {
            group: accuracy(group, members[group], seed=seed, keep_items=False) for group in sorted(members)
        }
    return figures


def _tries(record: Mapping[str, Any], condition: str) -> list[Mapping[str, Any]]:
    return record["conditions"][condition]["tries"]


def pooled_correct(records: Sequence[Mapping[str, Any]], condition: str, parser: Parser) -> dict[str, float]:
    """Per item, the share of its languages answered right: the headline's unit, so the interval resamples items
    (an item's English and Chinese answers are not two independent draws)."""
    by_question: dict[str, list[float]] = {}
    for record in records:
        value = float(is_correct(_tries(record, condition), record["key"], parser))
        by_question.setdefault(record["question_id"], []).append(value)
    return {question: fmean(values) for question, values in by_question.items()}
