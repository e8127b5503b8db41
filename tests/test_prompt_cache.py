"""Prompt caching over the wire (issue 13): the shared prefix is marked for Anthropic, cached input tokens are read
from each provider's usage, recorded per call and added up in the run's usage as `cached_input_tokens`.

What is checked is what the loopback fakes received (request bodies) and what they reported (usage), against what
the engine, samples.jsonl, summary.json and run.json recorded.
"""

import asyncio
import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import Engine, Generation, RetryPolicy
from empathybench.instruments.emotionbench.canned import plausible_answer
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.models.prompt_cache import mark_anthropic_prefix
from empathybench.run.execute import execute_run
from empathybench.run.options import RunOptions
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer, count_prompt_tokens, text_tokens

KEY = "sk-ant-test-cache-77a1"
EPHEMERAL = {"type": "ephemeral"}
SAMPLING = Sampling(temperature=0.0, max_tokens=50)
INSTRUCTIONS = " ".join(f"rule{i}" for i in range(40))  # a 40-word shared system prompt


def questionnaire_answer(body: dict[str, Any]) -> str:
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    return plausible_answer(ChatRequest(messages, SAMPLING), Draw(0)) or "no questionnaire"


def prompt_words(messages: list[dict[str, str]]) -> list[str]:
    """A prompt as the fake counts its tokens: the tokens of each message, the first one tagged with the role."""
    words: list[str] = []
    for message in messages:
        part = text_tokens(message["content"])
        words += [f"{message['role']}:{part[0]}", *part[1:]] if part else []
    return words


def expected_cached(words: list[str], earlier: list[list[str]], step: int) -> int:
    """OpenAI's rule: the longest prefix shared with an earlier prompt, in whole steps (nothing below one step)."""
    longest = 0
    for other in earlier:
        shared = 0
        while shared < min(len(words), len(other)) and words[shared] == other[shared]:
            shared += 1
        longest = max(longest, shared)
    return longest // step * step


def test_openai_cached_tokens_are_recorded_per_call_and_in_the_run_usage(mirror: Path, tmp_path: Path) -> None:
    # EmotionBench at concurrency 1 (calls in a known order): its prompts share the system message, the
    # instruction and, within an item, the situation; the fake serves the longest prefix seen before from its
    # cache, in steps of 16 tokens here (OpenAI: 128, from 1,024 on) so that short test prompts can hit it.
    step = 16
    with FakeOpenAIServer(answer=questionnaire_answer, cache_min_tokens=step, cache_step_tokens=step) as server:
        result = execute_run(
            RunOptions(
                model="openai/fake",
                base_url=server.base_url,
                benchmarks=["emotionbench"],
                preset="quick",
                limit=2,
                out=tmp_path / "run",
                show_progress=False,
                max_concurrency=1,
                use_cache=False,
            ),
            Console(file=io.StringIO()),
        )
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text("utf-8").splitlines()]
    calls = [call for record in records for call in record["calls"]]
    assert len(calls) >= 4
    earlier: list[list[str]] = []
    for call in calls:  # in the order they were asked
        words = prompt_words(call["messages"])
        assert call["prompt_tokens"] == count_prompt_tokens(call["messages"]) >= len(words)
        assert call["cached_input_tokens"] == expected_cached(words, earlier, step)
        earlier.append(words)
    total = sum(call["cached_input_tokens"] for call in calls)
    assert calls[0]["cached_input_tokens"] == 0 and total > 0
    assert sum(record["usage"]["cached_input_tokens"] for record in records) == total
    assert result.stats.cached_input_tokens == total
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    run_info = json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))
    assert summary["usage"]["cached_input_tokens"] == run_info["usage"]["cached_input_tokens"] == total


def ask_anthropic(
    base_url: str, requests: list[tuple[Message, ...]], cache: ResponseCache | None = None
) -> tuple[Engine, list[Generation]]:
    """Ask through the engine and the real AnthropicBackend, one request after the other (so the second sees
    what the first wrote to the fake's prompt cache)."""

    async def run() -> tuple[Engine, list[Generation]]:
        engine = Engine(
            AnthropicBackend("claude-fake-1", base_url=base_url, api_key=KEY),
            cache=cache,
            retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.1),
        )
        generations = []
        try:
            for messages in requests:
                generations.append((await engine.generate(messages, SAMPLING))[1])
        finally:
            await engine.backend.aclose()
        return engine, generations

    return asyncio.run(run())


def test_anthropic_system_prompt_is_marked_and_cache_reads_are_recorded(tmp_path: Path) -> None:
    system = Message("system", INSTRUCTIONS)
    requests = [(system, Message("user", "first item: one two three")), (system, Message("user", "second item"))]
    with FakeAnthropicServer(api_key=KEY, cache_min_tokens=10) as server:
        engine, (first, second) = ask_anthropic(server.base_url, requests, ResponseCache(tmp_path / "cache.sqlite"))
        bodies = [r.body for r in server.requests]
        # A response-cache hit replays the reply with the provider's figures of the call that paid for it, and is
        # not counted again in the run's usage.
        again, [replayed] = ask_anthropic(server.base_url, requests[1:], ResponseCache(tmp_path / "cache.sqlite"))
        assert server.requests_total == 2
    assert replayed.cached and replayed.cached_input_tokens == 40
    assert again.stats.cached_input_tokens == 0
    # The body: the system prompt as one text block marked cacheable, the user message unchanged.
    for body, (_, user) in zip(bodies, requests, strict=True):
        assert body["system"] == [{"type": "text", "text": INSTRUCTIONS, "cache_control": EPHEMERAL}]
        assert body["messages"] == [{"role": "user", "content": user.content}]
    # The first call writes the 40-word prefix, the second reads it; prompt_tokens stays the whole input.
    assert (first.cache_write_input_tokens, first.cached_input_tokens) == (40, 0)
    assert (second.cache_write_input_tokens, second.cached_input_tokens) == (0, 40)
    assert first.prompt_tokens == 40 + 5 and second.prompt_tokens == 40 + 2
    assert engine.stats.cached_input_tokens == 40 and engine.stats.cache_write_input_tokens == 40
    record = second.as_record(ChatRequest(requests[1], SAMPLING))
    assert record["cached_input_tokens"] == 40 and "cache_write_input_tokens" not in record
    assert first.as_record(ChatRequest(requests[0], SAMPLING))["cache_write_input_tokens"] == 40


def test_anthropic_short_prefix_is_marked_but_not_cached() -> None:
    # The API caches a marked prefix only from its minimum length (1,024 tokens by default): marking a short
    # one is harmless, and nothing is reported read or written.
    requests = [(Message("system", "Be brief."), Message("user", "hello"))] * 2
    with FakeAnthropicServer(api_key=KEY) as server:
        engine, generations = ask_anthropic(server.base_url, requests)
        assert all(r.body["system"][0]["cache_control"] == EPHEMERAL for r in server.requests)
    assert [g.cached_input_tokens for g in generations] == [0, 0]
    assert engine.stats.cache_write_input_tokens == 0


def test_anthropic_conversation_marks_the_turn_before_the_new_one() -> None:
    turns = [
        Message("user", INSTRUCTIONS),
        Message("assistant", "a long first answer " * 5),
        Message("user", "and now?"),
    ]
    with FakeAnthropicServer(api_key=KEY, cache_min_tokens=10) as server:
        _, (_, second) = ask_anthropic(server.base_url, [tuple(turns[:1]), tuple(turns)])
        bodies = [r.body for r in server.requests]
    assert bodies[0]["messages"] == [{"role": "user", "content": INSTRUCTIONS}]  # one message: nothing earlier
    assert "system" not in bodies[0]
    assert bodies[1]["messages"] == [
        {"role": "user", "content": INSTRUCTIONS},
        {"role": "assistant", "content": [{"type": "text", "text": turns[1].content, "cache_control": EPHEMERAL}]},
        {"role": "user", "content": "and now?"},
    ]
    assert second.cache_write_input_tokens == 40 + 20 and second.prompt_tokens == 40 + 20 + 2


@pytest.mark.parametrize("n_messages", [1, 2, 3, 4])
def test_marking_keeps_every_text_and_its_order(n_messages: int) -> None:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"text {i}"} for i in range(n_messages)]
    system, marked = mark_anthropic_prefix("sys", messages)
    assert system == [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}]
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in marked]
    assert texts == [m["content"] for m in messages] and [m["role"] for m in marked] == [m["role"] for m in messages]
    assert sum(not isinstance(m["content"], str) for m in marked) == (1 if n_messages > 1 else 0)
    assert mark_anthropic_prefix("", messages)[0] == ""


def test_a_conversation_is_sent_as_a_growing_prefix_and_the_cost_line_gives_the_cached_share(
    mirror: Path, tmp_path: Path
) -> None:
    """SAGE's turns go to the model and to the simulated person with their history unchanged in front (append-only),
    so from the second round on most of each prompt is served from the provider's prompt cache; the run's cost line
    says how much, per role."""
    from canned_server import MODEL, SIMULATOR, CannedServer
    from conftest import cli_in_process

    out = tmp_path / "run"
    with CannedServer("sage") as server:
        args = ["run", "-m", f"openai/{MODEL}", "--base-url", server.base_url, "--bench", "sage", "--limit", "2"]
        args += ["--simulator", f"openai/{SIMULATOR}", "--simulator-base-url", server.base_url]
        args += ["--option", "sage.rounds=4", "--no-cache", "-q", "--out", str(out)]
        env = {"OPENAI_API_KEY": "sk-x", "EMPATHYBENCH_MIRROR": str(mirror), "EMPATHYBENCH_CACHE_DIR": str(tmp_path)}
        done = cli_in_process(args, env)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    for record in records:  # the model's history is sent as it was, with the new turn after it
        calls = [call for call in record["calls"] if call.get("role") is None]
        for before, after in itertools.pairwise(calls):
            assert after["messages"][: len(before["messages"])] == before["messages"]
    cost = json.loads((out / "summary.json").read_text("utf-8"))["cost"]
    simulator = cost["simulator"]
    assert simulator["calls"] > 2 and 0 < simulator["cached_input_tokens"] < simulator["input_tokens"]
    share = simulator["cached_input_tokens"] / simulator["input_tokens"]
    assert share > 0.5  # its long analysis prompt (Chinese) repeats from round to round
    # The model's prompts stay under the 1,024 tokens from which OpenAI caches: nothing cached, and none said.
    assert cost["model"]["calls"] == 8 and cost["model"]["cached_input_tokens"] == 0
    report = (out / "report.md").read_text("utf-8")
    assert f"{simulator['cached_input_tokens']:,} cached = {100 * share:.1f}%" in report
    assert f"({cost['model']['calls']} calls, {cost['model']['input_tokens']:,} in, " in report
