"""A conversation between the model under test and a simulated person, turn by turn, through an ItemContext.

Generic: it names no instrument. An instrument describes its conversation as a `ConversationPlan`: who says the
opening lines, how each side's request is built from the conversation so far (`Step.messages`), each side's
sampling, how a reply is read (`Step.read`: the utterance, the instrument's new state, fields to record, or why the
reply cannot be read), calls that run before a side's turn (`before_model` / `before_simulator`, e.g. SAGE's
analysis that moves the person's emotion before the person answers), and its stop rules (functions of the
conversation after each turn). `run_conversation` plays it and returns every turn with the instrument's state after
it and why the conversation ended.

- Every call goes through the ItemContext (cache, retries, concurrency, recording in ctx.calls), tagged by role
  ("model": ctx.generate, "simulator": ctx.simulator_generate, "judge": ctx.judge_generate).
- A request is a deterministic function of the plan and the earlier answers, so a killed run that resumes replays
  every finished turn from the response cache and asks only from the first missing call on.
- A reply that cannot be read is asked again, at most `Step.attempts` asks in all (attempt = 0, 1, 2...: each ask
  its own cache key; the same messages, and a seeded request's seed + attempt, so that a seeded sampler can answer
  otherwise); then the conversation ends as failed with the reason, never dropped.
  A call that cannot be answered at all (CallFailedError) is not caught: the item fails and is asked again when the
  run continues, its finished calls from the cache.
- `Transcript.chat(side, system)` gives a side's view of the conversation as chat messages (its own turns as
  "assistant", the other's as "user", the system prompt first): each of that side's requests extends its previous
  one, so providers' prompt caching applies to the stable prefix.
- Conversations run concurrently because each is one item of the run (the engine runs items in parallel); within
  one conversation the calls are sequential, as a conversation is.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from typing import Any, Generic, Literal, TypeVar

from empathybench.engine.engine import MAX_STORED_REPLY_CHARS, Generation, ItemContext, stored_text, stored_value
from empathybench.models.base import Message, Sampling

Speaker = Literal["model", "simulator"]  # the model under test, the simulated person
Role = Literal["model", "simulator", "judge"]  # who answers a call

S = TypeVar("S")  # the instrument's state (e.g. the person's emotion): any value, best a frozen dataclass

# A failed conversation keeps this much of the reply that could not be read (the whole reply is in ctx.calls).
FAILURE_REPLY_CHARS = 500


def other(speaker: Speaker) -> Speaker:
    return "simulator" if speaker == "model" else "model"


@dataclass(frozen=True)
class Reading(Generic[S]):
    """What an instrument reads from one reply."""

    text: str | None = None  # the utterance (a turn's reply); None for a hook, or with `error`
    state: S | None = None  # the instrument's state after this reply (None: unchanged)
    fields: Mapping[str, Any] = field(default_factory=dict)  # JSON-able, recorded with the step
    error: str | None = None  # why the reply cannot be read: it is asked again, up to the step's attempts


@dataclass(frozen=True)
class StepOutcome:
    """One step that was answered and read: a turn's call or a hook before a turn."""

    name: str
    role: Role
    reply: str  # the reply that was read (the last ask)
    fields: Mapping[str, Any]
    asks: int  # calls made (1 + re-asks of unreadable replies)
    errors: tuple[str, ...] = ()  # why the earlier asks could not be read
    cached: bool = False  # every ask came from the response cache

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "asks": self.asks,
            "fields": stored_value(self.fields),
        }
        if self.errors:
            record["errors"] = list(self.errors)
        return record


@dataclass(frozen=True)
class Turn(Generic[S]):
    """One utterance of the conversation."""

    speaker: Speaker
    text: str
    state: S  # the instrument's state after this turn
    given: bool = False  # given by the plan (an opening line), not asked
    call: StepOutcome | None = None  # the call that produced it (None when given)
    hooks: tuple[StepOutcome, ...] = ()  # the steps run before it (e.g. an analysis), in order
    fields: Mapping[str, Any] = field(default_factory=dict)  # for a given turn: what the plan records with it


@dataclass(frozen=True)
class Opening:
    """A turn the plan gives instead of asking for it (e.g. a person's preset first line)."""

    speaker: Speaker
    text: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Transcript(Generic[S]):
    """The conversation so far, as a step's `messages` and `read` see it."""

    turns: tuple[Turn[S], ...]
    state: S
    pending: Mapping[str, StepOutcome] = field(default_factory=dict)  # hooks already run for the turn being asked

    def count(self, speaker: Speaker) -> int:
        return sum(1 for turn in self.turns if turn.speaker == speaker)

    @property
    def last(self) -> Turn[S] | None:
        return self.turns[-1] if self.turns else None

    def chat(self, side: Speaker, system: str | None = None) -> list[Message]:
        """The conversation as `side` sees it: the system prompt first, then every turn in order, `side`'s own as
        "assistant" and the other's as "user". Append-only: each later call extends this list unchanged."""
        messages = [Message("system", system)] if system is not None else []
        messages.extend(Message("assistant" if turn.speaker == side else "user", turn.text) for turn in self.turns)
        return messages


StopRule = Callable[[Transcript[S]], str | None]  # after each turn: why the conversation ends now, or None


@dataclass(frozen=True)
class Step(Generic[S]):
    """One call: who answers, what is sent, with which sampling, and how the reply is read."""

    name: str  # e.g. "reply", "analysis"; recorded
    role: Role
    messages: Callable[[Transcript[S]], Sequence[Message]]
    sampling: Sampling | Callable[[Transcript[S]], Sampling]
    # None: the whole reply is the utterance (a turn) and the state is unchanged
    read: Callable[[str, Transcript[S]], Reading[S]] | None = None
    attempts: int = 1  # asks in all when replies cannot be read


@dataclass(frozen=True)
class ConversationPlan(Generic[S]):
    """Everything an instrument says about one conversation; `run_conversation` plays it."""

    initial_state: S
    model_turn: Step[S]  # the model under test's turn (role "model")
    simulator_turn: Step[S]  # the simulated person's turn (role "simulator")
    stop_rules: Sequence[StopRule[S]]  # checked in order after every turn; the first reason ends it
    max_turns: int  # turns in all (given ones included) after which it ends whatever the rules say
    opening: Sequence[Opening] = ()
    first_speaker: Speaker = "simulator"  # who is asked first when there is no opening
    before_model: Sequence[Step[S]] = ()  # steps run before each asked model turn
    before_simulator: Sequence[Step[S]] = ()  # steps run before each asked simulator turn (e.g. an analysis)


@dataclass(frozen=True)
class Failure:
    """Why a conversation ended as failed: a step whose replies could not be read."""

    step: str
    role: Role
    turn: int  # 1-based index of the turn that was being asked
    asks: int
    errors: tuple[str, ...]
    reply: str  # the head of the last unreadable reply

    @property
    def reason(self) -> str:
        return f"{self.role} {self.step} unreadable after {self.asks} asks: {self.errors[-1]}"


@dataclass(frozen=True)
class ConversationResult(Generic[S]):
    turns: tuple[Turn[S], ...]
    state: S  # the state at the end (for a failed conversation: where it stood when it failed)
    completed: bool
    stop_reason: str  # the stop rule's reason, or the failure's
    failure: Failure | None = None
    pending: tuple[StepOutcome, ...] = ()  # hooks that were answered before the failed turn

    def steps(self) -> list[StepOutcome]:
        """Every step that was answered and read, in order (each turn's hooks, then its call; then the hooks that
        were answered before a failed turn)."""
        done = [step for turn in self.turns for step in (*turn.hooks, *((turn.call,) if turn.call else ()))]
        return [*done, *self.pending]

    def asks(self, role: Role) -> int:
        """The calls made to `role`: every ask of every step, re-asks and the failed step's asks included."""
        total = sum(step.asks for step in self.steps() if step.role == role)
        if self.failure is not None and self.failure.role == role:
            total += self.failure.asks
        return total

    def reasks(self, role: Role) -> int:
        """The asks of `role` beyond the first of each step (replies that could not be read)."""
        steps = [step for step in self.steps() if step.role == role]
        failed = 1 if self.failure is not None and self.failure.role == role else 0
        return self.asks(role) - len(steps) - failed

    def as_record(self) -> dict[str, Any]:
        """JSON-able: each turn (speaker, text, state, its call and hooks) and how the conversation ended; states
        through `state_record`; every text bounded as a stored reply is (the whole reply is in the response cache)."""
        turns = []
        for turn in self.turns:
            state = dict(state_record(turn.state))
            entry: dict[str, Any] = {"speaker": turn.speaker, "text": stored_text(turn.text), "state": state}
            if len(turn.text) > MAX_STORED_REPLY_CHARS:
                entry["text_chars"] = len(turn.text)
            if turn.given:
                entry["given"] = True
            if turn.fields:
                entry["fields"] = stored_value(turn.fields)
            if turn.call is not None:
                entry["call"] = turn.call.as_record()
            if turn.hooks:
                entry["hooks"] = [hook.as_record() for hook in turn.hooks]
            turns.append(entry)
        record: dict[str, Any] = {
            "status": "completed" if self.completed else "failed",
            "stop_reason": self.stop_reason,
            "turns": turns,
            "state": dict(state_record(self.state)),
        }
        if self.failure is not None:
            record["failure"] = {
                "step": self.failure.step,
                "role": self.failure.role,
                "turn": self.failure.turn,
                "asks": self.failure.asks,
                "errors": list(self.failure.errors),
                "reply": self.failure.reply,
                "hooks": [hook.as_record() for hook in self.pending],
            }
        return record


def state_record(state: Any) -> Mapping[str, Any]:
    """A state as JSON: a dataclass's fields, a mapping as it is, anything else under "value"."""
    if is_dataclass(state) and not isinstance(state, type):
        return asdict(state)
    if isinstance(state, Mapping):
        return state
    return {"value": state}


async def _call(
    ctx: ItemContext, step: Step[Any], messages: Sequence[Message], sampling: Sampling, *, attempt: int, repetition: int
) -> Generation:
    if step.role == "model":
        ask = ctx.generate
    elif step.role == "simulator":
        ask = ctx.simulator_generate
    else:
        ask = ctx.judge_generate
    return await ask(messages, sampling, repetition=repetition, attempt=attempt)


async def _run_step(
    ctx: ItemContext, step: Step[S], transcript: Transcript[S], *, repetition: int, turn_index: int, is_turn: bool
) -> tuple[StepOutcome, Reading[S]] | Failure:
    """Ask `step` until a reply can be read (at most step.attempts asks): its outcome and reading, or the failure."""
    messages = list(step.messages(transcript))
    sampling = step.sampling(transcript) if callable(step.sampling) else step.sampling
    errors: list[str] = []
    all_cached = True
    reply = ""
    for attempt in range(max(1, step.attempts)):
        asked = sampling if attempt == 0 or sampling.seed is None else replace(sampling, seed=sampling.seed + attempt)
        generation = await _call(ctx, step, messages, asked, attempt=attempt, repetition=repetition)
        all_cached = all_cached and generation.cached
        reply = generation.text
        reading: Reading[S] = step.read(reply, transcript) if step.read is not None else Reading(text=reply)
        if reading.error is None and is_turn and reading.text is None:
            reading = Reading(error="no utterance in the reply")
        if reading.error is None:
            outcome = StepOutcome(
                step.name, step.role, reply, dict(reading.fields), attempt + 1, tuple(errors), all_cached
            )
            return outcome, reading
        errors.append(reading.error)
    return Failure(step.name, step.role, turn_index, len(errors), tuple(errors), reply[:FAILURE_REPLY_CHARS])


def _stop_reason(plan: ConversationPlan[S], transcript: Transcript[S]) -> str | None:
    for rule in plan.stop_rules:
        reason = rule(transcript)
        if reason:
            return reason
    return None


async def run_conversation(
    plan: ConversationPlan[S], ctx: ItemContext, *, repetition: int = 0
) -> ConversationResult[S]:
    """Play `plan` through `ctx`: the opening, then the two sides in turn (each turn's hooks first) until a stop
    rule gives a reason, `max_turns` is reached, or a step's replies cannot be read (a failed conversation)."""
    turns: list[Turn[S]] = []
    state = plan.initial_state
    for line in plan.opening:
        turns.append(Turn(line.speaker, line.text, state, given=True, fields=dict(line.fields)))
        if len(turns) >= plan.max_turns:
            return ConversationResult(tuple(turns), state, True, f"{plan.max_turns} turns")
        reason = _stop_reason(plan, Transcript(tuple(turns), state))
        if reason:
            return ConversationResult(tuple(turns), state, True, reason)
    speaker = other(turns[-1].speaker) if turns else plan.first_speaker
    while len(turns) < plan.max_turns:
        hooks: list[StepOutcome] = []
        before = plan.before_model if speaker == "model" else plan.before_simulator
        step = plan.model_turn if speaker == "model" else plan.simulator_turn
        # The turn's hooks, then the turn itself: each asked on the transcript so far, each may move the state.
        for index, current in enumerate((*before, step)):
            transcript = Transcript(tuple(turns), state, {h.name: h for h in hooks})
            is_turn = index == len(before)
            done = await _run_step(
                ctx, current, transcript, repetition=repetition, turn_index=len(turns) + 1, is_turn=is_turn
            )
            if isinstance(done, Failure):
                return ConversationResult(tuple(turns), state, False, done.reason, done, tuple(hooks))
            outcome, reading = done
            if reading.state is not None:
                state = reading.state
            if not is_turn:
                hooks.append(outcome)
        turns.append(Turn(speaker, str(reading.text), state, call=outcome, hooks=tuple(hooks)))
        reason = _stop_reason(plan, Transcript(tuple(turns), state))
        if reason:
            return ConversationResult(tuple(turns), state, True, reason)
        speaker = other(speaker)
    return ConversationResult(tuple(turns), state, True, f"{plan.max_turns} turns")
