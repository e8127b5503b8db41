"""EQ-Bench 3 rubric mode: judge prompt, reading scores as upstream (and strictly), the run's numbers (spec §4)."""

import json
import statistics
from pathlib import Path

import pytest

from empathybench.instruments.eqbench3 import conversation as conv
from empathybench.instruments.eqbench3 import data, rubric
from empathybench.instruments.eqbench3.judging import load_judge_json, load_judge_json_upstream
from empathybench.instruments.eqbench3.rubric import ScoredTask


@pytest.fixture(scope="module")
def protocol() -> data.Protocol:
    return data.load_protocol()


def test_output_format_block() -> None:
    block = rubric.output_format(["a_b", "c"])
    lines = block.split("\n")
    assert lines[0] == "{" and lines[-1] == "}"
    assert lines[1] == (
        '  "chain_of_thought_reasoning": "detailed chain of thought reasoning about the coming scoring decisions",'
    )
    assert lines[2:4] == ['  "a_b": 0-20,', '  "c": 0-20']


def _roleplay_reply(tag: str) -> str:
    return (
        f"# I'm thinking & feeling\n*{tag} inner*\n# They're thinking & feeling\n{tag} other\n"
        f"# My response\n{tag} said\n--"
    )


def test_roleplay_rubric_prompt(mirror: Path, protocol: data.Protocol) -> None:
    scenario = protocol.scenarios["1"]
    replies = [_roleplay_reply(f"T{i}") for i in range(len(scenario.turns))]
    parsed = [conv.parse_sections(scenario.type, r) for r in replies]
    prompt = rubric.rubric_prompt(protocol, scenario, replies, parsed, "my **debrief** #1")
    assert "*" not in prompt and "#" not in prompt
    assert "my debrief 1" in prompt
    # the judge sees the wrapped user turns and the rebuilt sections, in order, split by "---"
    expected_first = (
        "User:\n" + conv.wrap_turn(protocol, scenario, 0).replace("*", "").replace("#", "") + "\n---\n"
        "Assistant:\n I'm thinking & feeling\nT0 inner\n\n They're thinking & feeling\nT0 other\n\n"
        " My response\nT0 said\n\n--\n---\n"
    )
    assert expected_first in prompt
    for criterion in protocol.criteria:
        assert f'"{criterion}": 0-20' in prompt
    assert prompt.count("User:\n") == len(scenario.turns) + 1  # plus the template's canned debrief turn


def test_analysis_rubric_prompt_uses_the_raw_reply(mirror: Path, protocol: data.Protocol) -> None:
    scenario = protocol.scenarios["401"]
    prompt = rubric.rubric_prompt(protocol, scenario, ["analysis with # heading and no sections"], [{}], None)
    assert "Assistant:\nanalysis with  heading and no sections\n" in prompt
    assert all(f'"{c}": 0-20' in prompt for c in protocol.criteria_analysis)
    assert '"warmth"' not in prompt


def test_faithful_parsing_takes_the_first_number_without_range_check() -> None:
    reply = (
        '```json\n{"chain_of_thought_reasoning": "7 reasons", "demonstrated_empathy": "15/20", '
        '"pragmatic_ei": 25, "depth_of_insight": "about 8.5", "warmth": "n/a", "extra": "3"}\n```'
    )
    parsed = rubric.parse_rubric_reply(reply)
    assert parsed.scores == {"demonstrated_empathy": 15.0, "pragmatic_ei": 25.0, "depth_of_insight": 8.5, "extra": 3.0}
    assert parsed.error is None and parsed.rejected == []


def test_strict_parsing_reports_what_it_rejected() -> None:
    reply = json.dumps({"demonstrated_empathy": "15/20", "pragmatic_ei": 25, "extra": 3, "warmth": -1})
    parsed = rubric.parse_rubric_reply(reply, ["demonstrated_empathy", "pragmatic_ei", "warmth", "humanlike"], "strict")
    assert parsed.scores == {"demonstrated_empathy": 15.0}
    assert {(r["key"], r["reason"]) for r in parsed.rejected} == {
        ("pragmatic_ei", "outside 0-20"),
        ("extra", "not a criterion of this task"),
        ("warmth", "outside 0-20"),
    }
    assert parsed.missing == ["pragmatic_ei", "warmth", "humanlike"]


def test_unreadable_replies_are_errors() -> None:
    assert rubric.parse_rubric_reply("no json here").error
    assert rubric.parse_rubric_reply('{"chain_of_thought_reasoning": "x", "a": "none"}').scores is None
    assert rubric.parse_rubric_reply("[1, 2]").scores is None


def test_tolerant_json_loader() -> None:
    assert load_judge_json('text ```json\n{"a": 1}\n``` more ```json\n{"b": "x}"} trailing').value == {"b": "x}"}
    loaded = load_judge_json('{"a": "he said "hi" loudly",\n "b": "line\nbreak"}')
    assert loaded.value == {"a": 'he said "hi" loudly', "b": "line\nbreak"} and loaded.repairs == ["quotes"]
    trailing = '{\n  "overall_eq": "A0493++",\n}'
    assert load_judge_json(trailing).value == {"overall_eq": "A0493++"}
    assert load_judge_json(trailing).repairs == ["trailing_comma"]
    with pytest.raises(ValueError):
        load_judge_json_upstream(trailing)
    with pytest.raises(ValueError):
        load_judge_json('{"a": "unterminated')


def test_task_score_uses_allowed_criteria_only() -> None:
    scores = {"demonstrated_empathy": 10, "pragmatic_ei": 14, "warmth": 20, "moralising": 0, "overall_eq": 1}
    assert rubric.task_score("1", scores) == 12.0
    analysis = {"depth_of_insight": 9, "correctness": 12, "warmth": 20}
    assert rubric.task_score("401", analysis) == 10.5
    assert rubric.task_score("1", {"warmth": 3}) is None


def test_run_summary_pools_tasks_and_excludes_errors() -> None:
    rp = {c: 10.0 for c in rubric.QUALITATIVE} | {t: 4.0 for t in rubric.STYLE_TRAITS}
    rp2 = {c: 14.0 for c in rubric.QUALITATIVE} | {t: 8.0 for t in rubric.STYLE_TRAITS} | {"humanlike": 2.0}
    an = {c: 6.0 for c in rubric.ANALYSIS_CRITERIA}
    tasks = [
        ScoredTask("1", "1", "rubric_scored", rp),
        ScoredTask("2", "1", "rubric_scored", rp2),  # a second iteration pools with the first
        ScoredTask("1", "208", "rubric_scored", {**rp, "demonstrated_empathy": 16.0}),
        ScoredTask("1", "401", "rubric_scored", an),
        ScoredTask("1", "2", "error", None),
        ScoredTask("1", "3", "completed", None),
        ScoredTask("1", "4", "rubric_scored", {"warmth": 5}),
    ]
    summary = rubric.summarise_rubric(tasks)
    assert summary["counts"] == {
        "tasks": 7, "rubric_scored": 5, "error": 1, "other_status": 1, "scored_without_allowed": 1,
    }  # fmt: skip
    drafting = (16 + 5 * 10) / 6
    mean = (10 + 14 + drafting + 6) / 4
    assert summary["mean_0_20"] == pytest.approx(mean, abs=1e-12)
    assert summary["score_0_100"] == pytest.approx(5 * mean, abs=1e-12)
    assert summary["score_0_100_cli"] == pytest.approx(5 * round(mean, 2), abs=1e-12)
    assert summary["by_type_0_100"] == pytest.approx({"roleplay": 60.0, "drafting": 5 * drafting, "analysis": 30.0})
    headline = summary["headline"]
    assert headline["n"] == 4 and headline["scale"] == 5.0
    assert headline["ci95"][0] <= headline["value"] <= headline["ci95"][1]
    abilities = summary["abilities_0_20"]
    assert set(abilities) == set(rubric.ABILITY_GROUPS)
    assert abilities["insightful"] == pytest.approx((10 + 14 + 10 + 6) / 4)  # analysis tasks count here too
    assert abilities["humanlike"] == pytest.approx(statistics.mean([4, 4, 8, 2, 4, 4]))  # all scores pooled
    assert abilities["empathy"] == pytest.approx((10 + 14 + 16) / 3)
    assert summary["abilities"]["humanlike"]["n"] == 3
    traits = summary["style_traits"]
    assert set(traits) == set(rubric.STYLE_TRAITS)
    assert traits["warmth"]["value"] == pytest.approx((4 + 8 + 4) / 3, abs=1e-4)
    assert traits["warmth"]["ci95"] is not None
