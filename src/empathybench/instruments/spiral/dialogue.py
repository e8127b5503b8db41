"""One Spiral-Bench conversation and its judgements, through ItemContext (every call cached, retried, recorded).

`play_conversation` is conversation_runner.py `run_conversation`: the model under test answers, the user agent
(the simulator role) replies, for `num_turns` turns. It is the one place a shared conversation runner would slot in
(instruments/conversation.py, being written for SAGE at the time of writing): the messages of each move come from
prompts.py, the loop is all this function adds. `judge_conversation` asks the chunk judge for every chunk and the
final judge once, all at once.

Every call goes through the engine's response cache, so a conversation interrupted at turn k is replayed from the
cache up to k on the next run and asked onwards from there.
"""

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from empathybench.engine.engine import Generation, ItemContext
from empathybench.instruments.spiral import prompts
from empathybench.instruments.spiral.data import Opening, SpiralProtocol
from empathybench.instruments.spiral.parse import parse_chunk_judgement, parse_final_judgement
from empathybench.models.base import Message, Sampling

# api_client.py raises on these replies and asks again (up to API_MAX_RETRIES = 7 times): an empty content, and
# Kimi-K2's stray reserved token.
KIMI_GARBAGE_TOKEN = "<|reserved_token_163839|>"

Ask = Callable[..., Awaitable[Generation]]


def unusable_reply(text: str) -> str | None:
    """Why api_client.get_completion would refuse this reply (None: it is used)."""
    if KIMI_GARBAGE_TOKEN in text:
        return "Garbage tokens in output"
    if not text.strip():
        return "Received empty content"
    return None


@dataclass(frozen=True)
class DialogueSettings:
    num_turns: int
    attempts: int  # asks per move while the reply is unusable (upstream: 7 tries)
    injection_every_n: int  # main.py --prompt-injection-every-n (0: none)
    injection_seed: str  # "<run seed>-<prompt id>-<conversation index>", as upstream's "<run id>-..."
    max_tokens: int | None = None  # the demo's cut: every call's budget capped

    def sampling(self, base: Sampling) -> Sampling:
        if self.max_tokens is None:
            return base
        return replace(base, max_tokens=min(base.max_tokens, self.max_tokens))


@dataclass
class Conversation:
    """conversation_runner.py's ConversationResult: the transcript, the injection of each message, the errors."""

    transcript: list[dict[str, str]]
    injections_log: list[str]
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def assistant_turns(self) -> int:
        return sum(1 for turn in self.transcript if turn["role"] == "assistant")


async def _usable(ask: Ask, messages: Sequence[Message], sampling: Sampling, attempts: int) -> tuple[str | None, str]:
    """(the first usable reply, "") or (None, why the last was not), asking at most `attempts` times."""
    reason = ""
    for attempt in range(attempts):
        text = (await ask(messages, sampling, attempt=attempt)).text
        reason = unusable_reply(text) or ""
        if not reason:
            return text, ""
    return None, f"Giving up after {attempts} tries: {reason}"


async def play_conversation(
    ctx: ItemContext, protocol: SpiralProtocol, opening: Opening, settings: DialogueSettings
) -> Conversation:
    """The conversation of one opening. Upstream asks the user agent once more after the model's last turn; that
    message is never judged (the chunker and the final judge both drop a trailing user message) and changes no
    earlier injection draw, so it is not asked here. A move whose replies stay unusable ends the conversation with
    an error, which is judged as far as it got (as upstream, which marks it completed)."""
    system_prompt = prompts.user_system_prompt(protocol, opening)
    scripted = opening.prompts
    conversation = Conversation([{"role": "user", "content": scripted[0]}], [""])
    schedule = prompts.InjectionSchedule(settings.injection_seed, protocol.injections, settings.injection_every_n)
    model_sampling = settings.sampling(prompts.CONVERSATION_SAMPLING)
    for turn in range(settings.num_turns):
        reply, why = await _usable(
            ctx.generate, prompts.model_messages(conversation.transcript), model_sampling, settings.attempts
        )
        if reply is None:
            conversation.errors.append({"turn": turn, "agent": "assistant", "error": why})
            break
        conversation.transcript.append({"role": "assistant", "content": reply})
        conversation.injections_log.append("")
        if turn == settings.num_turns - 1:
            break
        next_user = turn + 1
        if next_user < len(scripted) and isinstance(scripted[next_user], str) and scripted[next_user].strip():
            conversation.transcript.append({"role": "user", "content": scripted[next_user]})
            conversation.injections_log.append("")
            continue
        injection = schedule.next()
        current = prompts.with_injection(protocol.templates, system_prompt, injection)
        messages = prompts.user_agent_messages(protocol.templates, current, conversation.transcript)
        reply, why = await _usable(ctx.simulator_generate, messages, model_sampling, settings.attempts)
        if reply is None:
            conversation.errors.append({"turn": turn, "agent": "user", "error": why})
            break
        conversation.transcript.append({"role": "user", "content": reply})
        conversation.injections_log.append(injection)
    return conversation


@dataclass(frozen=True)
class JudgeSettings:
    chunk_size: int
    assistant_max_chars: int
    attempts: int
    max_tokens: int | None = None

    def sampling(self, base: Sampling) -> Sampling:
        if self.max_tokens is None:
            return base
        return replace(base, max_tokens=min(base.max_tokens, self.max_tokens))


@dataclass
class Judgements:
    chunks: dict[str, dict[str, Any]]  # "chunk<i>" -> upstream's chunk record (or its error stub)
    final_judgement: Any  # the final judge's JSON value (None when there is none)
    final_error: str | None
    final_raw: str | None


async def _judge_chunk(
    ctx: ItemContext, protocol: SpiralProtocol, initial: str, pairs: list[tuple[str, str]], index: int, s: JudgeSettings
) -> dict[str, Any]:
    prompt = prompts.chunk_judge_prompt(
        protocol, initial, pairs, index, chunk_size=s.chunk_size, assistant_max_chars=s.assistant_max_chars
    )
    text, why = await _usable(ctx.judge_generate, prompt.messages, s.sampling(prompts.CHUNK_JUDGE_SAMPLING), s.attempts)
    if text is None:
        return {"error": why}
    return parse_chunk_judgement(text).as_record(text, prompt.assistant_turn_indexes, prompt.assistant_length_chars)


async def _judge_final(
    ctx: ItemContext, protocol: SpiralProtocol, transcript: list[dict[str, str]], s: JudgeSettings
) -> tuple[Any, str | None, str | None]:
    messages = prompts.final_judge_messages(protocol, transcript)
    text, why = await _usable(ctx.judge_generate, messages, s.sampling(prompts.FINAL_JUDGE_SAMPLING), s.attempts)
    if text is None:
        return None, why, None
    value, error = parse_final_judgement(text)
    return value, error, text


async def judge_conversation(
    ctx: ItemContext, protocol: SpiralProtocol, transcript: list[dict[str, str]], settings: JudgeSettings
) -> Judgements:
    """Every chunk (main.py make_chunks) to the chunk judge and the whole transcript to the final judge, all at
    once. A call the engine could not answer fails the item (its finished calls come from the cache next time)."""
    chunks = prompts.make_chunks(transcript, settings.chunk_size)
    initial = transcript[0]["content"]
    calls = [_judge_chunk(ctx, protocol, initial, pairs, index, settings) for index, pairs in enumerate(chunks)]
    outcomes = await asyncio.gather(*calls, _judge_final(ctx, protocol, transcript, settings), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    *chunk_records, (final_value, final_error, final_raw) = outcomes
    return Judgements(
        {f"chunk{index}": record for index, record in enumerate(chunk_records)},  # type: ignore[misc]
        final_value,
        final_error,
        final_raw,
    )
