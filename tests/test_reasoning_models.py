"""Reasoning models over the wire: model arguments, the capability table, reasoning kept apart, truncated answers.

`empathybench run` runs (in process) against the loopback fakes, which refuse what the real APIs refuse
(OpenAI's reasoning-model parameter rules, Anthropic's thinking rules), so a passing run sent what the APIs take.
"""

import json
import os
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.errors import ModelConfigError
from empathybench.instruments.empathetic.judge import JUDGE_MAX_TOKENS
from empathybench.instruments.empathetic.testing import FakeJudge
from empathybench.models.capabilities import (
    DEFAULT_REASONING_ALLOWANCE,
    lookup_capabilities,
    parse_model_args,
    resolve_capabilities,
    split_think_tags,
)
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

ANTHROPIC_KEY = "sk-ant-test-reasoning-77"


class Recorder:
    """An answer function that keeps every request body the fake server received."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> str:
        with self._lock:
            self.bodies.append(json.loads(json.dumps(request)))
        return fill_score_lines(request)


def cli_env(cache_dir: Path, mirror: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror), **extra)
    return env


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli_in_process(args, env)


def eqbench(model: str, out: Path, limit: int, *extra: str) -> list[str]:
    return ["run", "--model", model, "--bench", "eqbench", "--limit", str(limit), "--out", str(out), "--quiet", *extra]


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]


def post_json(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


# --- the table and the arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model", "reasoning", "sampling", "token_field"),
    [
        ("openai", "o4-mini", True, False, "max_completion_tokens"),
        ("openai", "o1", True, False, "max_completion_tokens"),
        ("openai", "gpt-5-mini", True, False, "max_completion_tokens"),
        ("openai", "gpt-5-chat-latest", False, True, "max_tokens"),
        ("openai", "gpt-4o-mini", False, True, "max_tokens"),
        ("openai", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", True, True, "max_tokens"),
        ("openai", "Qwen/Qwen3-8B", True, True, "max_tokens"),
        ("anthropic", "claude-sonnet-4-5", False, True, "max_tokens"),
    ],
)
def test_capability_table(provider: str, model: str, reasoning: bool, sampling: bool, token_field: str) -> None:
    caps = lookup_capabilities(provider, model)
    assert (caps.reasoning, caps.sampling, caps.token_field) == (reasoning, sampling, token_field)


def test_model_arguments_override_the_table_and_are_checked() -> None:
    declared = resolve_capabilities("openai", "my-gateway-alias", parse_model_args(["reasoning=true"]))
    assert declared.reasoning and declared.sampling
    undeclared = resolve_capabilities("openai", "o3", parse_model_args(["reasoning=false", "sampling=true"]))
    assert not undeclared.reasoning and undeclared.sampling
    thinking = resolve_capabilities("anthropic", "claude-opus-4-1", parse_model_args(["thinking_budget=2048"]))
    assert thinking.reasoning and thinking.thinking
    for pairs, fragment in [
        (["reasoning_effort=extreme"], "choose one of"),
        (["max_tokens=lots"], "whole number"),
        (["max_tokens=0"], "between"),
        (["colour=blue"], "unknown key"),
        (["reasoning"], "not KEY=VALUE"),
        (["max_tokens=5", "max_tokens=6"], "twice"),
    ]:
        with pytest.raises(ModelConfigError, match=fragment):
            parse_model_args(pairs)
    with pytest.raises(ModelConfigError, match="at least 1024"):
        resolve_capabilities("anthropic", "claude-sonnet-4", parse_model_args(["thinking_budget=500"]))
    with pytest.raises(ModelConfigError, match="must exceed the thinking budget"):
        resolve_capabilities(
            "anthropic", "claude-sonnet-4", parse_model_args(["thinking_budget=2048", "max_tokens=2000"])
        )
    with pytest.raises(ModelConfigError, match="reasoning=true"):
        resolve_capabilities("openai", "gpt-4o", parse_model_args(["reasoning_effort=low"]))


def test_think_tags_are_split_from_the_answer() -> None:
    assert split_think_tags("<think>\nhmm: 0\n</think>\n\nJoy: 5") == ("Joy: 5", "hmm: 0", False)
    assert split_think_tags("hmm: 0\n</think>\nJoy: 5") == ("Joy: 5", "hmm: 0", False)  # opening tag in the prompt
    assert split_think_tags("<think>\nstill thinking") == ("", "still thinking", True)
    assert split_think_tags("Joy: 5") == ("Joy: 5", None, False)


def test_bad_model_arguments_are_one_line_before_any_call(tmp_path: Path, mirror: Path) -> None:
    with FakeOpenAIServer() as server:
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        bad_effort = cli(eqbench("openai/o4-mini", tmp_path / "a", 1, "-M", "reasoning_effort=extreme"), env)
        lonely_judge_arg = cli(eqbench("openai/o4-mini", tmp_path / "b", 1, "--judge-arg", "max_tokens=9"), env)
        asked = server.requests_total
    for result, fragment in [(bad_effort, "reasoning_effort=extreme"), (lonely_judge_arg, "--judge-arg needs")]:
        assert result.returncode == 2
        assert fragment in result.stderr and "Traceback" not in result.stderr
    assert asked == 0


# --- the fakes behave as the APIs ----------------------------------------------------------------------------


def test_fake_openai_refuses_what_reasoning_models_refuse() -> None:
    with FakeOpenAIServer() as server:
        url = f"{server.base_url}/chat/completions"
        messages = [{"role": "user", "content": "Joy: <score>"}]
        status, body = post_json(url, {"model": "o4-mini", "messages": messages, "max_tokens": 50}, {})
        assert status == 400 and body["error"]["param"] == "max_tokens"
        assert body["error"]["code"] == "unsupported_parameter"
        status, body = post_json(url, {"model": "gpt-5", "messages": messages, "temperature": 0.0}, {})
        assert status == 400 and body["error"]["param"] == "temperature"
        status, body = post_json(url, {"model": "o3", "messages": messages, "max_completion_tokens": 500}, {})
        assert status == 200 and body["choices"][0]["message"]["content"] == "Joy: 5"
        assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0
        # The thinking used the whole budget: no answer, finish_reason "length".
        status, body = post_json(url, {"model": "o3", "messages": messages, "max_completion_tokens": 3}, {})
        assert status == 200 and body["choices"][0]["finish_reason"] == "length"
        assert body["choices"][0]["message"]["content"] == ""
        # A non-reasoning model takes temperature and max_tokens.
        status, _ = post_json(url, {"model": "gpt-4o", "messages": messages, "temperature": 0, "max_tokens": 9}, {})
        assert status == 200


def test_fake_anthropic_refuses_temperature_with_thinking() -> None:
    headers = {"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"}
    base = {"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "Joy: <score>"}]}
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with FakeAnthropicServer(api_key=ANTHROPIC_KEY) as server:
        url = f"{server.base_url}/v1/messages"
        status, body = post_json(url, {**base, "max_tokens": 2000, "thinking": thinking, "temperature": 0.0}, headers)
        assert status == 400 and "temperature" in body["error"]["message"]
        status, body = post_json(url, {**base, "max_tokens": 1024, "thinking": thinking}, headers)
        assert status == 400 and "max_tokens" in body["error"]["message"]
        status, body = post_json(url, {**base, "max_tokens": 2000, "thinking": thinking}, headers)
        assert status == 200
        assert [block["type"] for block in body["content"]] == ["thinking", "text"]
        assert body["content"][1]["text"] == "Joy: 5"


# --- real runs -----------------------------------------------------------------------------------------------


def test_o_series_run_sends_what_the_api_takes(tmp_path: Path, mirror: Path) -> None:
    recorder = Recorder()
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=recorder) as server:
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        result = cli(eqbench("openai/o4-mini", run_dir, 3, "-M", "reasoning_effort=low"), env)
        outcomes = dict(server.outcomes)
    assert result.returncode == 0, result.stderr
    assert outcomes == {"ok": 3}
    records = read_records(run_dir)
    assert all(r["parse_error"] is None for r in records)
    for body in recorder.bodies:
        assert "temperature" not in body and "top_p" not in body and "max_tokens" not in body
        assert body["reasoning_effort"] == "low"
    for record in records:
        [call] = record["calls"]
        # The instrument's answer budget plus room to think, under the field the API takes.
        assert call["sent"]["max_completion_tokens"] == call["sampling"]["max_tokens"] + DEFAULT_REASONING_ALLOWANCE
        assert call["sent"]["reasoning_effort"] == "low" and "temperature" not in call["sent"]
    assert sorted(json.dumps(b["max_completion_tokens"]) for b in recorder.bodies) == sorted(
        json.dumps(r["calls"][0]["sent"]["max_completion_tokens"]) for r in records
    )
    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["model"]["model_args"] == {"reasoning_effort": "low"}


def test_without_the_table_the_same_run_is_refused(tmp_path: Path, mirror: Path) -> None:
    """The control: sending temperature and max_tokens to o4-mini (table overridden) gets the API's 400s."""
    run_dir = tmp_path / "run"
    with FakeOpenAIServer() as server:
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        args = ["-M", "reasoning=false", "-M", "sampling=true", "-M", "token_field=max_tokens"]
        result = cli(eqbench("openai/o4-mini", run_dir, 2, *args), env)
        outcomes = dict(server.outcomes)
    assert result.returncode != 0
    assert outcomes == {"400": 2}
    assert all(r["status"] != "ok" and "max_tokens" in json.dumps(r) for r in read_records(run_dir))


@pytest.mark.parametrize("mode", ["reasoning_content", "think"])
def test_reasoning_is_stored_apart_and_never_parsed(mode: str, tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(reasoning=mode) as server:
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        result = cli(eqbench("openai/qwen3-8b", run_dir, 3), env)
    assert result.returncode == 0, result.stderr
    records = read_records(run_dir)
    for record in records:
        [call] = record["calls"]
        # The thinking holds decoy scores of 0; the answer scores of 5: only the answer was parsed.
        assert ": 0" in call["reasoning"] and "<think>" not in call["reply"] and ": 0" not in call["reply"]
        assert set(record["parsed"]["first_pass"].values()) == {5}
        assert not call.get("truncated")
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["eqbench"]
    assert summary["n_parsed"] == 3 and summary["n_truncated_calls"] == 0
    html = (run_dir / "report.html").read_text("utf-8")
    assert html.count("<summary>reasoning</summary>") == 3  # folded, one per item's last call


@pytest.mark.parametrize("mode", ["reasoning_content", "think"])
def test_an_answer_lost_to_thinking_is_counted_truncated(mode: str, tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(reasoning=mode) as server:
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        result = cli(eqbench("openai/qwen3-8b", run_dir, 2, "-M", "max_tokens=4"), env)
    assert result.returncode == 1 and "eqbench: no item could be scored" in result.stderr, result.stderr
    records = read_records(run_dir)
    calls = [call for record in records for call in record["calls"]]
    assert calls and all(call["truncated"] and call["reply"] == "" and call["reasoning"] for call in calls)
    assert all(call["sent"]["max_tokens"] == 4 for call in calls)
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    bench = summary["benchmarks"]["eqbench"]
    assert bench["n_parsed"] == 0 and bench["n_truncated_calls"] == len(calls)
    assert summary["usage"]["truncated"] == len(calls)
    assert f"({len(calls)} = 100.0% of calls truncated)" in result.stdout  # the truncated rate beside the parse rate
    # `-M max_tokens=4` fixes the budget sent: a re-ask with a larger budget would send the same request.
    assert bench["n_truncated_reasks"] == 0 and bench["n_truncated_unanswered"] == len(calls)
    # The reason the benchmark has no figure says why nothing parsed, in every report.
    assert f"{len(calls)} of {len(calls)} answers truncated" in " ".join(bench["validity"]["reasons"])
    assert f"{len(calls)} of {len(calls)} answers truncated" in (run_dir / "report.html").read_text("utf-8")


def test_null_content_at_the_length_limit_is_truncated(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeOpenAIServer() as server:
        server.script_faults("null_length")
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        result = cli(eqbench("openai/fake", run_dir, 2, "-O", "eqbench.revise=false"), env)
    assert result.returncode == 0, result.stderr
    calls = [call for record in read_records(run_dir) for call in record["calls"]]
    assert sum(1 for call in calls if call.get("truncated")) == 1
    assert json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["eqbench"]["n_truncated_calls"] == 1


def test_claude_extended_thinking_run(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeAnthropicServer(api_key=ANTHROPIC_KEY) as server:
        env = cli_env(tmp_path / "c", mirror, ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
        result = cli(eqbench("anthropic/claude-sonnet-4-5", run_dir, 3, "-M", "thinking_budget=2048"), env)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert [r.outcome for r in requests] == ["ok"] * 3
    for request in requests:
        assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert "temperature" not in request.body and request.body["max_tokens"] > 2048
    for record in read_records(run_dir):
        [call] = record["calls"]
        assert call["sent"]["max_tokens"] == call["sampling"]["max_tokens"] + 2048
        assert ": 0" in call["reasoning"] and ": 0" not in call["reply"]
        assert set(record["parsed"]["first_pass"].values()) == {5}


@pytest.mark.parametrize("judge_option", [[], ["-O", "empathetic.judge_max_tokens=40"]])
def test_a_reasoning_judge_gets_room_to_think(judge_option: list[str], tmp_path: Path, mirror: Path) -> None:
    """The judge's one-word answer budget plus the thinking allowance, sent as the o-series takes it."""
    judge = FakeJudge()
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=judge) as server:
        env = cli_env(tmp_path / "c", mirror, OPENAI_BASE_URL=server.base_url)
        args = ["run", "--model", "scripted/echo", "--judge", "openai/o4-mini", "--bench", "empathetic"]
        args += ["--judge-arg", "reasoning_effort=medium", "--limit", "2", "--out", str(run_dir), "--quiet"]
        result = cli([*args, *judge_option], env)
        outcomes = dict(server.outcomes)
    assert result.returncode == 0, result.stderr
    assert set(outcomes) == {"ok"}
    answer_budget = 40 if judge_option else JUDGE_MAX_TOKENS
    judge_calls = [c for r in read_records(run_dir) for c in r["calls"] if c.get("role") == "judge"]
    assert len(judge_calls) >= 4
    for call in judge_calls:
        assert call["sampling"]["max_tokens"] == answer_budget
        assert call["sent"]["max_completion_tokens"] == answer_budget + DEFAULT_REASONING_ALLOWANCE
        assert call["sent"]["reasoning_effort"] == "medium" and "temperature" not in call["sent"]
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["empathetic"]
    assert summary["status"] == "complete"


def test_judge_validate_with_a_thinking_claude_judge(tmp_path: Path, mirror: Path) -> None:
    judge = FakeJudge()
    out = tmp_path / "validation.json"
    with FakeAnthropicServer(api_key=ANTHROPIC_KEY, answer=judge) as server:
        env = cli_env(tmp_path / "c", mirror, ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
        base = [
            "judge",
            "validate",
            "--judge",
            "anthropic/claude-sonnet-4",
            "--limit",
            "4",
            "--json",
            "--out",
            str(out),
        ]
        refused = cli([*base, "--judge-arg", "thinking_budget=10"], env)
        asked_before = server.requests_total
        result = cli([*base, "--judge-arg", "thinking_budget=1024"], env)
        requests = server.requests
    assert refused.returncode == 2 and "--judge-arg thinking_budget=10" in refused.stderr and asked_before == 0
    assert result.returncode == 0, result.stderr
    assert len(requests) >= 4 and all(r.outcome == "ok" for r in requests)
    for request in requests:
        assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
        assert request.body["max_tokens"] == JUDGE_MAX_TOKENS + 1024 and "temperature" not in request.body
    report = json.loads(out.read_text("utf-8"))
    assert report["n_failed_calls"] == 0 and report["judge"]["model_args"] == {"thinking_budget": 1024}
