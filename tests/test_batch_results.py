"""Batch result files as a broken or hostile server sends them (issue 29 items 1 and 4), against the fake batch servers
of both providers: each malformed line is reported in one line with its position, no answer is ever attached to
the wrong request, the affected requests are asked again in at most two more batches (then live or failed), and
nothing already stored is lost; result files are read within their bounds, decompression included."""

import asyncio
import hashlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.models.base import ChatResponse
from empathybench.models.batching import EntryFailure, ResultLine, same_model, sort_results
from empathybench.models.reply_bounds import (
    FileLine,
    ReadCounter,
    ResultFileBounds,
    bounded_lines,
)
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_batch_results import INJECTED, UNKNOWN_ID
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

OPENAI_KEY = "sk-batch-results-test-5e1d"
ANTHROPIC_KEY = "sk-ant-batch-results-test-93c0"
LIMIT = 3
POLL = ["--batch-poll-interval", "0.05"]
MODELS = {"openai": "openai/fake", "anthropic": "anthropic/claude-fake-1"}


def varied_scores(request: dict[str, Any]) -> str:
    """Score lines whose values depend on the prompt, so that one item's answer never fits another."""
    messages = request.get("messages") or []
    text = "".join(str(m.get("content")) for m in messages if isinstance(m, dict))
    return fill_score_lines(request, int(hashlib.sha256(text.encode()).hexdigest(), 16) % 11)


def env_for(cache: Path, mirror: Path, openai_url: str, anthropic_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache), EMPATHYBENCH_MIRROR=str(mirror))
    env.update(OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
    env.update(OPENAI_BASE_URL=openai_url, ANTHROPIC_BASE_URL=anthropic_url)
    return env


def eqbench(model: str, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "-m",
        model,
        "-b",
        "eqbench",
        "--limit",
        str(LIMIT),
        "--out",
        str(out),
        "-q",
        "--batch",
        *POLL,
        *extra,
    ]


def records(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "samples.jsonl").read_text("utf-8").splitlines()
    return {r["item_id"]: r for r in map(json.loads, lines)}


def replies(run_dir: Path) -> dict[str, list[str]]:
    return {item: [call["reply"] for call in record["calls"]] for item, record in records(run_dir).items()}


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: batch ")]


class Servers:
    """Both fakes, the batch API of one of them under test."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.openai = FakeOpenAIServer(answer=varied_scores)
        self.anthropic = FakeAnthropicServer(answer=varied_scores)

    def __enter__(self) -> "Servers":
        self.openai.start()
        self.anthropic.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.openai.stop()
        self.anthropic.stop()

    @property
    def batches(self) -> Any:
        return self.openai.batches if self.provider == "openai" else self.anthropic.batches

    @property
    def live_calls(self) -> int:
        return self.openai.requests_total + self.anthropic.requests_total


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[str]]]:
    """Each provider's replies of a batched run whose result files were left alone."""
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    mirror = MIRROR
    found = {}
    for provider, model in MODELS.items():
        root = tmp_path_factory.mktemp(f"honest-{provider}")
        with Servers(provider) as servers:
            env = env_for(root / "cache", mirror, servers.openai.base_url, servers.anthropic.base_url)
            result = cli_in_process(eqbench(model, root / "run"), env)
            assert result.returncode == 0 and servers.batches.batches_created == 1, result.stderr
        found[provider] = replies(root / "run")
    return found


# Each alteration of request 1's line (the second of three), and the warning it must give (None: nothing wrong).
ALTERED = {
    "cut": "cut off (the file ends inside it)",
    "junk": "not JSON",
    "unknown_id": f"custom_id '{UNKNOWN_ID}' was never asked in this batch; skipped",
    "duplicate": "is answered differently on",
    "wrong_model": "answered by model 'some-other-model'",
    "error_body": "an error object where the answer belongs",
    "duplicate_same": None,
    "snapshot_model": None,
}


@pytest.mark.parametrize("provider", list(MODELS))
@pytest.mark.parametrize("kind", list(ALTERED))
def test_a_malformed_result_line_is_reported_and_never_attached(
    provider: str, kind: str, tmp_path: Path, mirror: Path, honest: dict[str, dict[str, list[str]]]
) -> None:
    with Servers(provider) as servers:
        servers.batches.alter_results(kind, entry=1)
        env = env_for(tmp_path / "cache", mirror, servers.openai.base_url, servers.anthropic.base_url)
        result = cli_in_process(eqbench(MODELS[provider], tmp_path / "run"), env)
        created, live_calls = servers.batches.batches_created, servers.live_calls
    assert result.returncode == 0, result.stderr
    assert live_calls == 0
    # Every item has exactly the answer the honest server gave it: nothing injected, nothing swapped.
    assert replies(tmp_path / "run") == honest[provider]
    assert INJECTED not in (tmp_path / "run" / "samples.jsonl").read_text("utf-8")
    expected = ALTERED[kind]
    shown = warnings(result.stderr)
    if expected is None:  # the same answer twice, or a dated snapshot of the model: taken as is
        assert created == 1 and shown == [], shown
        return
    where = "output file line" if provider == "openai" else "results line"
    assert any(expected in line and where in line for line in shown), shown
    assert all(len(line) < 400 for line in shown)  # one line each
    if kind in ("unknown_id", "junk"):
        assert created == 1  # the line was skipped; every request had its own answer
    else:
        assert created == 2  # the affected request (and, when cut, those after it) asked in a second batch
    ended = [json.loads(line) for line in (tmp_path / "run" / "batches.jsonl").read_text("utf-8").splitlines()]
    assert any(expected in problem for event in ended for problem in event.get("problems", ())), ended


@pytest.mark.parametrize("provider", list(MODELS))
@pytest.mark.parametrize("kind", ["cut", "error_body"])
def test_a_line_broken_every_time_is_asked_at_most_three_times_then_fails(
    provider: str, kind: str, tmp_path: Path, mirror: Path, honest: dict[str, dict[str, list[str]]]
) -> None:
    """`--batch-fallback fail`: the request in 3 batches, then its item's error; the other items keep their answers,
    and the next run (live) asks only the failed item: nothing stored was lost."""
    with Servers(provider) as servers:
        servers.batches.alter_results(kind, entry=LIMIT - 1, batches=None)  # the last request's line, every time
        env = env_for(tmp_path / "cache", mirror, servers.openai.base_url, servers.anthropic.base_url)
        result = cli_in_process(eqbench(MODELS[provider], tmp_path / "run", "--batch-fallback", "fail"), env)
        created = servers.batches.batches_created
        assert result.returncode == 1 and "1 items could not be answered" in result.stderr, result.stderr
        assert created == 3
        done = records(tmp_path / "run")
        failed = [item for item, record in done.items() if record["status"] == "error"]
        assert len(failed) == 1 and "no usable answer from 3 batches" in done[failed[0]]["error"]
        kept = {item: replies for item, replies in replies(tmp_path / "run").items() if item not in failed}
        assert kept == {item: honest[provider][item] for item in kept}
        rerun = cli_in_process([a for a in eqbench(MODELS[provider], tmp_path / "run") if a != "--batch"], env)
        assert rerun.returncode == 0, rerun.stderr
        assert servers.live_calls == 1  # only the failed item; the others were stored
    assert replies(tmp_path / "run") == honest[provider]


@pytest.mark.parametrize("provider", list(MODELS))
def test_a_line_broken_every_time_is_asked_live_by_default(provider: str, tmp_path: Path, mirror: Path) -> None:
    with Servers(provider) as servers:
        servers.batches.alter_results("cut", entry=LIMIT - 1, batches=None)
        env = env_for(tmp_path / "cache", mirror, servers.openai.base_url, servers.anthropic.base_url)
        result = cli_in_process(eqbench(MODELS[provider], tmp_path / "run"), env)
        created, live_calls = servers.batches.batches_created, servers.live_calls
    assert result.returncode == 0, result.stderr
    assert created == 3 and live_calls == 1
    assert "asking it live, at the full price" in result.stderr
    assert all(record["status"] == "ok" for record in records(tmp_path / "run").values())


@pytest.mark.parametrize("provider", list(MODELS))
@pytest.mark.parametrize(
    ("size", "expected", "batches"),
    [
        (100_000, "MB in one line; refused", 2),  # one line too long: the others are read
        (5_000_000, "MB of results from 127.0.0.1; the rest refused", 2),  # more than the whole batch may send
    ],
)
def test_a_result_line_past_its_bound_is_refused_even_compressed(
    provider: str, size: int, expected: str, batches: int, tmp_path: Path, mirror: Path
) -> None:
    """An answer padded to `size` bytes in the result file (from 1 MB on downloaded gzip-compressed) with replies
    limited to 64 KB: refused as it is decompressed, reported, and its request asked again."""
    with Servers(provider) as servers:
        servers.batches.alter_results("huge_line", entry=1)
        servers.batches.alterations.bomb_bytes = size
        env = env_for(tmp_path / "cache", mirror, servers.openai.base_url, servers.anthropic.base_url)
        result = cli_in_process(eqbench(MODELS[provider], tmp_path / "run", "--max-reply-bytes", "65536"), env)
        created = servers.batches.batches_created
    assert result.returncode == 0, result.stderr
    assert created == batches
    assert any(expected in line for line in warnings(result.stderr)), result.stderr
    assert all(len(reply) < 65536 for calls in replies(tmp_path / "run").values() for reply in calls)


# --- the pure parts ---------------------------------------------------------------------------------------------


def answer(text: str, model: str = "gpt-4o-mini") -> ChatResponse:
    return ChatResponse(text=text, model=model)


def test_sort_results_attaches_only_what_is_certain() -> None:
    lines = [
        ResultLine("line 1", "a", answer("A")),
        ResultLine("line 2", None, None, "not JSON"),
        ResultLine("line 3", "zz", answer("Z")),
        ResultLine("line 4", "b", answer("B1")),
        ResultLine("line 5", "b", answer("B2")),
        ResultLine("line 6", "b", answer("B1")),
        ResultLine("line 7", "c", answer("C", model="gpt-4o-mini-2024-07-18")),
        ResultLine("line 8", "d", answer("D", model="gpt-4o")),
        ResultLine("line 9", "a", answer("A")),
        ResultLine("line 10", "e", EntryFailure("malformed", "no choices", True), "an error object"),
    ]
    found = sort_results(lines, {"a", "b", "c", "d", "e"}, "gpt-4o-mini")
    outcomes = found.outcomes
    assert outcomes["a"] == answer("A") and outcomes["c"].text == "C"  # type: ignore[union-attr]
    assert isinstance(outcomes["b"], EntryFailure) and outcomes["b"].kind == "malformed"
    assert isinstance(outcomes["d"], EntryFailure) and outcomes["d"].retryable
    assert isinstance(outcomes["e"], EntryFailure)
    assert "zz" not in outcomes
    assert [problem.split(":")[0] for problem in found.problems] == [
        "line 2",
        "line 3",
        "line 5",
        "line 6",
        "line 8",
        "line 10",
    ]


@pytest.mark.parametrize(
    ("asked", "answered", "same"),
    [
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", True),
        ("gpt-4o-mini", "gpt-4o-mini", True),
        ("gpt-4o-mini", None, True),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022", True),
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", True),
        ("gpt-4o-mini", "gpt-4o", False),
        ("gpt-4o", "gpt-4o-mini-2024-07-18", False),
        ("gpt-4o-mini", "gpt-4o-mini-evil", False),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", False),
    ],
)
def test_a_dated_snapshot_is_the_same_model(asked: str, answered: str | None, same: bool) -> None:
    assert same_model(asked, answered) is same


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def read_lines(parts: list[bytes], bounds: ResultFileBounds) -> list[FileLine]:
    async def run() -> list[FileLine]:
        return [line async for line in bounded_lines(_chunks(parts), ReadCounter(bounds, "example.test"))]

    return asyncio.run(run())


def test_file_lines_are_bounded_one_by_one_and_together() -> None:
    bounds = ResultFileBounds(max_line_bytes=10, max_total_bytes=100)
    lines = read_lines([b'{"a":1}\n\n0123', b"456789abcdef\nok\r\n", b"cut"], bounds)
    assert [(line.number, line.data, line.problem is not None, line.unterminated) for line in lines] == [
        (1, b'{"a":1}', False, False),
        (3, None, True, False),  # 16 bytes: more than the line bound, skipped to its end
        (4, b"ok\r", False, False),
        (5, b"cut", False, True),  # the file ends inside it
    ]
    stopped = read_lines([b"x\n" * 30, b"y\n" * 30], ResultFileBounds(max_line_bytes=10, max_total_bytes=100))
    assert len(stopped) == 51 and stopped[-1].data is None and "the rest refused" in str(stopped[-1].problem)
    assert [line.data for line in stopped[:-1]] == [b"x"] * 30 + [b"y"] * 20  # the 100 bytes before the bound


def test_result_bounds_grow_with_the_batch() -> None:
    bounds = ResultFileBounds.for_limits([1_000_000, 2_000_000])
    assert bounds.max_line_bytes == 2_000_000 + 16_384
    assert bounds.max_total_bytes == 3_000_000 + 2 * 16_384
