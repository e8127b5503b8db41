"""The conversation protocol of the pinned commit as pure functions (specs/eqbench3.md §3).

Each turn sends the whole history: earlier wrapped user turns and the model's replies, then the new user turn
wrapped in the task type's master prompt. Role-play and drafting end with one debrief call. No system message.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

from empathybench.instruments.eqbench3.data import Protocol, Scenario, TaskType
from empathybench.models.base import Message, Sampling

# Generation settings of the pinned commit (spec §3). Upstream sends no top_p (1.0 = not restricting) and no seed.
TURN_SAMPLING = Sampling(temperature=0.7, max_tokens=12000, min_p=0.1)
DEBRIEF_SAMPLING = Sampling(temperature=0.5, max_tokens=12000)
JUDGE_SAMPLING = Sampling(temperature=0.0, max_tokens=8000)

MIN_REPLY_CHARS = 100  # completeness gate: one main-conversation reply at least this long after trimming

# Section headings and their terminators (case-insensitive). `#` ends the first two sections, `--` the last one.
_ROLEPLAY_SECTIONS: dict[str, str] = {
    "thinking_feeling": r"#\s*I['’]m thinking & feeling\s*\n(.*?)(?=#|\Z)",
    "their_thinking_feeling": r"#\s*They['’]re thinking & feeling\s*\n(.*?)(?=#|\Z)",
    "response": r"#\s*My response\s*\n(.*?)(?=--|\Z)",
}
_DRAFTING_SECTIONS: dict[str, str] = {
    "perspective_taking": r"#\s*Perspective[- ]taking\s*\n(.*?)(?=#|\Z)",
    "draft_brainstorming": r"#\s*Draft brainstorming\s*\n(.*?)(?=#|\Z)",
    "draft": r"#\s*Draft\s*\n(.*?)(?=--|\Z)",
}
SECTION_KEYS: dict[TaskType, tuple[str, ...]] = {
    TaskType.ROLEPLAY: tuple(_ROLEPLAY_SECTIONS),
    TaskType.DRAFTING: tuple(_DRAFTING_SECTIONS),
    TaskType.ANALYSIS: (),
}
# What the instructions ask for, in words (the master prompts say so; used for display and dry-run estimates).
SECTION_WORD_TARGETS: dict[TaskType, dict[str, int]] = {
    TaskType.ROLEPLAY: {"thinking_feeling": 400, "their_thinking_feeling": 300, "response": 300},
    TaskType.DRAFTING: {"perspective_taking": 400, "draft_brainstorming": 300, "draft": 300},
    TaskType.ANALYSIS: {"analysis": 1000},
}
DEBRIEF_WORD_TARGET = 800

_REASONING_PAIRS = (("<think>", "</think>"), ("<reasoning>", "</reasoning>"))


def strip_reasoning(reply: str) -> str:
    """Drop everything up to the first closing tag when both tags occur; an unclosed block is kept whole."""
    for opening, closing in _REASONING_PAIRS:
        if opening in reply and closing in reply:
            reply = reply[reply.find(closing) + len(closing) :].strip()
    return reply


def wrap_turn(protocol: Protocol, scenario: Scenario, turn_index: int) -> str:
    """The user message of a turn: the master prompt with `{scenario_prompt}` filled (the turns hold no braces)."""
    return protocol.master(scenario.type).format(scenario_prompt=scenario.turns[turn_index])


def turn_messages(protocol: Protocol, scenario: Scenario, replies: Sequence[str]) -> list[Message]:
    """The messages of the next turn, after `replies` (the model's earlier replies, as the model saw them)."""
    turn_index = len(replies)
    if turn_index >= len(scenario.turns):
        raise ValueError(f"scenario {scenario.scenario_id} has {len(scenario.turns)} turns; all are answered")
    messages: list[Message] = []
    for index, reply in enumerate(replies):
        messages.append(Message("user", wrap_turn(protocol, scenario, index)))
        messages.append(Message("assistant", reply))
    messages.append(Message("user", wrap_turn(protocol, scenario, turn_index)))
    return messages


def conversation_history(protocol: Protocol, scenario: Scenario, replies: Sequence[str]) -> list[Message]:
    """The finished main conversation (what upstream stores as `conversation_history`)."""
    history: list[Message] = []
    for index, reply in enumerate(replies):
        history.append(Message("user", wrap_turn(protocol, scenario, index)))
        history.append(Message("assistant", reply))
    return history


def has_debrief(scenario: Scenario) -> bool:
    return scenario.type is not TaskType.ANALYSIS


def debrief_messages(protocol: Protocol, scenario: Scenario, replies: Sequence[str]) -> list[Message]:
    """The debrief call: the whole conversation plus the debrief prompt (role-play and drafting only)."""
    if not has_debrief(scenario):
        raise ValueError(f"scenario {scenario.scenario_id} is an analysis item: it has no debrief")
    if len(replies) != len(scenario.turns):
        raise ValueError(f"scenario {scenario.scenario_id}: the debrief follows all {len(scenario.turns)} turns")
    return [*conversation_history(protocol, scenario, replies), Message("user", protocol.debrief)]


def parse_sections(kind: TaskType, reply: str) -> dict[str, str]:
    """Upstream's `parsed_responses` entry: the sections found ("" when missing) and `raw`, the full reply."""
    patterns = {TaskType.ROLEPLAY: _ROLEPLAY_SECTIONS, TaskType.DRAFTING: _DRAFTING_SECTIONS}.get(kind)
    if patterns is None:
        return {"raw": reply}
    parsed = dict.fromkeys(patterns, "")
    parsed["raw"] = reply
    for key, pattern in patterns.items():
        match = re.search(pattern, reply, flags=re.IGNORECASE | re.DOTALL)
        if match:
            parsed[key] = match.group(1).strip()
    return parsed


def section_coverage(kind: TaskType, parsed: dict[str, str]) -> float | None:
    """Share of the expected sections that were found non-empty (None for analysis, which has none)."""
    keys = SECTION_KEYS[kind]
    if not keys:
        return None
    return sum(1 for key in keys if parsed.get(key, "").strip()) / len(keys)


def eligible_for_judging(replies: Iterable[str]) -> bool:
    """Upstream's gate (incomplete replies allowed): one main-conversation reply of >= 100 characters."""
    return any(len(reply.strip()) >= MIN_REPLY_CHARS for reply in replies)


@dataclass(frozen=True)
class CallCounts:
    scenarios: int
    turns: int  # role-play and drafting user turns
    debriefs: int
    analyses: int
    rubric_judge_calls: int

    @property
    def model_calls(self) -> int:
        return self.turns + self.debriefs + self.analyses


def calls_per_iteration(scenarios: Iterable[Scenario]) -> CallCounts:
    """Calls of one iteration over `scenarios` (the pinned 45: 73 + 26 + 19 = 118 model calls, 45 judge calls)."""
    items = list(scenarios)
    conversational = [s for s in items if s.type is not TaskType.ANALYSIS]
    analyses = [s for s in items if s.type is TaskType.ANALYSIS]
    return CallCounts(
        scenarios=len(items),
        turns=sum(len(s.turns) for s in conversational),
        debriefs=len(conversational),
        analyses=sum(len(s.turns) for s in analyses),
        rubric_judge_calls=len(items),
    )


OPENAI_HOST = "api.openai.com"


def _host(identity: Mapping[str, Any]) -> str:
    base_url = identity.get("base_url")
    if not base_url:
        return OPENAI_HOST if identity.get("provider") == "openai" else ""
    return (urlparse(str(base_url)).hostname or "").lower()


def sampling_for_endpoint(
    sampling: Sampling, identity: Mapping[str, Any], *, upstream_quirks: bool = False
) -> Sampling:
    """Upstream never sends min_p to api.openai.com. With `upstream_quirks`, o3 there runs at temperature 1."""
    host = _host(identity)
    if host == OPENAI_HOST:
        sampling = replace(sampling, min_p=None)
        if upstream_quirks and str(identity.get("model", "")) == "o3":
            sampling = replace(sampling, temperature=1.0)
    return sampling


def messages_for_endpoint(
    messages: Sequence[Message], identity: Mapping[str, Any], *, upstream_quirks: bool = False
) -> list[Message]:
    """With `upstream_quirks`: on OpenRouter, a model named like "qwen3" silently gets a `/no_think` system message."""
    if (
        upstream_quirks
        and _host(identity).endswith("openrouter.ai")
        and "qwen3" in str(identity.get("model", "")).lower()
    ):
        return [Message("system", "/no_think"), *messages]
    return list(messages)
