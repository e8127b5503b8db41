"""Spiral-Bench sends every model what upstream's api_client.py sent it: the common body (temperature 0.3 and the
call's budget, as the whole budget) and, for the models it names, their own settings (the published judge
gpt-5-2025-08-07: reasoning effort "minimal", temperature 1, 16,000 tokens). The reference is upstream's own
get_completion, run here with its HTTP call replaced; ours is checked as the OpenAI backend builds it and as it
arrives at a loopback server."""

import json
import types
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.instruments.comparability import compare, sent_settings
from empathybench.instruments.spiral import data, dialogue, published
from empathybench.instruments.spiral.canned import canned_answer
from empathybench.instruments.spiral.prompts import CHUNK_JUDGE_SAMPLING, CONVERSATION_SAMPLING, FINAL_JUDGE_SAMPLING
from empathybench.models.base import ChatRequest, Draw, Message
from empathybench.models.capabilities import parse_model_args
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.testing.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")
MESSAGES = [{"role": "user", "content": "hello"}]
BUDGETS = (CONVERSATION_SAMPLING, CHUNK_JUDGE_SAMPLING, FINAL_JUDGE_SAMPLING)


def upstream_body(model: str, max_tokens: int) -> dict[str, Any]:
    """The JSON body upstream's get_completion posts for `model` (its HTTP call replaced by a recorder)."""
    posted: list[dict[str, Any]] = []

    class Reply:
        status_code = 200

        def raise_for_status(self) -> None:
            pass

        def json(self) -> dict[str, Any]:
            return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}

    def post(url: str, headers: Any = None, json: Any = None, timeout: Any = None) -> Reply:
        posted.append(json)
        return Reply()

    requests = types.SimpleNamespace(post=post, exceptions=types.SimpleNamespace(RequestException=OSError))
    namespace: dict[str, Any] = {"__name__": "api_client"}
    exec(compile(data.read_text("api_client.py"), "api_client.py", "exec"), namespace)
    namespace["requests"] = requests
    namespace["get_completion"](model, MESSAGES, "key", "https://example.invalid", "site", max_tokens=max_tokens)
    (body,) = posted
    return body


def our_body(model: str, base: Any, *model_args: str) -> dict[str, Any]:
    backend = OpenAIBackend(model, base_url="http://127.0.0.1:9/v1", api_key="k", args=parse_model_args(model_args))
    sampling = published.request_sampling(model, base)
    return backend.request_body(ChatRequest.of([Message("user", "hello")], sampling))


@pytest.mark.parametrize("model", [*published.UPSTREAM_NAMED_MODELS, "moonshotai/kimi-k2", "some-lab/chat-model"])
@pytest.mark.parametrize("base", BUDGETS, ids=["conversation", "chunk judge", "final judge"])
def test_every_model_gets_the_body_upstream_sent_it(model: str, base: Any) -> None:
    upstream = upstream_body(model, base.max_tokens)
    assert published.upstream_body(model, base.max_tokens) == {
        k: v for k, v in upstream.items() if k not in ("model", "messages")
    }
    assert our_body(model, base) == upstream


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("o4-mini", "openai/o4-mini"),
        ("gpt-oss-120b", "openai/gpt-oss-120b"),
        ("DeepSeek-R1-0528", "deepseek/deepseek-r1-0528"),
    ],
)
def test_another_name_of_a_named_model_gets_its_settings_in_the_api_s_own_terms(ours: str, theirs: str) -> None:
    body = our_body(ours, CONVERSATION_SAMPLING)
    upstream = upstream_body(theirs, CONVERSATION_SAMPLING.max_tokens)
    published_here = published.published_body(ours, CONVERSATION_SAMPLING.max_tokens)
    assert compare(sent_settings(body), sent_settings(published_here)) == []
    # upstream's settings in the API's own terms: OpenRouter's routing is not a setting of the reply, and a model
    # that takes no temperature is sent none (OpenRouter dropped it)
    differences = compare(sent_settings(published_here), sent_settings(upstream))
    assert differences in ([], ["temperature not sent (published 0.3)"])
    assert "provider" not in body and body.get("reasoning_effort") == upstream.get("reasoning", {}).get("effort")


def test_the_users_model_arguments_win_and_the_label_names_the_difference() -> None:
    body = our_body("gpt-5-2025-08-07", CHUNK_JUDGE_SAMPLING, "reasoning_effort=high")
    upstream = upstream_body("gpt-5-2025-08-07", CHUNK_JUDGE_SAMPLING.max_tokens)
    assert body["reasoning_effort"] == "high" and body["max_completion_tokens"] == 16000
    assert compare(sent_settings(body), sent_settings(upstream)) == ["reasoning effort high (published minimal)"]


def test_the_demos_budget_cap_caps_the_whole_budget_too() -> None:
    settings = dialogue.JudgeSettings(chunk_size=1, assistant_max_chars=0, attempts=1, max_tokens=48)
    for judge in ("gpt-5-2025-08-07", "plain-model"):
        capped = dialogue.JudgeSettings(**{**settings.__dict__, "judge_name": judge}).sampling(CHUNK_JUDGE_SAMPLING)
        assert capped.max_tokens == 48 and capped.model_args is not None and capped.model_args.max_tokens == 48


def _answer(request: dict[str, Any]) -> str:
    """Every role at once: the canned chunk and final judges (by their prompts), else a line of conversation."""
    messages = tuple(Message(m["role"], m["content"]) for m in request["messages"])
    judged = canned_answer(ChatRequest(messages, CONVERSATION_SAMPLING, "spiral:judge"), Draw(1))
    return judged if judged is not None else "Tell me more about it."


def test_a_run_with_the_published_judge_sends_it_upstreams_settings_over_the_wire(tmp_path: Path) -> None:
    bodies: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> str:
        bodies.append(json.loads(json.dumps(request)))
        return _answer(request)

    with FakeOpenAIServer(answer=answer) as server:
        env = {
            "EMPATHYBENCH_CACHE_DIR": str(tmp_path / "cache"),
            "EMPATHYBENCH_MIRROR": str(MIRROR),
            "OPENAI_API_KEY": "sk-test-spiral-settings",
        }
        args = ["run", "--model", "openai/o4-mini", "--base-url", server.base_url, "--bench", "spiral"]
        args += ["--judge", "openai/gpt-5-2025-08-07", "--judge-base-url", server.base_url]
        args += ["--simulator", "openai/moonshotai/kimi-k2", "--simulator-base-url", server.base_url]
        args += ["--option", "spiral.num_turns=2", "--limit", "1", "--out", str(tmp_path / "run"), "--quiet"]
        result = cli_in_process(args, env)
    assert result.returncode == 0, result.stderr
    by_model: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        by_model.setdefault(body["model"], []).append({k: v for k, v in body.items() if k != "messages"})
    judge = by_model["gpt-5-2025-08-07"]
    assert len(judge) == 2  # one chunk, one final judgement
    assert all(
        b
        == {
            "model": "gpt-5-2025-08-07",
            "temperature": 1.0,
            "max_completion_tokens": 16000,
            "reasoning_effort": "minimal",
        }
        for b in judge
    )
    assert by_model["o4-mini"] == [{"model": "o4-mini", "max_completion_tokens": 3072, "reasoning_effort": "low"}] * 2
    assert by_model["moonshotai/kimi-k2"] == [{"model": "moonshotai/kimi-k2", "temperature": 0.3, "max_tokens": 3072}]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))["benchmarks"]["spiral"]
    label = summary["comparability"]
    # the roles are the published ones and were sent the published settings; only the cut differs
    assert "reasoning" not in label and "temperature" not in label and "1 of 30 openings scored" in label


def test_under_inspect_the_published_settings_reach_inspects_config() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import get_model

    from empathybench.inspect_bridge.backend import InspectBackend

    backend = InspectBackend(get_model("mockllm/model"), role="grader")
    judge = published.request_sampling("gpt-5-2025-08-07", CHUNK_JUDGE_SAMPLING)
    config = backend.generate_config(ChatRequest.of("hello", judge))
    assert (config.reasoning_effort, config.max_tokens, config.temperature) == ("minimal", 16000, 1.0)
    gemini = backend.generate_config(
        ChatRequest.of("hello", published.request_sampling("google/gemini-2.5-pro", BUDGETS[0]))
    )
    assert gemini.extra_body == {"reasoning": {"max_tokens": 1}} and gemini.reasoning_effort is None


def test_a_users_thinking_budget_is_added_to_the_protocols_budget_not_refused() -> None:
    from empathybench.models.anthropic_backend import AnthropicBackend

    backend = AnthropicBackend(
        "claude-sonnet-4-5", base_url="http://127.0.0.1:9", api_key="k", args=parse_model_args(["thinking_budget=8192"])
    )
    request = ChatRequest.of([Message("user", "hello")], published.request_sampling("claude-sonnet-4-5", BUDGETS[0]))
    sent = backend.request_parameters(request)
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert sent["max_tokens"] == 3072 + 8192  # the answer's budget on top of the thinking, as for any instrument
