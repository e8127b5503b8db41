"""One Spiral-Bench conversation and its judgements, through ItemContext (every call cached, retried, recorded).

`play_conversation` is conversation_runner.py `run_conversation` played by the shared runner
(instruments/conversation.py): the model under test answers, the user agent (the simulator role) replies, for
`num_turns` turns; the messages of each move come from prompts.py. `judge_conversation` asks the chunk judge for
every chunk and the final judge once, all at once.

Every call goes through the engine's response cache, so a conversation interrupted at turn k is replayed from the
cache up to k on the next run and asked onwards from there.
"""

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from empathybench.engine.engine import Generation, ItemContext
from empathybench.instruments.conversation import ConversationPlan, Reading, Step, Transcript, Turn, run_conversation
from empathybench.instruments.conversation import Opening as ConversationOpening
from empathybench.instruments.spiral import prompts, published
from empathybench.instruments.spiral.data import Opening, ScoringRules, SpiralProtocol
from empathybench.instruments.spiral.parse import ChunkJudgement, parse_chunk_judgement, parse_final_judgement
from empathybench.instruments.spiral.score import FINAL_KEYS, canonical_metric_key, final_values
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
    model_name: str = ""  # the model under test's name, as sent (upstream gives some models settings of their own)
    simulator_name: str = ""  # the user agent's

    def sampling(self, base: Sampling, model: str) -> Sampling:
        return capped(published.request_sampling(model, base), self.max_tokens)


def capped(base: Sampling, max_tokens: int | None) -> Sampling:
    """`base` with its token budget at most `max_tokens` (None: `base` as it is), its whole budget too."""
    if max_tokens is None:
        return base
    budget = min(base.max_tokens, max_tokens)
    args = base.model_args
    if args is not None and args.max_tokens is not None:
        args = replace(args, max_tokens=min(args.max_tokens, max_tokens))
    return replace(base, max_tokens=budget, model_args=args)


@dataclass
class Conversation:
    """conversation_runner.py's ConversationResult: the transcript, the injection of each message, the errors."""

    transcript: list[dict[str, str]]
    injections_log: list[str]
    errors: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = ""

    @property
    def assistant_turns(self) -> int:
        return sum(1 for turn in self.transcript if turn["role"] == "assistant")


def injection_schedule(protocol: SpiralProtocol, settings: DialogueSettings) -> list[str]:
    """The injection of each generated user-agent move, in order: the draws upstream makes one move at a time,
    made ahead (a draw depends only on the generator's state, never on the conversation), so that each move's
    request is a function of the conversation so far and a resumed run asks exactly what it asked before."""
    schedule = prompts.InjectionSchedule(settings.injection_seed, protocol.injections, settings.injection_every_n)
    return [schedule.next() for _ in range(max(0, settings.num_turns - 1))]


def _upstream_transcript(turns: Sequence[Turn[None]]) -> list[dict[str, str]]:
    """The runner's turns as upstream's transcript: the user agent is "user", the model "assistant"."""
    return [{"role": "user" if t.speaker == "simulator" else "assistant", "content": t.text} for t in turns]


def _read_usable(reply: str, transcript: Transcript[None]) -> Reading[None]:
    why = unusable_reply(reply)
    return Reading(error=why) if why else Reading(text=reply)


def conversation_plan(protocol: SpiralProtocol, opening: Opening, settings: DialogueSettings) -> ConversationPlan[None]:
    """conversation_runner.py `run_conversation` as a plan for the shared runner (instruments/conversation.py): the
    opening line is the user agent's, then the model under test and the user agent in turns, `num_turns` replies of
    the model. Upstream asks the user agent once more after the model's last turn; that message is never judged (the
    chunker and the final judge both drop a trailing user message) and changes no earlier injection draw, so it is
    not asked here."""
    if any(isinstance(line, str) and line.strip() for line in opening.prompts[1:]):
        # upstream would play them as the user agent's later moves; no opening of v0.2 has any
        raise ValueError(f"opening {opening.prompt_id} has scripted user turns after the first: not supported")
    system_prompt = prompts.user_system_prompt(protocol, opening)
    injections = injection_schedule(protocol, settings)
    model_sampling = settings.sampling(prompts.CONVERSATION_SAMPLING, settings.model_name)
    agent_sampling = settings.sampling(prompts.CONVERSATION_SAMPLING, settings.simulator_name)

    def move(transcript: Transcript[None]) -> int:
        """The index of the user-agent move being asked (the opening line is not a move)."""
        return transcript.count("simulator") - 1

    def user_agent_messages(transcript: Transcript[None]) -> list[Message]:
        current = prompts.with_injection(protocol.templates, system_prompt, injections[move(transcript)])
        return prompts.user_agent_messages(protocol.templates, current, _upstream_transcript(transcript.turns))

    def read_user_agent(reply: str, transcript: Transcript[None]) -> Reading[None]:
        reading = _read_usable(reply, transcript)
        return (
            replace(reading, fields={"injection": injections[move(transcript)]}) if reading.error is None else reading
        )

    return ConversationPlan(
        initial_state=None,
        model_turn=Step(
            "reply",
            "model",
            lambda transcript: prompts.model_messages(_upstream_transcript(transcript.turns)),
            model_sampling,
            read=_read_usable,
            attempts=settings.attempts,
        ),
        simulator_turn=Step(
            "reply", "simulator", user_agent_messages, agent_sampling, read=read_user_agent, attempts=settings.attempts
        ),
        stop_rules=(),
        max_turns=2 * settings.num_turns,  # the opening line, num_turns replies, num_turns - 1 user-agent moves
        opening=(ConversationOpening("simulator", opening.prompts[0]),),
    )


async def play_conversation(
    ctx: ItemContext, protocol: SpiralProtocol, opening: Opening, settings: DialogueSettings
) -> Conversation:
    """The conversation of one opening, on the shared runner. A move whose replies stay unusable ends the
    conversation with an error, and it is judged as far as it got (as upstream, which marks it completed)."""
    result = await run_conversation(conversation_plan(protocol, opening, settings), ctx)
    transcript = _upstream_transcript(result.turns)
    injections_log = [
        str(turn.call.fields.get("injection", "")) if turn.call is not None else "" for turn in result.turns
    ]
    errors: list[dict[str, Any]] = []
    if result.failure is not None:
        failure = result.failure
        errors.append(
            {
                # upstream's record: the turn index (0-based model turns) and the agent that failed
                "turn": sum(1 for turn in result.turns if turn.speaker == "model") - (failure.role == "simulator"),
                "agent": "user" if failure.role == "simulator" else "assistant",
                "error": f"Giving up after {failure.asks} tries: {failure.errors[-1]}",
            }
        )
    return Conversation(transcript, injections_log, errors, result.stop_reason)


V = TypeVar("V")


@dataclass(frozen=True)
class Asked(Generic[V]):
    """A judge call asked until its reply could be read: the reply and what was read from it (None when no reply
    could be), why the last one could not, and the asks made."""

    text: str | None
    value: V | None
    why: str
    asks: int
    unread: int = 0  # replies that came (not empty) but could not be read; upstream would have kept the first

    @property
    def read_when_asked_again(self) -> bool:
        """Read only after a reply upstream would have kept (upstream asks again only for an empty reply)."""
        return self.value is not None and self.unread > 0


async def _asked_until_read(
    ask: Ask,
    messages: Sequence[Message],
    sampling: Sampling,
    attempts: int,
    read: Callable[[str], tuple[V | None, str | None]],
) -> Asked[V]:
    """The first reply `read` reads (`read` gives (value, None), or (None, why not)), asking at most `attempts`
    times: an empty reply (api_client asks again) and a judge reply without ratings are asked again."""
    reason = ""
    unread = 0
    for attempt in range(attempts):
        text = (await ask(messages, sampling, attempt=attempt)).text
        unusable = unusable_reply(text)
        value, problem = (None, unusable) if unusable else read(text)
        if problem is None:
            return Asked(text, value, "", attempt + 1, unread)
        unread += unusable is None
        reason = problem
    return Asked(None, None, f"Giving up after {attempts} tries: {reason}", attempts, unread)


@dataclass(frozen=True)
class JudgeSettings:
    chunk_size: int
    assistant_max_chars: int
    attempts: int
    max_tokens: int | None = None
    judge_name: str = ""  # the judge's name, as sent (upstream gives some models settings of their own)

    def sampling(self, base: Sampling) -> Sampling:
        return capped(published.request_sampling(self.judge_name, base), self.max_tokens)


@dataclass
class Judgements:
    chunks: dict[str, dict[str, Any]]  # "chunk<i>" -> upstream's chunk record (or its error stub)
    final_judgement: Any  # the final judge's JSON value (None when there is none)
    final_error: str | None
    final_raw: str | None
    chunk_asks: dict[str, int] = field(default_factory=dict)  # "chunk<i>" -> the judge calls it took
    final_asks: int = 0
    unrated: dict[str, list[str]] = field(default_factory=dict)  # "chunk<i>" -> criteria its reply did not rate
    dropped: dict[str, list[str]] = field(default_factory=dict)  # "chunk<i>" -> keys of its reply that are no criterion
    # "chunk<i>" rated only when asked again after a reply that rated nothing (upstream asks once), and the same of
    # the final judgement
    reasked: list[str] = field(default_factory=list)
    final_reasked: bool = False


@dataclass(frozen=True)
class ChunkReading:
    """One chunk judge's reply, read: upstream's record (or its error stub) and what it did not rate."""

    record: dict[str, Any]
    asks: int
    unrated: tuple[str, ...] = ()  # criteria with no rating (upstream reads each as no incidence)
    dropped: tuple[str, ...] = ()  # keys that are no criterion of the rubric (upstream would score them)
    reasked: bool = False  # rated only when asked again after a reply that rated nothing


@dataclass(frozen=True)
class Criteria:
    """The rubric's criteria as the judge is asked for them, by their canonical metric key (made once per
    conversation)."""

    rules: ScoringRules
    names: Mapping[str, str]  # canonical key -> the key the judge is asked for

    @staticmethod
    def of(protocol: SpiralProtocol) -> "Criteria":
        rules = protocol.scoring
        return Criteria(rules, {canonical_metric_key(rules, k): k for k in prompts.criterion_keys(protocol.criteria)})

    def read(self, reply: str) -> tuple[ChunkJudgement | None, str | None]:
        """A chunk reply's judgement, or why it gives no ratings at all (none of the criteria rated with a list or a
        number: an error object, an empty object, only strings...; upstream would store it as no incidences)."""
        judgement = parse_chunk_judgement(reply)
        if judgement.error is not None:
            return None, judgement.error
        if not {canonical_metric_key(self.rules, key) for key in judgement.rated_keys} & self.names.keys():
            return None, "the judge's reply rates none of the criteria"
        return judgement, None


async def judge_chunk(
    ctx: ItemContext,
    protocol: SpiralProtocol,
    criteria: Criteria,
    initial: str,
    pairs: list[tuple[str, str]],
    index: int,
    s: JudgeSettings,
) -> ChunkReading:
    prompt = prompts.chunk_judge_prompt(
        protocol, initial, pairs, index, chunk_size=s.chunk_size, assistant_max_chars=s.assistant_max_chars
    )
    sampling = s.sampling(prompts.CHUNK_JUDGE_SAMPLING)
    asked = await _asked_until_read(ctx.judge_generate, prompt.messages, sampling, s.attempts, criteria.read)
    if asked.text is None or asked.value is None:
        return ChunkReading({"error": asked.why}, asked.asks)  # upstream's stub for a failed judge call
    kept, dropped = asked.value.only(lambda key: canonical_metric_key(criteria.rules, key) in criteria.names)
    rated = {canonical_metric_key(criteria.rules, key) for key in kept.rated_keys}
    unrated = tuple(name for key, name in criteria.names.items() if key not in rated)
    record = kept.as_record(asked.text, prompt.assistant_turn_indexes, prompt.assistant_length_chars)
    return ChunkReading(record, asked.asks, unrated, dropped, asked.read_when_asked_again)


def read_final(text: str) -> tuple[Any, str | None]:
    """A final judge's JSON value, or why it gives no usable ratings: no JSON, or not all of off_rails, safety and
    social_dexterity as finite numbers (upstream would read a missing one as 0)."""
    value, error = parse_final_judgement(text)
    if error is not None:
        return None, error
    if final_values(value) is None or not all(key in value for key in FINAL_KEYS):
        return None, f"the final judge's reply does not rate all of {', '.join(FINAL_KEYS)} with numbers"
    return value, None


async def judge_final(
    ctx: ItemContext, protocol: SpiralProtocol, transcript: list[dict[str, str]], s: JudgeSettings
) -> tuple[Any, str | None, str | None, Asked[Any]]:
    messages = prompts.final_judge_messages(protocol, transcript)
    asked = await _asked_until_read(
        ctx.judge_generate, messages, s.sampling(prompts.FINAL_JUDGE_SAMPLING), s.attempts, read_final
    )
    if asked.text is None:
        return None, asked.why, None, asked
    return asked.value, None, asked.text, asked


async def judge_conversation(
    ctx: ItemContext, protocol: SpiralProtocol, transcript: list[dict[str, str]], settings: JudgeSettings
) -> Judgements:
    """Every chunk (main.py make_chunks) to the chunk judge and the whole transcript to the final judge, all at
    once. A call the engine could not answer fails the item (its finished calls come from the cache next time)."""
    chunks = prompts.make_chunks(transcript, settings.chunk_size)
    initial = transcript[0]["content"]
    criteria = Criteria.of(protocol)
    calls = [
        judge_chunk(ctx, protocol, criteria, initial, pairs, index, settings) for index, pairs in enumerate(chunks)
    ]
    outcomes = await asyncio.gather(*calls, judge_final(ctx, protocol, transcript, settings), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    *readings, (final_value, final_error, final_raw, final_asked) = outcomes
    chunks: list[ChunkReading] = readings  # type: ignore[assignment]
    return Judgements(
        {f"chunk{index}": reading.record for index, reading in enumerate(chunks)},
        final_value,
        final_error,
        final_raw,
        chunk_asks={f"chunk{index}": reading.asks for index, reading in enumerate(chunks)},
        final_asks=final_asked.asks,
        unrated={f"chunk{i}": list(r.unrated) for i, r in enumerate(chunks) if r.unrated},
        dropped={f"chunk{i}": list(r.dropped) for i, r in enumerate(chunks) if r.dropped},
        reasked=[f"chunk{i}" for i, r in enumerate(chunks) if r.reasked],
        final_reasked=final_asked.read_when_asked_again,
    )
