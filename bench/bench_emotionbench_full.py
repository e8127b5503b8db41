"""The harness's own cost on a big run: EmotionBench full preset against an instant fake server (issue 13).

    empathybench run --model openai/fake --base-url http://127.0.0.1:PORT/v1 --bench emotionbench --preset full \
        --max-concurrency 64 --out DIR --quiet

4,330 calls (428 situations x 10 evoked runs + 50 default runs), the fake OpenAI server in this process with no
latency, so what the child spends is the harness: SDK client, engine, cache, samples.jsonl, progress, report.

Measured, per child process (`os.wait4`, so each figure is that child's alone):
  full      the whole preset with an empty response cache: CPU (user + system), wall, peak RSS, server requests;
  start-up  the same command with `--limit 1` and its own empty cache (interpreter, imports, data verification,
            a handful of calls, the run directory): subtracted from `full` for the CPU per request after start-up.

Targets: CPU per request after start-up <= 2.5 ms (issue 21; 1 ms under issue 13, with the removed hand-made
transport), peak RSS <= 200 MB. `--profile` also writes a cProfile of one
full run (bench/results/emotionbench_full.prof, top functions in the Markdown). Results go to
bench/results/emotionbench_full.json and .md.

    python bench/bench_emotionbench_full.py              # 3 rounds of (start-up, full)
    python bench/bench_emotionbench_full.py --rounds 1 --profile
"""

import argparse
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import bench_env  # a sibling script, not a package: the CLI's environment with a fresh cache
from empathybench import __version__
from empathybench.instruments.emotionbench.canned import plausible_answer
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
CPU_TARGET_MS = 2.5  # issue 21: maintained HTTP stack only; was 1 ms with the removed hand-made transport (issue 13)
RSS_TARGET_MB = 200.0


def questionnaire_answer(body: dict[str, Any]) -> str:
    """The server's reply: every PANAS item rated on its scale (EmotionBench's own canned answer), so each run
    parses at its first ask and the preset makes exactly its 4,330 calls; anything else gets the default answer."""
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    request = ChatRequest(messages, Sampling(temperature=0.0, max_tokens=1))
    return plausible_answer(request, Draw(0, str(body.get("seed", "")))) or fill_score_lines(body)


def run_child(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one child to completion: its own wall time, CPU time and peak RSS (from wait4)."""
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out_file, stderr=err_file, text=True)
        # wait4 (not wait/communicate) so that the rusage is this child's alone.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out_file.seek(0)
        err_file.seek(0)
        stdout, stderr = out_file.read(), err_file.read()
    return {
        "returncode": process.returncode,
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "user_s": round(usage.ru_utime, 3),
        "system_s": round(usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux reports kilobytes
        "stdout_tail": stdout.strip().splitlines()[-3:],
        "stderr_tail": stderr.strip().splitlines()[-3:],
    }


def run_command(base_url: str, out: Path, concurrency: int, limit: int | None, profile: Path | None) -> list[str]:
    prefix = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m"] if profile else [sys.executable, "-m"]
    command = [
        *prefix,
        "empathybench",
        "run",
        "--model",
        "openai/fake",
        "--base-url",
        base_url,
        "--bench",
        "emotionbench",
        "--preset",
        "full",
        "--max-concurrency",
        str(concurrency),
        "--out",
        str(out),
        "--quiet",
    ]
    if limit is not None:
        command += ["--limit", str(limit)]
    return command


def fresh_cache(root: Path, name: str, env_mirror: str | None, source: str | None = None) -> dict[str, str]:
    """A new EMPATHYBENCH_CACHE_DIR with the data files fetched into it (untimed), no cached replies."""
    env = bench_env(root / name, env_mirror, source)
    command = [sys.executable, "-m", "empathybench", "data", "fetch", "--bench", "emotionbench"]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"data fetch failed: {result.stderr.strip()[-500:]}")
    return env


def run_facts(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    result = summary["benchmarks"]["emotionbench"]
    calls = 0
    items_ok = 0
    with (out / "samples.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            calls += len(record.get("calls") or [])
            items_ok += record.get("status") == "ok"
    return {
        "items_ok": items_ok,
        "calls_recorded": calls,
        "n_parsed": result.get("n_parsed"),
        "usage": summary.get("usage"),
        "samples_jsonl_mb": round((out / "samples.jsonl").stat().st_size / 2**20, 2),
    }


def one_round(
    server: FakeOpenAIServer,
    root: Path,
    index: int | str,
    concurrency: int,
    mirror: str | None,
    source: str | None = None,
) -> dict[str, Any]:
    env = fresh_cache(root, f"cache-startup-{index}", mirror, source)
    before = server.requests_total
    startup = run_child(run_command(server.base_url, root / f"startup-{index}", concurrency, 1, None), env)
    startup["requests"] = server.requests_total - before
    env = fresh_cache(root, f"cache-full-{index}", mirror, source)
    before = server.requests_total
    full = run_child(run_command(server.base_url, root / f"full-{index}", concurrency, None, None), env)
    full["requests"] = server.requests_total - before
    full.update(run_facts(root / f"full-{index}"))
    requests_after_startup = full["requests"] - startup["requests"]
    per_request_ms = 1000 * (full["cpu_s"] - startup["cpu_s"]) / max(1, requests_after_startup)
    shutil.rmtree(root / f"cache-full-{index}", ignore_errors=True)
    shutil.rmtree(root / f"cache-startup-{index}", ignore_errors=True)
    return {
        "startup": startup,
        "full": full,
        "cpu_per_request_ms_whole_child": round(1000 * full["cpu_s"] / max(1, full["requests"]), 3),
        "cpu_per_request_ms_after_startup": round(per_request_ms, 3),
    }


def profile_run(server: FakeOpenAIServer, root: Path, concurrency: int, mirror: str | None, out: Path) -> list[str]:
    env = fresh_cache(root, "cache-profile", mirror)
    result = run_child(run_command(server.base_url, root / "profile", concurrency, None, out), env)
    if result["returncode"] != 0:
        return [f"profile run failed: {result['stderr_tail']}"]
    stats = pstats.Stats(str(out))
    stats.sort_stats("tottime")
    rows = []
    for (filename, line, name), (_, calls, tottime, cumtime, _) in sorted(
        stats.stats.items(),  # type: ignore[attr-defined]
        key=lambda entry: entry[1][2],
        reverse=True,
    )[:25]:
        where = filename.split("site-packages/")[-1].split("/src/")[-1]
        rows.append(f"| {where}:{line} {name} | {calls} | {tottime:.2f} | {cumtime:.2f} |")
    return rows


def markdown(results: dict[str, Any]) -> str:
    rounds = results["rounds"]
    lines = [
        f"# EmotionBench full preset against an instant fake server ({results['date']})",
        "",
        f"`--max-concurrency {results['max_concurrency']}`, {results['machine']['cpus']} CPUs "
        f"({results['machine']['platform']}), Python {results['machine']['python']}, load average before "
        f"{results['machine']['load_average_before']} and after {results['machine']['load_average_at_end']}.",
        "",
        "| round | requests | wall s | CPU s (user/sys) | start-up CPU s (`--limit 1`, requests) | "
        "CPU ms/request after start-up | whole child ms/request | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for index, entry in enumerate(rounds):
        full, startup = entry["full"], entry["startup"]
        lines.append(
            f"| {index + 1} | {full['requests']} | {full['wall_s']:.2f} | {full['cpu_s']:.2f} "
            f"({full['user_s']:.2f}/{full['system_s']:.2f}) | {startup['cpu_s']:.2f} ({startup['requests']}) | "
            f"{entry['cpu_per_request_ms_after_startup']:.3f} | {entry['cpu_per_request_ms_whole_child']:.3f} | "
            f"{full['peak_rss_mb']:.1f} |"
        )
    baseline = results.get("baseline")
    for index, entry in enumerate((baseline or {}).get("rounds", [])):
        full, startup = entry["full"], entry["startup"]
        lines.append(
            f"| baseline {index + 1} | {full['requests']} | {full['wall_s']:.2f} | {full['cpu_s']:.2f} "
            f"({full['user_s']:.2f}/{full['system_s']:.2f}) | {startup['cpu_s']:.2f} ({startup['requests']}) | "
            f"{entry['cpu_per_request_ms_after_startup']:.3f} | {entry['cpu_per_request_ms_whole_child']:.3f} | "
            f"{full['peak_rss_mb']:.1f} |"
        )
    summary = results["summary"]
    if baseline:
        lines += [
            "",
            f"Baseline (`{baseline['source']}`, rounds alternating with this tree's): median "
            f"{baseline['cpu_per_request_ms_median']:.3f} ms per request after start-up, peak RSS up to "
            f"{baseline['peak_rss_mb_max']:.1f} MB.",
        ]
    lines += [
        "",
        f"Median CPU per request after start-up: **{summary['cpu_per_request_ms_median']:.3f} ms** "
        f"(target <= {CPU_TARGET_MS:g} ms); largest peak RSS: **{summary['peak_rss_mb_max']:.1f} MB** "
        f"(target <= {RSS_TARGET_MB:g} MB). Items answered: {summary['items_ok']}; calls recorded: "
        f"{summary['calls_recorded']}; samples.jsonl {summary['samples_jsonl_mb']} MB.",
        "",
    ]
    if results.get("profile"):
        lines += [
            "Top functions by own time (cProfile of one full run; profiling slows everything down):",
            "",
            "| function | calls | own s | cumulative s |",
            "|---|---|---|---|",
            *results["profile"],
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (start-up, full) runs (default 3)")
    parser.add_argument("--concurrency", type=int, default=64, help="--max-concurrency (default 64)")
    parser.add_argument("--profile", action="store_true", help="also profile one full run with cProfile")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="where to write the results")
    parser.add_argument("--name", default="emotionbench_full", help="results file name (default emotionbench_full)")
    parser.add_argument("--baseline-src", type=Path, help="also run this source tree, alternating")
    args = parser.parse_args()

    mirror = os.environ.get("EMPATHYBENCH_MIRROR")
    if mirror is None and (REPO_ROOT.parent / "shared" / "mirror").is_dir():
        mirror = str(REPO_ROOT.parent / "shared" / "mirror")
    load_before = [round(x, 2) for x in os.getloadavg()]
    rounds: list[dict[str, Any]] = []
    baseline_rounds: list[dict[str, Any]] = []
    profile: list[str] = []
    args.results.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="eb-bench-emo-") as scratch,
        FakeOpenAIServer(answer=questionnaire_answer) as server,
    ):
        root = Path(scratch)
        for index in range(args.rounds):
            # With a baseline, its round and ours alternate (which goes first too), so that the load of a shared
            # machine weighs on both alike.
            order = ["baseline", "current"] if index % 2 else ["current", "baseline"]
            for which in order if args.baseline_src else ["current"]:
                print(f"round {index + 1}/{args.rounds} {which} ...", flush=True)
                source = str(args.baseline_src) if which == "baseline" else None
                entry = one_round(server, root, f"{which}-{index}", args.concurrency, mirror, source)
                (baseline_rounds if which == "baseline" else rounds).append(entry)
                print(json.dumps({k: v for k, v in entry.items() if k.startswith("cpu")}), flush=True)
        if args.profile:
            print("profiled run ...", flush=True)
            profile = profile_run(server, root, args.concurrency, mirror, args.results / f"{args.name}.prof")
    per_request = [entry["cpu_per_request_ms_after_startup"] for entry in rounds]
    last_full = rounds[-1]["full"]
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": load_before,
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "max_concurrency": args.concurrency,
        "rounds": rounds,
        "summary": {
            "cpu_per_request_ms_median": round(statistics.median(per_request), 3),
            "cpu_per_request_ms_min": round(min(per_request), 3),
            "peak_rss_mb_max": max(entry["full"]["peak_rss_mb"] for entry in rounds),
            "items_ok": last_full["items_ok"],
            "calls_recorded": last_full["calls_recorded"],
            "samples_jsonl_mb": last_full["samples_jsonl_mb"],
            "all_runs_ok": all(e["full"]["returncode"] == 0 and e["startup"]["returncode"] == 0 for e in rounds),
        },
        "profile": profile,
    }
    if baseline_rounds:
        results["baseline"] = {
            "source": str(args.baseline_src),
            "rounds": baseline_rounds,
            "cpu_per_request_ms_median": round(
                statistics.median(e["cpu_per_request_ms_after_startup"] for e in baseline_rounds), 3
            ),
            "peak_rss_mb_max": max(e["full"]["peak_rss_mb"] for e in baseline_rounds),
        }
    results["checks"] = {
        "cpu_per_request": results["summary"]["cpu_per_request_ms_median"] <= CPU_TARGET_MS,
        "peak_rss": results["summary"]["peak_rss_mb_max"] <= RSS_TARGET_MB,
        "runs_ok": results["summary"]["all_runs_ok"],
    }
    (args.results / f"{args.name}.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = markdown(results)
    (args.results / f"{args.name}.md").write_text(table, encoding="utf-8")
    print(table)
    failed = [name for name, ok in results["checks"].items() if not ok]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
