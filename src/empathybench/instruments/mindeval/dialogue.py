"""One MindEval conversation as a plan for the shared conversation runner (instruments/conversation.py), and its
judging, as upstream's scripts play them (specs/mindeval.md sections 4 and 6).

generate_interactions.py: the clinician's history is [system: clinician template, user: "Hello"], the member's
[system: member template, assistant: "Hello"]: the member "said" Hello, so the clinician (the model under test)
speaks first. Each of `rounds` rounds (10 in the paper) the clinician replies, then the member (the simulator role).
Each side sees only the other's final texts: thinking is split off and kept apart, never passed on; an empty reply
becomes "...". No early stop. The saved interaction is the clinician's history without its system prompt.

The member's history opens with an assistant message, which Anthropic's Messages API refuses ("first message must
use the user role"). Upstream went through litellm, which for Anthropic inserts a user "." first when
`litellm.modify_params` is set and refuses otherwise. Our adapter's choice: when the member is an Anthropic model
(provider anthropic), its requests get that same user "." before the assistant "Hello" (recorded as
`member_placeholder`); every other provider gets upstream's history unchanged.

generate_judgments.py: one user message, `judge_template.substitute(conversation_str=..., **profile)`.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from empathybench.engine.engine import ItemContext
from empathybench.instruments.conversation import (
    ConversationPlan,
    ConversationResult,
    Opening,
    Reading,
    Step,
    Transcript,
)
from empathybench.instruments.mindeval.data import render
from empathybench.instruments.mindeval.parse import Judgment, conversation_text, parse_judgment, turn_text
from empathybench.models.base import Message, Sampling

GREETING = "Hello"  # generate_interactions.py: the member's synthetic first line on both sides
ANTHROPIC_PLACEHOLDER = "."  # litellm's placeholder user message (modify_params) for an assistant-first history
THINKING_CHARS = 20_000  # a turn's thinking kept in its record (the whole reply is in the call's record)


@dataclass(frozen=True)
class PlanSettings:
    rounds: int
    clinician_system: str  # the rendered clinician template
    member_system: str  # the rendered member template
    clinician_sampling: Sampling
    member_sampling: Sampling
    member_placeholder: bool  # put a user "." before the member's assistant "Hello" (Anthropic)


def member_messages(transcript: Transcript[None], system: str, placeholder: bool) -> list[Message]:
    """The member's request: upstream's history, with the user "." first when the member needs a user-first one."""
    messages = transcript.chat("simulator", system=system)
    if placeholder and len(messages) > 1 and messages[1].role == "assistant":
        messages.insert(1, Message("user", ANTHROPIC_PLACEHOLDER))
    return messages


def _read_turn(reply: str, transcript: Transcript[None]) -> Reading[None]:
    said, thinking = turn_text(reply)
    return Reading(text=said, fields={"thinking": thinking[:THINKING_CHARS]} if thinking else {})


def mindeval_plan(settings: PlanSettings) -> ConversationPlan[None]:
    def clinician(transcript: Transcript[None]) -> list[Message]:
        return transcript.chat("model", system=settings.clinician_system)

    def member(transcript: Transcript[None]) -> list[Message]:
        return member_messages(transcript, settings.member_system, settings.member_placeholder)

    return ConversationPlan(
        initial_state=None,
        opening=(Opening("simulator", GREETING),),
        model_turn=Step("reply", "model", clinician, settings.clinician_sampling, _read_turn),
        simulator_turn=Step("reply", "simulator", member, settings.member_sampling, _read_turn),
        stop_rules=(),  # a fixed number of rounds: no early stop, no crisis stop
        max_turns=1 + 2 * settings.rounds,
    )


def interaction(result: ConversationResult[None]) -> list[dict[str, str]]:
    """Upstream's saved `interaction`: the clinician's history without its system prompt (user "Hello", then
    assistant and user turns)."""
    return [{"role": "assistant" if turn.speaker == "model" else "user", "content": turn.text} for turn in result.turns]


def judge_prompt(template: str, messages: Sequence[Mapping[str, str]], profile: Mapping[str, Any]) -> str:
    return render(template, {**profile, "conversation_str": conversation_text(messages)})


@dataclass(frozen=True)
class JudgeOutcome:
    judgment: Judgment | None  # None: not scored (strict mode, a criterion left out in every ask)
    asks: int
    reply: str  # the judge's last reply (thinking included, as it came)
    missing_per_ask: tuple[tuple[str, ...], ...]

    @property
    def error(self) -> str | None:
        if self.judgment is not None:
            return None
        return f"the judge left out {', '.join(self.missing_per_ask[-1])} in each of {self.asks} asks"


async def judge_conversation(
    ctx: ItemContext, prompt: str, sampling: Sampling, *, strict: bool, attempts: int
) -> JudgeOutcome:
    """The judge's rating of one conversation. Faithful mode: one ask, a missing criterion is 3 (counted). Strict
    mode: a reply that leaves out a criterion is asked again, at most `attempts` asks; then the conversation is
    recorded as not scored (a judge error, counted and named in the label), never scored with a made-up 3. A call
    that cannot be answered at all fails the item (CallFailedError; asked again when the run continues)."""
    missing: list[tuple[str, ...]] = []
    reply = ""
    for attempt in range(attempts if strict else 1):
        generation = await ctx.judge_generate([Message("user", prompt)], sampling, attempt=attempt)
        reply = generation.text
        judgment = parse_judgment(reply)
        missing.append(judgment.missing)
        if not strict or not judgment.missing:
            return JudgeOutcome(judgment, attempt + 1, reply, tuple(missing))
    return JudgeOutcome(None, len(missing), reply, tuple(missing))
