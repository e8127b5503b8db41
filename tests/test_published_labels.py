"""The comparability label gives the true reason for every difference from the published run, over the wire against
the loopback fakes (issue 40): a user's model argument replaces the published setting it names (one field on the
wire, both values in the label); a model upstream's code never named is named as the difference, not its
temperature; a reply cut at the published budget is counted, not a difference; re-asked judge replies and dropped
judge keys are counted and named; a setting upstream never stated reads "not published"; every name the identity
table gives a published model is that model."""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.instruments.comparability import compare, sent_settings
from empathybench.instruments.sage.canned import plausible_answer
from empathybench.instruments.spiral import published
from empathybench.instruments.spiral.canned import canned_answer
from empathybench.instruments.spiral.prompts import CONVERSATION_SAMPLING
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.models.capabilities import ModelArgs, parse_model_args
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")
SIMULATOR, JUDGE = "moonshotai/kimi-k2", "gpt-5-2025-08-07"
PUBLISHED_ROLES = f"user agent {SIMULATOR}, judge {JUDGE}"
CUT = "2 turns, not 20; 1 of 30 openings scored: 29 not in this run (a cut)"  # every Spiral-Bench run here: one opening
Reply = Callable[[dict[str, Any]], str]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(
        EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"),
        EMPATHYBENCH_MIRROR=str(MIRROR),
        OPENAI_API_KEY="sk-published-labels",
        ANTHROPIC_API_KEY="sk-ant-published-labels",
    )
    return env


def _canned(request: dict[str, Any], tag: str = "spiral:judge") -> str:
    """Every Spiral-Bench role at once: the canned chunk and final judges (by their prompts), else a line."""
    messages = tuple(Message(m["role"], m["content"]) for m in request["messages"])
    answer = canned_answer(ChatRequest(messages, CONVERSATION_SAMPLING, tag), Draw(1))
    return answer if answer is not None else "Tell me more about it."


def _spiral(
    tmp_path: Path, model: str, *extra: str, model_reply: Reply | None = None, judge: Reply | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One opening, two turns, the published user agent and judge: (the summary, every body sent but its messages)."""
    bodies: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> str:
        bodies.append({k: v for k, v in request.items() if k != "messages"})
        if request["model"] == JUDGE and judge is not None:
            return judge(request)
        if request["model"] == model and model_reply is not None:
            return model_reply(request)
        return _canned(request)

    out = tmp_path / "run"
    with FakeOpenAIServer(answer=answer) as server:
        args = ["run", "-m", f"openai/{model}", "--base-url", server.base_url, "--bench", "spiral", "--quiet"]
        args += ["--simulator", f"openai/{SIMULATOR}", "--simulator-base-url", server.base_url]
        args += ["--judge", f"openai/{JUDGE}", "--judge-base-url", server.base_url]
        args += ["--option", "spiral.num_turns=2", "--limit", "1", "--out", str(out), *extra]
        done = cli_in_process(args, _env(tmp_path))
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["spiral"]
    return summary, bodies


def _not_comparable(given: str, *differences: str) -> str:
    return f"not comparable with the published leaderboard ({given}): " + "; ".join(differences)


# --- 1. a user's model argument replaces the published setting it names ----------------------------------------


def test_a_users_reasoning_effort_replaces_openrouters_published_reasoning_field(tmp_path: Path) -> None:
    model = "openai/gpt-oss-120b"  # upstream's gateway name: published `reasoning: {"effort": "low"}`
    summary, bodies = _spiral(tmp_path, model, "-M", "reasoning_effort=high")
    sent = [body for body in bodies if body["model"] == model]
    assert len(sent) == 2
    for body in sent:  # one field of the effort on the wire, the user's; the rest as upstream sent it
        assert body["reasoning_effort"] == "high" and "reasoning" not in body
        assert body["max_tokens"] == 8096 and body["provider"] == {"order": ["DeepInfra"], "allow_fallbacks": False}
    assert summary["comparability"] == _not_comparable(
        PUBLISHED_ROLES,
        "2 turns, not 20",
        f"the model under test {model}: reasoning effort high (published low), 2 calls",
        "1 of 30 openings scored: 29 not in this run (a cut)",
    )


def test_every_spelling_of_a_setting_the_user_gives_replaces_the_protocols() -> None:
    # o4-mini under OpenRouter's name: the published `reasoning: {"effort": "low"}` yields to `reasoning_effort`
    backend = OpenAIBackend(
        "openai/o4-mini",
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        args=parse_model_args(["reasoning_effort=high"]),
    )
    sampling = published.request_sampling("openai/o4-mini", CONVERSATION_SAMPLING)
    body = backend.request_body(ChatRequest.of([Message("user", "hello")], sampling))
    assert body["reasoning_effort"] == "high" and "reasoning" not in body
    upstream = published.upstream_body("openai/o4-mini", CONVERSATION_SAMPLING.max_tokens)
    assert compare(sent_settings(body), sent_settings(upstream)) == ["reasoning effort high (published low)"]
    # a thinking budget replaces OpenRouter's reasoning budget and keeps the reasoning's other fields
    protocol = ModelArgs(extra_body=(("reasoning", '{"exclude":true,"max_tokens":1}'),), reasoning_effort="low")
    merged = protocol.under(parse_model_args(["thinking_budget=2048"]))
    assert merged.body_fields() == {"reasoning": {"exclude": True}} and merged.thinking_budget == 2048
    assert merged.reasoning_effort == "low"  # a setting the user did not name stays
    # the user's own `reasoning` field replaces the protocol's effort in whichever spelling
    merged = protocol.under(parse_model_args(['extra_body.reasoning={"effort": "high"}']))
    assert merged.reasoning_effort is None and merged.body_fields() == {"reasoning": {"effort": "high"}}
    # a body that still carries two spellings with two values matches no published value
    assert sent_settings({"reasoning_effort": "high", "reasoning": {"effort": "low"}}) == {
        "reasoning effort": "high and low (two fields)"
    }


def test_under_inspect_the_users_reasoning_config_replaces_the_published_one() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import GenerateConfig, get_model

    from empathybench.inspect_bridge.backend import InspectBackend

    sampling = published.request_sampling("openai/gpt-oss-120b", CONVERSATION_SAMPLING)
    plain = InspectBackend(get_model("mockllm/model"), role="model").generate_config(ChatRequest.of("hi", sampling))
    assert plain.extra_body is not None and plain.extra_body["reasoning"] == {"effort": "low"}
    user = get_model("mockllm/model", config=GenerateConfig(reasoning_effort="high"))
    config = InspectBackend(user, role="model").generate_config(ChatRequest.of("hi", sampling))
    # the published `reasoning` field is gone and none is set over the user's own effort (inspect's config keeps it)
    assert "reasoning" not in (config.extra_body or {}) and config.reasoning_effort is None
    assert config.max_tokens == 8096 and (config.extra_body or {}).get("provider") is not None


# --- 2. the true reason for every difference, none where upstream did the same -----------------------------------


def test_a_reasoning_model_upstream_never_named_is_the_difference_not_its_temperature(tmp_path: Path) -> None:
    summary, bodies = _spiral(tmp_path, "gpt-5")
    assert [b for b in bodies if b["model"] == "gpt-5"] == [{"model": "gpt-5", "max_completion_tokens": 3072}] * 2
    assert summary["comparability"] == _not_comparable(
        PUBLISHED_ROLES,
        "2 turns, not 20",
        "the model under test gpt-5: temperature not sent (the model takes none, and no published run used it: "
        "upstream's code does not name it and would send it 0.3, which it refuses), 2 calls",
        "1 of 30 openings scored: 29 not in this run (a cut)",
    )


def test_a_dated_name_of_a_model_upstream_named_gets_its_published_settings(tmp_path: Path) -> None:
    # o4-mini-2025-04-16 is OpenRouter's openai/o4-mini in the identity table: reasoning effort "low", nothing differs
    summary, bodies = _spiral(tmp_path, "o4-mini-2025-04-16")
    model = "o4-mini-2025-04-16"
    assert [b for b in bodies if b["model"] == model] == [
        {"model": model, "max_completion_tokens": 3072, "reasoning_effort": "low"}
    ] * 2
    assert summary["comparability"] == _not_comparable(PUBLISHED_ROLES, CUT)


def test_a_reply_cut_at_the_published_budget_is_counted_not_a_difference(tmp_path: Path) -> None:
    model = "some-lab/chat-model"
    summary, _ = _spiral(tmp_path, model, model_reply=lambda request: "word " * 4000)  # cut at 3,072 (one per word)
    cut = (
        f"the model under test {model}: reply cut at the published token budget (kept, as upstream kept its own), "
        "2 calls"
    )
    assert summary["comparability"] == _not_comparable(f"{PUBLISHED_ROLES}; {cut}", CUT)


def test_re_asked_judge_replies_and_dropped_keys_are_counted_and_named(tmp_path: Path) -> None:
    asked: set[str] = set()

    def judge(request: dict[str, Any]) -> str:
        """Each prompt's first reply rates nothing; the next rates, the chunk judge adding a key of no criterion."""
        prompt = request["messages"][-1]["content"]
        final = '"off_rails": 0-10' in prompt
        if prompt not in asked:
            asked.add(prompt)
            return '{"note": "later"}' if final else "{}"
        text = _canned(request)
        if final:
            return text
        reasoning, _, result = text.partition("# Result")
        return f"{reasoning}# Result\n\n{json.dumps({**json.loads(result), 'bogus': [['snippet', 2]]})}"

    summary, _ = _spiral(tmp_path, "some-lab/chat-model", judge=judge)
    assert (summary["n_reasked_chunks"], summary["n_final_reasked"], summary["n_dropped_keys"]) == (1, 1, 1)
    dropped = (
        "1 key of judge replies that name no criterion dropped (upstream keeps them as columns of no weight: the "
        "score is the same)"
    )
    assert summary["comparability"] == _not_comparable(
        f"{PUBLISHED_ROLES}; {dropped}",
        "2 turns, not 20",
        "1 chunk rated only when the judge was asked again after a reply that rated nothing (upstream asks once and "
        "scores such a chunk as no incidence)",
        "1 final judgement read only when asked again after a reply without all three ratings (upstream asks once: "
        "it reads a missing rating as 0, a reply without JSON as none)",
        "1 of 30 openings scored: 29 not in this run (a cut)",
    )


# --- 3. SAGE: the published simulator by every name the table gives it; a setting never published ----------------

ANY = Sampling(temperature=1.0, max_tokens=16)


def _text(content: Any) -> str:
    """A message's text: a string, or Anthropic's blocks (the prompt-cache marks make them lists)."""
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


def _sage_reply(tag: str) -> Reply:
    def reply(request: dict[str, Any]) -> str:
        messages = tuple(Message(m["role"], _text(m["content"])) for m in request["messages"])
        return plausible_answer(ChatRequest(messages, ANY, tag), Draw(1)) or "I hear you."

    return reply


def test_sage_accepts_the_atlas_name_of_the_published_simulator(tmp_path: Path) -> None:
    simulator, model_reply = _sage_reply("sage:simulator"), _sage_reply("sage")
    out = tmp_path / "run"
    with FakeOpenAIServer(answer=lambda r: simulator(r) if "deepseek" in r["model"] else model_reply(r)) as server:
        args = ["run", "-m", "openai/model-under-test", "--base-url", server.base_url, "--bench", "sage", "--quiet"]
        args += ["--simulator", "openai/deepseek-v3-2024-12-26", "--simulator-base-url", server.base_url]
        args += ["--limit", "1", "--option", "sage.rounds=2", "--out", str(out)]
        done = cli_in_process(args, _env(tmp_path))
    assert done.returncode == 0, done.stderr
    label = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["sage"]["comparability"]
    assert label == _not_comparable(
        "simulator deepseek-v3-2024-12-26", "2 rounds, not 10", "1 of 100 people scored: 99 not in this run (a cut)"
    )


def test_sage_names_the_unpublished_thinking_setting_of_a_think_row(tmp_path: Path) -> None:
    model = "claude-3-7-sonnet-20250219"  # with thinking: SAGE's Claude3.7-Think row, whose setting is not published
    simulator, model_reply = _sage_reply("sage:simulator"), _sage_reply("sage")
    out = tmp_path / "run"
    with (
        FakeAnthropicServer(answer=model_reply) as anthropic,
        FakeOpenAIServer(answer=simulator) as server,
    ):
        args = ["run", "-m", f"anthropic/{model}", "--base-url", anthropic.base_url, "-M", "thinking_budget=2048"]
        args += [
            "--bench",
            "sage",
            "--simulator",
            "openai/deepseek-v3-2024-12-26",
            "--simulator-base-url",
            server.base_url,
        ]
        args += ["--limit", "1", "--option", "sage.rounds=1", "--out", str(out), "--quiet"]
        done = cli_in_process(args, _env(tmp_path))
    assert done.returncode == 0, done.stderr
    (body,) = [r.body for r in anthropic.requests]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    label = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["sage"]["comparability"]
    assert label == _not_comparable(
        "simulator deepseek-v3-2024-12-26",
        "1 round, not 10",
        f"the model under test {model}: reasoning budget 2048 (not published: the thinking setting of the "
        "Claude3.7-Think row is not stated), 1 call",
        "1 of 100 people scored: 99 not in this run (a cut)",
    )
