"""Rubric mode: the judge prompt, reading its scores, and the run's numbers (specs/eqbench3.md §4).

Headline 0-100 = 5 x the mean over all rubric-scored tasks (all iterations pooled) of each task's mean over its
allowed criteria, unrounded (the CLI's round-then-multiply value is reported beside it). Error tasks are left
out and counted. Every figure carries a percentile-bootstrap interval over tasks (stats/intervals.py).
"""

import json
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from empathybench.instruments.eqbench3.conversation import strip_reasoning
from empathybench.instruments.eqbench3.data import Protocol, Scenario, TaskType, task_type
from empathybench.instruments.eqbench3.judging import load_judge_json
from empathybench.stats.intervals import bootstrap_method, mean_interval, mean_metric, metric

ParseStrictness = Literal["faithful", "strict"]

COT_KEY = "chain_of_thought_reasoning"
SCORE_RANGE = (0.0, 20.0)
QUALITATIVE = (
    "demonstrated_empathy",
    "pragmatic_ei",
    "depth_of_insight",
    "social_dexterity",
    "emotional_reasoning",
    "message_tailoring",
)
STYLE_TRAITS = (
    "boundary_setting",
    "safety_conscious",
    "moralising",
    "sycophantic",
    "compliant",
    "challenging",
    "warmth",
    "validating",
    "analytical",
    "reactive",
    "conversational",
    "humanlike",
)
# Upstream's allowed set for role-play and drafting also names the four analysis-only criteria; they count only
# when a judge writes them into a role-play reply (kept for faithfulness). Analysis: its criteria file (all six).
ALLOWED_CONVERSATIONAL = frozenset(
    (*QUALITATIVE, "theory_of_mind", "subtext_identification", "intellectual_grounding", "correctness")
)
ANALYSIS_CRITERIA = (
    "depth_of_insight",
    "emotional_reasoning",
    "theory_of_mind",
    "subtext_identification",
    "intellectual_grounding",
    "correctness",
)
# The site's ability columns (EQ-bench-site eqbench3.js RUBRIC_GROUPS, spec §4): mean of every individual score
# of the group's criteria over all scored tasks, 0-20.
ABILITY_GROUPS: dict[str, tuple[str, ...]] = {
    "humanlike": ("conversational", "humanlike"),
    "safe": ("safety_conscious",),
    "assertive": ("boundary_setting", "challenging"),
    "social_iq": ("social_dexterity", "message_tailoring"),
    "warm": ("warmth", "validating"),
    "analytical": ("analytical",),
    "insightful": ("depth_of_insight",),
    "empathy": ("demonstrated_empathy",),
    "compliant": ("compliant",),
    "moral": ("moralising",),
    "pragmatic": ("pragmatic_ei",),
}

_FIRST_NUMBER = re.compile(r"\b(\d+(\.\d+)?)\b")


def output_format(criteria: Sequence[str]) -> str:
    """The `{output_format}` block: 2-space JSON, the reasoning key first, each criterion with the value 0-20."""
    shape: dict[str, Any] = {COT_KEY: "detailed chain of thought reasoning about the coming scoring decisions"}
    shape.update(dict.fromkeys(criteria, 0))
    return json.dumps(shape, indent=2).replace(": 0", ": 0-20")


def format_sections_for_rubric(kind: TaskType, parsed: Mapping[str, str]) -> str:
    """An assistant turn as the rubric judge sees it: rebuilt from the parsed sections, not the raw reply."""
    if kind is TaskType.ROLEPLAY:
        headings = ("# I'm thinking & feeling", "# They're thinking & feeling", "# My response")
        keys = ("thinking_feeling", "their_thinking_feeling", "response")
    elif kind is TaskType.DRAFTING:
        headings = ("# Perspective-taking", "# Draft brainstorming", "# Draft")
        keys = ("perspective_taking", "draft_brainstorming", "draft")
    else:
        raise ValueError("analysis replies go to the judge raw")
    lines: list[str] = []
    for index, (heading, key) in enumerate(zip(headings, keys, strict=True)):
        lines.append(heading if index == 0 else "\n" + heading)
        lines.append(parsed.get(key, ""))
    lines.append("\n--")
    return "\n".join(lines)


def rubric_transcript(
    protocol: Protocol, scenario: Scenario, replies: Sequence[str], parsed: Sequence[Mapping[str, str]]
) -> str:
    """`{transcript}`: "User:\\n<wrapped turn>\\n" / "Assistant:\\n<turn>\\n" blocks joined with "---\\n"."""
    from empathybench.instruments.eqbench3.conversation import wrap_turn

    parts: list[str] = []
    for index, reply in enumerate(replies):
        parts.append(f"User:\n{wrap_turn(protocol, scenario, index)}\n")
        content = (
            reply if scenario.type is TaskType.ANALYSIS else format_sections_for_rubric(scenario.type, parsed[index])
        )
        parts.append(f"Assistant:\n{content}\n")
    return "---\n".join(parts)


def rubric_prompt(
    protocol: Protocol,
    scenario: Scenario,
    replies: Sequence[str],
    parsed: Sequence[Mapping[str, str]],
    debrief: str | None,
) -> str:
    """The one user message of the rubric judge; every '*' and '#' is deleted from the whole prompt (upstream)."""
    transcript = rubric_transcript(protocol, scenario, replies, parsed)
    if scenario.type is TaskType.ANALYSIS:
        prompt = protocol.rubric_prompt_analysis.format(
            transcript=transcript, output_format=output_format(protocol.criteria_analysis)
        )
    else:
        prompt = protocol.rubric_prompt.format(
            transcript=transcript, debrief=debrief or "", output_format=output_format(protocol.criteria)
        )
    return prompt.replace("*", "").replace("#", "")


@dataclass
class RubricParse:
    scores: dict[str, float] | None  # None: the task goes to `error`
    error: str | None = None
    rejected: list[dict[str, Any]] = field(default_factory=list)  # strict mode: what was left out and why
    missing: list[str] = field(default_factory=list)  # strict mode: expected criteria with no score
    repairs: list[str] = field(default_factory=list)


def parse_rubric_reply(text: str, criteria: Sequence[str] = (), mode: ParseStrictness = "faithful") -> RubricParse:
    """Scores from a rubric judge reply.

    faithful (upstream): every key's number (a string gives its first number, "15/20" -> 15), no range check,
    no check that the criteria are present. strict: only `criteria`, each within 0-20; the rest is reported.
    """
    try:
        loaded = load_judge_json(strip_reasoning(text.strip()))
    except ValueError as exc:
        return RubricParse(None, str(exc))
    data = loaded.value
    if not isinstance(data, dict) or not data:
        return RubricParse(None, "the judge reply's JSON is not a non-empty object", repairs=loaded.repairs)
    scores: dict[str, float] = {}
    for key, value in data.items():
        # bool is an int in Python, and upstream's check lets it through; kept in faithful mode.
        if isinstance(value, int | float):
            scores[key] = float(value)
        elif key != COT_KEY:
            match = _FIRST_NUMBER.search(str(value))
            if match:
                scores[key] = float(match.group(1))
    result = RubricParse(None, repairs=loaded.repairs)
    if mode == "strict":
        expected = set(criteria)
        for key, value in list(scores.items()):
            reason = None
            if isinstance(data[key], bool):
                reason = "not a number"
            elif key not in expected:
                reason = "not a criterion of this task"
            elif not SCORE_RANGE[0] <= value <= SCORE_RANGE[1]:
                reason = "outside 0-20"
            if reason:
                result.rejected.append({"key": key, "value": data[key], "reason": reason})
                del scores[key]
        result.missing = [name for name in criteria if name not in scores]
    if not scores:
        result.error = "no numeric scores in the judge reply"
        return result
    result.scores = scores
    return result


def allowed_criteria(scenario_id: str) -> frozenset[str]:
    return frozenset(ANALYSIS_CRITERIA) if task_type(scenario_id) is TaskType.ANALYSIS else ALLOWED_CONVERSATIONAL


def task_score(scenario_id: str, scores: Mapping[str, Any]) -> float | None:
    """Mean of the task's allowed criteria that are present (0-20); None when none is."""
    allowed = allowed_criteria(scenario_id)
    values = [float(value) for key, value in scores.items() if key in allowed and isinstance(value, int | float)]
    # `overall_eq` would weigh 3x upstream, but it is never an allowed criterion: that path is dead.
    return statistics.mean(values) if values else None


@dataclass(frozen=True)
class ScoredTask:
    iteration: str
    scenario_id: str
    status: str  # upstream's task status; only "rubric_scored" tasks count
    scores: Mapping[str, Any] | None

    @property
    def task_id(self) -> str:
        return f"{self.iteration}:{self.scenario_id}"

    @property
    def type(self) -> TaskType:
        return task_type(self.scenario_id)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float)


def summarise_rubric(tasks: Sequence[ScoredTask], *, seed: int = 0) -> dict[str, Any]:
    """Headline, per-type split, ability columns and style traits, each with an interval over tasks."""
    task_scores: dict[str, float] = {}
    by_type: dict[TaskType, dict[str, float]] = {kind: {} for kind in TaskType}
    scored: list[ScoredTask] = []
    counts = {"tasks": len(tasks), "rubric_scored": 0, "error": 0, "other_status": 0, "scored_without_allowed": 0}
    for task in tasks:
        if task.status == "error":
            counts["error"] += 1
            continue
        if task.status != "rubric_scored":
            counts["other_status"] += 1
            continue
        counts["rubric_scored"] += 1
        value = task_score(task.scenario_id, task.scores) if isinstance(task.scores, Mapping) else None
        if value is None:
            counts["scored_without_allowed"] += 1
            continue
        scored.append(task)
        task_scores[task.task_id] = value
        by_type[task.type][task.task_id] = value

    mean_0_20 = statistics.mean(task_scores.values()) if task_scores else None
    headline = (
        mean_metric("EQ-Bench 3 rubric score", task_scores, scale=5.0, unit="0-100", seed=seed) if task_scores else None
    )
    split = {
        kind.value: mean_metric(f"rubric score, {kind.value}", values, scale=5.0, unit="0-100", seed=seed)
        for kind, values in by_type.items()
        if values
    }
    split_raw = {kind.value: 5 * statistics.mean(values.values()) for kind, values in by_type.items() if values}

    abilities: dict[str, Any] = {}
    abilities_raw: dict[str, float] = {}
    for name, group in ABILITY_GROUPS.items():
        pooled: list[float] = []
        per_task: list[float] = []
        for task in scored:
            values = [float(task.scores[c]) for c in group if c in task.scores and _numeric(task.scores[c])]
            pooled.extend(values)
            if values:
                per_task.append(statistics.mean(values))
        if not pooled:
            continue
        abilities_raw[name] = statistics.mean(pooled)
        abilities[name] = metric(
            name,
            abilities_raw[name],
            mean_interval(per_task, seed=seed),
            n=len(per_task),
            unit="0-20",
            higher_is_better=None,
            method=bootstrap_method(seed=seed, unit="tasks (each task's mean over the group's criteria)"),
        )
    traits: dict[str, Any] = {}
    for trait in STYLE_TRAITS:
        values = {
            task.task_id: float(task.scores[trait])
            for task in scored
            if trait in task.scores and _numeric(task.scores[trait])
        }
        if values:
            traits[trait] = mean_metric(
                trait, values, unit="0-20", higher_is_better=None, paired_test="none", seed=seed
            )
    return {
        "counts": counts,
        "mean_0_20": mean_0_20,
        "score_0_100": 5 * mean_0_20 if mean_0_20 is not None else None,
        # upstream's CLI rounds the 0-20 mean to 2 dp before multiplying (its summary box)
        "score_0_100_cli": 5 * round(mean_0_20, 2) if mean_0_20 is not None else None,
        "headline": headline,
        "by_type_0_100": split_raw,
        "by_type": split,
        "abilities_0_20": abilities_raw,
        "abilities": abilities,
        "style_traits": traits,
        "task_scores_0_20": task_scores,
    }
