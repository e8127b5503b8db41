"""The shared conversation runner (instruments/conversation.py) on scripted models: turn order, hooks, stop rules,
append-only histories, bounded re-asks of unreadable replies, failed conversations, and resume from the cache."""

import asyncio
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import CallFailedError, Engine, ItemContext, RetryPolicy
from empathybench.instruments.conversation import (
    ConversationPlan,
    Opening,
    Reading,
    Step,
    Transcript,
    run_conversation,
)
from empathybench.models.base import ChatRequest, Message, RequestRejectedError, Sampling
from empathybench.models.scripted import ScriptedBackend

SAMPLING = Sampling(temperature=1.0, max_tokens=64, seed=7)


@dataclass(frozen=True)
class Mood:
    level: int


def _engine(backend: ScriptedBackend, cache: ResponseCache | None = None) -> Engine:
    return Engine(backend, cache=cache, retry=RetryPolicy(max_retries=0))


def _plan(*, attempts: int = 2, rounds: int = 3, with_hook: bool = True) -> ConversationPlan[Mood]:
    def model_messages(t: Transcript[Mood]) -> list[Message]:
        return t.chat("model", system="be kind")

    def score_messages(t: Transcript[Mood]) -> list[Message]:
        return [Message("user", f"rate: {t.last.text if t.last else ''}")]

    def read_score(reply: str, t: Transcript[Mood]) -> Reading[Mood]:
        match = re.search(r"score (-?\d+)", reply)
        if match is None:
            return Reading(error="no score")
        return Reading(state=Mood(t.state.level + int(match.group(1))), fields={"delta": int(match.group(1))})

    def person_messages(t: Transcript[Mood]) -> list[Message]:
        delta = t.pending["score"].fields["delta"] if "score" in t.pending else 0
        return [*t.chat("simulator", system="you are a person"), Message("user", f"(mood moved {delta})")]

    def read_person(reply: str, t: Transcript[Mood]) -> Reading[Mood]:
        return Reading(error="empty") if not reply.startswith("P:") else Reading(text=reply[2:], fields={"raw": reply})

    def happy(t: Transcript[Mood]) -> str | None:
        return "happy" if t.state.level >= 10 else None

    def done(t: Transcript[Mood]) -> str | None:
        return f"{rounds} rounds" if t.last and t.last.speaker == "model" and t.count("model") >= rounds else None

    return ConversationPlan(
        initial_state=Mood(0),
        opening=(Opening("simulator", "hello"),),
        model_turn=Step("reply", "model", model_messages, SAMPLING),
        before_simulator=(Step("score", "judge", score_messages, SAMPLING, read_score, attempts),) if with_hook else (),
        simulator_turn=Step("line", "simulator", person_messages, SAMPLING, read_person, attempts),
        stop_rules=(happy, done),
        max_turns=2 * rounds,
    )


def _model(request: ChatRequest) -> str:
    return f"reply {sum(1 for m in request.messages if m.role == 'user')}"


def _person(request: ChatRequest) -> str:
    return f"P:line {sum(1 for m in request.messages if m.role == 'assistant') + 1}"


def _contexts(model, simulator, judge, cache=None) -> ItemContext:
    return ItemContext(
        _engine(model, cache), "1", 0, judge_engine=_engine(judge, cache), simulator_engine=_engine(simulator, cache)
    )


def test_turns_alternate_hooks_move_the_state_and_a_rule_stops() -> None:
    model, person = ScriptedBackend("m", _model), ScriptedBackend("p", _person)
    judge = ScriptedBackend("j", lambda r: "score 4")
    ctx = _contexts(model, person, judge)
    result = asyncio.run(run_conversation(_plan(rounds=10), ctx))
    assert result.completed and result.stop_reason == "happy"  # 0 -> 4 -> 8 -> 12
    assert [t.speaker for t in result.turns] == ["simulator", "model"] * 3 + ["simulator"]
    assert [t.state.level for t in result.turns if t.speaker == "simulator"] == [0, 4, 8, 12]
    assert result.turns[0].given and result.turns[0].call is None
    assert result.turns[2].text == "line 2" and result.turns[2].call.fields == {"raw": "P:line 2"}
    assert [h.name for h in result.turns[2].hooks] == ["score"] and result.turns[2].hooks[0].fields == {"delta": 4}
    # the hook's outcome reached the simulator's request, the judge role answered the hook
    assert person.calls[0].messages[-1].content == "(mood moved 4)"
    assert len(judge.calls) == 3 and len(person.calls) == 3 and len(model.calls) == 3
    assert [c.get("role") for c in ctx.calls[:3]] == [None, "judge", "simulator"]
    assert ctx.calls[2]["messages"][0] == {"role": "system", "content": "you are a person"}
    record = result.as_record()
    assert record["status"] == "completed" and record["turns"][2]["state"] == {"level": 4}
    assert record["turns"][2]["hooks"][0]["fields"] == {"delta": 4} and record["turns"][0]["given"] is True


def test_each_side_sees_an_append_only_history_with_a_stable_prefix() -> None:
    model, person = ScriptedBackend("m", _model), ScriptedBackend("p", _person)
    ctx = _contexts(model, person, ScriptedBackend("j", lambda r: "score 1"))
    result = asyncio.run(run_conversation(_plan(rounds=4), ctx))
    assert result.stop_reason == "4 rounds" and len(model.calls) == 4
    for earlier, later in zip(model.calls, model.calls[1:], strict=False):
        assert later.messages[: len(earlier.messages)] == earlier.messages  # the earlier request is a prefix
        assert len(later.messages) == len(earlier.messages) + 2
    assert model.calls[0].messages == (Message("system", "be kind"), Message("user", "hello"))
    assert model.calls[1].messages[2] == Message("assistant", "reply 1")
    # the person sees its own lines as assistant and the model's as user
    assert [m.role for m in person.calls[0].messages] == ["system", "assistant", "user", "user"]


def test_an_unreadable_reply_is_asked_again_with_its_own_cache_key_then_read() -> None:
    answers = iter(["no number", "still none", "score 3"] + ["score 1"] * 20)
    judge = ScriptedBackend("j", lambda r: next(answers))
    model, person = ScriptedBackend("m", _model), ScriptedBackend("p", _person)
    ctx = _contexts(model, person, judge)
    result = asyncio.run(run_conversation(_plan(attempts=3, rounds=3), ctx))
    assert result.completed
    hook = result.turns[2].hooks[0]
    assert hook.asks == 3 and hook.errors == ("no score", "no score") and hook.fields == {"delta": 3}
    judged = [c for c in ctx.calls if c.get("role") == "judge"]
    assert [c["attempt"] for c in judged] == [0, 1, 2, 0]
    assert [c["sampling"]["seed"] for c in judged] == [7, 8, 9, 7]  # a seeded sampler can answer otherwise
    assert judged[0]["messages"] == judged[1]["messages"] == judged[2]["messages"]


def test_replies_that_never_parse_end_the_conversation_as_failed_with_the_reason() -> None:
    model, person = ScriptedBackend("m", _model), ScriptedBackend("p", lambda r: "no prefix")
    ctx = _contexts(model, person, ScriptedBackend("j", lambda r: "score 2"))
    result = asyncio.run(run_conversation(_plan(attempts=2, rounds=5), ctx))
    assert not result.completed and result.failure is not None
    assert result.failure.step == "line" and result.failure.role == "simulator" and result.failure.asks == 2
    assert result.failure.turn == 3 and result.failure.reply == "no prefix"
    assert result.stop_reason == "simulator line unreadable after 2 asks: empty"
    assert len(result.turns) == 2 and result.state == Mood(2)  # where it stood: the hook before it had been read
    record = result.as_record()
    assert record["status"] == "failed" and record["failure"]["hooks"][0]["fields"] == {"delta": 2}
    assert len(person.calls) == 2


def test_max_turns_bounds_a_plan_whose_rules_never_fire() -> None:
    plan = _plan(rounds=100, with_hook=False)
    plan = ConversationPlan(**{**plan.__dict__, "stop_rules": (), "max_turns": 5})
    ctx = _contexts(ScriptedBackend("m", _model), ScriptedBackend("p", _person), ScriptedBackend("j", _model))
    result = asyncio.run(run_conversation(plan, ctx))
    assert result.completed and result.stop_reason == "5 turns" and len(result.turns) == 5


def test_an_interrupted_conversation_resumes_from_the_first_missing_call(tmp_path: Path) -> None:
    failing = {"on": True}

    def flaky_model(request: ChatRequest) -> str:
        if failing["on"] and sum(1 for m in request.messages if m.role == "user") == 3:
            raise RequestRejectedError(400, "boom")
        return _model(request)

    def build() -> tuple[ScriptedBackend, ScriptedBackend, ScriptedBackend, ItemContext]:
        cache = ResponseCache(tmp_path / "responses.sqlite")
        model = ScriptedBackend("m", flaky_model)
        person, judge = ScriptedBackend("p", _person), ScriptedBackend("j", lambda r: "score 1")
        return model, person, judge, _contexts(model, person, judge, cache)

    model, person, judge, ctx = build()
    with pytest.raises(CallFailedError):  # a call that cannot be answered fails the item, it is not a failed talk
        asyncio.run(run_conversation(_plan(rounds=4), ctx))
    assert len(model.calls) == 3 and len(person.calls) == 2

    failing["on"] = False
    model, person, judge, ctx = build()
    result = asyncio.run(run_conversation(_plan(rounds=4), ctx))
    assert result.completed and result.stop_reason == "4 rounds"
    assert [len(c.messages) for c in model.calls] == [6, 8]  # only the model's third and fourth replies were asked
    assert len(person.calls) == 1 and len(judge.calls) == 1  # and the person's fourth line with its hook
    assert [c["cached"] for c in ctx.calls[:6]] == [True] * 6 and not any(c["cached"] for c in ctx.calls[6:])
    assert result.turns[2].call.cached and not result.turns[-1].call.cached


def test_conversations_run_concurrently_on_one_engine() -> None:
    async def slow_model(request: ChatRequest) -> str:
        await asyncio.sleep(0.05)
        return _model(request)

    model = ScriptedBackend("m", slow_model)
    engine = Engine(model, cache=None, max_concurrency=16)
    person, judge = _engine(ScriptedBackend("p", _person)), _engine(ScriptedBackend("j", lambda r: "score 1"))

    async def all_of_them() -> list:
        contexts = [ItemContext(engine, str(i), i, judge_engine=judge, simulator_engine=person) for i in range(12)]
        return await asyncio.gather(*(run_conversation(_plan(rounds=3), ctx) for ctx in contexts))

    started = time.monotonic()
    results = asyncio.run(all_of_them())
    elapsed = time.monotonic() - started
    assert all(r.completed for r in results) and len(model.calls) == 36
    assert elapsed < 12 * 3 * 0.05 / 2  # far below one conversation after another (1.8 s); one chain is 0.15 s
