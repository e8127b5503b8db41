"""One EQ-Bench 3 task run turn by turn, and one pairwise judgement in both orders, through `ItemContext`.

`run_task` is what the instrument runs per item (bench.py). `judge_pair` judges one pair in both orders through an
ItemContext; the comparison of whole runs (`report A B C --judge`, elo.py) builds the same prompts and keeps each
verdict in a judgements file as well.

Every call goes through the engine, whose response cache stores each answer as soon as it arrives (SQLite,
autocommit). A conversation is a deterministic function of its earlier replies, so re-running an interrupted
task replays the finished turns from the cache and calls the model only from the first missing turn on.
"""

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from empathybench.engine.engine import CallFailedError, ItemContext
from empathybench.instruments.eqbench3 import conversation as conv
from empathybench.instruments.eqbench3.data import Protocol, Scenario, TaskType
from empathybench.instruments.eqbench3.pairwise import (
    ORDER_TEST_FIRST,
    ORDER_TEST_SECOND,
    MarginRules,
    Respondent,
    judgement_from_verdict,
    pairwise_prompt,
    parse_pairwise_reply,
)
from empathybench.instruments.eqbench3.rubric import (
    ParseStrictness,
    parse_rubric_reply,
    rubric_prompt,
    task_score,
)
from empathybench.models.base import Message


@dataclass(frozen=True)
class TaskSettings:
    iteration: int = 1  # 1-based, as upstream; iterations differ in the cache key through `repetition`
    rubric: bool = True
    strictness: ParseStrictness = "faithful"
    # The tested model's endpoint (Backend.identity()): min_p is not sent to api.openai.com, as upstream.
    model_identity: Mapping[str, Any] = field(default_factory=dict)
    upstream_quirks: bool = False  # upstream's silent vendor tweaks (spec §3), off unless asked for
    max_turns: int | None = None  # the demo's cut: only the first turns (None: all, as upstream)
    max_tokens: int | None = None  # the demo's cut: every call's budget capped (None: upstream's)


def _criteria(protocol: Protocol, scenario: Scenario) -> list[str]:
    return protocol.criteria_analysis if scenario.type is TaskType.ANALYSIS else protocol.criteria


def _turn_record(scenario: Scenario, generation: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """One turn of the scenario as its record keeps it, and its parsed sections."""
    reply = conv.strip_reasoning(generation.text)
    sections = conv.parse_sections(scenario.type, reply)
    turn = {
        "raw": generation.text,
        "reply": reply,
        "sections": {k: v for k, v in sections.items() if k != "raw"},
        "section_coverage": conv.section_coverage(scenario.type, sections),
        "finish_reason": generation.finish_reason,
        "cached": generation.cached,
        "prompt_tokens": generation.prompt_tokens,
        "completion_tokens": generation.completion_tokens,
    }
    return turn, sections


async def run_task(
    protocol: Protocol, scenario: Scenario, ctx: ItemContext, settings: TaskSettings | None = None
) -> dict[str, Any]:
    """Turns, debrief and rubric judgement of one scenario; the record says how far it got and why it stopped."""
    settings = settings or TaskSettings()
    repetition = settings.iteration - 1
    record: dict[str, Any] = {
        "scenario_id": scenario.scenario_id,
        "type": scenario.type.value,
        "iteration": settings.iteration,
        "status": "running_scenario",
        "turns": [],
        "debrief": None,
        "rubric": None,
        "error": None,
    }
    identity, quirks = settings.model_identity, settings.upstream_quirks
    turn_sampling = conv.sampling_for_endpoint(conv.TURN_SAMPLING, identity, upstream_quirks=quirks)
    debrief_sampling = conv.sampling_for_endpoint(conv.DEBRIEF_SAMPLING, identity, upstream_quirks=quirks)

    judge_sampling = conv.JUDGE_SAMPLING
    if settings.max_tokens is not None:
        turn_sampling, debrief_sampling, judge_sampling = (
            replace(s, max_tokens=min(s.max_tokens, settings.max_tokens))
            for s in (turn_sampling, debrief_sampling, judge_sampling)
        )

    def for_endpoint(messages: Sequence[Message]) -> list[Message]:
        return conv.messages_for_endpoint(messages, identity, upstream_quirks=quirks)

    replies: list[str] = []
    parsed: list[dict[str, str]] = []
    for turn_index in range(min(len(scenario.turns), settings.max_turns or len(scenario.turns))):
        messages = for_endpoint(conv.turn_messages(protocol, scenario, replies))
        try:
            generation = await ctx.generate(messages, turn_sampling, repetition=repetition)
        except CallFailedError as exc:
            record.update(status="error", error={"phase": "scenario", "turn": turn_index + 1, "message": str(exc)})
            return record
        turn, sections = _turn_record(scenario, generation)
        replies.append(turn["reply"])
        parsed.append(sections)
        record["turns"].append(turn)
    record["status"] = "scenario_completed"

    debrief: str | None = None
    played_all = len(replies) == len(scenario.turns)  # the demo's cut may stop early: no debrief then
    if conv.has_debrief(scenario) and played_all:
        try:
            generation = await ctx.generate(
                for_endpoint(conv.debrief_messages(protocol, scenario, replies)),
                debrief_sampling,
                repetition=repetition,
            )
        except CallFailedError as exc:
            record.update(status="error", error={"phase": "debrief", "message": str(exc)})
            return record
        debrief = conv.strip_reasoning(generation.text).strip()
        record["debrief"] = {"raw": generation.text, "text": debrief, "cached": generation.cached}
        record["status"] = "completed"

    coverages = [t["section_coverage"] for t in record["turns"] if t["section_coverage"] is not None]
    record["mean_section_coverage"] = statistics.mean(coverages) if coverages else None
    if not settings.rubric:
        return record
    if not conv.eligible_for_judging(replies):
        record.update(status="error", error={"phase": "gate", "message": "no reply of at least 100 characters"})
        return record

    prompt = rubric_prompt(protocol, scenario, replies, parsed, debrief)
    try:
        judged = await ctx.judge_generate(prompt, judge_sampling, repetition=repetition)
    except CallFailedError as exc:
        record.update(status="error", error={"phase": "rubric", "message": str(exc)})
        return record
    result = parse_rubric_reply(judged.text, _criteria(protocol, scenario), settings.strictness)
    record["rubric"] = {
        "scores": result.scores,
        "judge_text": judged.text,
        "rejected": result.rejected,
        "missing": result.missing,
        "repairs": result.repairs,
        "cached": judged.cached,
    }
    if result.scores is None:
        record.update(status="error", error={"phase": "rubric", "message": result.error})
        return record
    record["status"] = "rubric_scored"
    record["score_0_20"] = task_score(scenario.scenario_id, result.scores)
    return record


async def judge_pair(
    protocol: Protocol,
    scenario: Scenario,
    ctx: ItemContext,
    *,
    iteration: str,
    test_model: str,
    test: Respondent,
    other_model: str,
    other: Respondent,
    rules: MarginRules = "3c21bcc",
    use_notes: bool = True,
) -> list[dict[str, Any]]:
    """Judge one logical pair in both orders (test model shown first, then second); records from the test side."""
    records: list[dict[str, Any]] = []
    for test_first in (True, False):
        first, second = (test, other) if test_first else (other, test)
        prompt = pairwise_prompt(protocol, scenario, first, second, use_notes=use_notes)
        order = ORDER_TEST_FIRST if test_first else ORDER_TEST_SECOND
        base = {
            "scenario_id": scenario.scenario_id,
            "pair": {"test_model": test_model, "neighbor_model": other_model, "iteration_index": iteration},
            "order": order,
        }
        try:
            judged = await ctx.judge_generate(prompt, conv.JUDGE_SAMPLING)
        except CallFailedError as exc:
            records.append({**base, "error": f"judge call failed: {exc}"})
            continue
        parsed = parse_pairwise_reply(judged.text)
        if parsed.verdict is None:
            records.append({**base, "error": parsed.error, "raw_judge_response": judged.text})
            continue
        judgement = judgement_from_verdict(
            parsed.verdict,
            scenario_id=scenario.scenario_id,
            iteration=iteration,
            test_model=test_model,
            other_model=other_model,
            test_first=test_first,
            rules=rules,
        )
        records.append(
            {
                **base,
                "judge_response": parsed.verdict,
                "repairs": list(parsed.repairs),
                "outcome_for_test_model": judgement.outcome_for_test,
                "plus_for_test": judgement.plus_for_test,
                "plus_for_other": judgement.plus_for_other,
                "fraction_for_test": judgement.fraction_for_test,
                "cached": judged.cached,
            }
        )
    return records
