"""`run --batch` end to end against the fake OpenAI (Files + Batches) and Anthropic (Message Batches) servers (in
process; the kill -9 tests in a subprocess): the same answers as the live path, no live call, resuming after kill -9
without resubmitting, failed and expired entries retried, several rounds for judged instruments, no secret in
batches.jsonl."""

import hashlib
import json
import os
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process, kill_once_polled
from empathybench.engine.batch import BatchJournal, BatchRound
from empathybench.engine.engine import RunStats
from empathybench.instruments.empathetic.testing import FakeJudge
from empathybench.models.anthropic_batch import ANTHROPIC_BATCH_LIMITS
from empathybench.models.batching import BatchLimits, BatchStatus, entry_size, split_entries
from empathybench.models.openai_batch import OPENAI_BATCH_LIMITS
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

OPENAI_KEY = "sk-batch-test-7f3a91c2d4"
ANTHROPIC_KEY = "sk-ant-batch-test-2c81e0b5"
LIMIT = 6
POLL = ["--batch-poll-interval", "0.05"]
PRICED = ["--price", "input=1000,output=1000"]


def varied_scores(request: dict[str, Any]) -> str:
    """Score lines whose value depends on the prompt, so that answers differ between items."""
    messages = request.get("messages") or []
    text = "".join(str(m.get("content")) for m in messages if isinstance(m, dict))
    return fill_score_lines(request, int(hashlib.sha256(text.encode()).hexdigest(), 16) % 11)


def env_for(cache_dir: Path, mirror: Path, openai_url: str | None = None, anthropic_url: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), EMPATHYBENCH_MIRROR=str(mirror))
    env.update(OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
    if openai_url:
        env["OPENAI_BASE_URL"] = openai_url
    if anthropic_url:
        env["ANTHROPIC_BASE_URL"] = anthropic_url
    return env


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli_in_process(args, env)


def eqbench(model: str, out: Path, *extra: str) -> list[str]:
    return ["run", "-m", model, "-b", "eqbench", "--limit", str(LIMIT), "--out", str(out), "--quiet", *extra]


def records(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "samples.jsonl").read_text("utf-8").splitlines()
    return {r["item_id"]: r for r in map(json.loads, lines)}


def journal(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "batches.jsonl").read_text("utf-8").splitlines()]


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """What an item's record says about its answers (not timings, run ids or the batch/live difference)."""
    calls = [{k: v for k, v in call.items() if k not in ("retries", "cached")} for call in record["calls"]]
    return {"status": record["status"], "parsed": record.get("parsed"), "score": record.get("score"), "calls": calls}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_gives_the_live_answers_without_a_live_call(provider: str, tmp_path: Path, mirror: Path) -> None:
    model = "openai/fake" if provider == "openai" else "anthropic/claude-fake-1"
    with FakeOpenAIServer(answer=varied_scores) as live_oa, FakeAnthropicServer(answer=varied_scores) as live_an:
        live = cli(
            eqbench(model, tmp_path / "live"), env_for(tmp_path / "c1", mirror, live_oa.base_url, live_an.base_url)
        )
        live_calls = live_oa.requests_total + live_an.requests_total
    with FakeOpenAIServer(answer=varied_scores) as oa, FakeAnthropicServer(answer=varied_scores) as an:
        env = env_for(tmp_path / "c2", mirror, oa.base_url, an.base_url)
        batched = cli(eqbench(model, tmp_path / "batch", "--batch", *POLL), env)
        chat_calls = oa.requests_total + an.requests_total
        created = oa.batches.batches_created + an.batches.batches_created
        # The batch's answers are in the cache under the live path's keys: a live run now asks nothing.
        again = cli(eqbench(model, tmp_path / "again"), env)
        calls_after = oa.requests_total + an.requests_total
    assert live.returncode == 0 and batched.returncode == 0 and again.returncode == 0, batched.stderr + again.stderr
    assert live_calls == LIMIT and chat_calls == 0 and created == 1 and calls_after == 0

    live_records, batch_records = records(tmp_path / "live"), records(tmp_path / "batch")
    assert len(batch_records) == LIMIT and set(batch_records) == set(live_records)
    assert len({json.dumps(r["parsed"], sort_keys=True) for r in batch_records.values()}) > 1  # answers differ
    for item_id, record in batch_records.items():
        assert comparable(record) == comparable(live_records[item_id])
        assert record["calls"][0]["cached"] is False
    assert all(call["cached"] for r in records(tmp_path / "again").values() for call in r["calls"])

    [submitted, ended] = journal(tmp_path / "batch")
    assert (
        submitted["event"] == "submitted" and ended["event"] == "ended" and ended["batch_id"] == submitted["batch_id"]
    )
    assert sorted(d["item"] for d in submitted["requests"].values()) == sorted(batch_records)
    run_info = json.loads((tmp_path / "batch" / "run.json").read_text("utf-8"))
    assert run_info["batch"]["batches_submitted"] == 1 and run_info["batch"]["entries_answered"] == LIMIT
    summary = json.loads((tmp_path / "batch" / "summary.json").read_text("utf-8"))
    live_summary = json.loads((tmp_path / "live" / "summary.json").read_text("utf-8"))
    assert summary["benchmarks"]["eqbench"]["score"] == live_summary["benchmarks"]["eqbench"]["score"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_kill_while_polling_then_rerun_polls_the_same_batch(provider: str, tmp_path: Path, mirror: Path) -> None:
    model = "openai/fake" if provider == "openai" else "anthropic/claude-fake-1"
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores) as oa, FakeAnthropicServer(answer=varied_scores) as an:
        fake = oa.batches if provider == "openai" else an.batches
        fake.hold = True  # the batch stays in progress until released
        env = env_for(tmp_path / "cache", mirror, oa.base_url, an.base_url)
        command = [sys.executable, "-m", "empathybench", *eqbench(model, run_dir, "--batch", *POLL)]
        kill_once_polled(command, env, fake)
        assert fake.batches_created == 1 and not (run_dir / "summary.json").exists()
        fake.hold = False
        rerun = cli(eqbench(model, run_dir, "--batch", *POLL), env)
        created, chat_calls = fake.batches_created, oa.requests_total + an.requests_total
    assert rerun.returncode == 0, rerun.stderr
    assert created == 1 and chat_calls == 0  # polled the open batch: nothing sent again
    assert len(records(run_dir)) == LIMIT and all(r["status"] == "ok" for r in records(run_dir).values())
    events = [e["event"] for e in journal(run_dir)]
    assert events == ["submitted", "ended"]
    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert run_info["batch"]["batches_resumed"] == 1 and run_info["batch"]["batches_submitted"] == 0


def test_failed_and_expired_openai_entries_go_into_the_next_batch(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores) as oa:
        oa.batches.expire_next_batches(1)  # the first batch answers only its first half
        oa.batches.fail_next_entries(1)  # and its first line fails with a 500
        result = cli(eqbench("openai/fake", run_dir, "--batch", *POLL), env_for(tmp_path / "c", mirror, oa.base_url))
        created, chat_calls = oa.batches.batches_created, oa.requests_total
    assert result.returncode == 0, result.stderr
    answered_first = (LIMIT + 1) // 2 - 1
    assert created == 2 and chat_calls == 0
    done = records(run_dir)
    assert all(r["status"] == "ok" for r in done.values())
    retries = Counter(call["retries"] for r in done.values() for call in r["calls"])
    assert retries == {0: answered_first, 1: LIMIT - answered_first}
    submitted = [e for e in journal(run_dir) if e["event"] == "submitted"]
    assert [len(e["requests"]) for e in submitted] == [LIMIT, LIMIT - answered_first]
    stats = json.loads((run_dir / "run.json").read_text("utf-8"))["batch"]
    assert stats["entries_retried"] == LIMIT - answered_first


def test_errored_and_expired_anthropic_results_are_retried(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeAnthropicServer(answer=varied_scores) as an:
        an.batches.expire_next_entries(1)
        an.batches.error_next_entries(1)
        env = env_for(tmp_path / "c", mirror, anthropic_url=an.base_url)
        result = cli(eqbench("anthropic/claude-fake-1", run_dir, "--batch", *POLL), env)
        created, chat_calls = an.batches.batches_created, an.requests_total
    assert result.returncode == 0, result.stderr
    assert created == 2 and chat_calls == 0
    retries = Counter(call["retries"] for r in records(run_dir).values() for call in r["calls"])
    assert retries == {0: LIMIT - 2, 1: 2}


@pytest.mark.parametrize("fallback", ["live", "fail"])
def test_an_entry_that_keeps_failing_is_asked_live_or_fails_after_three_batches(
    fallback: str, tmp_path: Path, mirror: Path
) -> None:
    """An entry failing in every batch is put into at most 3 batches (issue 29: not batch after batch without end),
    then asked live (the default) or recorded as its item's error (`--batch-fallback fail`)."""
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores) as oa:
        oa.batches.fail_next_entries(3 * 11)  # every batch attempt of the three entries fails
        result = cli(
            [*eqbench("openai/fake", run_dir, "--batch", *POLL, "--batch-fallback", fallback), "--limit", "3", *PRICED],
            env_for(tmp_path / "c", mirror, oa.base_url),
        )
        created, chat_calls = oa.batches.batches_created, oa.requests_total
    assert created == 3  # the first batch and two re-asks, each a batch of the three
    assert "got no usable answer from 3 batches" in result.stderr
    done = records(run_dir)
    batch = json.loads((run_dir / "run.json").read_text("utf-8"))["batch"]
    if fallback == "live":
        assert result.returncode == 0, result.stderr
        assert chat_calls == 3 and all(r["status"] == "ok" for r in done.values())
        assert all(r["calls"][0]["retries"] == 2 for r in done.values())
        assert (batch["entries_live"], batch["entries_failed"]) == (3, 0)
        model = json.loads((run_dir / "run.json").read_text("utf-8"))["cost"]["model"]
        full_price = (model["input_tokens"] + model["output_tokens"]) * 1000 / 1e6
        assert model["calls"] == 3 and model["cost_usd"] == pytest.approx(full_price)  # live: no batch discount
    else:
        assert result.returncode == 1 and "3 items could not be answered" in result.stderr, result.stderr
        assert chat_calls == 0
        assert all(r["status"] == "error" and "no usable answer from 3 batches" in r["error"] for r in done.values())
        assert (batch["entries_live"], batch["entries_failed"]) == (0, 3)


def test_judged_instrument_batches_round_by_round(tmp_path: Path, mirror: Path) -> None:
    judge = FakeJudge(unreadable_first_every=4)  # some first judge answers unreadable: a third round of re-asks
    args = ["run", "-m", "openai/gen-model", "--judge", "openai/judge-model", "-b", "empathetic", "--limit", "4"]
    with FakeOpenAIServer(answer=judge) as oa:
        env = env_for(tmp_path / "c1", mirror, oa.base_url)
        live = cli([*args, "--out", str(tmp_path / "live"), "--quiet"], env)
    live_judge = FakeJudge(unreadable_first_every=4)
    with FakeOpenAIServer(answer=live_judge) as oa:
        env = env_for(tmp_path / "c2", mirror, oa.base_url)
        batched = cli([*args, "--out", str(tmp_path / "batch"), "--quiet", "--batch", *POLL], env)
        chat_calls = oa.requests_total
    assert live.returncode == 0 and batched.returncode == 0, batched.stderr
    assert chat_calls == 0
    submitted = [e for e in journal(tmp_path / "batch") if e["event"] == "submitted"]
    engines = [e["engine"] for e in submitted]
    assert engines.count("model") == 1 and engines.count("judge") >= 2
    # The judge's ratings of the model's replies come in a later batch than those replies.
    model_batch = engines.index("model")
    assert all(e["engine"] == "judge" for e in submitted[model_batch + 1 :])
    assert len(submitted) >= 3  # model replies, their judging, the re-asks of unreadable judgements
    live_summary = json.loads((tmp_path / "live" / "summary.json").read_text("utf-8"))["benchmarks"]["empathetic"]
    summary = json.loads((tmp_path / "batch" / "summary.json").read_text("utf-8"))["benchmarks"]["empathetic"]
    assert summary["score"] == live_summary["score"] and summary["status"] == "complete"


def test_no_secret_in_the_run_directory(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores, echo_auth=True) as oa:
        url = oa.base_url.replace("://", "://user:hunter2pass@") + "?api-key=query-secret-91"
        env = env_for(tmp_path / "c", mirror)
        result = cli([*eqbench("openai/fake", run_dir, "--batch", *POLL), "--base-url", url], env)
    assert result.returncode == 0, result.stderr
    secrets = (OPENAI_KEY, "hunter2pass", "query-secret-91")
    for path in run_dir.iterdir():
        if path.is_file():
            text = path.read_text("utf-8", errors="replace")
            assert not any(secret in text for secret in secrets), path.name
    assert not any(secret in result.stdout + result.stderr for secret in secrets)
    assert journal(run_dir)[0]["requests"]
    replies = [call["reply"] for r in records(run_dir).values() for call in r["calls"]]
    assert all("received Authorization" in reply for reply in replies)  # the fake did repeat them, redacted


@pytest.mark.parametrize("model", ["scripted/plausible", "local"])
def test_batch_is_refused_for_backends_without_a_batch_api(model: str, tmp_path: Path, mirror: Path) -> None:
    result = cli(
        ["run", "-m", model, "-b", "eqbench", "--out", str(tmp_path / "run"), "--batch"], env_for(tmp_path, mirror)
    )
    assert result.returncode != 0
    assert "--batch needs a provider with a batch API" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr and not (tmp_path / "run").exists()


def test_model_arguments_apply_to_batch_bodies_as_live(tmp_path: Path, mirror: Path) -> None:
    """An o-series model gets max_completion_tokens and reasoning_effort, no temperature (the fake 400s those)."""
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores) as oa, FakeAnthropicServer(answer=varied_scores) as an:
        env = env_for(tmp_path / "c", mirror, oa.base_url, an.base_url)
        reasoning = cli([*eqbench("openai/o4-mini", run_dir, "--batch", *POLL, "-M", "reasoning_effort=low")], env)
        thinking = cli(
            [*eqbench("anthropic/claude-fake-1", tmp_path / "an", "--batch", *POLL, "-M", "thinking_budget=2048")], env
        )
        uploaded = [f.content for f in oa.batches.files.values() if f.purpose == "batch"]
        params = [r["params"] for b in an.batches.batches.values() for r in b.requests]
    assert reasoning.returncode == 0 and thinking.returncode == 0, reasoning.stderr + thinking.stderr
    bodies = [json.loads(line)["body"] for content in uploaded for line in content.decode().splitlines()]
    assert len(bodies) == LIMIT
    assert all(b["reasoning_effort"] == "low" and "max_completion_tokens" in b for b in bodies)
    assert not any("temperature" in b or "max_tokens" in b for b in bodies)
    sent = sorted(json.dumps(c["sent"], sort_keys=True) for r in records(run_dir).values() for c in r["calls"])
    without_messages = [{k: v for k, v in b.items() if k != "messages"} for b in bodies]
    assert sent == sorted(json.dumps(b, sort_keys=True) for b in without_messages)
    assert len(params) == LIMIT
    assert all(p["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in p for p in params)
    assert all(r["status"] == "ok" for r in records(tmp_path / "an").values())


def test_progress_shows_the_batch_state(tmp_path: Path, mirror: Path) -> None:
    with FakeOpenAIServer(answer=varied_scores) as oa:
        args = [a for a in eqbench("openai/fake", tmp_path / "run", "--batch", *POLL) if a != "--quiet"]
        result = cli(args, env_for(tmp_path / "c", mirror, oa.base_url))
    assert result.returncode == 0, result.stderr
    assert f"{LIMIT}/{LIMIT} items, batch ended ({LIMIT}/{LIMIT} done)" in result.stderr  # the progress stream


def test_progress_text_of_open_batches(tmp_path: Path) -> None:
    stats = RunStats()
    batch_round = BatchRound(BatchJournal(tmp_path / "batches.jsonl"), stats)
    batch_round.show("model", "b1", BatchStatus("validating", "validating", {"total": 9, "completed": 0, "failed": 0}))
    assert stats.batch_state == "batch validating (0/9 done)"
    batch_round.show(
        "model", "b1", BatchStatus("in_progress", "in_progress", {"total": 9, "completed": 4, "failed": 1})
    )
    batch_round.show("judge", "b2", BatchStatus("in_progress", "in_progress", {"processing": 3, "succeeded": 2}))
    assert stats.batch_state.startswith("batch 2 in_progress (")
    batch_round.show("model", "b1", BatchStatus("ended", "completed", {"total": 9, "completed": 9, "failed": 0}))
    assert stats.batch_state == "batch in_progress (3 processing, 2 succeeded)"  # only the open one


def test_a_batch_is_split_only_at_the_providers_limits() -> None:
    entries = [{"custom_id": f"{i:04d}", "body": "x" * 100} for i in range(10)]
    assert split_entries(entries, BatchLimits(max_requests=4, max_bytes=10**9)) == [
        entries[0:4],
        entries[4:8],
        entries[8:10],
    ]
    size = entry_size(entries[0])
    by_bytes = split_entries(entries, BatchLimits(max_requests=100, max_bytes=64 * 1024 + 3 * size))
    assert [len(chunk) for chunk in by_bytes] == [3, 3, 3, 1]
    assert split_entries(entries, OPENAI_BATCH_LIMITS) == [entries]
    assert OPENAI_BATCH_LIMITS.max_requests == 50_000 and ANTHROPIC_BATCH_LIMITS.max_requests == 100_000


def test_journal_finds_open_batches_and_ignores_a_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    first = BatchJournal(path)
    first.submitted("b1", "openai", "model", {"k1": {"tag": "x"}, "k2": {"tag": "x"}})
    first.submitted("b2", "openai", "model", {"k3": {"tag": "x"}})
    first.ended("b2", "completed", {"total": 1})
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"event": "submitted", "batch_id": "b3", "requ')  # killed mid-write
    again = BatchJournal(path)
    assert again.open_batches == ["b1"]
    assert again.claim("anthropic", {"k1"}) == []
    assert again.claim("openai", {"k2", "k9"}) == [("b1", {"k1", "k2"})]
    assert again.claim("openai", {"k1"}) == []  # already being polled in this session


def test_a_batch_that_fails_validation_is_each_items_error_without_retries(tmp_path: Path, mirror: Path) -> None:
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores) as oa:
        oa.batches.invalidate_next_batches(1)
        env = env_for(tmp_path / "c", mirror, oa.base_url)
        result = cli([*eqbench("openai/fake", run_dir, "--batch", *POLL), "--limit", "2"], env)
        created, chat_calls = oa.batches.batches_created, oa.requests_total
    assert result.returncode == 1 and "2 items could not be answered" in result.stderr
    assert created == 1 and chat_calls == 0  # sending the same input again would fail the same way
    done = records(run_dir)
    assert all(r["status"] == "error" and "fake validation failure" in r["error"] for r in done.values())
    assert [e["event"] for e in journal(run_dir)] == ["submitted", "ended"]


def test_a_batch_cancelled_while_the_run_was_dead_is_sent_again(tmp_path: Path, mirror: Path) -> None:
    """Resumed, the cancelled batch's entries (error file: batch_cancelled) go into one new batch."""
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=varied_scores) as oa:
        oa.batches.hold = True
        env = env_for(tmp_path / "cache", mirror, oa.base_url)
        command = [sys.executable, "-m", "empathybench", *eqbench("openai/fake", run_dir, "--batch", *POLL)]
        kill_once_polled(command, env, oa.batches)
        [batch_id] = oa.batches.batches
        request = urllib.request.Request(f"{oa.base_url}/batches/{batch_id}/cancel", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["status"] == "cancelling"
        oa.batches.hold = False
        rerun = cli(eqbench("openai/fake", run_dir, "--batch", *POLL), env)
        created, chat_calls = oa.batches.batches_created, oa.requests_total
    assert rerun.returncode == 0, rerun.stderr
    assert created == 2 and chat_calls == 0
    assert all(r["status"] == "ok" and r["calls"][0]["retries"] == 1 for r in records(run_dir).values())
    batch = json.loads((run_dir / "run.json").read_text("utf-8"))["batch"]
    assert (batch["batches_resumed"], batch["batches_submitted"], batch["entries_retried"]) == (1, 1, LIMIT)
    statuses = [e.get("status") for e in journal(run_dir) if e["event"] == "ended"]
    assert statuses == ["cancelled", "completed"]


def test_a_refused_key_is_one_line_and_a_failing_exit(tmp_path: Path, mirror: Path) -> None:
    with FakeAnthropicServer(api_key="sk-ant-the-right-one", answer=varied_scores) as an:
        env = env_for(tmp_path / "c", mirror, anthropic_url=an.base_url)
        result = cli(eqbench("anthropic/claude-fake-1", tmp_path / "run", "--batch", *POLL), env)
        created = an.batches.batches_created
    assert result.returncode != 0 and created == 0
    assert "refused the API key" in result.stderr and "Traceback" not in result.stderr
    assert ANTHROPIC_KEY not in result.stderr + result.stdout


def test_batched_calls_are_billed_at_the_batch_price_and_held_to_the_budget(tmp_path: Path, mirror: Path) -> None:
    """The cost meter sees batched requests as it sees live ones: run.json bills every answered entry at half the
    price, and `--max-cost` stops a batched run (exit 3) that a larger budget then finishes without asking twice."""
    priced = ["--price", "input=1000,output=1000"]
    with FakeOpenAIServer(answer=varied_scores) as oa:
        env = env_for(tmp_path / "cache", mirror, oa.base_url)
        full = cli(eqbench("openai/fake", tmp_path / "full", "--batch", *POLL, *priced, "--no-cache"), env)
        assert full.returncode == 0, full.stderr
        budgeted = eqbench("openai/fake", tmp_path / "budget", "--batch", *POLL, *priced, "--max-cost")
        stopped = cli([*budgeted, "1"], env)
        continued = cli([*budgeted, "1000"], env)
    assert oa.requests_total == 0  # no live call in any of the three runs
    cost = json.loads((tmp_path / "full" / "run.json").read_text("utf-8"))["cost"]
    model = cost["model"]
    assert model["calls"] == LIMIT and model["input_tokens"] > 0
    assert model["cost_usd"] == pytest.approx((model["input_tokens"] + model["output_tokens"]) * 1000 / 1e6 / 2)
    assert stopped.returncode == 3, stopped.stderr
    assert continued.returncode == 0, continued.stderr
    budget = json.loads((tmp_path / "budget" / "run.json").read_text("utf-8"))
    assert [s["status"] for s in budget["sessions"]] == ["budget", "complete"]
    assert budget["cost"]["model"]["calls"] == LIMIT  # every entry billed once over both sessions
    assert {k: comparable(r) for k, r in records(tmp_path / "budget").items()} == {
        k: comparable(r) for k, r in records(tmp_path / "full").items()
    }
