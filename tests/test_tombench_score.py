"""ToMBench's figures from records: the vote against the key, accuracy per task, ability and category (an item in
every ability its label names), the headline counting an item's two languages as one item, the strict parser."""

from typing import Any

import pytest

from empathybench.instruments.tombench.bench import configure, summarize_records
from empathybench.instruments.tombench.score import is_correct, language_figures, pooled_correct


def _try(answer: str, method: str = "[[X]]") -> dict[str, Any]:
    return {"order": "ABCD", "letter": answer or "C", "method": method, "answer": answer}


def _record(
    question: str, language: str, key: str, answers: list[str], *, task: str = "T1", label: str = "L", **extra: Any
) -> dict[str, Any]:
    methods = extra.pop("methods", ["[[X]]"] * len(answers))
    record = {
        "question_id": question,
        "language": language,
        "task": task,
        "label": label,
        "abilities": extra.pop("abilities", ["Humor"]),
        "categories": extra.pop("categories", ["Non-Literal Communication"]),
        "key": key,
        "n_options": extra.pop("n_options", 4),
        "conditions": {"direct": {"tries": [_try(a, m) for a, m in zip(answers, methods, strict=True)]}},
    }
    record["parse_error"] = extra.pop("parse_error", None)
    return record


def test_an_item_is_right_when_its_most_common_answer_is_the_key() -> None:
    assert is_correct([_try("B"), _try("B"), _try("A")], "B", "upstream")
    assert not is_correct([_try("A"), _try("B"), _try("B"), _try("A")], "B", "upstream")  # a tie: A came first
    assert not is_correct([_try(""), _try(""), _try("B")], "B", "upstream")  # C/D on a 2-option item
    fallbacks = [_try("B", "fallback"), _try("B", "fallback"), _try("C")]
    assert is_correct(fallbacks, "B", "upstream")  # the shown A was the original B
    assert not is_correct(fallbacks, "B", "strict")


def test_accuracy_per_task_ability_category_and_label() -> None:
    records = [
        _record("q1", "en", "A", ["A"], task="T1", label="Belief: x", abilities=["Content False Beliefs"]),
        _record(
            "q2",
            "en",
            "A",
            ["B"],
            task="T1",
            label="Belief: x Belief: y",
            abilities=["Content False Beliefs", "Second-Order Beliefs"],
            categories=["Belief"],
        ),
        _record("q3", "en", "C", ["C"], task="T2", label="Humor"),
        _record("q4", "en", "D", ["D"], task="T2", label="Humor", n_options=2),
    ]
    records[0]["categories"] = ["Belief"]
    figures = language_figures(records, "direct", "upstream", seed=0, label="en")
    assert figures["accuracy"]["value"] == 75.0 and figures["accuracy"]["n"] == 4
    assert {k: v["value"] for k, v in figures["by_task"].items()} == {"T1": 50.0, "T2": 100.0}
    assert figures["by_ability"]["Content False Beliefs"]["value"] == 50.0
    assert figures["by_ability"]["Second-Order Beliefs"]["value"] == 0.0  # the two-ability item counts in both
    assert figures["by_ability"]["Humor"]["n"] == 2
    assert {k: v["value"] for k, v in figures["by_category"].items()} == {
        "Belief": 50.0,
        "Non-Literal Communication": 100.0,
    }
    assert set(figures["by_label"]) == {"Belief: x", "Belief: x Belief: y", "Humor"}  # get_results.py's keys
    assert figures["chance"] == pytest.approx(100 * (3 / 4 + 1 / 2) / 4)
    low, high = figures["by_task"]["T1"]["ci95"]
    assert 0.0 <= low <= 50.0 <= high <= 100.0
    assert figures["by_task"]["T1"]["items"] is None  # breakdowns keep no per-item values


def test_the_headline_counts_an_items_languages_as_one_item() -> None:
    records = [
        _record("q1", "en", "A", ["A"]),
        _record("q1", "zh", "A", ["B"]),
        _record("q2", "en", "B", ["B"]),
        _record("q2", "zh", "B", ["B"]),
    ]
    assert pooled_correct(records, "direct", "upstream") == {"q1": 0.5, "q2": 1.0}
    summary = summarize_records(configure("paper", {}), records)
    accuracy = summary["metrics"]["accuracy"]
    assert accuracy["value"] == 75.0 and accuracy["n"] == 2 and accuracy["items"] == {"q1": 0.5, "q2": 1.0}
    assert summary["metrics"]["accuracy_en"]["value"] == 100.0
    assert summary["metrics"]["accuracy_zh"]["value"] == 50.0
    assert summary["metrics"]["accuracy_en"]["items"] == {"q1": 1.0, "q2": 1.0}  # for pairing two runs
    assert summary["conditions"]["direct"]["en"]["accuracy"]["items"] is None
    assert summary["score"] == 75.0 and summary["headline_metric"] == "accuracy"


def test_fallbacks_are_counted_and_the_strict_parser_counts_them_wrong() -> None:
    records = [
        _record("q1", "en", "B", ["B", "B", "C"], methods=["fallback", "fallback", "[[X]]"], parse_error="x"),
        _record("q2", "en", "C", ["C", "C", "C"]),
    ]
    upstream = summarize_records(configure("paper", {"language": "en", "try_times": "3"}), records)
    strict = summarize_records(configure("paper", {"language": "en", "parser": "strict"}), records)
    assert upstream["score"] == 100.0 and strict["score"] == 50.0
    assert upstream["conditions"]["direct"]["en"]["accuracy_strict_parser"] == 50.0
    assert strict["conditions"]["direct"]["en"]["accuracy_upstream_parser"] == 100.0
    assert upstream["n_fallback_tries"] == 2 and upstream["n_tries"] == 6
    assert "2 of 6 replies had no answer letter and were read as A" in upstream["headline_note"]
    assert upstream["n_parsed"] == 1 and upstream["n_items"] == 2


def test_a_second_prompt_condition_is_reported_beside_the_headline() -> None:
    records = [_record("q1", "en", "A", ["A"]), _record("q2", "en", "B", ["A"])]
    for record in records:
        record["conditions"]["cot"] = {"tries": [_try(record["key"])]}
    summary = summarize_records(configure("full", {"language": "en"}), records)
    assert summary["score"] == 50.0 and summary["metrics"]["accuracy_cot"]["value"] == 100.0
    assert set(summary["conditions"]) == {"direct", "cot"}


def test_no_records_no_score() -> None:
    summary = summarize_records(configure("quick", {}), [])
    assert summary["score"] is None and summary["n_parsed"] == 0
