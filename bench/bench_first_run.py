"""Wall time and calls of the README's main job: `empathybench run` with no options (the demo preset on the embedded
model), as a new user runs it: a fresh cache directory (data copied from the mirror, no cached replies), output
piped (not a terminal, so the plain progress lines with their ETA are what the user sees).

Recorded: wall time of the whole process, calls per benchmark (from samples.jsonl) and in total, tokens, each
benchmark's validity status, the machine (CPU count) and the load average before and after (other work on a
shared machine slows the run). The limit is 60 s on 2 cores (issue 21: the demo shows every instrument); the
script exits 1 above it.

Results go to bench/results/first_run.json and first_run.md.

    EMPATHYBENCH_MIRROR=/path/to/mirror python bench/bench_first_run.py
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

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
LIMIT_S = 60.0


def first_run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="eb-first-run-") as scratch:
        env = dict(os.environ)
        env["EMPATHYBENCH_CACHE_DIR"] = str(Path(scratch) / "cache")
        env.setdefault("EMPATHYBENCH_MIRROR", str(REPO_ROOT.parent / "shared" / "mirror"))
        load_before = os.getloadavg()
        started = time.perf_counter()
        completed = subprocess.run(
            [sys.executable, "-m", "empathybench", "run"],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        load_after = os.getloadavg()
        if completed.returncode != 0:
            raise SystemExit(f"run failed ({completed.returncode}):\n{completed.stderr[-3000:]}")
        (run_dir,) = (Path(scratch) / "runs").iterdir()
        summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
        calls: dict[str, int] = {}
        for line in (run_dir / "samples.jsonl").read_text("utf-8").splitlines():
            record = json.loads(line)
            calls[record["benchmark"]] = calls.get(record["benchmark"], 0) + len(record.get("calls") or [])
        progress_lines = [line for line in completed.stderr.splitlines() if "ETA" in line]
        return {
            "command": "empathybench run",
            "wall_s": round(wall, 2),
            "engine_elapsed_s": summary.get("elapsed_s"),
            "limit_s": LIMIT_S,
            "within_limit": wall <= LIMIT_S,
            "preset": summary.get("preset"),
            "calls_total": summary["usage"].get("calls"),
            "calls_by_benchmark": calls,
            "items_by_benchmark": {n: r.get("n_items") for n, r in summary["benchmarks"].items()},
            "tokens": {k: summary["usage"].get(k) for k in ("prompt_tokens", "completion_tokens")},
            "validity": {n: (r.get("validity") or {}).get("label") for n, r in summary["benchmarks"].items()},
            "progress_lines": progress_lines,
            "last_stdout_line": completed.stdout.strip().splitlines()[-1],
            # the demo's account above it: one line per instrument, what the model did
            "demo_lines": demo_account(completed.stdout),
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
        }


def demo_account(stdout: str) -> list[str]:
    """The lines between "run directory: ..." and the last one (the demo's next step)."""
    lines = stdout.strip().splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("run directory:")), default=-1)
    return lines[start + 1 : -1]


def write_markdown(result: dict[str, Any], when: str) -> str:
    rows = "\n".join(
        f"| {name} | {result['items_by_benchmark'].get(name)} | {count} | {result['validity'].get(name)} |"
        for name, count in result["calls_by_benchmark"].items()
    )
    return (
        f"# First run: `{result['command']}` ({when})\n\n"
        f"Preset {result['preset']}, embedded model, fresh cache, output piped; "
        f"{result['machine']['cpus']} CPUs, load average before {result['load_average_before']}, "
        f"after {result['load_average_after']} ({result['machine']['platform']}).\n\n"
        f"**Wall time {result['wall_s']} s** (limit {result['limit_s']:.0f} s; engine phase "
        f"{result['engine_elapsed_s']} s), **{result['calls_total']} calls**.\n\n"
        "| benchmark | items | calls | status |\n|---|---|---|---|\n"
        f"{rows}\n\nWhat the demo said, one line per instrument:\n\n"
        + "".join(f"- {line}\n" for line in result["demo_lines"])
        + f"\nLast line printed: {result['last_stdout_line']}\n"
    )


def main() -> None:
    when = datetime.now(UTC).isoformat(timespec="seconds")
    result = first_run()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "first_run.json").write_text(json.dumps({"when": when, **result}, indent=2) + "\n", "utf-8")
    (RESULTS_DIR / "first_run.md").write_text(write_markdown(result, when), "utf-8")
    print(write_markdown(result, when))
    if not result["within_limit"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
