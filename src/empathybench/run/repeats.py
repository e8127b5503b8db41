"""`run --repeats N`: the same run N times with consecutive seeds, and the run-to-run spread of every metric."""

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from empathybench.engine.engine import RunStats
from empathybench.run.execute import RunResult, _slug, execute_plan
from empathybench.run.options import RunOptions
from empathybench.run.plan import plan_run
from empathybench.rundir.store import RunStore, read_samples
from empathybench.schema.files import checked
from empathybench.schema.run import RunInfo
from empathybench.schema.summary import RunSummary


def execute_repeats(options: RunOptions, repeats: int, console: Console) -> RunResult:
    """`run --repeats N`: the same run N times with seeds seed..seed+N-1, each in `<dir>/repeat-K`, and a summary
    of the parent directory that adds each headline metric's run-to-run mean and SD to the first run's figures.

    Where decoding is greedy (temperature 0, most paper presets) the repeats differ only through backend
    nondeterminism; the spread then shows how reproducible the model's serving is, not sampling variance.
    """
    plan = plan_run(options, repeats)
    if repeats < 2:
        return execute_plan(plan, console)
    if options.out is not None:
        parent = options.out
    else:
        label = f"{options.model}|{options.preset}|{options.seed}|{options.benchmarks}|{options.limit}|{options.judge}"
        if options.simulator:
            label += f"|{options.simulator}"
        digest = hashlib.sha256(f"{label}|{sorted(options.options.items())}".encode()).hexdigest()[:10]
        parent = Path("runs") / f"{_slug(options.model)}-{options.preset}-x{repeats}-{digest}"
    results: list[RunResult] = []
    for index in range(repeats):
        console.print(f"repeat {index + 1}/{repeats} (seed {options.seed + index})", highlight=False, markup=False)
        repeat_options = replace(options, seed=options.seed + index, out=parent / f"repeat-{index + 1}")
        results.append(execute_plan(replace(plan, options=repeat_options), console))
    summary = json.loads(json.dumps(results[0].summary))
    summary["run_dir"] = str(parent)
    summary["repeats"] = repeat_summary([r.summary for r in results], [str(r.directory) for r in results])
    summary["repeats"]["seeds"] = [options.seed + i for i in range(repeats)]
    # The parent's accounting covers every repeat; the per-repeat figures stay in each repeat's summary.json.
    summary["usage"] = _total_usage([r.summary.get("usage") or {} for r in results])
    summary["elapsed_s"] = round(sum(r.summary.get("elapsed_s", 0.0) for r in results), 3)
    store = RunStore(parent)
    checked(RunSummary, summary, "summary.json")  # the contract, checked before it is written
    store.write_summary(summary)
    run_info = json.loads((results[0].directory / "run.json").read_text("utf-8"))
    run_info["repeats"] = {"n": repeats, "seeds": [options.seed + i for i in range(repeats)]}
    checked(RunInfo, run_info, "run.json")
    store.write_run(run_info)

    from empathybench.atlas.reproduce import report_standing
    from empathybench.judges.known import report_judges
    from empathybench.report.html import write_run_reports

    standing = report_standing(summary, run_info)
    samples = read_samples(results[0].directory)
    judges = report_judges(summary, run_info, samples)
    write_run_reports(parent / "report.html", summary, run_info, samples, standing, judges)
    stats = RunStats()
    for result in results:
        stats.items_total += result.stats.items_total
        stats.items_done += result.stats.items_done
        stats.items_failed += result.stats.items_failed
    return RunResult(parent, summary, stats, judges)


def _total_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if isinstance(value, dict):
                bucket = total.setdefault(key, {})
                for kind, count in value.items():
                    bucket[kind] = bucket.get(kind, 0) + count
            elif isinstance(value, int | float):
                total[key] = total.get(key, 0) + value
    return total


def repeat_summary(summaries: list[dict[str, Any]], directories: list[str]) -> dict[str, Any]:
    """Every metric's value in each repeat, with its mean and sample SD across repeats."""
    metrics: dict[str, Any] = {}
    for name, result in summaries[0].get("benchmarks", {}).items():
        for key in result.get("metrics") or {}:
            values = [s["benchmarks"].get(name, {}).get("metrics", {}).get(key, {}).get("value") for s in summaries]
            present = [float(v) for v in values if v is not None]
            mean = sum(present) / len(present) if present else None
            sd = (
                (sum((v - mean) ** 2 for v in present) / (len(present) - 1)) ** 0.5
                if mean is not None and len(present) > 1
                else None
            )
            metrics[f"{name}.{key}"] = {
                "values": values,
                "mean": None if mean is None else round(mean, 4),
                "sd": None if sd is None else round(sd, 4),
            }
    return {"n": len(summaries), "runs": directories, "metrics": metrics}
