"""One SAGE conversation as a plan for the shared conversation runner (instruments/conversation.py).

As SAGE/test_npc.py plays it: round 1 is the person's preset first line and the model's reply; each later round the
simulator analyses the model's last reply (the emotion moves by Change, the state follows), then answers in
character, then the model replies. It ends after the person's line on a goodbye word, at emotion >= 100 or below 10,
and after the model's reply of the last round (10 in the paper).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from empathybench.instruments.conversation import (
    ConversationPlan,
    ConversationResult,
    Opening,
    Reading,
    Step,
    Transcript,
)
from empathybench.instruments.sage.data import Person, UpstreamProtocol
from empathybench.instruments.sage.parse import emotion_state, moved_emotion, parse_analysis, parse_person_reply
from empathybench.instruments.sage.prompts import HistoryEntry, analysis_prompt, reply_prompt
from empathybench.models.base import Message, Sampling

ANALYSIS = "analysis"  # the hook before the person's line
REPLY = "reply"


@dataclass(frozen=True)
class SageState:
    """The person's emotion (0-100; upstream's emo_point) and its state (Emotion-S/A/B/C/F; emo_state)."""

    emotion: int
    state: str


@dataclass(frozen=True)
class PlanSettings:
    rounds: int
    attempts: int  # asks of the simulator's analysis / line before the conversation is recorded as failed
    model_sampling: Sampling
    simulator_sampling: Sampling


def history_of(transcript: Transcript[SageState]) -> list[HistoryEntry]:
    """The dialogue in upstream's roles: the person is "user", the model under test "assistant"."""
    return [("user" if turn.speaker == "simulator" else "assistant", turn.text) for turn in transcript.turns]


def sage_plan(protocol: UpstreamProtocol, person: Person, settings: PlanSettings) -> ConversationPlan[SageState]:
    def analysis_messages(transcript: Transcript[SageState]) -> list[Message]:
        return [Message("user", analysis_prompt(protocol, person, transcript.state.emotion, history_of(transcript)))]

    def read_analysis(reply: str, transcript: Transcript[SageState]) -> Reading[SageState]:
        analysis = parse_analysis(reply)
        if isinstance(analysis, str):
            return Reading(error=analysis)
        before = transcript.state
        emotion = moved_emotion(before.emotion, analysis.change)
        state = emotion_state(
            emotion, before.state, protocol.emotion_states, protocol.failed_state, protocol.failed_below
        )
        fields = {**analysis.planning(), "change_read": analysis.change_read}
        return Reading(state=SageState(emotion, state), fields=fields)

    def person_messages(transcript: Transcript[SageState]) -> list[Message]:
        planning = transcript.pending[ANALYSIS].fields
        prompt = reply_prompt(protocol, person, transcript.state.state, history_of(transcript), planning)
        return [Message("user", prompt)]

    def read_person(reply: str, transcript: Transcript[SageState]) -> Reading[SageState]:
        line = parse_person_reply(reply)
        if isinstance(line, str):
            return Reading(error=line)
        return Reading(text=line.response, fields={"thinking": line.thinking})

    def model_messages(transcript: Transcript[SageState]) -> list[Message]:
        return transcript.chat("model", system=protocol.system_prompt)  # npc_response.call_npc

    def goodbye(transcript: Transcript[SageState]) -> str | None:
        last = transcript.last
        if last is None or last.speaker != "simulator" or last.given:  # upstream checks asked lines only
            return None
        said = [word for word in protocol.goodbye_words if word in last.text]
        return f"goodbye ({said[0]})" if said else None

    def emotion_bound(transcript: Transcript[SageState]) -> str | None:
        last = transcript.last
        if last is None or last.speaker != "simulator" or last.given:
            return None
        if last.state.emotion >= protocol.stop_at_or_above:
            return f"emotion >= {protocol.stop_at_or_above}"
        if last.state.emotion < protocol.stop_below:
            return f"emotion < {protocol.stop_below}"
        return None

    def rounds_done(transcript: Transcript[SageState]) -> str | None:
        last = transcript.last
        if last is not None and last.speaker == "model" and transcript.count("model") >= settings.rounds:
            return f"{settings.rounds} rounds"
        return None

    return ConversationPlan(
        initial_state=SageState(protocol.initial_emotion, protocol.initial_state),
        opening=(Opening("simulator", person.first_talk),),
        model_turn=Step(REPLY, "model", model_messages, settings.model_sampling),
        before_simulator=(
            Step(
                ANALYSIS, "simulator", analysis_messages, settings.simulator_sampling, read_analysis, settings.attempts
            ),
        ),
        simulator_turn=Step(
            REPLY, "simulator", person_messages, settings.simulator_sampling, read_person, settings.attempts
        ),
        stop_rules=(goodbye, emotion_bound, rounds_done),  # upstream's order: goodbye first, then the emotion
        max_turns=2 * settings.rounds,
    )


def conversation_fields(result: ConversationResult[SageState]) -> dict[str, Any]:
    """A conversation's record fields: how it ended, the emotion after each of the person's lines, the turns."""
    trajectory = [turn.state.emotion for turn in result.turns if turn.speaker == "simulator"]
    record = result.as_record()  # states as their dataclass's fields: emotion, state
    fields: dict[str, Any] = {
        "conversation_status": record["status"],
        "stop_reason": result.stop_reason,
        "final_emotion": result.state.emotion if result.completed else None,
        "final_state": result.state.state if result.completed else None,
        "rounds": len(trajectory),  # upstream's `turns` when it stopped: one per line of the person
        "model_replies": sum(1 for turn in result.turns if turn.speaker == "model"),
        "trajectory": trajectory,
        # every call made, the failed step's asks and the analyses answered before it included
        "simulator_asks": result.asks("simulator"),
        "simulator_reasks": result.reasks("simulator"),
        "model_asks": result.asks("model"),
        "turns": record["turns"],
    }
    if result.failure is not None:
        fields["failure"] = record["failure"]
        fields["emotion_at_failure"] = result.state.emotion
    return fields


def upstream_history(turns: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A record's turns in the shape of upstream's result files' `history` (for reading a run beside them)."""
    history: list[dict[str, Any]] = []
    for turn in turns:
        if turn.get("speaker") == "model":
            history.append({"role": "assistant", "content": turn.get("text")})
            continue
        entry: dict[str, Any] = {"role": "user", "content": turn.get("text")}
        entry["emotion-point"] = (turn.get("state") or {}).get("emotion")
        hooks = {hook.get("name"): hook for hook in turn.get("hooks") or ()}
        if ANALYSIS in hooks:
            call = turn.get("call") or {}
            entry["thinking"] = (call.get("fields") or {}).get("thinking")
            planning = dict(hooks[ANALYSIS].get("fields") or {})
            planning.pop("change_read", None)
            entry["planning"] = planning
        history.append(entry)
    return history
