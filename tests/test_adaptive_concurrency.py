"""Adaptive concurrency (AIMD): the limit against a server that refuses above N in flight.

The rules are checked on `AdaptiveLimit` directly; the behaviour end to end through the real OpenAI backend
against the fake server's capacity mode, and through the CLI into run.json.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import run_in_process
from empathybench.engine.engine import AdaptiveLimit, Engine, RetryPolicy, is_overload
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import Sampling, TransientBackendError
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer

TEST_KEY = "sk-test-secret-aimd"
SAMPLING = Sampling(temperature=0.0, max_tokens=60, seed=1)


def prompt(index: int) -> str:
    return f"Item {index}. Rate the emotion.\nJoy: <score>"


class _StatusError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


def _failure(kind: str, status: int | None) -> TransientBackendError:
    failure = TransientBackendError(kind, "test")
    if status is not None:
        failure.__cause__ = _StatusError(status)
    return failure


def test_overload_means_429_503_529_only() -> None:
    assert is_overload(_failure("rate_limited", 429))
    assert is_overload(_failure("server_error", 503))
    assert is_overload(_failure("server_error", 529))
    assert not is_overload(_failure("server_error", 500))
    assert not is_overload(_failure("server_error", None))
    assert not is_overload(_failure("timeout", None))
    assert not is_overload(_failure("connection", None))


def test_limit_halves_once_per_congestion_and_grows_by_one_per_window() -> None:
    async def scenario() -> list[int]:
        limit = AdaptiveLimit(16, initial=16)

        async def steady(successes: int) -> None:
            """Keep the limit full (calls waiting for it) while `successes` calls return fine."""
            held = [await limit.acquire() for _ in range(limit.limit)]
            for _ in range(successes):
                limit.release(held.pop(0), "ok")
                held.append(await limit.acquire())
            for token in held:
                limit.release(token, "other")

        seen = [limit.limit]
        held = [await limit.acquire() for _ in range(16)]
        limit.release(held.pop(), "overload")  # sent at 16: halve
        seen.append(limit.limit)
        limit.release(held.pop(), "overload")  # sent before that decrease: the same congestion, no second halving
        seen.append(limit.limit)
        for token in held:
            limit.release(token, "other")  # a failure that says nothing about load changes nothing
        seen.append(limit.limit)
        token = await limit.acquire()  # sent at 8 and refused: halve again
        limit.release(token, "overload")
        seen.append(limit.limit)
        await steady(3)  # fewer successes than the limit: no change yet
        seen.append(limit.limit)
        for _ in range(3):
            await steady(limit.limit)  # a window of successes at the limit: one more slot
            seen.append(limit.limit)
        record = limit.as_dict()
        assert (record["min"], record["max"], record["final"]) == (4, 16, 7)
        assert (record["decreases"], record["increases"], record["overload_answers"]) == (2, 3, 3)
        assert [entry["cause"] for entry in record["course"]] == ["start", "overload", "overload"] + ["success"] * 3
        assert [entry["limit"] for entry in record["course"]] == [16, 8, 4, 5, 6, 7]
        assert limit.in_flight == 0
        return seen

    assert asyncio.run(scenario()) == [16, 8, 8, 8, 4, 4, 5, 6, 7]


def test_limit_never_drops_below_one() -> None:
    async def scenario() -> int:
        limit = AdaptiveLimit(2, initial=2)
        for _ in range(4):
            token = await limit.acquire()
            limit.release(token, "overload")
        return limit.limit

    assert asyncio.run(scenario()) == 1


def test_start_opens_towards_the_ceiling_while_calls_wait() -> None:
    async def scenario() -> tuple[int, int]:
        limit = AdaptiveLimit(12, initial=4, ramp_step_s=0.001)
        peak = 0
        active = 0

        async def call() -> None:
            nonlocal peak, active
            token = await limit.acquire()
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.3)
            active -= 1
            limit.release(token, "ok")

        await asyncio.gather(*(call() for _ in range(12)))
        return peak, limit.limit

    peak, final = asyncio.run(scenario())
    assert final == 12
    assert peak == 12  # all twelve overlapped: the start does not cost a round of latency here


def test_start_opens_a_quarter_more_each_step_so_a_high_ceiling_is_reached_in_a_few_steps() -> None:
    async def scenario() -> list[int]:
        limits: list[int] = []
        limit = AdaptiveLimit(100, initial=4, ramp_step_s=0.001, on_change=limits.append)

        async def call() -> None:
            token = await limit.acquire()
            await asyncio.sleep(0.2)
            limit.release(token, "ok")

        await asyncio.gather(*(call() for _ in range(100)))
        return limits

    limits = asyncio.run(scenario())
    assert limits[-1] == 100
    assert len(limits) <= 17  # 5, 6, 7, 8, 10, ..., 78, 97, 100; one slot a step would take 96
    assert all(b - a <= max(1, a // 4) for a, b in zip([4, *limits], limits, strict=False))


def test_engine_adapts_to_a_server_with_capacity(tmp_path: Path) -> None:
    prompts = [prompt(i) for i in range(60)]
    with FakeOpenAIServer(latency_s=0.15, capacity=4, retry_after="0") as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=TEST_KEY)
        engine = Engine(backend, cache=None, max_concurrency=32, retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.1))

        async def run() -> list[str]:
            try:
                results = await asyncio.gather(*(engine.generate(p, SAMPLING) for p in prompts))
            finally:
                await backend.aclose()
            return [generation.text for _, generation in results]

        texts = asyncio.run(asyncio.wait_for(run(), 60))
        log = server.log
        refused = server.over_capacity
        max_admitted = server.max_admitted

    assert texts == ["Joy: 5"] * 60
    # Nothing lost, nothing answered twice: every prompt has exactly one "ok" on the server.
    ok_bodies = [entry.body_hash for entry in log if entry.outcome == "ok"]
    assert len(ok_bodies) == len(set(ok_bodies)) == 60
    assert max_admitted <= 4
    record = engine.limit.as_dict()
    assert refused > 0 and record["overload_answers"] == refused == engine.stats.retries_by_kind["rate_limited"]
    assert record["decreases"] >= 1
    assert record["max"] > 4  # it went above the capacity at least once (and was refused)...
    course = record["course"]
    last_decrease = max(i for i, entry in enumerate(course) if entry["cause"] == "overload")
    assert course[last_decrease]["limit"] <= 4  # ...was halved to or below it...
    # ...and the 429 share stays far below a fixed 32 against 4 (which refuses 28 of the first 32 at once).
    assert refused < 30
    times = [entry["t_s"] for entry in course]
    assert times == sorted(times)


@pytest.mark.parametrize(("fault", "halved"), [("503", True), ("429", True), ("500", False), ("drop", False)])
def test_only_overload_answers_halve_the_limit(fault: str, halved: bool) -> None:
    with FakeOpenAIServer(retry_after="0") as server:
        server.script_faults(fault)
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key=TEST_KEY)
        engine = Engine(backend, cache=None, max_concurrency=4, retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.1))

        async def run() -> str:
            try:
                return (await engine.generate(prompt(0), SAMPLING))[1].text
            finally:
                await backend.aclose()

        assert asyncio.run(asyncio.wait_for(run(), 30)) == "Joy: 5"
        outcomes = [entry.outcome for entry in server.log]
    assert outcomes == [fault, "ok"]
    assert engine.limit.as_dict()["decreases"] == (1 if halved else 0)
    assert engine.limit.limit == (2 if halved else 4)


@pytest.mark.parametrize(("fault", "halved"), [("529", True), ("500", False)])
def test_anthropic_overloaded_529_halves_the_limit(fault: str, halved: bool) -> None:
    key = "sk-ant-test-aimd"
    with FakeAnthropicServer(api_key=key, retry_after="0") as server:
        server.script_faults(fault)
        backend = AnthropicBackend("claude-fake-1", base_url=server.base_url, api_key=key)
        engine = Engine(backend, cache=None, max_concurrency=8, retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.1))

        async def run() -> None:
            try:
                await engine.generate(prompt(0), SAMPLING)
            finally:
                await backend.aclose()

        asyncio.run(asyncio.wait_for(run(), 30))
        outcomes = [request.outcome for request in server.requests]
    assert outcomes == [fault, "ok"]
    assert engine.limit.limit == (2 if halved else 4)  # it starts at 4 of the ceiling of 8
    assert engine.limit.as_dict()["decreases"] == (1 if halved else 0)


def test_run_json_records_the_limit_course(tmp_path: Path, mirror: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror))
    env["OPENAI_API_KEY"] = TEST_KEY
    out = tmp_path / "run"
    with FakeOpenAIServer(latency_s=0.1, capacity=3, retry_after="0") as server:
        command = [sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url"]
        command += [server.base_url, "--bench", "eqbench", "--preset", "paper", "--limit", "30"]
        command += ["--max-concurrency", "24", "--out", str(out), "--quiet"]
        result = run_in_process(command, env)
        refused = server.over_capacity
        ok = server.outcomes["ok"]
    assert result.returncode == 0, result.stderr[-2000:]
    block = json.loads((out / "run.json").read_text("utf-8"))["concurrency"]["model"]
    assert block["ceiling"] == 24
    assert block["overload_answers"] == refused > 0
    assert block["decreases"] >= 1
    assert block["min"] <= block["final"] <= block["max"] <= 24
    assert block["course"][0]["cause"] == "start"
    assert {entry["cause"] for entry in block["course"]} >= {"start", "overload"}
    assert ok == 30  # one answered call per item
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    assert sorted(r["item_id"] for r in samples) == sorted({r["item_id"] for r in samples})
    assert all(r["status"] == "ok" for r in samples) and len(samples) == 30


@pytest.mark.parametrize("retry_after", ["1", None])
def test_capacity_429_is_shaped_like_openai(retry_after: str | None) -> None:
    import urllib.error
    import urllib.request

    with FakeOpenAIServer(latency_s=0.5, capacity=1, retry_after=retry_after) as server:
        body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": "hi"}]}).encode()

        def post() -> tuple[int, dict[str, str], dict[str, object]]:
            request = urllib.request.Request(
                server.base_url + "/chat/completions", body, {"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status, dict(response.headers), json.loads(response.read())
            except urllib.error.HTTPError as error:
                return error.code, dict(error.headers), json.loads(error.read())

        async def both() -> list[tuple[int, dict[str, str], dict[str, object]]]:
            first = asyncio.create_task(asyncio.to_thread(post))
            await asyncio.sleep(0.2)  # the first is being served
            second = await asyncio.to_thread(post)
            return [await first, second]

        (status_ok, _, _), (status, headers, payload) = asyncio.run(both())
    assert status_ok == 200
    assert status == 429
    assert payload["error"]["code"] == "rate_limit_exceeded"  # type: ignore[index]
    assert "Rate limit reached" in payload["error"]["message"]  # type: ignore[index]
    assert headers.get("Retry-After") == retry_after
