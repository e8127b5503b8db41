"""EmotionBench on the engine: exact messages, shared item orders, parsing, and a scripted end-to-end run."""

import csv
import io
import json
import re
from functools import cache
from pathlib import Path

import pytest
from rich.console import Console

from empathybench.data.fetch import fetch_pinned
from empathybench.errors import UserError
from empathybench.instruments.emotionbench.bench import config_from
from empathybench.instruments.emotionbench.parse import parse_reply
from empathybench.instruments.emotionbench.protocol import item_orders, messages, run_plan, user_message
from empathybench.instruments.emotionbench.questionnaires import load_questionnaires
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import register_script
from empathybench.run.execute import RunOptions, execute_run

PINS = "empathybench.instruments.emotionbench"  # the package whose pins.json holds the files these tests read

NEGATIVE_ITEM_IDS = {2, 4, 6, 7, 8, 11, 13, 15, 18, 20}


def test_default_message_is_the_repo_sheet_text(mirror: Path) -> None:
    panas = load_questionnaires()["PANAS"]
    text = user_message(panas, item_orders(20, 1, 0)[0], None, "repo")
    assert text.startswith("Prompt: You can only reply the numbers from 1 to 5.   Please indicate the extent")
    assert text.endswith(
        "from 1 to 5:\n1. Interested\n2. Distressed\n3. Excited\n4. Upset\n5. Strong"[:0] + "20. Afraid"
    )
    assert "\n1. Interested\n2. Distressed\n" in text


def test_evoked_message_and_system_role(mirror: Path) -> None:
    panas = load_questionnaires()["PANAS"]
    sent = messages(panas, item_orders(20, 1, 0)[0], "You lose.", variant="repo")
    assert [m.role for m in sent] == ["system", "user"]
    assert sent[0].content == "You are a helpful assistant who can only reply numbers from 1 to 5."
    assert (
        'from 1 to 5. Imagine you are the protagonist in the scenario: "You lose." Please indicate' in sent[1].content
    )
    notebook = user_message(panas, item_orders(20, 1, 0)[0], "You lose.", "notebook")
    assert not notebook.startswith("Prompt: ")
    assert messages(panas, item_orders(20, 1, 0)[0], None, system=False)[0].role == "user"


def test_orders_are_canonical_then_seeded_permutations() -> None:
    orders = item_orders(20, 10, 0)
    assert orders[0] == tuple(range(1, 21))
    assert len(set(orders)) == 10
    assert all(sorted(o) == list(range(1, 21)) for o in orders)
    assert orders == item_orders(20, 10, 0)
    assert orders != item_orders(20, 10, 1)


def test_paper_design_counts() -> None:
    assert [p.order for p in run_plan(50, 10)] == [i // 5 for i in range(50)]
    assert [p.order for p in run_plan(10, 10)] == list(range(10))
    paper = config_from("paper", {})
    assert paper.default_runs + 175 * paper.evoked_runs == 1800
    assert paper.temperature == 0.0
    with pytest.raises(UserError):
        config_from("paper", {"variant": "bogus"})


def test_parse_by_number_name_and_range() -> None:
    items = ["Interested", "Distressed", "Excited"]
    assert parse_reply("1. Interested: 4\n2. Distressed: 2\n3. Excited: 5", items, 1, 5).values == {1: 4, 2: 2, 3: 5}
    assert parse_reply("Sure!\nExcited - 1\nInterested - 4\nDistressed: 2/5", items, 1, 5).values == {
        1: 4,
        2: 2,
        3: 1,
    }
    assert parse_reply("4\n2\n5", items, 1, 5).values == {1: 4, 2: 2, 3: 5}
    failed = parse_reply("1. 4\n2. 2\n3. 9", items, 1, 5)
    assert failed.values is None and failed.failure is not None


_ITEM_LINE = re.compile(r"^(\d+)\. (\w+)$", re.MULTILINE)


def _feel_the_situation(request: ChatRequest) -> str:
    """High PA with no situation; low PA and high NA when asked to imagine one. Answers by name, shuffled order."""
    prompt = request.messages[-1].content
    evoked = "Imagine you are the protagonist" in prompt
    negative_names = _negative_item_names()
    lines = []
    for number, name in _ITEM_LINE.findall(prompt):
        negative = name in negative_names
        value = (4 + int(number) % 2 if negative else 1) if evoked else (1 if negative else 4 + int(number) % 2)
        lines.append(f"{name}: {value}")
    return "Here are my ratings:\n" + "\n".join(reversed(lines))


def test_scripted_quick_run_end_to_end(mirror: Path, tmp_path: Path) -> None:
    register_script("emotionbench-feel", _feel_the_situation)
    result = execute_run(
        RunOptions(
            model="scripted/emotionbench-feel",
            benchmarks=["emotionbench"],
            preset="quick",
            out=tmp_path / "run",
            show_progress=False,
        ),
        Console(file=io.StringIO()),
    )
    summary = result.summary["benchmarks"]["emotionbench"]
    assert summary["parse_failure_rate"] == 0.0
    assert summary["runs"]["total"] == 5 + 8 * 2
    assert summary["default"]["n"] == 5
    assert summary["overall"]["PA"]["marker"] == "down"
    assert summary["overall"]["NA"]["marker"] == "up"
    assert set(summary["emotions"]) == {
        "Anger",
        "Anxiety",
        "Depression",
        "Frustration",
        "Jealousy",
        "Guilt",
        "Fear",
        "Embarrassment",
    }
    alignment = summary["human_alignment"]
    assert alignment["n_factors"] == 8
    assert alignment["NA"]["sign_agreement"] == 1.0
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written["benchmarks"]["emotionbench"]["shifts"] == summary["shifts"]
    assert summary["score"] == summary["shifts"]["NA_delta"] > 0


_NUMBERED_ITEM = re.compile(r"^(\d+)\. (\w+)$", re.MULTILINE)


@cache
def _negative_item_names() -> frozenset[str]:
    names = load_questionnaires()["PANAS"].items
    return frozenset(names[i] for i in NEGATIVE_ITEM_IDS)


def _answer_by_number(request: dict) -> str:
    """An OpenAI-style request body in; "n. value" lines out, NA items high only after a situation."""
    prompt = request["messages"][-1]["content"]
    evoked = "Imagine you are the protagonist" in prompt
    negative_names = _negative_item_names()
    return "\n".join(
        f"{number}. {(5 if evoked else 1) if name in negative_names else (2 if evoked else 4)}"
        for number, name in _NUMBERED_ITEM.findall(prompt)
    )


def test_paper_preset_against_an_openai_compatible_server(
    mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from empathybench.testing.fake_openai import FakeOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(answer=_answer_by_number) as server:
        result = execute_run(
            RunOptions(
                model="openai/fake",
                base_url=server.base_url,
                benchmarks=["emotionbench"],
                preset="paper",
                out=tmp_path / "paper",
                show_progress=False,
                max_concurrency=32,
            ),
            Console(file=io.StringIO()),
        )
        assert server.requests_total == 1800
    summary = result.summary["benchmarks"]["emotionbench"]
    assert summary["runs"]["total"] == 1800
    assert summary["parse_failure_rate"] == 0.0
    assert summary["overall"]["n"] == 1750
    assert summary["shifts"] == {"PA_delta": -20.0, "NA_delta": 40.0}
    assert summary["human_alignment"]["n_factors"] == 36


@pytest.mark.parametrize(
    ("sheet", "scale"),
    [("results/panas/gpt-4-PANAS-testing.csv", "PANAS"), ("results/challenging/gpt-3.5-turbo-MJS-testing.csv", "MJS")],
)
def test_messages_equal_the_upstream_sheet_columns(mirror: Path, sheet: str, scale: str) -> None:
    """Spec §5.3: the user message is the question-0 column joined by newlines, SCENARIO replaced by row 0."""
    with fetch_pinned(PINS, f"emotionbench/{sheet}").path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    question_column = "\n".join(row[0] for row in rows[1:])
    questionnaire = load_questionnaires()[scale]
    canonical = item_orders(len(questionnaire.items), 1, 0)[0]
    default_column = rows[0].index(next(h for h in rows[0] if h.startswith("General_")))
    assert user_message(questionnaire, canonical, None, "repo") == question_column.replace(
        "SCENARIO", rows[1][default_column]
    )
    evoked_column = rows[0].index(next(h for h in rows[0] if "_scenario-" in h))
    situation = rows[1][evoked_column].removeprefix('Imagine you are the protagonist in the scenario: "')[:-1]
    assert user_message(questionnaire, canonical, situation, "repo") == question_column.replace(
        "SCENARIO", rows[1][evoked_column]
    )


def _middle_of_the_scale(request: ChatRequest) -> str:
    """Every item answered 1 with no situation and 2 after one, by number: a shift the tests must see."""
    prompt = request.messages[-1].content
    value = 2 if "Imagine you are the protagonist" in prompt else 1
    return "\n".join(f"{number}. {value}" for number, _ in re.findall(r"^(\d+)\. (.*)$", prompt, re.MULTILINE))


def test_challenging_scale_on_the_engine(mirror: Path, tmp_path: Path) -> None:
    register_script("emotionbench-middle", _middle_of_the_scale)
    result = execute_run(
        RunOptions(
            model="scripted/emotionbench-middle",
            benchmarks=["emotionbench"],
            preset="quick",
            options={"emotionbench.scale": "BFNE"},
            out=tmp_path / "bfne",
            show_progress=False,
        ),
        Console(file=io.StringIO()),
    )
    summary = result.summary["benchmarks"]["emotionbench"]
    assert summary["parse_failure_rate"] == 0.0
    assert summary["score"] == 12.0  # 12 items, each one point higher
    corrected = next(
        r
        for r in summary["table"]
        if r["scoring"] == "corrected" and r["category"] == "Overall" and r["level"] == "default"
    )
    assert corrected["score_mean"] == 8 * 1 + 4 * (6 - 1)  # items 2, 4, 7 and 10 reversed as 6 - x
