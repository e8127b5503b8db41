"""What the published models and the judge evidence add to a report: target at most 0.2 s for the atlas.

A scripted run of every default instrument (3 items each) is made once. Then, each in a fresh subprocess (median of
5), the two parts a run's report computes besides the run itself, timed inside the process after the modules the
report needs anyway are imported:
- `atlas.reproduce.report_standing`: the shipped atlas read, the run placed among the published models and checked
  against the published run of its model (the target: at most 0.2 s);
- `judges.known.report_judges`: what is known about each judged instrument's judge, first with an empty cache (the
  evidence computed from the released ratings and the atlas, then kept) and then with that cache warm.

Results: bench/results/report_extras.json and report_extras.md; exit 1 when the atlas's target is missed.

    EMPATHYBENCH_MIRROR=../shared/mirror python bench/bench_report_extras.py
"""

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
TARGET_S = 0.2
REPEATS = 5
RUN = ["run", "-m", "scripted/plausible", "-n", "3", "-o", "run", "-q"]

# Runs in the subprocess: the report's own imports first (not counted), then the part measured.
PROBE = """
import json, sys, time
from pathlib import Path
from empathybench.report.html import write_run_reports
from empathybench.rundir.reader import read_samples
part, directory = sys.argv[1], Path(sys.argv[2])
summary = json.loads((directory / "summary.json").read_text("utf-8"))
run_info = json.loads((directory / "run.json").read_text("utf-8"))
samples = read_samples(directory)
started = time.perf_counter()
if part == "atlas":
    from empathybench.atlas.reproduce import report_standing
    found = report_standing(summary, run_info)
else:
    from empathybench.judges.known import report_judges
    found = report_judges(summary, run_info, samples)
print(json.dumps({"seconds": time.perf_counter() - started, "rows": len(found)}))
"""


def probe(part: str, directory: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, part, str(directory)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="bench-report-extras-") as temporary:
        root = Path(temporary)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
        env.update(EMPATHYBENCH_CACHE_DIR=str(root / "cache"))
        env.setdefault("EMPATHYBENCH_MIRROR", str(REPO_ROOT.parent / "shared" / "mirror"))
        subprocess.run([sys.executable, "-m", "empathybench", *RUN], env=env, cwd=root, capture_output=True)
        directory = root / "run"
        atlas = [probe("atlas", directory, env) for _ in range(REPEATS)]
        cold = []
        for _ in range(REPEATS):  # what parsed files and computed evidence the cache keeps, removed before each
            shutil.rmtree(root / "cache" / "parsed", ignore_errors=True)
            cold.append(probe("judges", directory, env))
        warm = [probe("judges", directory, env) for _ in range(REPEATS)]
    seconds = {
        "atlas": [round(p["seconds"], 3) for p in atlas],
        "judges_cold": [round(p["seconds"], 3) for p in cold],
        "judges_warm": [round(p["seconds"], 3) for p in warm],
    }
    medians = {name: round(statistics.median(values), 3) for name, values in seconds.items()}
    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "repeats": REPEATS,
        "instruments_placed": atlas[0]["rows"],
        "judged_instruments": warm[0]["rows"],
        "seconds": seconds,
        "median_s": medians,
        "atlas_target_s": TARGET_S,
        "atlas_target_met": medians["atlas"] <= TARGET_S,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "report_extras.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    lines = [
        "# What the atlas and the judge evidence add to a report",
        "",
        f"{report['when']}, Python {report['python']}, {report['cpus']} cores, load {load_before} before, "
        f"{report['load_average_after']} after; median of {REPEATS} fresh processes each "
        "(bench/bench_report_extras.py).",
        "",
        "| part | median (s) | each (s) |",
        "|---|---|---|",
        f"| the run among the published models and its reproduction check ({report['instruments_placed']} "
        f"instruments) | {medians['atlas']} | {seconds['atlas']} |",
        f"| the judge evidence, empty cache ({report['judged_instruments']} judged instruments) | "
        f"{medians['judges_cold']} | {seconds['judges_cold']} |",
        f"| the judge evidence, cache warm | {medians['judges_warm']} | {seconds['judges_warm']} |",
        "",
        f"Target: the atlas adds at most {TARGET_S} s to a report: "
        f"{'met' if report['atlas_target_met'] else 'MISSED'}.",
    ]
    (RESULTS_DIR / "report_extras.md").write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))
    return 0 if report["atlas_target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
