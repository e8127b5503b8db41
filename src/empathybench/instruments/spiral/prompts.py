"""The messages of Spiral-Bench's three roles, built as upstream builds them (main.py, conversation_runner.py).

Pure functions of the protocol read from upstream (data.SpiralProtocol) and a transcript. The transcript is
upstream's: a list of {"role": "user" | "assistant", "content": str} starting with the opening's user message.
"""

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from empathybench.instruments.spiral.data import CodeTemplates, Opening, SpiralProtocol
from empathybench.instruments.spiral.upstream import evaluate
from empathybench.models.base import Message, Sampling

Turn = dict[str, str]  # {"role": ..., "content": ...}

# Sampling of api_client.get_completion at the pinned commit: temperature 0.3, max_tokens 3072 for the user agent
# and the model under test, 8096 for the chunk judge and 2048 for the final judge (main.py); no top_p, no seed.
# The models api_client.py names get their own settings instead (published.request_sampling: e.g. the published
# judge gpt-5-2025-08-07 reasoning_effort "minimal", temperature 1 and max_completion_tokens 16000).
TEMPERATURE = 0.3
CONVERSATION_SAMPLING = Sampling(temperature=TEMPERATURE, max_tokens=3072, top_p=None)
CHUNK_JUDGE_SAMPLING = Sampling(temperature=TEMPERATURE, max_tokens=8096, top_p=None)
FINAL_JUDGE_SAMPLING = Sampling(temperature=TEMPERATURE, max_tokens=2048, top_p=None)

# main.py `judge_worker`: the criterion name is the rubric line without its parenthesised description.
_DESCRIPTION = re.compile(r"\s*\([^)]*\)")
TRANSCRIPT_PLACEHOLDER = "<CONVERSATION_TRANSCRIPT>"  # final_judge_worker's str.replace target


def user_system_prompt(protocol: SpiralProtocol, opening: Opening) -> str:
    """main.py `worker`: the base prompt, the instructions file, then the category's extra instructions if any."""
    templates = protocol.templates
    prompt = evaluate(
        templates.user_system,
        {"USER_AGENT_BASE_SYSTEM_PROMPT": templates.user_agent_base, "instructions": protocol.user_instructions},
    )
    extra = protocol.category_instructions.get(opening.category, "").strip() if opening.category else ""
    if extra:
        prompt += evaluate(templates.user_system_extra, {"extra_text": extra})
    return str(prompt)


class InjectionSchedule:
    """conversation_runner.py: before each generated user-agent move, with probability 1/frequency, one injection
    drawn at random, from `random.Random(seed)`; upstream seeds it with "<run id>-<prompt key>-<convo index>"."""

    def __init__(self, seed: str, injections: Sequence[str], frequency: int) -> None:
        self._random = random.Random(seed)
        self._injections = list(injections)
        self._frequency = frequency

    def next(self) -> str:
        """The injection of this move ("" for none); consumes the generator exactly as upstream does."""
        if self._injections and self._frequency > 0 and self._random.random() < 1 / self._frequency:
            return self._random.choice(self._injections)
        return ""


def injection_seed(run_id: str, prompt_key: str, convo_index: int = 0) -> str:
    """main.py `worker`: seed=f"{args.run_id}-{task['prompt_key']}-{task['convo_index']}"."""
    return f"{run_id}-{prompt_key}-{convo_index}"


def with_injection(templates: CodeTemplates, system_prompt: str, injection: str) -> str:
    """The user agent's system prompt on a move with an injection (unchanged without one)."""
    if not injection:
        return system_prompt
    return str(
        evaluate(templates.injected_system, {"user_system_prompt": system_prompt, "injection_to_add": injection})
    )


def user_agent_messages(templates: CodeTemplates, system_prompt: str, transcript: Sequence[Turn]) -> list[Message]:
    """conversation_runner.py: the system prompt, then the transcript with the roles flipped (the user agent is the
    "assistant"), the last (assistant) message carrying the instructions again at its end."""
    turns = [dict(turn) for turn in transcript]
    if turns and turns[-1]["role"] == "assistant":
        turns[-1]["content"] = str(
            evaluate(
                templates.last_message_content,
                {"user_msgs": [{"content": turns[-1]["content"]}], "current_user_system_prompt": system_prompt},
            )
        )
    flipped = [Message("user" if t["role"] == "assistant" else "assistant", t["content"]) for t in turns]
    if not flipped or flipped[-1].role != "user" or not flipped[-1].content.strip():
        raise ValueError("the user agent's messages must end with a non-empty user message")  # upstream asserts it
    return [Message("system", system_prompt), *flipped]


def model_messages(transcript: Sequence[Turn]) -> list[Message]:
    """The model under test sees the transcript as it is, with no system prompt (upstream's
    evaluated_system_prompt is "" and is never sent)."""
    if not transcript or transcript[-1]["role"] != "user" or not transcript[-1]["content"].strip():
        raise ValueError("the model's messages must end with a non-empty user message")  # upstream asserts it
    return [Message(turn["role"], turn["content"]) for turn in transcript]


# --- the chunk judge ------------------------------------------------------------------------------------------------


def turn_pairs(transcript: Sequence[Turn]) -> Iterator[tuple[str, str]]:
    """main.py `iter_turn_pairs`: (user, assistant) pairs after the opening message. It starts at index 1, the first
    assistant reply, which is never followed by an assistant reply, so the model's first reply is never judged
    (a property of upstream's code that the released results have: 19 chunks for 20 turns)."""
    index = 1
    while index + 1 < len(transcript):
        user, assistant = transcript[index], transcript[index + 1]
        if user["role"] == "user" and assistant["role"] == "assistant":
            yield user["content"], assistant["content"]
            index += 2
        else:
            index += 1  # out of step: advance one message


def make_chunks(transcript: Sequence[Turn], chunk_size: int) -> list[list[tuple[str, str]]]:
    """main.py `make_chunks`: the pairs in consecutive chunks of `chunk_size`."""
    pairs = list(turn_pairs(transcript))
    return [pairs[start : start + chunk_size] for start in range(0, len(pairs), chunk_size)]


def criterion_keys(criteria: Sequence[str]) -> list[str]:
    """The JSON keys the judge is asked for: each criterion without its description, once each."""
    return list(dict.fromkeys(_DESCRIPTION.sub("", criterion).strip() for criterion in criteria))


@dataclass(frozen=True)
class ChunkPrompt:
    messages: list[Message]
    assistant_turn_indexes: list[int]
    assistant_length_chars: int


def chunk_judge_prompt(
    protocol: SpiralProtocol,
    initial_user: str,
    chunk_pairs: Sequence[tuple[str, str]],
    chunk_index: int,
    *,
    chunk_size: int,
    assistant_max_chars: int,
) -> ChunkPrompt:
    """main.py `judge_worker`: the opening message, the chunk's turns (each assistant reply cut at
    `assistant_max_chars`; 0: uncut), the criteria and the JSON skeleton."""
    t = protocol.templates
    lines: list[Any] = list(evaluate(t.chunk_lines, {"task": {"initial_user": initial_user}}))
    base_offset = chunk_index * max(1, int(chunk_size or 1))
    indexes: list[int] = []
    chars = 0
    for position, (user, assistant) in enumerate(chunk_pairs, 1):
        turn_no = base_offset + position
        cut = (
            assistant[:assistant_max_chars]
            if assistant_max_chars and len(assistant) > assistant_max_chars
            else assistant
        )
        lines.append(evaluate(t.chunk_user_line, {"turn_no": turn_no, "u": user}))
        lines.append(evaluate(t.chunk_assistant_line, {"turn_no": turn_no, "a_trunc": cut}))
        indexes.append(turn_no)
        chars += len(cut)
    lines.append(evaluate(t.chunk_closing_line, {}))
    env: dict[str, Any] = {
        "transcript_block": evaluate(t.transcript_block, {"chunk_lines": lines}),
        "criteria_list": evaluate(t.criteria_list, {"task": {"expected_metrics": list(protocol.criteria)}}),
        "json_template": evaluate(t.json_template, {"clean_keys": criterion_keys(protocol.criteria)}),
    }
    prompt = evaluate(t.judge_prompt, env)
    return ChunkPrompt(_messages(evaluate(t.judge_messages, {"judge_prompt": prompt})), indexes, chars)


# --- the final judge ------------------------------------------------------------------------------------------------


def final_judge_messages(protocol: SpiralProtocol, transcript: Sequence[Turn]) -> list[Message]:
    """main.py `final_judge_worker`: the transcript without a trailing user message, one "Role: content" paragraph
    per message, put into prompts/final_judge_prompt.txt."""
    turns = list(transcript)
    if turns and turns[-1]["role"] == "user":
        turns = turns[:-1]
    t = protocol.templates
    chatlog = "".join(
        str(
            evaluate(
                t.final_chat_line,
                {"role": turn.get("role", "").capitalize(), "content": turn.get("content", "").strip()},
            )
        )
        for turn in turns
    )
    prompt = protocol.final_judge_template.replace(TRANSCRIPT_PLACEHOLDER, chatlog)
    return _messages(evaluate(t.final_messages, {"prompt_text": prompt}))


def _messages(value: Any) -> list[Message]:
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        raise ValueError("upstream's judge messages are not a list of role/content dicts")
    return [Message(str(m["role"]), str(m["content"])) for m in value]
