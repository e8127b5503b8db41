"""The HTTP client under the SDKs, side by side in one run (issue 21): the SDKs' default (httpx), the SDKs' aiohttp
client (`DefaultAioHttpClient`) and, given `--lean-src`, the hand-made lean transport of earlier versions.

Each variant runs the real CLI in a child process against the fake OpenAI server in this process:

  cpu        EmotionBench full preset (4,330 calls) against an instant server, `--max-concurrency 64`: CPU per
             request after start-up (the same command with `--limit 1` subtracted) and peak RSS of the child;
             targets <= 2.5 ms and <= 200 MB;
  latency    EQ-Bench paper preset (171 calls), server latency 1 s, `--max-concurrency 16`: the server's span
             (first request in, last answer out) against ceil(171/16) x 1 s; target <= 1.25 x;
  capacity   the same 171 calls, server taking 8 at a time (429 above, Retry-After 1), latency 0.5 s,
             `--max-concurrency 64`: span against ceil(171/8) x 0.5 s, target <= 1.35 x, and 429s <= 25%.

Variants alternate round by round, so a change in the machine's load touches each alike. The lean transport is
measured from another source tree (a checkout of a commit before its removal), with this tree's fake server:

    git worktree add /tmp/lean 0a9f432      # the last commit with models/http_transport.py
    python bench/bench_http_clients.py --lean-src /tmp/lean/src --rounds 2

Results go to bench/results/http_clients.{json,md}.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_emotionbench_full import (  # a sibling script, not a package
    BENCH_API_KEY,
    questionnaire_answer,
    run_child,
    run_command,
    run_facts,
)
from empathybench import __version__
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
CPU_TARGET_MS = 2.5
RSS_TARGET_MB = 200.0
PAPER_ITEMS = 171
LATENCY_TARGET = 1.25
CAPACITY_TARGET = 1.35
SHARE_429_TARGET = 0.25


def variant_env(cache: Path, client: str, source: str | None, mirror: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EMPATHYBENCH_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if source is not None:
        env["PYTHONPATH"] = source
    env["EMPATHYBENCH_CACHE_DIR"] = str(cache)
    env["OPENAI_API_KEY"] = BENCH_API_KEY
    env["EMPATHYBENCH_HTTP_CLIENT"] = client  # read by this tree; the lean tree ignores it
    if mirror:
        env["EMPATHYBENCH_MIRROR"] = mirror
    return env


def fetched(env: dict[str, str], bench: str) -> dict[str, str]:
    command = [sys.executable, "-m", "empathybench", "data", "fetch", "--bench", bench]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"data fetch failed: {result.stderr.strip()[-500:]}")
    return env


def cpu_round(root: Path, name: str, client: str, source: str | None, mirror: str | None) -> dict[str, Any]:
    with FakeOpenAIServer(answer=questionnaire_answer) as server:
        env = fetched(variant_env(root / f"{name}-cache-startup", client, source, mirror), "emotionbench")
        startup = run_child(run_command(server.base_url, root / f"{name}-startup", 64, 1, None), env)
        startup["requests"] = server.requests_total
        env = fetched(variant_env(root / f"{name}-cache-full", client, source, mirror), "emotionbench")
        before = server.requests_total
        full = run_child(run_command(server.base_url, root / f"{name}-full", 64, None, None), env)
        full["requests"] = server.requests_total - before
    facts = run_facts(root / f"{name}-full")
    per_request = 1000 * (full["cpu_s"] - startup["cpu_s"]) / max(1, full["requests"] - startup["requests"])
    return {
        "returncode": full["returncode"],
        "requests": full["requests"],
        "items_ok": facts["items_ok"],
        "wall_s": full["wall_s"],
        "cpu_s": full["cpu_s"],
        "startup_cpu_s": startup["cpu_s"],
        "cpu_ms_per_request": round(per_request, 3),
        "peak_rss_mb": full["peak_rss_mb"],
    }


def eqbench_command(base_url: str, out: Path, concurrency: int) -> list[str]:
    return [
        *(sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url", base_url),
        *("--bench", "eqbench", "--preset", "paper", "--max-concurrency", str(concurrency)),
        *("--out", str(out), "--quiet", "--no-cache"),
    ]


def span_round(
    root: Path, name: str, client: str, source: str | None, mirror: str | None, *, capacity: int | None
) -> dict[str, Any]:
    latency = 0.5 if capacity else 1.0
    concurrency = 64 if capacity else 16
    env = fetched(variant_env(root / f"{name}-cache", client, source, mirror), "eqbench")
    with FakeOpenAIServer(answer=fill_score_lines, latency_s=latency, capacity=capacity) as server:
        child = run_child(eqbench_command(server.base_url, root / name, concurrency), env)
        log = server.log
        outcomes = dict(server.outcomes)
    span = max(e.finished for e in log) - min(e.arrived for e in log) if log else float("nan")
    ideal = math.ceil(PAPER_ITEMS / (capacity or concurrency)) * latency
    refused = outcomes.get("capacity", 0) + outcomes.get("429", 0)
    return {
        "returncode": child["returncode"],
        "requests": len(log),
        "answered": outcomes.get("ok", 0),
        "span_s": round(span, 3),
        "ideal_s": ideal,
        "ratio": round(span / ideal, 3),
        "share_429": round(refused / max(1, len(log)), 4),
        "wall_s": child["wall_s"],
    }


def summarise(rounds: list[dict[str, Any]], key: str) -> dict[str, float]:
    values = [r[key] for r in rounds]
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"# HTTP clients under the SDKs, side by side ({results['date']})",
        "",
        f"{results['machine']['cpus']} CPUs ({results['machine']['platform']}), Python {results['machine']['python']}, "
        f"load average before {results['machine']['load_before']} and after {results['machine']['load_after']}; "
        f"{results['rounds']} round(s) per variant, variants alternating. Figures: min / median / max.",
        "",
        "| variant | CPU ms/request (EmotionBench full, 4,330 calls) | peak RSS MB | 171 calls, 1 s, 16 in flight: "
        "span / ideal | capacity 8 at 64: span / ideal | 429 share | all answered |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, variant in results["variants"].items():
        s = variant["summary"]

        def trio(figure: dict[str, float], digits: int = 3) -> str:
            return " / ".join(f"{figure[k]:.{digits}f}" for k in ("min", "median", "max"))

        answered = "yes" if variant["all_answered"] else "NO"
        lines.append(
            f"| {name} | {trio(s['cpu_ms_per_request'])} | {trio(s['peak_rss_mb'], 1)} | {trio(s['latency_ratio'])} "
            f"| {trio(s['capacity_ratio'])} | {trio(s['share_429'], 3)} | {answered} |"
        )
    lines += [
        "",
        f"Targets: CPU <= {CPU_TARGET_MS} ms per request after start-up, peak RSS <= {RSS_TARGET_MB:.0f} MB, "
        f"latency span <= {LATENCY_TARGET} x ideal, capacity span <= {CAPACITY_TARGET} x ideal, 429s <= "
        f"{SHARE_429_TARGET:.0%} (medians).",
        "",
        "Checks (medians):",
        "",
    ]
    for name, variant in results["variants"].items():
        lines.append(f"- {name}: " + ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in variant["checks"].items()))
    lines += ["", results["choice"], ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lean-src", help="src/ of a checkout that still has the lean transport")
    parser.add_argument("--mirror", default=os.environ.get("EMPATHYBENCH_MIRROR"))
    args = parser.parse_args()
    variants: dict[str, tuple[str, str | None]] = {"httpx (SDK default)": ("httpx", None)}
    variants["aiohttp (SDK DefaultAioHttpClient)"] = ("aiohttp", None)
    if args.lean_src:
        variants["lean transport (removed)"] = ("httpx", str(Path(args.lean_src).resolve()))
    load_before = [round(x, 2) for x in os.getloadavg()]
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix="bench-http-") as tmp:
        root = Path(tmp)
        for index in range(args.rounds):
            for number, (name, (client, source)) in enumerate(variants.items()):
                tag = f"r{index}v{number}"
                entry = {
                    "cpu": cpu_round(root, f"{tag}-cpu", client, source, args.mirror),
                    "latency": span_round(root, f"{tag}-lat", client, source, args.mirror, capacity=None),
                    "capacity": span_round(root, f"{tag}-cap", client, source, args.mirror, capacity=8),
                }
                rounds[name].append(entry)
                print(name, json.dumps(entry), flush=True)
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "rounds": args.rounds,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_before": load_before,
            "load_after": [round(x, 2) for x in os.getloadavg()],
        },
        "variants": {},
    }
    for name, entries in rounds.items():
        summary = {
            "cpu_ms_per_request": summarise([e["cpu"] for e in entries], "cpu_ms_per_request"),
            "peak_rss_mb": summarise([e["cpu"] for e in entries], "peak_rss_mb"),
            "latency_ratio": summarise([e["latency"] for e in entries], "ratio"),
            "capacity_ratio": summarise([e["capacity"] for e in entries], "ratio"),
            "share_429": summarise([e["capacity"] for e in entries], "share_429"),
        }
        all_answered = all(
            e["cpu"]["returncode"] == 0
            and e["latency"]["answered"] == PAPER_ITEMS
            and e["capacity"]["answered"] == PAPER_ITEMS
            for e in entries
        )
        checks = {
            "cpu": summary["cpu_ms_per_request"]["median"] <= CPU_TARGET_MS,
            "rss": summary["peak_rss_mb"]["max"] <= RSS_TARGET_MB,
            "latency": summary["latency_ratio"]["median"] <= LATENCY_TARGET,
            "capacity": summary["capacity_ratio"]["median"] <= CAPACITY_TARGET,
            "share_429": summary["share_429"]["median"] <= SHARE_429_TARGET,
            "all_answered": all_answered,
        }
        results["variants"][name] = {
            "client": variants[name][0],
            "source": variants[name][1] or "this tree",
            "rounds": entries,
            "summary": summary,
            "all_answered": all_answered,
            "checks": checks,
        }
    maintained = [n for n, v in results["variants"].items() if "lean" not in n and all(v["checks"].values())]
    results["choice"] = (
        f"Maintained clients that meet every target: {', '.join(maintained) or 'none'}. EmpathyBench's default is the "
        "SDKs' own client (httpx): the aiohttp client costs less CPU per call but reports refused and dropped "
        "connections as timeouts and is the less travelled path (EMPATHYBENCH_HTTP_CLIENT=aiohttp chooses it)."
    )
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "http_clients.json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    (RESULTS_DIR / "http_clients.md").write_text(markdown(results), "utf-8")
    print(markdown(results))


if __name__ == "__main__":
    main()
