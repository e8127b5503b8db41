"""EQ-Bench 3 conversation protocol: the messages each call sends, settings, section parsing (spec §3)."""

from pathlib import Path

import pytest

from empathybench.instruments.eqbench3 import conversation as conv
from empathybench.instruments.eqbench3 import data
from empathybench.instruments.eqbench3.data import TaskType


@pytest.fixture(scope="module")
def protocol() -> data.Protocol:
    return data.load_protocol()


def test_generation_settings_as_upstream() -> None:
    assert (conv.TURN_SAMPLING.temperature, conv.TURN_SAMPLING.max_tokens, conv.TURN_SAMPLING.min_p) == (
        0.7,
        12000,
        0.1,
    )
    assert (conv.DEBRIEF_SAMPLING.temperature, conv.DEBRIEF_SAMPLING.max_tokens) == (0.5, 12000)
    assert conv.DEBRIEF_SAMPLING.min_p is None and conv.TURN_SAMPLING.seed is None
    assert (conv.JUDGE_SAMPLING.temperature, conv.JUDGE_SAMPLING.max_tokens) == (0.0, 8000)


def test_every_call_of_an_iteration(mirror: Path, protocol: data.Protocol) -> None:
    """Walk all 45 scenarios with placeholder replies: 118 calls, growing histories, no system message."""
    calls = 0
    for scenario in protocol.scenarios.values():
        replies: list[str] = []
        for turn in range(len(scenario.turns)):
            messages = conv.turn_messages(protocol, scenario, replies)
            calls += 1
            assert len(messages) == 2 * turn + 1
            assert [m.role for m in messages] == ["user", "assistant"] * turn + ["user"]
            last = messages[-1].content
            assert scenario.turns[turn] in last
            if scenario.type is TaskType.ANALYSIS:
                assert last.startswith("[TRANSCRIPT]") and last.endswith("1000 words.")
            else:
                assert last.startswith(scenario.turns[turn]) and last.endswith("Aim for 1000 words in total.")
            replies.append(f"reply {turn}")
        with pytest.raises(ValueError):
            conv.turn_messages(protocol, scenario, replies)
        if conv.has_debrief(scenario):
            debrief = conv.debrief_messages(protocol, scenario, replies)
            calls += 1
            assert len(debrief) == 2 * len(scenario.turns) + 1
            assert debrief[-1].content == protocol.debrief and debrief[-1].content.endswith("800 words.")
            assert [m.content for m in debrief[1::2]] == replies
        else:
            with pytest.raises(ValueError):
                conv.debrief_messages(protocol, scenario, replies)
    assert calls == 118


def test_section_headings_and_limits_of_the_master_prompts(mirror: Path, protocol: data.Protocol) -> None:
    for heading, words in (("# I'm thinking & feeling", 400), ("# They're thinking & feeling", 300)):
        assert heading in protocol.master_roleplay and f"({words} words)" in protocol.master_roleplay
    assert "# My response" in protocol.master_roleplay and "(300 words)" in protocol.master_roleplay
    for heading in ("# Perspective-taking", "# Draft brainstorming", "# Draft"):
        assert heading in protocol.master_drafting
    assert conv.SECTION_WORD_TARGETS[TaskType.ROLEPLAY] == {
        "thinking_feeling": 400,
        "their_thinking_feeling": 300,
        "response": 300,
    }


def test_section_parsing_rules() -> None:
    reply = "# I’m thinking & feeling\nmine\n\n# They're thinking & feeling\ntheirs\n# My response\nsaid -- cut\n--\n"
    parsed = conv.parse_sections(TaskType.ROLEPLAY, reply)
    assert parsed == {"thinking_feeling": "mine", "their_thinking_feeling": "theirs", "response": "said", "raw": reply}
    assert conv.section_coverage(TaskType.ROLEPLAY, parsed) == 1.0
    bold = conv.parse_sections(TaskType.ROLEPLAY, "**I'm thinking & feeling**\nmine\n# MY RESPONSE\nok")
    assert bold["thinking_feeling"] == "" and bold["response"] == "ok"
    assert conv.section_coverage(TaskType.ROLEPLAY, bold) == pytest.approx(1 / 3)
    hashtag = conv.parse_sections(TaskType.ROLEPLAY, "# I'm thinking & feeling\nso #blessed today\n")
    assert hashtag["thinking_feeling"] == "so"
    draft = conv.parse_sections(TaskType.DRAFTING, "# Perspective taking\np\n# Draft brainstorming\nb\n# Draft\nd\n--")
    assert (draft["perspective_taking"], draft["draft_brainstorming"], draft["draft"]) == ("p", "b", "d")
    assert conv.parse_sections(TaskType.ANALYSIS, "text") == {"raw": "text"}


def test_reasoning_is_stripped_only_when_closed() -> None:
    assert conv.strip_reasoning("<think>a</think> b </think> c") == "b </think> c"
    assert conv.strip_reasoning("<think>cut off") == "<think>cut off"
    assert conv.strip_reasoning("<reasoning>x</reasoning>\n answer ") == "answer"


def test_completeness_gate() -> None:
    assert not conv.eligible_for_judging(["x" * 99, "  " + "y" * 98 + "  "])
    assert conv.eligible_for_judging(["", "z" * 100])


def test_endpoint_rules_and_opt_in_vendor_quirks() -> None:
    from empathybench.models.base import Message

    openai = {"provider": "openai", "model": "o3", "base_url": None}
    assert conv.sampling_for_endpoint(conv.TURN_SAMPLING, openai).min_p is None
    assert conv.sampling_for_endpoint(conv.TURN_SAMPLING, openai).temperature == 0.7
    assert conv.sampling_for_endpoint(conv.TURN_SAMPLING, openai, upstream_quirks=True).temperature == 1.0
    local = {"provider": "openai", "model": "o3", "base_url": "http://127.0.0.1:8080/v1"}
    assert conv.sampling_for_endpoint(conv.TURN_SAMPLING, local, upstream_quirks=True) == conv.TURN_SAMPLING
    router = {"provider": "openai", "model": "qwen/Qwen3-8B", "base_url": "https://openrouter.ai/api/v1"}
    messages = [Message("user", "hi")]
    assert conv.messages_for_endpoint(messages, router) == messages
    assert conv.messages_for_endpoint(messages, router, upstream_quirks=True) == [
        Message("system", "/no_think"),
        *messages,
    ]
