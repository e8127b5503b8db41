"""ToMBench end to end through the CLI with scripted models: the calls the protocol makes, an oracle that knows every
key scores 100% through the shuffles, a model that never names a letter is read as A by the upstream parser (and as
wrong by the strict one), and the canned answers fill summary, samples and report."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process, run_instrument
from empathybench.instruments.tombench.data import LETTERS, load_items
from empathybench.instruments.tombench.parse import majority
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import register_script


def _oracle(request: ChatRequest) -> str:
    """The shown letter of the key's option, found by the item's story, question and options in the prompt."""
    prompt = request.messages[-1].content
    for item in _ITEMS:
        for shown in item.languages.values():
            if shown.story in prompt and shown.question in prompt and all(f". {o}" in prompt for o in shown.options):
                key_text = shown.options[LETTERS.index(item.key)]
                letter = next(x for x in LETTERS if f"\n{x}. {key_text}" in prompt)
                return f"[[{letter}]]"
    raise AssertionError("the oracle does not know this prompt")


_ITEMS: list[Any] = []
register_script("tombench-oracle", _oracle)
register_script("tombench-silent", lambda request: "It is hard to tell from the story.")


def _run(tmp_path: Path, model: str, *args: str) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    return run_instrument(tmp_path, "tombench", model, *args)


def test_a_scripted_paper_run_asks_each_item_five_times_per_language(tmp_path: Path, mirror: Path) -> None:
    summary, records, out = _run(tmp_path, "scripted/plausible", "--preset", "paper", "--limit", "4")
    assert len(records) == 8 and {r["language"] for r in records} == {"en", "zh"}
    assert [len(r["calls"]) for r in records] == [5] * 8
    call = records[0]["calls"][0]
    assert [m["role"] for m in call["messages"]] == ["system", "user"]
    assert call["sampling"]["temperature"] == 0.0 and call["sampling"]["top_p"] is None
    assert [c["repetition"] for c in records[0]["calls"]] == [0, 1, 2, 3, 4]
    for record in records:
        tries = record["conditions"]["direct"]["tries"]
        assert [t["letter"] for t in tries] == [_letter_read(c["reply"]) for c in record["calls"]]
        assert record["correct"] == (majority([t["answer"] for t in tries]) == record["key"])
    # the same question shows the same option orders in English and Chinese
    by_question: dict[str, list[list[str]]] = {}
    for record in records:
        by_question.setdefault(record["question_id"], []).append(
            [t["order"] for t in record["conditions"]["direct"]["tries"]]
        )
    assert all(orders[0] == orders[1] for orders in by_question.values())
    fallbacks = sum(t["method"] == "fallback" for r in records for t in r["conditions"]["direct"]["tries"])
    assert summary["n_fallback_tries"] == fallbacks and summary["n_tries"] == 40
    assert set(summary["metrics"]) == {"accuracy", "accuracy_en", "accuracy_zh"}
    run = json.loads((out / "run.json").read_text("utf-8"))["benchmarks"]["tombench"]["config"]
    assert run["try_times"] == 5 and len(run["questions"]) == 4 and run["language"] == "both"
    page = (out / "report.html").read_text("utf-8")
    assert 'id="bench-tombench"' in page and "per ability" in page and "no letter: read as A" in page


def _letter_read(reply: str) -> str:
    found = re.search(r"\[\[?([A-D])\]", reply) or re.search(r"([A-D])[^A-D]*$", reply)
    return found.group(1) if found else "A"


def test_an_oracle_scores_100_through_every_shuffle(tmp_path: Path, mirror: Path) -> None:
    _ITEMS[:] = load_items()[0]
    summary, records, _ = _run(tmp_path, "scripted/tombench-oracle", "--preset", "paper", "--limit", "12")
    assert summary["score"] == 100.0 and summary["n_fallback_tries"] == 0
    assert all(r["correct"] for r in records) and len(records) == 24
    quick, records, _ = _run(tmp_path, "scripted/tombench-oracle", "--limit", "37")
    assert quick["score"] == 100.0 and len(records) == 37 and {r["language"] for r in records} == {"en"}
    assert len({r["task"] for r in records}) == 20  # the quick cut's first 37 cover every file


@pytest.mark.parametrize("parser", ["upstream", "strict"])
def test_a_model_that_never_names_a_letter(parser: str, tmp_path: Path, mirror: Path) -> None:
    summary, records, _ = _run(
        tmp_path,
        "scripted/tombench-silent",
        "--preset",
        "paper",
        "--limit",
        "6",
        "--option",
        f"tombench.parser={parser}",
    )
    assert summary["n_fallback_tries"] == summary["n_tries"] == 60
    assert summary["n_parsed"] == 0 and summary["validity"]["status"] == "insufficient"
    # upstream: every reply is the shown A, i.e. the option shuffled to the first place in that try
    right = [majority([order[0] for order in _orders(r)]) == r["key"] for r in records]
    expected = 100 * sum(right) / len(right) if parser == "upstream" else 0.0
    assert summary["metrics"]["accuracy"]["value"] == pytest.approx(expected, abs=1e-4)  # rounded to 4 places
    assert all(r["parse_error"] for r in records)


def _orders(record: dict[str, Any]) -> list[str]:
    return [t["order"] for t in record["conditions"]["direct"]["tries"]]


def test_chain_of_thought_both_asks_each_item_under_both_prompts(tmp_path: Path, mirror: Path) -> None:
    summary, records, _ = _run(
        tmp_path,
        "scripted/plausible",
        "--limit",
        "3",
        "--option",
        "tombench.cot=both",
        "--option",
        "tombench.try_times=2",
    )
    assert [len(r["calls"]) for r in records] == [4, 4, 4]
    systems = {c["messages"][0]["content"] for r in records for c in r["calls"]}
    assert len(systems) == 2
    assert {c["sampling"]["max_tokens"] for c in records[0]["calls"]} == {1024, 4096}
    assert set(summary["conditions"]) == {"direct", "cot"} and "accuracy_cot" in summary["metrics"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("tombench.try_times=11", "tombench.try_times must be between 1 and 10, not '11'"),
        ("tombench.language=fr", "tombench.language must be en or zh or both, not 'fr'"),
        ("tombench.cot=maybe", "tombench.cot must be false, true, both, not 'maybe'"),
        ("tombench.parser=lenient", "tombench.parser must be upstream or strict, not 'lenient'"),
        ("tombench.tasks=false-belief,hinting-task-test", "unknown tombench.tasks false-belief; choose all or from"),
    ],
)
def test_a_bad_option_is_one_line_before_any_call(option: str, message: str, tmp_path: Path) -> None:
    result = cli_in_process(["run", "-m", "scripted/plausible", "--bench", "tombench", "--option", option])
    assert result.returncode != 0
    assert message in result.stderr and len([line for line in result.stderr.splitlines() if line.strip()]) == 1
