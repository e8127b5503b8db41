"""SAGE's paper preset through the real CLI against the fake OpenAI-compatible server: conversations in parallel.

A SAGE run is 100 conversations; each is a chain of calls that cannot overlap (the person's analysis needs the
model's reply, the person's line needs the analysis, the model's next reply needs the line). With enough concurrency
for every conversation, a run can be no faster than its longest chain: (calls of the longest conversation) x
(server latency). The fake server's simulator always answers Change 0, so every person stays at emotion 40 and
every conversation runs all 10 rounds: 10 model calls and 18 simulator calls, 28 calls in a chain.

Scenarios (`empathybench run --model openai/fake --simulator openai/fake --bench sage --preset paper` in a
subprocess, both roles on the same fake server, told apart by their prompts):
  cold     empty response cache, latency L, --max-concurrency C >= 100: the server's span (the first request's
           arrival to the last answer: the conversations themselves, as bench_adaptive_concurrency.py measures)
           against 1.25 x 28 x L (issue 30); beside it the engine phase (the run's session, which also holds the
           SDK's import at the first call and the writing of the results) and the process's wall time;
  killed   the same command on a fresh cache killed with SIGKILL after K requests, then run again: the second
           session asks no request the first one had answered (a body asked by both sessions was in flight at the
           kill: at most one per conversation), and the run completes;
  prefix   from the cold run's recorded calls: the share of each role's prompt tokens that repeat the start of the
           same conversation's previous request of that role (what a provider's prompt cache can serve, counted in
           128-token blocks from 1,024 tokens, as OpenAI's), beside what the fake server's own prompt cache served
           (`cached_tokens` of its usage, in the same tokens as its prompt_tokens).

Results go to bench/results/sage_conversations.json and .md.

    EMPATHYBENCH_MIRROR=/path/to/mirror python bench/bench_sage_conversations.py
    python bench/bench_sage_conversations.py --latency 0.2     # a quicker look
"""

import argparse
import json
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import bench_env  # a sibling script, not a package: the CLI's environment with a fresh cache
from empathybench import __version__
from empathybench.testing.fake_openai import FakeOpenAIServer, count_text_tokens

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
LIMIT_FACTOR = 1.25  # issue 30: within 1.25 x the longest chain x latency
CHAIN_CALLS = 28  # 10 model replies + 9 analyses + 9 lines of the person
# A prompt cache as OpenAI's: prompts of at least 1,024 tokens, in 128-token blocks.
CACHE_MIN_TOKENS, CACHE_BLOCK_TOKENS = 1024, 128
_PIECE = re.compile(r"'(?:s|t|re|ve|m|ll|d)| ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|\s+")


def answer(request: dict[str, Any]) -> str:
    """The model under test (its requests start with a system message), or the person: the line's template asks
    for "Response:", the analysis's does not (and the analysis always moves the emotion by 0)."""
    messages = request.get("messages") or []
    if messages and messages[0].get("role") == "system":  # about as long as GPT-4.1's replies (517 characters)
        return "听起来你最近压力不小，这些事情一件接一件，换作是谁都会觉得累。" * 16 + "愿意多说说发生了什么吗？"
    last = str(messages[-1].get("content", "")) if messages else ""
    if "Response:" in last:
        return "Thinking:\n[继续说]\nResponse:\n嗯，其实还有点别的事。"
    return "Content:\n[安慰]\nTargetCompletion:\n[部分]\nActivity:\n[还行]\nAnalyse:\n[一般]\nChange:\n0"


def command(base_url: str, out: Path, concurrency: int) -> list[str]:
    return [
        *(sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url", base_url),
        *("--simulator", "openai/fake", "--simulator-base-url", base_url),
        *("--bench", "sage", "--preset", "paper", "--max-concurrency", str(concurrency), "--out", str(out)),
    ]


def prefetch(env: dict[str, str], base_url: str, root: Path) -> None:
    """The data into the fresh cache (a dry run reads it and asks nothing), so "cold" means no cached replies."""
    subprocess.run([*command(base_url, root / "prefetch", 4), "--dry-run"], env=env, capture_output=True, check=True)


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text("utf-8").split("\n") if line]


def pieces(call: dict[str, Any]) -> list[tuple[str, int]]:
    """A request as (piece, tokens) in order, each message's role with its first piece (roles matter)."""
    out: list[tuple[str, int]] = []
    for message in call["messages"]:
        found = _PIECE.findall(message["content"])
        for index, piece in enumerate(found):
            out.append((f"{message['role']}\x1d{piece}" if index == 0 else piece, count_text_tokens(piece)))
    return out


def _shared_tokens(now: list[tuple[str, int]], before: list[tuple[str, int]]) -> int:
    shared = 0
    for (a, tokens), (b, _) in zip(now, before, strict=False):
        if a != b:
            break
        shared += tokens
    return shared


def prefix_shares(run_dir: Path) -> dict[str, Any]:
    """Per role: prompt tokens, and those a prefix cache could serve (the longest start shared with an earlier
    request of that role in the same conversation, in whole blocks, for prompts long enough to be cached)."""
    totals: dict[str, Counter[str]] = {}
    for record in records(run_dir):
        earlier: dict[str, list[list[tuple[str, int]]]] = {}
        for call in record["calls"]:
            role = call.get("role") or "model"
            now = pieces(call)
            shared = max((_shared_tokens(now, before) for before in earlier.get(role, [])), default=0)
            prompt = sum(tokens for _, tokens in now)
            cached = (shared // CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS if prompt >= CACHE_MIN_TOKENS else 0
            total = totals.setdefault(role, Counter())
            total.update(prompt_tokens=prompt, cacheable_tokens=cached, calls=1)
            earlier.setdefault(role, []).append(now)
    return {
        role: {**dict(total), "cacheable_share": round(total["cacheable_tokens"] / total["prompt_tokens"], 4)}
        for role, total in totals.items()
    }


@contextmanager
def fresh_server(latency: float, mirror: str | None) -> Iterator[tuple[Path, dict[str, str], FakeOpenAIServer]]:
    """A scratch directory, the fake server at `latency`, and the CLI's environment with a cache that holds the
    data but no reply (so a run's calls all reach the server); the server's counters start at zero."""
    with (
        tempfile.TemporaryDirectory(prefix="eb-sage-") as scratch,
        FakeOpenAIServer(latency_s=latency, answer=answer, models=("fake",)) as server,
    ):
        root = Path(scratch)
        env = bench_env(root / "cache", mirror)
        prefetch(env, server.base_url, root)
        server.reset_counters()
        yield root, env, server


def cold(latency: float, concurrency: int, mirror: str | None) -> dict[str, Any]:
    with fresh_server(latency, mirror) as (root, env, server):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            command(server.base_url, root / "cold", concurrency), env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"run failed:\n{done.stderr[-3000:]}")
        summary = json.loads((root / "cold" / "summary.json").read_text("utf-8"))
        result = summary["benchmarks"]["sage"]
        chains = [len(r["calls"]) for r in records(root / "cold")]
        usage = summary.get("usage") or {}
        log = server.log
        return {
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "server_span_s": round(max(e.finished for e in log) - min(e.arrived for e in log), 3),
            "engine_elapsed_s": summary.get("elapsed_s"),
            "requests": server.requests_total,
            "max_in_flight": server.max_in_flight,
            "conversations": len(chains),
            "longest_chain_calls": max(chains),
            "limit_s": round(LIMIT_FACTOR * max(chains) * latency, 2),
            "score": result.get("score"),
            "mean_turns": result.get("mean_turns"),
            "prefix": prefix_shares(root / "cold"),
            "server_cached_tokens": usage.get("cached_input_tokens"),
            "server_prompt_tokens": usage.get("prompt_tokens"),
        }


def killed(latency: float, concurrency: int, kill_after: int, mirror: str | None) -> dict[str, Any]:
    with fresh_server(latency, mirror) as (root, env, server):
        run = command(server.base_url, root / "run", concurrency)
        process = subprocess.Popen(run, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while server.requests_total < kill_after and process.poll() is None:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        first = server.body_counts
        server.reset_counters()
        started = time.perf_counter()
        done = subprocess.run(run, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        second = server.body_counts
        result = json.loads((root / "run" / "summary.json").read_text("utf-8"))["benchmarks"]["sage"]
        return {
            "killed_after_requests": sum(first.values()),
            "second_session_requests": sum(second.values()),
            "asked_by_both_sessions": len(set(first) & set(second)),
            "asked_twice_in_one_session": sum(1 for c in (*first.values(), *second.values()) if c > 1),
            "second_session_wall_s": round(wall, 2),
            "completed": done.returncode == 0 and result.get("n_completed") == 100,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--kill-after", type=int, default=1200)
    args = parser.parse_args()
    mirror = os.environ.get("EMPATHYBENCH_MIRROR") or str(REPO_ROOT.parent / "shared" / "mirror")
    load_before = os.getloadavg()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "version": __version__,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_before": load_before},
        "http_client": os.environ.get("EMPATHYBENCH_HTTP_CLIENT") or "httpx (default)",
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "cold": cold(args.latency, args.concurrency, mirror),
        "killed": killed(args.latency, args.concurrency, args.kill_after, mirror),
    }
    result["machine"]["load_after"] = os.getloadavg()
    cold_run, kill = result["cold"], result["killed"]
    ok = (
        cold_run["server_span_s"] <= cold_run["limit_s"]
        and kill["completed"]
        and kill["asked_twice_in_one_session"] == 0
        and kill["asked_by_both_sessions"] <= cold_run["conversations"]
    )
    result["within_limits"] = ok
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "sage_conversations.json").write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    prefix = "\n".join(
        f"| {role} | {v['calls']} | {v['prompt_tokens']:,} | {v['cacheable_tokens']:,} | "
        f"{100 * v['cacheable_share']:.1f}% |"
        for role, v in cold_run["prefix"].items()
    )
    load_after = list(result["machine"]["load_after"])
    md = f"""# SAGE conversations against the fake server ({result["date"]})

Paper preset (100 people, 10 rounds), the simulator its own role on the same fake server,
HTTP client {result["http_client"]}, `--max-concurrency {args.concurrency}`, server latency
{args.latency} s; {os.cpu_count()} CPUs, load average before {list(load_before)}, after {load_after}.

**Cold:** server span {cold_run["server_span_s"]} s (first request in to last answer out); limit
{LIMIT_FACTOR} x {cold_run["longest_chain_calls"]} calls x {args.latency} s = {cold_run["limit_s"]} s. Engine phase
{cold_run["engine_elapsed_s"]} s (adds the SDK's import at the first call, about 1.2 s, and writing the results),
process wall {cold_run["wall_s"]} s (CPU {cold_run["cpu_s"]} s);
{cold_run["requests"]} requests, at most {cold_run["max_in_flight"]} in flight, {cold_run["conversations"]}
conversations.

**Killed and resumed:** SIGKILL after {kill["killed_after_requests"]} requests; the second session asked
{kill["second_session_requests"]} (in {kill["second_session_wall_s"]} s), {kill["asked_by_both_sessions"]} of them
also asked by the first (in flight at the kill), none twice in one session; completed: {kill["completed"]}.

**Prompt prefix a provider's cache can serve** (the start of the same conversation's previous request of the role,
128-token blocks from 1,024 tokens):

| role | calls | prompt tokens | cacheable | share |
|---|---|---|---|---|
{prefix}

Within limits: {ok}.
"""
    (RESULTS_DIR / "sage_conversations.md").write_text(md, "utf-8")
    print(md)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
