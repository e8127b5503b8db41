"""EQ-Bench 3 task runner on scripted models: every turn through ItemContext, resume replays finished turns."""

import asyncio
import json
import re
from pathlib import Path

import pytest

from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine, ItemContext, RetryPolicy
from empathybench.instruments.eqbench3 import data
from empathybench.instruments.eqbench3.runner import TaskSettings, judge_pair, run_task
from empathybench.models.base import ChatRequest, RequestRejectedError
from empathybench.models.scripted import ScriptedBackend

_CRITERION = re.compile(r'"(\w+)": 0-20')


@pytest.fixture(scope="module")
def protocol() -> data.Protocol:
    return data.load_protocol()


def _model_reply(request: ChatRequest) -> str:
    turn = sum(1 for m in request.messages if m.role == "user")
    return (
        f"<think>private {turn}</think>\n# I'm thinking & feeling\nthoughts of turn {turn} " + "w " * 60 + "\n"
        f"# They're thinking & feeling\ntheirs {turn}\n# My response\nresponse {turn}\n--"
    )


def _judge_reply(request: ChatRequest) -> str:
    criteria = _CRITERION.findall(request.messages[-1].content)
    scores = {c: (12 if i < 6 else 4) for i, c in enumerate(criteria)}
    return json.dumps({"chain_of_thought_reasoning": "fine", **scores}, indent=2)[:-2] + ",\n}"  # trailing comma


def _engines(tmp_path: Path, model: ScriptedBackend, judge: ScriptedBackend) -> tuple[Engine, Engine]:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    retry = RetryPolicy(max_retries=0)
    return Engine(model, cache=cache, retry=retry), Engine(judge, cache=cache, retry=retry)


def test_a_roleplay_task_end_to_end(mirror: Path, protocol: data.Protocol, tmp_path: Path) -> None:
    scenario = protocol.scenarios["3"]  # four turns
    model, judge = ScriptedBackend("eqb3-model", _model_reply), ScriptedBackend("eqb3-judge", _judge_reply)
    engine, judge_engine = _engines(tmp_path, model, judge)
    ctx = ItemContext(engine, "1:3", 0, judge_engine=judge_engine)
    record = asyncio.run(run_task(protocol, scenario, ctx))
    assert record["status"] == "rubric_scored", record["error"]
    assert len(model.calls) == 5 and len(judge.calls) == 1  # four turns + debrief; one rubric call
    assert [len(call.messages) for call in model.calls] == [1, 3, 5, 7, 9]
    assert model.calls[1].messages[1].content.startswith("# I'm thinking")  # the think block was dropped
    assert record["turns"][0]["raw"].startswith("<think>")
    assert record["turns"][2]["sections"]["response"] == "response 3"
    assert record["mean_section_coverage"] == 1.0
    assert record["rubric"]["repairs"] == ["trailing_comma"]
    assert record["score_0_20"] == 12.0
    assert len(ctx.calls) == 6 and ctx.calls[-1]["role"] == "judge"
    assert model.calls[0].sampling.temperature == 0.7 and model.calls[-1].sampling.temperature == 0.5
    assert model.calls[0].sampling.min_p == 0.1 and model.calls[-1].sampling.min_p is None
    assert judge.calls[0].sampling.temperature == 0.0 and "#" not in judge.calls[0].messages[0].content


def test_an_interrupted_conversation_resumes_from_the_first_missing_turn(
    mirror: Path, protocol: data.Protocol, tmp_path: Path
) -> None:
    scenario = protocol.scenarios["3"]
    failing_at = 3

    def flaky(request: ChatRequest) -> str:
        if sum(1 for m in request.messages if m.role == "user") == failing_at:
            raise RequestRejectedError(400, "boom")
        return _model_reply(request)

    model, judge = ScriptedBackend("eqb3-resume", flaky), ScriptedBackend("eqb3-judge", _judge_reply)
    engine, judge_engine = _engines(tmp_path, model, judge)
    first = asyncio.run(run_task(protocol, scenario, ItemContext(engine, "1:3", 0, judge_engine=judge_engine)))
    assert first["status"] == "error" and first["error"]["phase"] == "scenario" and first["error"]["turn"] == 3
    assert len(first["turns"]) == 2 and len(judge.calls) == 0

    failing_at = -1  # the model answers again
    model2, judge2 = ScriptedBackend("eqb3-resume", flaky), ScriptedBackend("eqb3-judge", _judge_reply)
    engine2, judge_engine2 = _engines(tmp_path, model2, judge2)
    second = asyncio.run(run_task(protocol, scenario, ItemContext(engine2, "1:3", 0, judge_engine=judge_engine2)))
    assert second["status"] == "rubric_scored"
    assert [t["cached"] for t in second["turns"]] == [True, True, False, False]
    assert [len(call.messages) for call in model2.calls] == [5, 7, 9]  # turns 3, 4 and the debrief only
    assert engine2.stats.cache_hits == 2


def test_analysis_task_has_no_debrief_and_a_short_reply_is_not_judged(
    mirror: Path, protocol: data.Protocol, tmp_path: Path
) -> None:
    scenario = protocol.scenarios["401"]
    model, judge = ScriptedBackend("eqb3-short", lambda r: "too short"), ScriptedBackend("eqb3-judge", _judge_reply)
    engine, judge_engine = _engines(tmp_path, model, judge)
    record = asyncio.run(run_task(protocol, scenario, ItemContext(engine, "1:401", 0, judge_engine=judge_engine)))
    assert len(model.calls) == 1 and record["debrief"] is None
    assert record["status"] == "error" and record["error"]["phase"] == "gate" and not judge.calls
    other = asyncio.run(
        run_task(
            protocol,
            scenario,
            ItemContext(engine, "2:401", 0, judge_engine=judge_engine),
            TaskSettings(iteration=2, rubric=False, model_identity={"provider": "openai", "base_url": None}),
        )
    )
    assert other["status"] == "scenario_completed" and len(model.calls) == 2  # iteration 2 is not a cache hit
    assert model.calls[-1].sampling.min_p is None  # as upstream, never sent to api.openai.com


def test_a_pair_is_judged_in_both_orders(mirror: Path, protocol: data.Protocol, tmp_path: Path) -> None:
    from empathybench.instruments.eqbench3 import conversation as conv
    from empathybench.instruments.eqbench3.pairwise import Respondent

    scenario = protocol.scenarios["1"]
    verdicts = iter(
        [
            '{"chain_of_thought_reasoning": "A0488+++++", "overall_eq": "A0493+++", "pragmatic_ei": "A0488+",}',
            "not json at all",
        ]
    )
    judge = ScriptedBackend("eqb3-pair-judge", lambda request: next(verdicts))
    engine, judge_engine = _engines(tmp_path, ScriptedBackend("eqb3-unused", _model_reply), judge)
    ctx = ItemContext(engine, "pair", 0, judge_engine=judge_engine)

    def side(tag: str) -> Respondent:
        replies = [f"# I'm thinking & feeling\n{tag}\n# They're thinking & feeling\nx\n# My response\ny\n--"] * 3
        return Respondent(replies, [conv.parse_sections(scenario.type, r) for r in replies], f"debrief {tag}")

    records = asyncio.run(
        judge_pair(protocol, scenario, ctx, iteration="1", test_model="t", test=side("TEST"), other_model="o",
                   other=side("OTHER"))
    )  # fmt: skip
    assert [r["order"] for r in records] == ["A0493:test / A0488:other", "A0493:other / A0488:test"]
    first_prompt, second_prompt = (call.messages[0].content for call in judge.calls)
    assert first_prompt.index("TEST") < first_prompt.index("OTHER")
    assert second_prompt.index("OTHER") < second_prompt.index("TEST")
    forward, reversed_ = records
    assert forward["repairs"] == ["trailing_comma"]
    assert (forward["outcome_for_test_model"], forward["plus_for_test"], forward["plus_for_other"]) == (1.0, 3, 1)
    assert forward["fraction_for_test"] == pytest.approx(0.5 + (2 / 30) / 2)
    assert "error" in reversed_ and reversed_["raw_judge_response"] == "not json at all"
