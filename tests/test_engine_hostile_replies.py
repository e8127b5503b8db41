"""Hostile replies and slow servers over loopback: a bad reply is data about its item, never a crash or a hang.

Issue 11 items 4 (lone surrogates, usage "abc" / 1e400, an unexpected exception in one item) and 6 (one whole
request bounded by `--timeout`, counted as a retryable "timeout").
"""

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import run_in_process
from empathybench.engine.engine import CallFailedError, Engine, ItemContext, RetryPolicy
from empathybench.engine.progress import RunProgress
from empathybench.instruments.protocol import BenchItem, PreparedBenchmark
from empathybench.models.base import Backend, ChatResponse, Sampling, normalise_response, token_count
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.run.execute import _run_pending
from empathybench.rundir.store import RunStore, read_samples
from empathybench.testing.fake_openai import FakeOpenAIServer

TEST_KEY = "sk-test-secret-123"
SAMPLING = Sampling(temperature=0.01, max_tokens=60, seed=7)
FAST_RETRY = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
PROMPT = "Rate each emotion.\nJoy: <score>\nAnger: <score>"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(seed=5) as fake:
        yield fake


def make_engine(base_url: str, *, retry: RetryPolicy = FAST_RETRY, timeout_s: float | None = 120.0) -> Engine:
    backend = OpenAIBackend("fake", base_url=base_url, api_key=TEST_KEY)
    return Engine(backend, cache=None, retry=retry, request_timeout_s=timeout_s)


def ask_one(engine: Engine) -> Any:
    async def run() -> Any:
        try:
            return (await engine.generate(PROMPT, SAMPLING))[1]
        finally:
            await engine.backend.aclose()

    return asyncio.run(run())


# --- item 4: normalisation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "noted"),
    [
        (12, 12, False),
        (None, 0, False),
        ("abc", 0, True),
        (float("inf"), 0, True),
        (float("nan"), 0, True),
        (-5, 0, True),
        (10**30, 0, True),
        ("17", 17, False),
        (3.5, 3, True),
        (True, 0, True),
        ({"a": 1}, 0, True),
    ],
)
def test_token_counts_are_coerced_to_sane_ints(value: Any, expected: int, noted: bool) -> None:
    count, note = token_count(value)
    assert (count, note is not None) == (expected, noted)
    assert isinstance(count, int)


def test_normalised_response_is_writable_as_utf8() -> None:
    response = normalise_response(
        ChatResponse(text="Joy: 5\ud800x\udfff", prompt_tokens="abc", completion_tokens=float("inf"))  # type: ignore[arg-type]
    )
    assert response.text == "Joy: 5\ufffdx\ufffd"
    response.text.encode("utf-8")  # would raise on a lone surrogate
    assert (response.prompt_tokens, response.completion_tokens) == (0, 0)
    assert len(response.notes) == 3
    assert "2 invalid characters" in response.notes[0]


@pytest.mark.parametrize("fault", ["surrogate", "usage_text", "usage_huge"])
def test_hostile_reply_over_the_wire_becomes_a_clean_generation(server: FakeOpenAIServer, fault: str) -> None:
    server.script_faults(fault)
    engine = make_engine(server.base_url)
    generation = ask_one(engine)

    assert [entry.outcome for entry in server.log] == [fault]  # answered once, not retried
    generation.text.encode("utf-8")
    assert generation.text.startswith("Joy: 5\nAnger: 5")
    assert generation.notes, "the repair is recorded"
    if fault == "surrogate":
        assert generation.text.endswith("\ufffd")
    else:
        assert generation.prompt_tokens == 0
        assert engine.stats.prompt_tokens == 0
        assert generation.completion_tokens == 4


def test_unexpected_exception_in_one_item_is_an_error_record(server: FakeOpenAIServer, tmp_path: Path) -> None:
    engine = make_engine(server.base_url)

    async def run_item(item: BenchItem, ctx: ItemContext) -> dict[str, Any]:
        generation = await ctx.generate(item.payload, SAMPLING)
        if item.id == "b":
            raise ZeroDivisionError("benchmark code met a reply it did not expect")
        return {"parsed": generation.text}

    items = [BenchItem(name, f"{PROMPT}\nitem {name}") for name in "abcd"]
    bench = PreparedBenchmark(name="toy", config={}, items=items, run_item=run_item, summarize=lambda records: {})
    store = RunStore(tmp_path / "run")
    store.open("fingerprint")
    progress = RunProgress(Console(file=None, quiet=True), engine.stats, enabled=False)
    try:
        asyncio.run(_run_pending({"model": engine}, [(bench, item) for item in items], store, 0, progress))
    finally:
        store.close()

    records = {r["item_id"]: r for r in read_samples(tmp_path / "run")}
    assert sorted(records) == ["a", "b", "c", "d"]
    assert records["b"]["status"] == "error"
    assert "ZeroDivisionError" in records["b"]["error"]
    assert records["b"]["calls"][0]["reply"].startswith("Joy: 5")  # what was answered is kept
    assert all(records[name]["status"] == "ok" for name in "acd")
    assert engine.stats.items_failed == 1


def cli_env(tmp_path: Path, mirror: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY=TEST_KEY)
    return env


def run_eqbench(base_url: str, out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url", base_url]
    command += ["--bench", "eqbench", "--preset", "paper", "--limit", "12", "--out", str(out), "--quiet", *extra]
    return run_in_process(command, env)


def test_a_run_with_hostile_replies_finishes_and_records_every_item(
    server: FakeOpenAIServer, tmp_path: Path, mirror: Path
) -> None:
    server.script_faults("ok", "surrogate", "usage_text", "ok", "usage_huge")
    result = run_eqbench(server.base_url, tmp_path / "run", cli_env(tmp_path, mirror), "--max-concurrency", "1")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr

    raw = (tmp_path / "run" / "samples.jsonl").read_bytes()
    raw.decode("utf-8")  # strict: the file is valid UTF-8
    records = [json.loads(line) for line in raw.splitlines()]
    assert len(records) == 12 == len({r["item_id"] for r in records})
    assert all(r["status"] == "ok" for r in records)
    notes = [note for r in records for call in r["calls"] for note in call.get("notes", [])]
    assert len(notes) == 3, notes
    assert sum("\ufffd" in call["reply"] for r in records for call in r["calls"]) == 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    assert summary["benchmarks"]["eqbench"]["n_parsed"] == 12
    assert summary["usage"]["prompt_tokens"] > 0


# --- item 6: one deadline per request ------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["hang", "drip"])
def test_a_hung_or_dripping_server_fails_the_call_after_bounded_retries(server: FakeOpenAIServer, fault: str) -> None:
    server.drip_interval_s = 0.3  # every read succeeds, so only a whole-request deadline can stop it
    server.script_faults(fault, fault, fault)
    engine = make_engine(server.base_url, retry=RetryPolicy(max_retries=2, base_delay_s=0.01), timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(CallFailedError, match="gave up after 2 retries: no complete reply within 1 s"):
        ask_one(engine)
    elapsed = time.monotonic() - started
    assert 3.0 <= elapsed < 10.0
    assert engine.stats.retries_by_kind == {"timeout": 2}
    assert server.requests_total == 3


def test_a_timeout_is_retried_and_the_next_attempt_answers(server: FakeOpenAIServer) -> None:
    server.script_faults("hang")
    engine = make_engine(server.base_url, timeout_s=2.0)  # room for an ordinary reply on a loaded machine
    generation = ask_one(engine)
    assert generation.text == "Joy: 5\nAnger: 5"
    assert generation.retries == 1
    assert engine.stats.retries_by_kind == {"timeout": 1}


def test_run_timeout_option_bounds_a_hung_request(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    server.script_faults("hang", "drip")
    started = time.monotonic()
    result = run_eqbench(server.base_url, tmp_path / "run", cli_env(tmp_path, mirror), "--timeout", "1")
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert elapsed < 60  # without the option: 120 s per hung attempt
    run_info = json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))
    assert run_info["options"]["request_timeout_s"] == 1.0
    # Both scripted faults timed out; on a loaded machine an ordinary reply may also miss a 1 s deadline (and is
    # retried the same way), so the count is a lower bound and timeouts are the only kind.
    retries = run_info["usage"]["retries_by_kind"]
    assert set(retries) == {"timeout"} and retries["timeout"] >= 2
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == 12 and all(r["status"] == "ok" for r in records)


def test_timeout_option_is_validated_before_any_call(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    result = run_eqbench(server.base_url, tmp_path / "run", cli_env(tmp_path, mirror), "--timeout", "0")
    assert result.returncode == 2
    assert server.requests_total == 0


def test_judge_validate_timeout_bounds_a_hung_request(server: FakeOpenAIServer, tmp_path: Path, mirror: Path) -> None:
    server.answer = lambda request: "Good"
    server.script_faults("hang")
    command = [sys.executable, "-m", "empathybench", "judge", "validate", "--judge", "openai/fake", "--base-url"]
    command += [server.base_url, "--limit", "3", "--json", "--timeout", "1", "--quiet"]
    started = time.monotonic()
    result = run_in_process(command, cli_env(tmp_path, mirror))
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 60
    report = json.loads(result.stdout)
    assert (report["n_rated"], report["n_failed_calls"]) == (3, 0)
    assert server.requests_total == 4  # the hung request (logged only once it ends) and 3 answered ones


class _SlowInProcessBackend(Backend):
    """Stands in for llama.cpp: a call that cannot be interrupted, so no timeout may cut it."""

    provider, model, default_concurrency, interruptible = "inprocess", "slow", 1, False

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model}

    async def complete(self, request: Any) -> ChatResponse:
        await asyncio.sleep(0.3)
        return ChatResponse(text="done", prompt_tokens=1, completion_tokens=1)

    async def aclose(self) -> None:
        return None


def test_the_timeout_is_not_applied_to_an_in_process_backend() -> None:
    engine = Engine(_SlowInProcessBackend(), cache=None, retry=FAST_RETRY, request_timeout_s=0.05)
    assert engine.request_timeout_s is None
    assert ask_one(engine).text == "done"
    assert engine.stats.retries == 0
    from empathybench.models.llamacpp_backend import LlamaCppBackend

    assert LlamaCppBackend.interruptible is False
