"""A server cannot fill the memory or the disk (issue 29 item 1): every reply is bounded before it is decoded, parsed or
stored, decompression included, against the fake OpenAI and Anthropic servers over loopback; inspect logs read by
`report` are bounded before they are read."""

import asyncio
import json
import os
import re
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import CallFailedError, Engine, RetryPolicy
from empathybench.errors import BackendUnavailableError, UserError
from empathybench.models.anthropic_backend import AnthropicBackend
from empathybench.models.base import Sampling
from empathybench.models.openai_backend import OpenAIBackend
from empathybench.models.reply_bounds import (
    MAX_REPLY_BYTES,
    MIN_REPLY_BYTES,
    REPLY_BYTES_PER_TOKEN,
    derived_reply_limit,
    reply_limit_override,
)
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer
from empathybench.testing.loopback import LoopbackFake, LoopbackHandler, compressed_padding

KEY = "sk-reply-bounds-test-8d2f"
SAMPLING = Sampling(temperature=0.01, max_tokens=60, seed=7)
FAST_RETRY = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.02)
PROMPT = "Rate each emotion.\nJoy: <score>\nAnger: <score>"
BOMB_BYTES = 100_000_000  # 100 MB of text: about 100 KB of gzip on the wire


def backend_for(provider: str, base_url: str, **kwargs: Any) -> Any:
    if provider == "openai":
        return OpenAIBackend("fake", base_url=base_url, api_key=KEY, **kwargs)
    return AnthropicBackend("claude-fake-1", base_url=base_url, api_key=KEY, **kwargs)


@pytest.fixture(params=["openai", "anthropic"])
def fake(request: pytest.FixtureRequest) -> Iterator[Any]:
    server_class = FakeOpenAIServer if request.param == "openai" else FakeAnthropicServer
    with server_class(bomb_bytes=BOMB_BYTES) as server:
        server.provider = request.param
        yield server


def ask(backend: Any, cache: ResponseCache | None = None, sampling: Sampling = SAMPLING) -> tuple[Any, Engine, int]:
    """(the generation or the exception, the engine, the peak of Python's allocations during the call)."""
    engine = Engine(backend, cache=cache, retry=FAST_RETRY)

    async def run() -> Any:
        try:
            return (await engine.generate(PROMPT, sampling))[1]
        except (CallFailedError, BackendUnavailableError) as exc:
            return exc
        finally:
            await backend.aclose()

    import anthropic  # noqa: F401  # the SDKs' imports are not the call's memory
    import openai  # noqa: F401

    tracemalloc.start()
    try:
        outcome = asyncio.run(run())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return outcome, engine, peak


def encodings() -> list[str]:
    try:
        import brotli  # noqa: F401  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return ["gzip", "deflate"]
    return ["gzip", "deflate", "br"]


@pytest.mark.parametrize("kind", ["huge", *(f"bomb_{encoding}" for encoding in encodings())])
def test_a_runaway_reply_is_refused_at_its_limit_and_never_cached(fake: Any, kind: str, tmp_path: Path) -> None:
    fake.script_faults(kind, kind, kind)  # every attempt: the first and both retries
    cache = ResponseCache(tmp_path / "responses.sqlite")
    try:
        outcome, engine, peak = ask(backend_for(fake.provider, fake.base_url), cache)
        assert cache.count() == 0  # nothing of it was stored
    finally:
        cache.close()
    assert isinstance(outcome, CallFailedError)
    assert str(outcome) == "gave up after 2 retries: reply of more than 1 MB from 127.0.0.1; refused"
    assert engine.stats.retries_by_kind == {"too_large": 2}  # a transient server fault: retried
    # 100 MB decompressed would have been held whole, then parsed; it stopped at the 1 MB limit.
    assert peak < 20_000_000, peak
    assert sum(f.stat().st_size for f in tmp_path.iterdir()) < 200_000


def test_a_large_reply_within_its_limit_is_taken(fake: Any, tmp_path: Path) -> None:
    """The limit follows the token budget: 100,000 tokens allow 3.2 MB, so a 2 MB reply is an answer."""
    fake.bomb_bytes = 2_000_000
    fake.script_faults("bomb_gzip")
    cache = ResponseCache(tmp_path / "responses.sqlite")
    try:
        outcome, _, _ = ask(backend_for(fake.provider, fake.base_url), cache, Sampling(0.01, max_tokens=100_000))
        assert cache.count() == 1
    finally:
        cache.close()
    assert len(outcome.text) == 2_000_000 and set(outcome.text) == {"a"}


def test_max_reply_bytes_replaces_the_derived_limit(fake: Any) -> None:
    fake.bomb_bytes = 300_000
    fake.script_faults("huge", "huge", "huge")
    outcome, _, _ = ask(backend_for(fake.provider, fake.base_url, max_reply_bytes=200_000))
    assert isinstance(outcome, CallFailedError) and "reply of more than 0.2 MB from 127.0.0.1" in str(outcome)
    fake.script_faults("huge")
    outcome, _, _ = ask(backend_for(fake.provider, fake.base_url, max_reply_bytes=400_000))
    assert len(outcome.text) == 300_000


def test_the_limit_is_derived_from_the_budget_within_its_floor_and_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    assert derived_reply_limit(60) == MIN_REPLY_BYTES
    assert derived_reply_limit(100_000) == 100_000 * REPLY_BYTES_PER_TOKEN
    assert derived_reply_limit(10**9) == MAX_REPLY_BYTES
    monkeypatch.delenv("EMPATHYBENCH_MAX_REPLY_BYTES", raising=False)
    assert reply_limit_override(None) is None and reply_limit_override(5000) == 5000
    monkeypatch.setenv("EMPATHYBENCH_MAX_REPLY_BYTES", "2_000_000")
    assert reply_limit_override(None) == 2_000_000 and reply_limit_override(5000) == 5000  # the option wins
    for bad in ("lots", "100"):
        monkeypatch.setenv("EMPATHYBENCH_MAX_REPLY_BYTES", bad)
        with pytest.raises(UserError, match="EMPATHYBENCH_MAX_REPLY_BYTES"):
            reply_limit_override(None)
    backend = OpenAIBackend("gpt-4o", base_url="http://127.0.0.1:9/v1", api_key=KEY, max_reply_bytes=4096)
    from empathybench.models.base import ChatRequest

    assert backend.reply_limit(ChatRequest.of(PROMPT, SAMPLING)) == 4096


class _RedirectHandler(LoopbackHandler):
    body = b""  # a gzip bomb, made before the call is measured

    def do_POST(self) -> None:
        self.read_body(int(self.headers.get("Content-Length") or 0))
        body = self.body
        self.send_response(307)
        self.send_header("Location", "/v1/elsewhere")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _RedirectingServer(LoopbackFake):
    handler = _RedirectHandler
    thread_name = "redirect-bomb"


def test_the_body_of_a_redirect_is_neither_decompressed_nor_read_past_64_kb() -> None:
    """httpx reads a redirect's body to throw it away: a gzip bomb there is left compressed (the redirects are
    followed until httpx's limit of them), and more than 64 KB of it is refused."""
    _RedirectHandler.body = compressed_padding(b"", 50_000_000, b"", "gzip")  # 50 MB in about 50 KB
    with _RedirectingServer() as server:
        url = f"http://127.0.0.1:{server.port}/v1"
        outcome, _, peak = ask(OpenAIBackend("fake", base_url=url, api_key=KEY))
        assert isinstance(outcome, BackendUnavailableError) and "Exceeded maximum allowed redirects" in str(outcome)
        assert peak < 20_000_000, peak  # 50 MB decompressed at each of the 20 redirects would show here
        _RedirectHandler.body = os.urandom(200_000)  # not even gzip: decoding it would fail at once
        outcome, _, _ = ask(OpenAIBackend("fake", base_url=url, api_key=KEY))
    assert isinstance(outcome, CallFailedError)
    assert "reply of more than 0.0655 MB from 127.0.0.1; refused" in str(outcome)


def test_replies_read_by_the_aiohttp_client_are_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("aiohttp")
    monkeypatch.setenv("EMPATHYBENCH_HTTP_CLIENT", "aiohttp")
    with FakeOpenAIServer(bomb_bytes=BOMB_BYTES) as server:
        server.script_faults("bomb_gzip", "bomb_gzip", "bomb_gzip")
        outcome, _, peak = ask(OpenAIBackend("fake", base_url=server.base_url, api_key=KEY))
    assert isinstance(outcome, CallFailedError) and "reply of more than 1 MB" in str(outcome)
    assert peak < 20_000_000, peak


# --- inspect logs read by `report` ---------------------------------------------------------------------------


def test_an_inspect_log_past_its_bound_is_one_line_before_it_is_read(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMPATHYBENCH_")}
    env["EMPATHYBENCH_MAX_LOG_BYTES"] = "1000000"
    bomb = tmp_path / "bomb.eval"
    with (
        zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("header.json", "w") as member,
    ):
        for _ in range(50):  # 50 MB of JSON text, about 50 KB on disk
            member.write(b" " * 1_000_000)
    big_json = tmp_path / "big.json"
    big_json.write_text(json.dumps({"padding": "x" * 2_000_000}), "utf-8")
    for path, size in ((bomb, "50 MB"), (big_json, "2 MB")):
        result = cli_in_process(["report", str(path), "--out", str(tmp_path / "report")], env)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert f"an inspect log of {size}, more than the 1 MB read; refused" in lines[0]
        assert "EMPATHYBENCH_MAX_LOG_BYTES" in lines[0]
    assert bomb.stat().st_size < 1_000_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a lot", "EMPATHYBENCH_MAX_LOG_BYTES='a lot' is not a whole number of bytes"),
        ("0", "EMPATHYBENCH_MAX_LOG_BYTES must be at least 1 byte, not 0"),
        ("2_000", 2000),
        ("", "default"),
    ],
)
def test_the_log_bound_in_the_environment_is_read_as_the_reply_bound_is(
    value: str, expected: str | int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from empathybench.errors import UserError
    from empathybench.inspect_bridge.logs import MAX_LOG_BYTES, max_log_bytes

    monkeypatch.setenv("EMPATHYBENCH_MAX_LOG_BYTES", value)
    if isinstance(expected, int):
        assert max_log_bytes() == expected
    elif expected == "default":
        assert max_log_bytes() == MAX_LOG_BYTES
    else:
        with pytest.raises(UserError, match=re.escape(expected)):
            max_log_bytes()
