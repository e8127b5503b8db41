"""The engine through the real OpenAIBackend against the fake OpenAI-compatible server on 127.0.0.1.

Faults, latency and concurrency are observed on the server side, where they actually happen.
"""

import asyncio
import dataclasses
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from empathybench.engine.cache import ResponseCache, cache_key
from empathybench.engine.engine import CallFailedError, Engine, Generation, ItemContext, RetryPolicy
from empathybench.engine.progress import RunProgress
from empathybench.errors import BackendUnavailableError
from empathybench.instruments.protocol import BenchItem, PreparedBenchmark
from empathybench.models.base import ChatRequest, ChatResponse, Message, Sampling
from empathybench.models.capabilities import ModelArgs
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.run.execute import _run_pending
from empathybench.rundir.store import RunStore, read_samples
from empathybench.testing.fake_openai import FakeOpenAIServer

TEST_KEY = "sk-test-secret-123"
SAMPLING = Sampling(temperature=0.01, max_tokens=60, seed=7)
# Retries in milliseconds rather than seconds, so fault tests stay quick; Retry-After is still honoured.
FAST_RETRY = RetryPolicy(base_delay_s=0.01, max_delay_s=0.1)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(seed=1) as fake:
        yield fake


def make_engine(
    base_url: str,
    *,
    cache: ResponseCache | None = None,
    max_concurrency: int | None = None,
    retry: RetryPolicy = FAST_RETRY,
    model: str = "fake",
) -> Engine:
    backend = OpenAIBackend(model, base_url=base_url, api_key=TEST_KEY)
    return Engine(backend, cache=cache, max_concurrency=max_concurrency, retry=retry)


def ask(engine: Engine, prompts: Sequence[str], sampling: Sampling = SAMPLING) -> list[Generation]:
    """Ask every prompt at once through the engine; the client is closed afterwards."""

    async def run() -> list[Generation]:
        try:
            results = await asyncio.gather(*(engine.generate(prompt, sampling) for prompt in prompts))
        finally:
            await engine.backend.aclose()
        return [generation for _, generation in results]

    return asyncio.run(run())


def score_prompt(index: int) -> str:
    return f"Item {index}. Rate each emotion.\nJoy: <score>\nAnger: <score>"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_latency_and_concurrency_bound(server: FakeOpenAIServer) -> None:
    server.latency_s = 0.25
    engine = make_engine(server.base_url, max_concurrency=6)
    started = time.monotonic()
    generations = ask(engine, [score_prompt(i) for i in range(24)])
    elapsed = time.monotonic() - started

    assert [g.text for g in generations] == ["Joy: 5\nAnger: 5"] * 24
    assert server.requests_total == 24
    # The bound holds on the server, and it is used: the calls overlap instead of queueing one by one.
    assert server.max_in_flight == 6
    # At least ceil(24/6) rounds of latency; well under the 24 rounds of a serial client (speed itself is
    # measured in bench/, not here, so a loaded CI machine cannot fail this).
    assert 4 * 0.25 <= elapsed < 24 * 0.25 / 2
    assert server.authorizations == {f"Bearer {TEST_KEY}"}
    # Token usage comes from the server's usage fields.
    assert engine.stats.prompt_tokens == sum(g.prompt_tokens for g in generations) > 0
    assert engine.stats.completion_tokens == 24 * 4


def test_429_waits_for_retry_after(server: FakeOpenAIServer) -> None:
    server.retry_after = "1"
    server.script_faults("429")
    engine = make_engine(server.base_url)
    [generation] = ask(engine, [score_prompt(0)])

    first, second = server.log
    assert (first.outcome, second.outcome) == ("429", "ok")
    assert first.body_hash == second.body_hash
    assert second.arrived - first.finished >= 0.99  # the header says 1 s; our base delay is 10 ms
    assert generation.retries == 1
    assert engine.stats.retries_by_kind == {"rate_limited": 1}


@pytest.mark.parametrize(
    ("fault", "kind"),
    [("500", "server_error"), ("drop", "connection"), ("malformed", "malformed"), ("429", "rate_limited")],
)
def test_transient_fault_is_retried(server: FakeOpenAIServer, fault: str, kind: str) -> None:
    server.retry_after = None  # a 429 without Retry-After falls back to the engine's backoff
    server.latency_s = 0.05
    server.script_faults(fault, fault)
    engine = make_engine(server.base_url)
    [generation] = ask(engine, [score_prompt(0)])

    assert generation.text == "Joy: 5\nAnger: 5"
    assert [entry.outcome for entry in server.log] == [fault, fault, "ok"]
    assert engine.stats.retries_by_kind == {kind: 2}


def test_400_is_not_retried_and_the_item_is_recorded_as_an_error(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script_faults("400")
    engine = make_engine(server.base_url, max_concurrency=1)

    async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
        generation = await ctx.generate(item.payload, SAMPLING)
        return {"parsed": generation.text, "score": 1.0, "parse_error": None}

    bench = PreparedBenchmark(
        name="toy",
        config={},
        items=[BenchItem("a", score_prompt(1)), BenchItem("b", score_prompt(2))],
        run_item=run_item,
        summarize=lambda records: {},
    )
    store = RunStore(tmp_path / "run")
    store.open("fingerprint")
    progress = RunProgress(Console(file=None, quiet=True), engine.stats, enabled=False)
    try:
        asyncio.run(_run_pending({"model": engine}, [(bench, item) for item in bench.items], store, 0, progress))
    finally:
        store.close()

    assert server.requests_total == 2  # one for each item: the 400 was not asked again
    records = {r["item_id"]: r for r in read_samples(tmp_path / "run")}
    assert records["a"]["status"] == "error"
    assert "400" in records["a"]["error"]
    assert records["b"]["status"] == "ok"
    assert engine.stats.items_failed == 1
    assert engine.stats.retries == 0


def test_400_raises_call_failed_after_one_request(server: FakeOpenAIServer) -> None:
    server.script_faults("400")
    engine = make_engine(server.base_url)
    with pytest.raises(CallFailedError, match="400"):
        ask(engine, [score_prompt(0)])
    assert server.requests_total == 1


def test_every_call_is_answered_under_the_fault_mix(server: FakeOpenAIServer) -> None:
    server.latency_s = 0.02
    server.rate_429, server.retry_after = 0.15, "0"
    server.rate_500, server.rate_drop, server.rate_malformed = 0.05, 0.05, 0.03
    engine = make_engine(server.base_url, max_concurrency=16)
    generations = ask(engine, [score_prompt(i) for i in range(200)])

    assert [g.text for g in generations] == ["Joy: 5\nAnger: 5"] * 200
    outcomes = server.outcomes
    assert outcomes["ok"] == 200
    assert all(outcomes[kind] > 0 for kind in ("429", "500", "drop", "malformed"))
    assert engine.stats.retries == server.requests_total - 200
    assert server.max_in_flight <= 16


def test_identical_call_is_served_from_the_cache(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    try:
        [first] = ask(make_engine(server.base_url, cache=cache), [score_prompt(0)])
        second_engine = make_engine(server.base_url, cache=cache)
        [second] = ask(second_engine, [score_prompt(0)])
    finally:
        cache.close()

    assert server.requests_total == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text
    assert (second.prompt_tokens, second.completion_tokens) == (first.prompt_tokens, first.completion_tokens)
    assert second_engine.stats.cache_hits == 1
    assert TEST_KEY.encode() not in (tmp_path / "responses.sqlite").read_bytes()


def test_repetition_and_attempt_are_asked_and_cached_separately(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    variants = [(0, 0), (1, 0), (0, 1), (1, 1)]

    async def run(engine: Engine) -> list[bool]:
        try:
            return [
                (await engine.generate(score_prompt(0), SAMPLING, repetition=r, attempt=a))[1].cached
                for r, a in variants
            ]
        finally:
            await engine.backend.aclose()

    try:
        assert asyncio.run(run(make_engine(server.base_url, cache=cache))) == [False] * 4
        assert asyncio.run(run(make_engine(server.base_url, cache=cache))) == [True] * 4
    finally:
        cache.close()
    # The repetition and attempt index are not sent to the server: it sees one body four times.
    assert server.requests_total == 4


def _sampling_variants() -> dict[str, Sampling]:
    changed: dict[str, Any] = {
        "temperature": 0.7,
        "max_tokens": 61,
        "top_p": 0.9,
        "top_k": 40,
        "min_p": 0.05,
        "repeat_penalty": 1.1,
        "stop": ("\n\n",),
        "seed": 8,
        "model_args": ModelArgs(reasoning_effort="minimal", max_tokens=16000),
    }
    # A new Sampling field must be added here, so that the cache key is shown to cover it.
    assert set(changed) == {f.name for f in dataclasses.fields(Sampling)}
    return {f"sampling.{name}": dataclasses.replace(SAMPLING, **{name: value}) for name, value in changed.items()}


def test_cache_key_changes_with_everything_that_changes_an_answer() -> None:
    identity = OpenAIBackend("fake", base_url="http://127.0.0.1:1/v1", api_key=TEST_KEY).identity()
    assert TEST_KEY not in json.dumps(identity)
    messages = (Message("user", "How does Ann feel?"),)
    base = cache_key(identity, ChatRequest(messages, SAMPLING), repetition=0, attempt=0)
    assert base == cache_key(dict(identity), ChatRequest.of("How does Ann feel?", SAMPLING), repetition=0, attempt=0)

    keys = {
        "model": cache_key({**identity, "model": "other"}, ChatRequest(messages, SAMPLING), repetition=0, attempt=0),
        "base_url": cache_key(
            {**identity, "base_url": "http://127.0.0.1:2/v1"}, ChatRequest(messages, SAMPLING), repetition=0, attempt=0
        ),
        "provider": cache_key(
            {**identity, "provider": "anthropic"}, ChatRequest(messages, SAMPLING), repetition=0, attempt=0
        ),
        "message content": cache_key(identity, ChatRequest.of("How does Bob feel?", SAMPLING), repetition=0, attempt=0),
        "message role": cache_key(
            identity, ChatRequest((Message("system", "How does Ann feel?"),), SAMPLING), repetition=0, attempt=0
        ),
        "extra message": cache_key(
            identity, ChatRequest((Message("system", "Be brief."), *messages), SAMPLING), repetition=0, attempt=0
        ),
        "repetition": cache_key(identity, ChatRequest(messages, SAMPLING), repetition=1, attempt=0),
        "attempt": cache_key(identity, ChatRequest(messages, SAMPLING), repetition=0, attempt=1),
    }
    for name, sampling in _sampling_variants().items():
        keys[name] = cache_key(identity, ChatRequest(messages, sampling), repetition=0, attempt=0)

    assert base not in keys.values()
    assert len(set(keys.values())) == len(keys), "two different settings share a cache key"


def test_a_different_model_or_base_url_is_asked_again(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    try:
        [a] = ask(make_engine(server.base_url, cache=cache), [score_prompt(0)])
        [b] = ask(make_engine(server.base_url, cache=cache, model="fake-2"), [score_prompt(0)])
        [c] = ask(make_engine(server.base_url + "/", cache=cache), [score_prompt(0)])  # same URL, normalised
        [d] = ask(make_engine(f"http://localhost:{server.port}/v1", cache=cache), [score_prompt(0)])
    finally:
        cache.close()
    assert [g.cached for g in (a, b, c, d)] == [False, False, True, False]
    assert server.requests_total == 3


_CACHE_WRITER = """
import sys, time
from pathlib import Path
from empathybench.engine.cache import ResponseCache
from empathybench.models.base import ChatResponse

path, name, start_at, n = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
cache = ResponseCache(path)
while time.time() < start_at:
    time.sleep(0.005)
for i in range(n):
    cache.put(f"{name}-{i}", ChatResponse(text=f"{name} {i}", prompt_tokens=i))
    cache.put(f"shared-{i % 50}", ChatResponse(text="shared"))
    assert cache.get(f"{name}-{i}").text == f"{name} {i}"
cache.close()
"""


def test_two_processes_share_one_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    start_at = time.time() + 1.5  # both interpreters are up by then, so their writes overlap
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _CACHE_WRITER, str(path), name, str(start_at), "1500"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    errors = [writer.communicate(timeout=60)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], errors
    cache = ResponseCache(path)
    try:
        assert cache._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert cache.count() == 2 * 1500 + 50
        assert cache.get("second-1499").text == "second 1499"  # type: ignore[union-attr]
    finally:
        cache.close()


def test_two_threads_with_their_own_connections_share_one_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    failures: list[BaseException] = []
    barrier = threading.Barrier(2)

    def write(name: str) -> None:
        cache = ResponseCache(path)
        try:
            barrier.wait()
            for i in range(500):
                cache.put(f"{name}-{i}", ChatResponse(text=f"{name} {i}"))
                assert cache.get(f"{name}-{i}") is not None
        except BaseException as exc:
            failures.append(exc)
        finally:
            cache.close()

    threads = [threading.Thread(target=write, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    cache = ResponseCache(path)
    try:
        assert cache.count() == 1000
    finally:
        cache.close()


def test_unreachable_server_fails_fast() -> None:
    engine = make_engine(f"http://127.0.0.1:{closed_port()}/v1", retry=RetryPolicy())
    started = time.monotonic()
    with pytest.raises(BackendUnavailableError, match=r"cannot reach http://127\.0\.0\.1"):
        ask(engine, [score_prompt(0)])
    assert time.monotonic() - started < 5


def test_fake_server_overlaps_slow_requests(server: FakeOpenAIServer) -> None:
    server.latency_s = 0.5
    engine = make_engine(server.base_url, max_concurrency=20)
    started = time.monotonic()
    ask(engine, [score_prompt(i) for i in range(20)])
    assert time.monotonic() - started < 0.5 * 20 / 2  # overlapped, not serial (10 s)
    assert server.max_in_flight == 20
