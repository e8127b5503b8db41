"""Adaptive concurrency against a rate-limited server (issue 13, item 5).

The fake OpenAI server on 127.0.0.1 serves at most CAPACITY requests at a time (default 8) with LATENCY seconds
each (default 0.5); a request above the capacity is answered 429 at once, with Retry-After: 1. The real CLI runs
`empathybench run --model openai/fake --bench eqbench --preset paper --max-concurrency 64` against it in a
subprocess (171 items, one call each; the server's scripted answer fills every score line).

Targets: wall time <= 1.35 x ceil(171 / CAPACITY) x LATENCY, and 429 answers <= 25% of the requests.
Wall time is reported two ways: the server's span (first request in to last answer out: the waiting the target
is about) and the whole CLI process (interpreter start-up, data check and report writing included).

A yardstick round runs the same with --max-concurrency equal to the capacity (never refused): how fast this
machine serves 171 calls 8 at a time at all, per-request overhead of client and server included.
With --baseline-src PATH (e.g. the main checkout's src) the same run is also made with that source tree, for
the fixed-concurrency behaviour before this change. Results go to bench/results/adaptive_concurrency.{json,md}.

    python bench/bench_adaptive_concurrency.py                       # 3 rounds
    python bench/bench_adaptive_concurrency.py --baseline-src ../main/src --baseline-rounds 1
"""

import argparse
import json
import math
import os
import platform
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
WALL_FACTOR = 1.35
MAX_429_SHARE = 0.25
BENCH_API_KEY = "sk-bench-not-a-secret"


def bench_env(cache_dir: Path, mirror: str | None, src: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EMPATHYBENCH_"))}
    # A user's Python keeps the compiled modules (pip compiles a wheel at install; an editable install writes them
    # at the first import); with PYTHONDONTWRITEBYTECODE set, as on some build machines, every run would compile
    # the project's ~120 modules again (~0.2 s), which is not what the target is about.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["EMPATHYBENCH_CACHE_DIR"] = str(cache_dir)
    env["OPENAI_API_KEY"] = BENCH_API_KEY
    if src is not None:
        env["PYTHONPATH"] = str(src)
    if mirror:
        env["EMPATHYBENCH_MIRROR"] = mirror
    return env


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "empathybench", *args]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def one_round(args: argparse.Namespace, src: Path | None, max_concurrency: int) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="eb-aimd-") as scratch,
        FakeOpenAIServer(latency_s=args.latency, capacity=args.capacity, retry_after=args.retry_after) as server,
    ):
        root = Path(scratch)
        env = bench_env(root / "cache", args.mirror, src)
        fetch = subprocess.run(cli("data", "fetch", "--bench", "eqbench"), env=env, capture_output=True, text=True)
        if fetch.returncode != 0:
            raise SystemExit(f"data fetch failed: {fetch.stderr.strip()[-500:]}")
        out = root / "run"
        command = cli("run", "--model", "openai/fake", "--base-url", server.base_url, "--bench", "eqbench")
        command += ["--preset", "paper", "--max-concurrency", str(max_concurrency), "--out", str(out), "--quiet"]
        load_before = load_average()
        started = time.perf_counter()
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        log = server.log
        outcomes = dict(server.outcomes)
        requests = server.requests_total
        max_admitted = server.max_admitted
        repeated = server.repeated_bodies()
        run_info = json.loads((out / "run.json").read_text("utf-8")) if (out / "run.json").exists() else {}
        records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines() if line]
    span = max(e.finished for e in log) - min(e.arrived for e in log) if log else 0.0
    answered_ok = outcomes.get("ok", 0)
    concurrency = run_info.get("concurrency", {}).get("model")
    return {
        "returncode": result.returncode,
        "stderr_tail": result.stderr.strip().splitlines()[-3:],
        "process_wall_s": round(wall, 3),
        "server_span_s": round(span, 3),
        "requests": requests,
        "outcomes": outcomes,
        "share_429": round(outcomes.get("429", 0) / requests, 4) if requests else None,
        "items_ok": sum(1 for r in records if r.get("status") == "ok"),
        "distinct_items": len({r.get("item_id") for r in records}),
        # Each item's single prompt differs, so a body asked twice that was answered twice would be a duplicate.
        "answered_ok_per_item": answered_ok / PAPER_ITEMS,
        "repeated_bodies": len(repeated),
        "server_max_admitted": max_admitted,
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "concurrency": (
            {k: v for k, v in concurrency.items() if k != "course"} | {"course_entries": len(concurrency["course"])}
            if concurrency
            else None
        ),
        "course": concurrency["course"] if concurrency else None,
    }


def source_commit(src: Path) -> str | None:
    """The commit a source tree is checked out at, with "+changes" when its files differ from it."""
    git = ["git", "-C", str(src)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return None
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "."], capture_output=True, text=True).stdout.strip()
    return head.stdout.strip() + ("+changes" if dirty else "")


def spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def summarise(rounds: list[dict[str, Any]], wall_limit_s: float) -> dict[str, Any]:
    return {
        "rounds": len(rounds),
        "process_wall_s": spread([r["process_wall_s"] for r in rounds]),
        "server_span_s": spread([r["server_span_s"] for r in rounds]),
        "share_429": spread([r["share_429"] for r in rounds]),
        "requests": spread([r["requests"] for r in rounds]),
        "checks": {
            "every_item_answered_once": all(
                r["returncode"] == 0 and r["items_ok"] == PAPER_ITEMS and r["outcomes"].get("ok") == PAPER_ITEMS
                for r in rounds
            ),
            "server_span_within_limit_median": statistics.median(r["server_span_s"] for r in rounds) <= wall_limit_s,
            "process_wall_within_limit_median": statistics.median(r["process_wall_s"] for r in rounds) <= wall_limit_s,
            "share_429_within_limit_all": all(r["share_429"] <= MAX_429_SHARE for r in rounds),
        },
    }


def markdown(results: dict[str, Any]) -> str:
    s = results["settings"]
    lines = [
        "# Adaptive concurrency against a rate-limited server",
        "",
        f"{results['date']}; {s['items']} EQ-Bench items (`--preset paper`), fake server capacity {s['capacity']} "
        f"in flight (429 above, Retry-After: {s['retry_after']}), latency {s['latency_s']} s, "
        f"`--max-concurrency {s['max_concurrency']}`; {results['cpus']} CPUs shared with other work "
        f"(load averages per round below).",
        "",
        f"Target: wall time <= {WALL_FACTOR} x ceil({s['items']}/{s['capacity']}) x {s['latency_s']} s = "
        f"{results['wall_limit_s']:.2f} s; 429 answers <= {MAX_429_SHARE:.0%} of requests.",
        "",
        "| variant | source | rounds | server span s (min / median / max) | CLI process wall s | 429 share "
        "| requests |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, data in results["variants"].items():
        summary = data["summary"]

        def fmt(key: str, pattern: str, summary: dict[str, Any] = summary) -> str:
            values = summary[key]
            return " / ".join(pattern.format(values[k]) for k in ("min", "median", "max"))

        lines.append(
            f"| {name} | {data.get('commit') or data['src']} | {summary['rounds']} "
            f"| {fmt('server_span_s', '{:.2f}')} | {fmt('process_wall_s', '{:.2f}')} "
            f"| {fmt('share_429', '{:.1%}')} | {fmt('requests', '{:.0f}')} |"
        )
    lines += [
        "",
        "The server span runs from the first request's arrival to the last answer; the CLI process wall time adds "
        "start-up, the data check and writing the run directory and report. The yardstick (`--max-concurrency` "
        "equal to the capacity, never refused) is the best this machine does with 8 at a time: the distance from "
        "it is what adapting costs. `baseline` is the source tree given with --baseline-src, at the commit shown. "
        "Child processes run with the project's modules compiled once (PYTHONDONTWRITEBYTECODE is dropped), as "
        "on a user's machine.",
    ]
    lines += ["", "Checks (adaptive):", ""]
    for name, passed in results["variants"]["adaptive"]["summary"]["checks"].items():
        lines.append(f"- {name}: {'pass' if passed else 'FAIL'}")
    lines += [
        "",
        "Per round (adaptive): load average before -> after, limit min / max / final, decreases, increases",
        "",
    ]
    for r in results["variants"]["adaptive"]["rounds"]:
        c = r["concurrency"] or {}
        lines.append(
            f"- span {r['server_span_s']:.2f} s, wall {r['process_wall_s']:.2f} s, 429 {r['outcomes'].get('429', 0)}"
            f"/{r['requests']}; load {r['load_average_before']} -> {r['load_average_after']}; limit "
            f"{c.get('min')} / {c.get('max')} / {c.get('final')}, {c.get('decreases')} decreases, "
            f"{c.get('increases')} increases; server peak admitted {r['server_max_admitted']}"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--capacity", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--max-concurrency", type=int, default=64)
    parser.add_argument("--retry-after", default="1")
    parser.add_argument("--baseline-src", type=Path, help="a source tree to run the same way (e.g. main's src)")
    parser.add_argument("--baseline-rounds", type=int, default=1)
    parser.add_argument(
        "--yardstick-rounds", type=int, default=1, help="rounds at --max-concurrency = capacity (never refused)"
    )
    parser.add_argument("--mirror", default=os.environ.get("EMPATHYBENCH_MIRROR"))
    parser.add_argument("--no-write", action="store_true", help="print, do not write bench/results")
    args = parser.parse_args()

    wall_limit_s = WALL_FACTOR * math.ceil(PAPER_ITEMS / args.capacity) * args.latency
    variants: dict[str, Any] = {}
    own_src = REPO_ROOT / "src"
    adaptive = [one_round(args, own_src, args.max_concurrency) for _ in range(args.rounds)]
    variants["adaptive"] = {
        "src": "this tree",
        "commit": source_commit(own_src),
        "rounds": adaptive,
        "summary": summarise(adaptive, wall_limit_s),
    }
    if args.baseline_src is not None:
        baseline = [
            one_round(args, args.baseline_src.resolve(), args.max_concurrency) for _ in range(args.baseline_rounds)
        ]
        variants["baseline"] = {
            "src": str(args.baseline_src),
            "commit": source_commit(args.baseline_src),
            "rounds": baseline,
            "summary": summarise(baseline, wall_limit_s),
        }
    if args.yardstick_rounds:
        # --max-concurrency equal to the capacity: never refused, so this is as fast as this machine serves it.
        yardstick = [one_round(args, own_src, args.capacity) for _ in range(args.yardstick_rounds)]
        variants[f"yardstick: --max-concurrency {args.capacity}"] = {
            "src": "this tree",
            "rounds": yardstick,
            "summary": summarise(yardstick, wall_limit_s),
        }
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "settings": {
            "items": PAPER_ITEMS,
            "capacity": args.capacity,
            "latency_s": args.latency,
            "max_concurrency": args.max_concurrency,
            "retry_after": args.retry_after,
        },
        "wall_limit_s": round(wall_limit_s, 3),
        "variants": variants,
    }
    text = markdown(results)
    print(text)
    if not args.no_write:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        (RESULTS_DIR / "adaptive_concurrency.json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
        (RESULTS_DIR / "adaptive_concurrency.md").write_text(text, "utf-8")
    checks = variants["adaptive"]["summary"]["checks"]
    sys.exit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
