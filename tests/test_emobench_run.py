"""EmoBench items through the engine with scripted backends, driven here directly (test_emobench_plugin.py: the CLI).

Scripted models only answer letters; the item text comes from the mirror through the fetch code."""

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from empathybench.engine.engine import Engine, ItemContext
from empathybench.errors import UserError
from empathybench.instruments.emobench.bench import PRESETS, EmoBench, config_from_options, count_calls
from empathybench.instruments.protocol import PreparedBenchmark
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import ScriptedBackend
from empathybench.report.validity import result_validity


def _run(prepared: PreparedBenchmark, responder: Any) -> tuple[list[dict[str, Any]], ScriptedBackend]:
    backend = ScriptedBackend("emobench-test", responder)
    engine = Engine(backend, cache=None)

    async def go() -> list[dict[str, Any]]:
        records = []
        for item in prepared.items:
            ctx = ItemContext(engine, item.id, seed=7)
            records.append({"item_id": item.id, **await prepared.run_item(item, ctx)})
        return records

    return asyncio.run(go()), backend


def test_quick_paper2024_always_a_scores_the_always_a_baseline(mirror: Path) -> None:
    prepared = EmoBench().prepare_preset("quick", {}, limit=None, seed=0, allow_unverified=False)
    assert len(prepared.items) == 80  # 20 per task and language
    records, backend = _run(prepared, lambda request: "(a)")
    config = config_from_options("quick", {})
    assert len(backend.calls) == count_calls(config, 20) == 20 * 2 * 2 + 20 * 2  # EU asks twice
    request = backend.calls[0]
    assert request.messages[0].role == "system" and "(a) " in request.messages[1].content
    assert (request.sampling.temperature, request.sampling.top_p, request.sampling.max_tokens) == (0.6, 0.9, 75)
    summary = prepared.summarize(records)
    assert set(summary["conditions"]) == {"paper2024"}
    by_task = summary["conditions"]["paper2024"]
    assert set(by_task) == {"EU-en", "EU-zh", "EA-en", "EA-zh"} and summary["pooled"] is None
    for condition in by_task.values():
        assert condition["accuracy"]["value"] == pytest.approx(condition["baselines"]["always_A"])
        assert condition["accuracy"]["method"] == "Wilson 95%"  # one order, one sample
        assert condition["invalid_rate"] == 0
        assert condition["accuracy_faithful_parser"] == pytest.approx(condition["accuracy"]["value"])
    assert summary["human_baseline"]["value"] is None


def test_paper2024_cause_question_names_the_models_own_emotion(mirror: Path) -> None:
    prepared = EmoBench().prepare_preset("quick", {"task": "EU", "lang": "en"}, limit=2, seed=0, allow_unverified=False)

    def responder(request: ChatRequest) -> str:
        return "(b)" if "ultimately feel" in request.messages[1].content else "I cannot tell"

    records, backend = _run(prepared, responder)
    first_item = prepared.items[0].payload.orders[0]
    assert f"feel {first_item.choices[1]} in this situation?" in backend.calls[1].messages[1].content
    sample = records[0]["conditions"]["paper2024"]["orders"][0]["samples"][0]
    assert sample["robust"]["cause"] == {"index": None, "reason": "no_answer"}
    assert records[0]["parse_error"] == "no_answer"


def _json_letters(request: ChatRequest, letter: str) -> str:
    if "answer_q1" in request.messages[0].content:
        return f'```json\n{{"answer_q1": "{letter}", "answer_q2": "{letter}"}}\n```'
    return json.dumps({"answer": letter})


def test_repo2025_exact_json_against_robust(mirror: Path) -> None:
    prepared = EmoBench().prepare_preset(
        "quick", {"protocol": "repo2025", "lang": "zh"}, limit=5, seed=0, allow_unverified=False
    )
    records, backend = _run(prepared, lambda request: _json_letters(request, "a"))  # lower case
    assert len(backend.calls) == 10  # one call per item
    assert backend.calls[0].sampling.max_tokens == 50
    assert re.search(r"\nA\) ", backend.calls[0].messages[1].content)
    summary = prepared.summarize(records)
    for condition in summary["conditions"]["repo2025"].values():
        assert condition["accuracy"]["value"] == pytest.approx(condition["baselines"]["always_A"])  # robust reads "a"
        assert condition["accuracy_faithful_parser"] == 0  # upstream needs exactly "A"
    assert summary["notes"] and "file order" in summary["notes"][0]
    faithful = records[0]["conditions"]["repo2025"]["orders"][0]["samples"][0]["faithful"]
    assert {a["reason"] for a in faithful.values()} == {"not_exact_letter"}


def test_extra_orders_are_seeded_permutations_and_samples_are_distinct_requests(mirror: Path) -> None:
    options = {"task": "EA", "lang": "en", "orders": "6", "samples": "2"}
    first = EmoBench().prepare_preset("quick", options, limit=3, seed=1, allow_unverified=False)
    again = EmoBench().prepare_preset("quick", options, limit=3, seed=1, allow_unverified=False)
    other = EmoBench().prepare_preset("quick", options, limit=3, seed=2, allow_unverified=False)
    orders = [o.choices for o in first.items[0].payload.orders]
    assert len(orders) == 6 and orders == [o.choices for o in again.items[0].payload.orders]
    assert all(sorted(o) == sorted(orders[0]) for o in orders)
    assert orders[4:] != [o.choices for o in other.items[0].payload.orders][4:]  # 5th, 6th: seeded by --seed
    assert orders[:4] == [o.choices for o in other.items[0].payload.orders][:4]  # the upstream four are fixed
    for item in first.items:
        for presented in item.payload.orders:
            assert presented.choices[presented.label] == item.payload.item.label
    records, backend = _run(first, lambda request: "(a)")
    assert len(backend.calls) == 3 * 6 * 2
    summary = first.summarize(records)["conditions"]["paper2024"]["EA-en"]
    assert summary["accuracy"]["method"].startswith("percentile bootstrap")
    assert set(summary["per_order_accuracy"]) == set(range(6))


def test_preset_call_counts_and_option_errors() -> None:
    assert count_calls(PRESETS["paper"]) == 2 * (8000 + 4000)  # spec §9, per language
    with pytest.raises(UserError, match=r"emobench\.lang"):
        config_from_options("quick", {"lang": "fr"})
    with pytest.raises(UserError, match=r"emobench\.orders"):
        config_from_options("paper", {"orders": "0"})
    with pytest.raises(UserError, match="unknown emobench option"):
        config_from_options("paper", {"shuffle": "1"})
    assert config_from_options("paper", {"protocol": "repo2025"}).samples == 1


def test_full_preset_asks_four_conditions_and_reports_fine_categories(mirror: Path) -> None:
    prepared = EmoBench().prepare_preset(
        "full", {"lang": "zh", "orders": "1", "samples": "1"}, limit=3, seed=0, allow_unverified=False
    )
    records, backend = _run(prepared, lambda request: _json_letters(request, "A") + "\n(a)")
    config = config_from_options("full", {"lang": "zh", "orders": "1", "samples": "1"})
    assert [c.label for c in config.conditions()] == ["paper2024", "paper2024+cot", "repo2025", "repo2025+cot"]
    assert len(backend.calls) == count_calls(config, 3) == 3 * (2 + 2 + 1 + 1) + 3 * (1 + 1 + 1 + 1)
    cot_call = next(c for c in backend.calls if c.sampling.max_tokens == 2048)
    assert "reasoning" in cot_call.messages[0].content
    summary = prepared.summarize(records)
    assert set(summary["conditions"]) == {"paper2024", "paper2024+cot", "repo2025", "repo2025+cot"}
    eu = summary["conditions"]["repo2025"]["EU-zh"]
    assert eu["by_fine_category"] and eu["accuracy"]["value"] == pytest.approx(eu["baselines"]["always_A"])


def test_unanswered_items_are_counted_and_a_mostly_unanswered_figure_is_labelled_insufficient(mirror: Path) -> None:
    options = {"task": "EA", "lang": "both"}
    prepared = EmoBench().prepare_preset("quick", options, limit=4, seed=0, allow_unverified=False)
    # en: every item answered; zh: only the first of four (the rest is prose no parser reads)
    records, _ = _run(prepared, lambda request: "(a)")
    answered_zh = {prepared.items[4].id}
    records = [
        r if r["language"] == "en" or r["item_id"] in answered_zh else {**_unanswered(r), "parse_error": "no_answer"}
        for r in records
    ]
    summary = prepared.summarize(records)
    assert (summary["n_items"], summary["n_parsed"]) == (8, 5)
    en, zh = summary["metrics"]["ea_accuracy_en"], summary["metrics"]["ea_accuracy_zh"]
    assert en["n_answered"] == 4 and "answered" not in en["label"] and not en["label"].startswith("insufficient")
    assert zh["n_answered"] == 1 and zh["label"].startswith("insufficient: ") and "1 of 4 items answered" in zh["label"]
    assert summary["invalid_rate"] == pytest.approx(75.0)  # zh: 3 of 4 answers unparsed
    assert "invalid answers up to 75.0% (EA-zh" in summary["headline_note"]
    assert "EA-zh (1 of 4 items answered)" in summary["headline_note"]
    assert result_validity(summary)["status"] == "valid"  # 5 of 8 items overall: the house rule is met
    only_zh = [r for r in records if r["language"] == "zh"]
    zh_run = EmoBench().prepare_preset("quick", {**options, "lang": "zh"}, limit=4, seed=0, allow_unverified=False)
    assert result_validity(zh_run.summarize(only_zh))["status"] == "insufficient"  # 1 of 4


def _unanswered(record: dict[str, Any]) -> dict[str, Any]:
    """The record as if every answer had been unreadable prose."""
    unread = {"index": None, "reason": "no_answer"}
    copy = json.loads(json.dumps(record))
    for condition in copy["conditions"].values():
        for order in condition["orders"]:
            for sample in order["samples"]:
                for parser in sample.values():
                    for question in parser:
                        parser[question] = dict(unread)
    return copy
