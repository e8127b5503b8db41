"""SAGE against the pinned upstream code: the three requests byte for byte as simulator_response.py and
npc_response.py build them for the same conversation, the reading of the simulator's replies as upstream reads
them, and the protocol's strings and numbers as the files hold them (all read through the fetch code)."""

import ast
import asyncio
import copy
from typing import Any

import pytest

from empathybench.engine.engine import Engine, ItemContext, RetryPolicy
from empathybench.instruments.sage import data
from empathybench.instruments.sage.bench import SageConfig, run_person
from empathybench.instruments.sage.parse import emotion_state, moved_emotion, parse_analysis, parse_person_reply
from empathybench.models.scripted import ScriptedBackend
from sage_support import Replay, analysis_reply, released, upstream_loop, upstream_modules, upstream_text


@pytest.fixture(scope="module")
def loaded() -> tuple[list[data.Person], data.UpstreamProtocol]:
    people, protocol, _ = data.load()
    return people, protocol


def _upstream_player(person: data.Person) -> dict[str, Any]:
    """player_init's player_data for a person (player_init itself reads a "topic" the released profiles lack), plus
    `target: 0`: planning_reply's second replacement indexes target_prompt with it, which raises as released and
    otherwise replaces nothing ({{target}} is already filled)."""
    return {
        "id": person.id,
        "emo_point": 40,
        "emo_state": "Emotion-B",
        "player": person.player,
        "scene": person.scene,
        "character": person.character,
        "topic": "",
        "task": person.task,
        "history": [],
        "target": 0,
    }


@pytest.mark.parametrize("index", [0, 37, 99])
def test_every_request_equals_what_the_upstream_code_sends(loaded: Any, index: int) -> None:
    people, protocol = loaded
    conversation = released(data.GPT41_RESULTS_KEY)[index]
    person = next(p for p in people if p.id == conversation["id"])

    # upstream: test_npc.py's own loop around chat_player and call_npc, each call answered with the released turn
    replay = Replay(conversation)
    simulator, npc, asked = upstream_modules(
        lambda prompt: replay.answer_model(None) if isinstance(prompt, list) else replay.simulator_answer(prompt)
    )
    loop: dict[str, Any] = {
        "player": _upstream_player(person),
        "simulator": {"first_talk": person.first_talk},
        "chat_player": simulator["chat_player"],
        "call_npc": npc["call_npc"],
        "turns": 0,
        "testmode": "npc",
        "print": lambda *args, **kwargs: None,
    }
    exec(upstream_loop(), loop)  # the pinned upstream loop
    player = loop["player"]

    # ours: the same answers through the engine, the model and the simulator each a scripted model
    ours = Replay(conversation)
    model, person_model = ScriptedBackend("m", ours.answer_model), ScriptedBackend("s", ours.answer_simulator)
    ctx = ItemContext(
        Engine(model, cache=None, retry=RetryPolicy(max_retries=0)),
        "1",
        0,
        simulator_engine=Engine(person_model, cache=None, retry=RetryPolicy(max_retries=0)),
        tag="sage",
    )
    record = asyncio.run(run_person(SageConfig(), protocol, person, ctx))
    sent = [
        [{"role": m["role"], "content": m["content"]} for m in call["messages"]]
        if call.get("role") is None
        else call["messages"][0]["content"]
        for call in ctx.calls
    ]
    assert all(len(call["messages"]) == 1 for call in ctx.calls if call.get("role") == "simulator")
    assert len(sent) == len(asked) and sent == asked  # every request, in order, byte for byte
    assert record["trajectory"][-1] == player["emo_point"] == conversation["emo_point"]
    assert record["rounds"] == sum(1 for m in player["history"] if m["role"] == "user")


REPLIES = [
    "Content:\n[a]\nTargetCompletion:\n[b]\nActivity:\n[c]\nAnalyse:\n[d]\nChange:\n[+4]",
    "Content：x\nTargetCompletion：y\nActivity：z\nAnalyse：w\nChange：-15",  # full-width colons; clamped
    "**Content:**\n内容\n**Change:** 23 then -2",  # asterisks removed; the first integer; clamped to 10
    "Content:\n1. a\n2. b\nno change line at all",  # upstream reads the first integer of the whole reply: 1
    "Change: +0",
    "Activity:\nonly\nChange:\n[-7]]",
    "Change: none",  # no integer: upstream asks again
    "",  # nothing: upstream asks again
    "Change: 九",  # not a digit string
    "Change: ５",  # a full-width digit: \d and int() read it, upstream too
]


@pytest.mark.parametrize("reply", REPLIES)
@pytest.mark.parametrize("emotion", [40, 95, 12])
def test_the_analysis_is_read_as_planning_reply_reads_it(loaded: Any, reply: str, emotion: int) -> None:
    people, protocol = loaded
    good = "Change: 1"
    answers = iter([reply, good])
    simulator, _, asked = upstream_modules(lambda prompt: next(answers))
    player = {**_upstream_player(people[0]), "emo_point": emotion, "emo_state": "Emotion-B"}
    player["history"] = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    upstream_player, planning = simulator["planning_reply"](copy.deepcopy(player))
    ours = parse_analysis(reply)
    if len(asked) == 2:  # upstream could not read it and asked again
        assert isinstance(ours, str)
        return
    assert not isinstance(ours, str), ours
    assert ours.planning() == planning
    moved = moved_emotion(emotion, ours.change)
    assert moved == upstream_player["emo_point"]
    state = emotion_state(moved, "Emotion-B", protocol.emotion_states, protocol.failed_state, protocol.failed_below)
    assert state == upstream_player["emo_state"]


@pytest.mark.parametrize(
    "reply",
    [
        "Thinking:\n1. ok\nOrigin:\n[x]\nChange:\n[y]\nResponse:\n[“真的假的。。。”]",
        "Response:\nno thinking",
        "no labels at all",
        "Thinking:\nt\nResponse: a\nResponse:\nlast wins",
        "Thinking:\nt\nResponse:\n\n",  # empty: upstream passes it on, we ask again (documented)
    ],
)
def test_the_person_line_is_read_as_player_reply_reads_it(loaded: Any, reply: str) -> None:
    people, _ = loaded
    simulator, _, _ = upstream_modules(lambda prompt: reply)
    player = {
        **_upstream_player(people[0]),
        "history": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    }
    planning = {"TargetCompletion": "t", "activity": "a", "analyse": "n", "content": "c", "change": 1}
    last = simulator["player_reply"](copy.deepcopy(player), planning)["history"][-1]
    ours = parse_person_reply(reply)
    if not last["content"].strip():
        assert isinstance(ours, str)  # the one difference: an empty line is asked again
        return
    assert not isinstance(ours, str)
    assert (ours.thinking, ours.response) == (last["thinking"], last["content"])


def test_the_protocol_is_read_from_the_files_and_matches_their_code(loaded: Any) -> None:
    people, protocol = loaded
    simulator_code = upstream_text(data.SIMULATOR_CODE_KEY)
    module = ast.parse(simulator_code)
    constants = {n.value for n in ast.walk(module) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert {protocol.target, protocol.analysis_template, protocol.reply_template} <= constants
    assert protocol.analysis_template.count("{{") == 5 and "{{dialog_history}}" in protocol.reply_template
    assert protocol.system_prompt in {
        n.value for n in ast.walk(ast.parse(upstream_text(data.NPC_CODE_KEY))) if isinstance(n, ast.Constant)
    }
    # the numbers the spec states, as the code holds them
    assert dict(protocol.emotion_states) == {"Emotion-S": 100, "Emotion-A": 70, "Emotion-B": 40, "Emotion-C": 10}
    assert (protocol.failed_state, protocol.failed_below) == ("Emotion-F", 10)
    assert (protocol.initial_emotion, protocol.initial_state) == (40, "Emotion-B")
    assert (protocol.max_rounds, protocol.stop_at_or_above, protocol.stop_below) == (10, 100, 10)
    assert len(protocol.goodbye_words) == 2 and all(
        w in upstream_text(data.LOOP_CODE_KEY) for w in protocol.goodbye_words
    )
    assert [kind for kind, _ in protocol.planning_parts] == ["text", "field", "text", "field", "field"]
    # 100 people; player_init reads the persona and scene from simulator_profile.jsonl: the same texts
    assert len(people) == 100 and len({p.id for p in people}) == 100
    other = data.jsonl_records(upstream_text(data.PROFILES_NO_FIRST_LINE_KEY), source="simulator_profile.jsonl")
    by_id = {r["id"]: r for r in other}
    assert all((by_id[p.id]["player"], by_id[p.id]["scene"]) == (p.player, p.scene) for p in people)


def test_a_rebuilt_analysis_reads_back_as_the_released_planning() -> None:
    for conversation in released(data.GPT41_RESULTS_KEY)[:20]:
        for entry in conversation["history"][2::2]:
            parsed = parse_analysis(analysis_reply(entry["planning"]))
            assert not isinstance(parsed, str) and parsed.planning() == entry["planning"]
