"""`run --dry-run` against the real run (issue 13): the dry run's request count must equal the real run's
first-attempt count exactly, and its input-token estimate must be within 25% of the tokens the server reports.

Two runs, each against the fake OpenAI server (in this process, 127.0.0.1, default answers: every `Label: <score>`
line filled with 5, else one plain sentence), the CLI in a subprocess with a fresh cache:

    empathybench run -m openai/gpt-4o-mini --base-url URL -b eqbench -p paper --dry-run --json
    empathybench run -m openai/gpt-4o-mini --base-url URL -b eqbench -p paper --no-cache
    (the same for -b emobench -p quick: paper2024 protocol, English and Chinese)

Checked: the dry run sends no request; its requests == the real run's first attempts (from samples.jsonl) ==
the requests the server received; estimated input tokens / the server's `usage.prompt_tokens` in [0.75, 1.25].
The fake server counts prompt tokens like a BPE pre-tokenizer (words with their leading space, digit groups,
punctuation runs, one per CJK character) plus 3 per message and 3 for the reply, as OpenAI bills the chat
format; it used to count whitespace-separated words, which undercounts English by about a quarter and Chinese
(no spaces) almost entirely.

Results: bench/results/dry_run.json and dry_run.md; exit 1 when a check fails.

    EMPATHYBENCH_MIRROR=../shared/mirror python bench/bench_dry_run.py
"""

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from empathybench.testing.fake_openai import FakeOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
CASES = (("eqbench", "paper"), ("emobench", "quick"))
MODEL = "openai/gpt-4o-mini"
TOLERANCE = 0.25


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "empathybench", "run", *args], env=env, capture_output=True, text=True, check=False
    )


def measure(bench: str, preset: str, scratch: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(scratch / "cache"), OPENAI_API_KEY="sk-bench")
    env.setdefault("EMPATHYBENCH_MIRROR", str(REPO_ROOT.parent / "shared" / "mirror"))
    run_dir = scratch / "run"
    with FakeOpenAIServer() as server:
        common = ["-m", MODEL, "--base-url", server.base_url, "-b", bench, "-p", preset, "-o", str(run_dir), "-q"]
        started = time.perf_counter()
        dry = _cli([*common, "--dry-run", "--json"], env)
        dry_wall = time.perf_counter() - started
        if dry.returncode != 0:
            raise SystemExit(f"dry run failed ({dry.returncode}): {dry.stderr[-2000:]}")
        requests_during_dry_run = server.requests_total
        estimate = json.loads(dry.stdout)
        started = time.perf_counter()
        real = _cli([*common, "--no-cache"], env)
        real_wall = time.perf_counter() - started
        if real.returncode not in (0, 1):  # 1: some items unanswered (still a measured run)
            raise SystemExit(f"run failed ({real.returncode}): {real.stderr[-2000:]}")
        served = server.requests_total
    calls = [
        call
        for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines()
        for call in json.loads(line).get("calls") or []
    ]
    first_attempts = sum(1 for call in calls if call.get("attempt", 0) == 0)
    server_prompt_tokens = sum(call["prompt_tokens"] for call in calls)
    server_completion_tokens = sum(call["completion_tokens"] for call in calls)
    run_info = json.loads((run_dir / "run.json").read_text("utf-8"))
    model = estimate["total"]["model"]
    ratio = model["input_tokens"] / server_prompt_tokens
    return {
        "bench": bench,
        "preset": preset,
        "items": estimate["instruments"][0]["n_items"],
        "dry_run_requests": model["requests"],
        "dry_run_reasks": model["reasks"],
        "requests_during_dry_run": requests_during_dry_run,
        "real_first_attempts": first_attempts,
        "real_calls": len(calls),
        "server_requests": served,
        "requests_exact": model["requests"] == first_attempts == served,
        "estimated_input_tokens": model["input_tokens"],
        "server_prompt_tokens": server_prompt_tokens,
        "input_ratio": round(ratio, 4),
        "input_within_tolerance": abs(ratio - 1) <= TOLERANCE,
        "estimated_output_tokens": model["output_tokens"],
        "estimated_output_tokens_max": model["output_tokens_max"],
        "server_completion_tokens": server_completion_tokens,
        "estimated_cost_usd": estimate["total"]["cost_usd"],
        "estimated_cost_usd_max": estimate["total"]["cost_usd_max"],
        "actual_cost_usd": run_info["cost"]["cost_usd"],
        "price": estimate["prices"]["model"],
        "dry_run_wall_s": round(dry_wall, 2),
        "real_run_wall_s": round(real_wall, 2),
    }


def write_markdown(results: list[dict[str, Any]], when: str, machine: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {r['bench']} {r['preset']} | {r['items']} | {r['dry_run_requests']} | {r['real_first_attempts']} | "
        f"{r['server_requests']} | {r['requests_during_dry_run']} | {r['estimated_input_tokens']:,} | "
        f"{r['server_prompt_tokens']:,} | {r['input_ratio']:.3f} | {r['estimated_output_tokens']:,} / "
        f"{r['estimated_output_tokens_max']:,} | {r['server_completion_tokens']:,} | "
        f"${r['estimated_cost_usd']:.4f} | ${r['actual_cost_usd']:.4f} | {r['dry_run_wall_s']} s |"
        for r in results
    )
    return (
        f"# `run --dry-run` against the real run ({when})\n\n"
        f"Model {MODEL} (priced from the shipped table) at the fake OpenAI server; {machine['cpus']} CPUs, "
        f"load average {machine['load_average']}.\n\n"
        "| run | items | dry-run requests | real first attempts | server requests | requests during the dry run | "
        "estimated input tokens | server prompt tokens | ratio | estimated output (expected / at most) | "
        "server completion tokens | estimated cost | actual cost | dry-run wall |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        f"{rows}\n\nTargets: requests equal exactly; input-token ratio within 1 ± {TOLERANCE}. The fake server's "
        "answers are not the canned ones, so output tokens differ (its sentence is shorter than most canned answers; "
        "'at most' is the requests' max tokens).\n"
    )


def main() -> None:
    when = datetime.now(UTC).isoformat(timespec="seconds")
    results = []
    for bench, preset in CASES:
        with tempfile.TemporaryDirectory(prefix="eb-dry-run-") as scratch:
            results.append(measure(bench, preset, Path(scratch)))
    machine = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    record = {"when": when, "machine": machine, "results": results}
    (RESULTS_DIR / "dry_run.json").write_text(json.dumps(record, indent=2) + "\n", "utf-8")
    markdown = write_markdown(results, when, machine)
    (RESULTS_DIR / "dry_run.md").write_text(markdown, "utf-8")
    print(markdown)
    ok = all(r["requests_exact"] and r["input_within_tolerance"] and r["requests_during_dry_run"] == 0 for r in results)
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
