"""The Anthropic provider over the wire: `empathybench run` (in process) against the fake Messages API server.

What is checked is what the server received (headers and exact bodies) and what the run directory recorded.
"""

import asyncio
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.instruments.empathetic.testing import FakeJudge
from empathybench.models.anthropic_backend import (
    SAMPLING_API_VERSION,
    AnthropicBackend,
    sampling_fields,
    sdk_takes_sampling_arguments,
)
from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.testing.fake_anthropic import FakeAnthropicServer, error_body

KEY = "sk-ant-test-4b1d93c7e2"
MODEL = "claude-fake-1"


def cli_env(cache_dir: Path, mirror: Path, base_url: str, *, key: str = KEY) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(
        EMPATHYBENCH_CACHE_DIR=str(cache_dir),
        EMPATHYBENCH_MIRROR=str(mirror),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=key,
    )
    return env


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli_in_process(args, env)


def eqbench_run(out: Path, limit: int, *extra: str) -> list[str]:
    return ["run", "--model", f"anthropic/{MODEL}", "--bench", "eqbench", "--limit", str(limit), "--out", str(out)]


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()]


def post(server: FakeAnthropicServer, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{server.base_url}/v1/messages", json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_fake_server_behaves_as_the_messages_api() -> None:
    """The fake refuses what the API refuses, so a backend that passes against it sends what the API takes."""
    body = {"model": MODEL, "max_tokens": 20, "messages": [{"role": "user", "content": "Joy: <score>"}]}
    v2023 = {"anthropic-version": "2023-06-01", "x-api-key": KEY}
    with FakeAnthropicServer(api_key=KEY) as server:
        status, ok = post(server, {**body, "temperature": 0.0}, v2023)
        assert status == 200 and ok["type"] == "message" and ok["role"] == "assistant"
        assert ok["content"] == [{"type": "text", "text": "Joy: 5"}] and ok["stop_reason"] == "end_turn"
        assert ok["stop_sequence"] is None and {"input_tokens", "output_tokens"} <= ok["usage"].keys()
        v2026 = {"anthropic-version": "2026-10-21", "Authorization": f"Bearer {KEY}"}
        assert post(server, body, v2026)[0] == 200
        status, error = post(server, {**body, "temperature": 1.0}, v2026)
        assert status == 400 and error["type"] == "error"
        assert error["error"] == {
            "type": "invalid_request_error",
            "message": "temperature: Extra inputs are not permitted",
        }
        assert post(server, body, {"x-api-key": KEY})[0] == 400  # no anthropic-version
        wrong_key = {"anthropic-version": "2023-06-01", "x-api-key": "wrong-key"}
        assert post(server, body, wrong_key)[1]["error"]["type"] == "authentication_error"
        server.script_faults("529", "429")
        assert post(server, body, v2023) == (529, error_body(529, "Overloaded", 6))
        assert post(server, body, v2023)[1]["error"]["type"] == "rate_limit_error"
        assert [r.outcome for r in server.requests] == ["ok", "ok", "400", "400", "401", "529", "429"]


def test_the_installed_sdk_decides_how_sampling_is_sent() -> None:
    import anthropic

    def old_create(*, model: str, messages: Any, max_tokens: int, temperature: float, top_p: float, top_k: int) -> None:
        return None

    assert sdk_takes_sampling_arguments(old_create)
    assert not sdk_takes_sampling_arguments(lambda *, model, messages, max_tokens: None)
    # Whatever the installed SDK is, the backend's choice follows its real signature.
    real = "temperature" in __import__("inspect").signature(anthropic.resources.AsyncMessages.create).parameters
    assert sdk_takes_sampling_arguments(anthropic.resources.AsyncMessages.create) is real
    assert sampling_fields(Sampling(temperature=0.3, max_tokens=5)) == {"temperature": 0.3}
    assert sampling_fields(Sampling(temperature=0.3, max_tokens=5, top_p=0.9, top_k=40)) == {
        "temperature": 0.3,
        "top_p": 0.9,
        "top_k": 40,
    }


def test_backend_sends_the_intended_body_and_headers() -> None:
    sampling = Sampling(temperature=0.2, max_tokens=40, top_p=0.8, top_k=20, stop=("\n\n",), seed=5, min_p=0.1)
    messages = (Message("system", "Be brief."), Message("user", "Joy: <score>"))

    async def ask(backend: AnthropicBackend) -> str:
        try:
            return (await backend.complete(ChatRequest(messages, sampling))).text
        finally:
            await backend.aclose()

    with FakeAnthropicServer(api_key=KEY) as server:
        text = asyncio.run(ask(AnthropicBackend(MODEL, base_url=server.base_url, api_key=KEY)))
        [seen] = server.requests
    assert text == "Joy: 5"
    assert seen.path == "/v1/messages" and seen.outcome == "ok"
    assert seen.body == {
        "model": MODEL,
        # The system prompt is the shared prefix: marked for Anthropic's prompt cache, its text unchanged.
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "Joy: <score>"}],
        "max_tokens": 40,
        "temperature": 0.2,
        "top_p": 0.8,
        "top_k": 20,
        "stop_sequences": ["\n\n"],
    }
    if not sdk_takes_sampling_arguments(__import__("anthropic").resources.AsyncMessages.create):
        assert seen.api_version == SAMPLING_API_VERSION
    assert KEY in (seen.x_api_key, (seen.authorization or "").removeprefix("Bearer "))


@pytest.mark.parametrize(
    ("options", "temperature", "top_p", "stop"),
    [
        (["--option", "eqbench.system_prompt=Answer with the scores only."], 0.01, 1.0, None),
        # lm-eval's request has no top_p at all (recorded as None: not sent)
        (["--option", "eqbench.protocol=lm-eval"], 0.0, None, ["\n\n"]),
    ],
)
def test_eqbench_run_over_the_wire(
    options: list[str], temperature: float, top_p: float | None, stop: list[str] | None, tmp_path: Path, mirror: Path
) -> None:
    run_dir = tmp_path / "run"
    with FakeAnthropicServer(api_key=KEY) as server:
        result = cli([*eqbench_run(run_dir, 4), *options, "--quiet"], cli_env(tmp_path / "c", mirror, server.base_url))
        requests, base_url = server.requests, server.base_url
    assert result.returncode == 0, result.stderr
    assert [r.outcome for r in requests] == ["ok"] * 4

    records = read_records(run_dir)
    assert len(records) == 4 and all(r["status"] == "ok" and r["parse_error"] is None for r in records)
    sent = Counter(json.dumps(r.body, sort_keys=True) for r in requests)
    expected: Counter[str] = Counter()
    for record in records:
        [call] = record["calls"]
        assert call["sampling"]["temperature"] == temperature and call["sampling"]["top_p"] == top_p
        system = [m["content"] for m in call["messages"] if m["role"] == "system"]
        body: dict[str, Any] = {
            "model": MODEL,
            "messages": [m for m in call["messages"] if m["role"] != "system"],
            "max_tokens": call["sampling"]["max_tokens"],
            "temperature": temperature,  # and no top_p: 1.0 does not narrow; no seed: the API has none
        }
        if system:  # the shared instructions, marked for Anthropic's prompt cache (text unchanged)
            body["system"] = [{"type": "text", "text": "\n\n".join(system), "cache_control": {"type": "ephemeral"}}]
        if stop:
            body["stop_sequences"] = stop
        expected[json.dumps(body, sort_keys=True)] += 1
    assert sent == expected
    assert all(r.api_version in ("2023-06-01", "2026-10-21") for r in requests)
    if options[1].startswith("eqbench.system_prompt"):
        assert all(r.body["system"][0]["text"] == "Answer with the scores only." for r in requests)

    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    assert summary["benchmarks"]["eqbench"]["n_parsed"] == 4
    assert summary["usage"]["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in records) > 0
    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["model"]["provider"] == "anthropic" and run_info["model"]["base_url"] == base_url
    assert run_info["model"]["api_version"] == requests[0].api_version


def test_429_with_retry_after_and_529_are_retried(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeAnthropicServer(api_key=KEY, retry_after="1") as server:
        server.script_faults("429", "529", "500")
        args = [*eqbench_run(run_dir, 2), "--max-concurrency", "1", "--quiet"]
        result = cli(args, cli_env(tmp_path / "c", mirror, server.base_url))
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert [r.outcome for r in requests] == ["429", "529", "500", "ok", "ok"]
    assert requests[1].arrived - requests[0].arrived >= 0.95  # retry-after: 1 was honoured
    assert requests[3].body == requests[0].body  # the same request, asked again
    usage = json.loads((run_dir / "summary.json").read_text("utf-8"))["usage"]
    assert usage["retries"] == 3 and usage["retries_by_kind"] == {"rate_limited": 1, "server_error": 2}
    assert all(r["status"] == "ok" for r in read_records(run_dir))


def test_wrong_key_is_one_line_and_a_failing_exit(tmp_path: Path, mirror: Path) -> None:
    with FakeAnthropicServer(api_key=KEY) as server:
        env = cli_env(tmp_path / "c", mirror, server.base_url, key="sk-ant-wrong-key-77")
        result = cli([*eqbench_run(tmp_path / "run", 3), "--quiet"], env)
        base_url = server.base_url
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0] == f"error: {base_url} refused the API key (HTTP 401); check ANTHROPIC_API_KEY"
    assert "sk-ant-wrong-key-77" not in result.stdout + result.stderr


def test_a_400_is_recorded_on_its_item_and_not_retried(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeAnthropicServer(api_key=KEY) as server:
        server.script_faults("400")
        args = [*eqbench_run(run_dir, 3), "--max-concurrency", "1", "--quiet"]
        result = cli(args, cli_env(tmp_path / "c", mirror, server.base_url))
        requests = server.requests
    assert result.returncode == 1
    assert [r.outcome for r in requests] == ["400", "ok", "ok"]
    records = read_records(run_dir)
    [failed] = [r for r in records if r["status"] == "error"]
    assert "HTTP 400" in failed["error"] and "invalid_request_error" in failed["error"]
    assert "Traceback" not in result.stderr and "could not be answered" in result.stderr


def test_anthropic_as_judge_of_the_empathetic_benchmark(tmp_path: Path, mirror: Path) -> None:
    judge = FakeJudge(unreadable_first_every=3)
    run_dir = tmp_path / "run"
    with FakeAnthropicServer(api_key=KEY, answer=judge) as server:
        args = ["run", "--model", "scripted/echo", "--judge", f"anthropic/{MODEL}", "--bench", "empathetic"]
        result = cli(
            [*args, "--limit", "4", "--out", str(run_dir), "--quiet"], cli_env(tmp_path / "c", mirror, server.base_url)
        )
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert judge.judge_models() == {MODEL} and judge.generation_models == []
    records = read_records(run_dir)
    judge_calls = [call for record in records for call in record["calls"] if call.get("role") == "judge"]
    assert len(requests) == len(judge_calls) == len(judge.judge_requests) >= 8  # model and human reply per item
    for request in requests:
        assert request.outcome == "ok" and request.body["temperature"] == 0.0 and "top_p" not in request.body
        assert request.body["messages"][0]["role"] == "user"
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["empathetic"]
    assert summary["judge"]["identity"]["provider"] == "anthropic" and summary["judge"]["self_judging"] is False
    assert summary["status"] == "complete"


def test_judge_validate_with_an_anthropic_judge(tmp_path: Path, mirror: Path) -> None:
    judge = FakeJudge(unreadable_first_every=4)
    out = tmp_path / "validation.json"
    with FakeAnthropicServer(api_key=KEY, answer=judge) as server:
        args = ["judge", "validate", "--judge", f"anthropic/{MODEL}", "--limit", "6", "--json", "--out", str(out)]
        result = cli(args, cli_env(tmp_path / "c", mirror, server.base_url))
        requests = server.requests
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text("utf-8"))
    assert report["judge"]["provider"] == "anthropic" and report["judge"]["model"] == MODEL
    assert report["n_cases"] == 6 and report["n_failed_calls"] == 0
    assert report["usage"]["calls"] == len(requests) == len(judge.judge_requests) >= 6
    assert all(r.outcome == "ok" and r.body["temperature"] == 0.0 for r in requests)
