"""Measure the engine through the real CLI against the fake OpenAI-compatible server on 127.0.0.1.

Scenarios (each `empathybench run --model openai/fake --bench eqbench --preset paper` in a subprocess):
  cold       empty response cache, server latency L, --max-concurrency C: wall time against
             1.15 x (ceil(N/C) x L + warm start), and CPU time per request of the child process;
  warm       the same command with a new --out on the warm cache: asks the server nothing, under 3 s;
             its wall time is the "warm start" (interpreter, imports, data check, cache reads, run dir);
  faults     a fresh cache against a server answering 15% 429 (Retry-After), 5% 500, 5% dropped
             connections and 3% malformed bodies: every item must be answered.

Data files are fetched into each fresh cache before the timed runs, so "cold" means an empty response
cache, not a download. Results go to bench/results/engine.json and engine.md.

    python bench/bench_engine.py                 # the acceptance settings: L = 1 s, C = 16
    python bench/bench_engine.py --latency 0.2   # a quicker look
"""

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from empathybench import __version__
from empathybench.testing.fake_openai import FakeOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
PAPER_ITEMS = 171
COLD_LIMIT_FACTOR = 1.15
WARM_LIMIT_S = 3.0
BENCH_API_KEY = "sk-bench-not-a-secret"


def bench_env(cache_dir: Path, mirror: str | None, source: str | None = None) -> dict[str, str]:
    """The CLI's environment for a bench: none of the caller's provider or EmpathyBench settings, the bench's key, a
    cache of its own, the mirror, and optionally another source tree first on the path (--baseline-src)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    if source is not None:
        env["PYTHONPATH"] = source
    env["EMPATHYBENCH_CACHE_DIR"] = str(cache_dir)
    env["OPENAI_API_KEY"] = BENCH_API_KEY
    if mirror:
        env["EMPATHYBENCH_MIRROR"] = mirror
    return env


def run_timed(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run a child to completion; its wall time and CPU time (user + system, from rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "returncode": result.returncode,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "stderr_tail": result.stderr.strip().splitlines()[-3:],
    }


def run_command(base_url: str, out: Path, concurrency: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "empathybench",
        "run",
        "--model",
        "openai/fake",
        "--base-url",
        base_url,
        "--bench",
        "eqbench",
        "--preset",
        "paper",
        "--max-concurrency",
        str(concurrency),
        "--out",
        str(out),
        "--quiet",
    ]


def prefetch_data(env: dict[str, str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "empathybench", "data", "fetch", "--bench", "eqbench"]
    result = run_timed(command, env)
    if result["returncode"] != 0:
        raise SystemExit(f"data fetch failed: {result['stderr_tail']}")
    return result


def run_summary(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    eqbench = summary["benchmarks"]["eqbench"]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    return {
        "items_ok": sum(1 for r in records if r["status"] == "ok"),
        "n_parsed": eqbench["n_parsed"],
        "score": eqbench["score"],
        "usage": summary["usage"],
    }


def cold_and_warm(latency: float, concurrency: int, warm_repeats: int, mirror: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="eb-bench-") as scratch, FakeOpenAIServer(latency_s=latency) as server:
        root = Path(scratch)
        env = bench_env(root / "cache", mirror)
        prefetch = prefetch_data(env)

        cold = run_timed(run_command(server.base_url, root / "cold", concurrency), env)
        cold_requests = server.requests_total
        cold["requests"] = cold_requests
        cold["max_in_flight"] = server.max_in_flight
        cold.update(run_summary(root / "cold"))

        warm_runs = []
        for index in range(warm_repeats):
            asked_before = server.requests_total
            warm = run_timed(run_command(server.base_url, root / f"warm-{index}", concurrency), env)
            warm["requests"] = server.requests_total - asked_before
            warm.update(run_summary(root / f"warm-{index}"))
            warm_runs.append(warm)

    warm_start_s = statistics.median(w["wall_s"] for w in warm_runs)
    ideal_s = math.ceil(PAPER_ITEMS / concurrency) * latency
    limit_s = COLD_LIMIT_FACTOR * (ideal_s + warm_start_s)
    # CPU of the child per request, and the same without the start-up work a warm run also does.
    cpu_per_request_ms = 1000 * cold["cpu_s"] / cold_requests
    warm_cpu_s = statistics.median(w["cpu_s"] for w in warm_runs)
    engine_cpu_per_request_ms = 1000 * (cold["cpu_s"] - warm_cpu_s) / cold_requests
    return {
        "latency_s": latency,
        "max_concurrency": concurrency,
        "items": PAPER_ITEMS,
        "data_prefetch": prefetch,
        "cold": cold,
        "warm_runs": warm_runs,
        "warm_start_s": round(warm_start_s, 3),
        "ideal_s": round(ideal_s, 3),
        "cold_limit_s": round(limit_s, 3),
        "cold_over_ideal_s": round(cold["wall_s"] - ideal_s, 3),
        "cpu_per_request_ms": round(cpu_per_request_ms, 2),
        "engine_cpu_per_request_ms": round(engine_cpu_per_request_ms, 2),
        "checks": {
            "cold_all_items_ok": cold["returncode"] == 0 and cold["items_ok"] == PAPER_ITEMS,
            "cold_within_limit": cold["wall_s"] <= limit_s,
            "concurrency_reached": cold["max_in_flight"] == concurrency,
            "warm_asked_nothing": all(w["requests"] == 0 for w in warm_runs),
            "warm_under_3s": all(w["wall_s"] < WARM_LIMIT_S for w in warm_runs),
            "warm_all_items_ok": all(w["returncode"] == 0 and w["items_ok"] == PAPER_ITEMS for w in warm_runs),
        },
    }


def fault_mix(latency: float, concurrency: int, retry_after: str, mirror: str | None) -> dict[str, Any]:
    rates = {"rate_429": 0.15, "rate_500": 0.05, "rate_drop": 0.05, "rate_malformed": 0.03}
    with (
        tempfile.TemporaryDirectory(prefix="eb-bench-") as scratch,
        FakeOpenAIServer(latency_s=latency, retry_after=retry_after, seed=2024, **rates) as server,
    ):
        root = Path(scratch)
        env = bench_env(root / "cache", mirror)
        prefetch_data(env)
        run = run_timed(run_command(server.base_url, root / "faults", concurrency), env)
        run.update(run_summary(root / "faults"))
        run["requests"] = server.requests_total
        run["outcomes"] = dict(server.outcomes)
    return {
        "latency_s": latency,
        "max_concurrency": concurrency,
        "retry_after": retry_after,
        **rates,
        "run": run,
        "checks": {"every_item_answered": run["returncode"] == 0 and run["items_ok"] == PAPER_ITEMS},
    }


def markdown(results: dict[str, Any]) -> str:
    cw, fm = results["cold_and_warm"], results["fault_mix"]
    cold, faults = cw["cold"], fm["run"]
    warm_walls = ", ".join(f"{w['wall_s']:.2f}" for w in cw["warm_runs"])
    rows = [
        ("cold run wall time", f"{cold['wall_s']:.2f} s", f"≤ {cw['cold_limit_s']:.2f} s", "cold_within_limit"),
        ("ideal ceil(N/C) x latency", f"{cw['ideal_s']:.2f} s", "", None),
        ("server requests (cold)", f"{cold['requests']}", f"{cw['items']}", None),
        ("max in flight (server side)", f"{cold['max_in_flight']}", f"{cw['max_concurrency']}", "concurrency_reached"),
        ("CPU per request, whole child", f"{cw['cpu_per_request_ms']:.1f} ms", "", None),
        ("CPU per request, minus start-up", f"{cw['engine_cpu_per_request_ms']:.1f} ms", "", None),
        ("warm re-run wall time (= warm start)", f"{warm_walls} s", f"< {WARM_LIMIT_S:.0f} s", "warm_under_3s"),
        ("warm re-run server requests", f"{sum(w['requests'] for w in cw['warm_runs'])}", "0", "warm_asked_nothing"),
        (
            "fault mix: items answered",
            f"{faults['items_ok']}/{cw['items']}",
            f"{cw['items']}/{cw['items']}",
            "every_item_answered",
        ),
        ("fault mix: wall time / requests", f"{faults['wall_s']:.2f} s / {faults['requests']}", "", None),
    ]
    checks = {**cw["checks"], **fm["checks"]}
    lines = [
        f"# Engine benchmark ({results['date']})",
        "",
        f"EQ-Bench paper preset ({cw['items']} items), `--max-concurrency {cw['max_concurrency']}`, fake server "
        f"latency {cw['latency_s']:g} s, on {results['machine']['platform']} "
        f"({results['machine']['cpus']} CPUs), Python {results['machine']['python']}.",
        "",
        "| measure | value | limit | ok |",
        "|---|---|---|---|",
    ]
    for name, value, limit, check in rows:
        mark = "" if check is None else ("yes" if checks[check] else "**NO**")
        lines.append(f"| {name} | {value} | {limit} | {mark} |")
    outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(faults["outcomes"].items()))
    lines += ["", f"Fault-mix server outcomes: {outcomes}; retries by kind: {faults['usage']['retries_by_kind']}.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="server latency in seconds (default 1)")
    parser.add_argument("--concurrency", type=int, default=16, help="--max-concurrency (default 16)")
    parser.add_argument("--warm-repeats", type=int, default=3, help="warm re-runs; the median is the warm start")
    parser.add_argument("--retry-after", default="1", help="Retry-After of the fault mix's 429s (default 1)")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="where to write engine.json/.md")
    args = parser.parse_args()

    mirror = os.environ.get("EMPATHYBENCH_MIRROR")
    if mirror is None and (REPO_ROOT.parent / "shared" / "mirror").is_dir():
        mirror = str(REPO_ROOT.parent / "shared" / "mirror")  # the offline mirror next to the checkout

    print(f"cold and warm runs (latency {args.latency} s, concurrency {args.concurrency}) ...", flush=True)
    cw = cold_and_warm(args.latency, args.concurrency, args.warm_repeats, mirror)
    print("fault-mix run ...", flush=True)
    fm = fault_mix(args.latency, args.concurrency, args.retry_after, mirror)
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "data_source": f"mirror {mirror}" if mirror else "network",
        "cold_and_warm": cw,
        "fault_mix": fm,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "engine.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = markdown(results)
    (args.results / "engine.md").write_text(table, encoding="utf-8")
    print(table)
    failed = [name for name, ok in {**cw["checks"], **fm["checks"]}.items() if not ok]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
