"""EQ-Bench 3's section of report.html, as data (report/html.py draws it): headline with interval, per-type split,
ability columns and the per-task table."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.protocol import ChartPoint, FactsTable, ReportSection, StripChart

SCORE_DOMAIN = (0.0, 100.0)  # the rubric score: 5 x the 0-20 criterion mean


def _interval(metric: Mapping[str, Any]) -> tuple[float | None, float | None]:
    ci = metric.get("ci95") or [None, None]
    return ci[0], ci[1]


def _error_text(sample: Mapping[str, Any]) -> str:
    error = sample.get("task_error") or sample.get("error")
    text = error.get("message", "") if isinstance(error, Mapping) else str(error or "")
    return str(text)[:200]


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    metrics = result.get("metrics") or {}
    points = []
    for key, label in (("score", "all tasks"), *((k, k.removeprefix("score_")) for k in metrics if k != "score")):
        if key not in metrics:
            continue
        low, high = _interval(metrics[key])
        points.append(ChartPoint(label, metrics[key].get("value"), low, high, 0 if key == "score" else 1))
    abilities = result.get("abilities") or {}
    ability_rows = tuple(
        (name, entry.get("value"), *_interval(entry), entry.get("n")) for name, entry in abilities.items()
    )
    task_rows = tuple(
        (
            str(s.get("scenario_id")),
            str(s.get("type")),
            str(s.get("task_status") or s.get("status")),
            len(s.get("turns") or []),
            s.get("score_0_20"),
            _error_text(s),
        )
        for s in samples
    )
    counts = result.get("counts") or {}
    return ReportSection(
        charts=(
            StripChart(
                tuple(points),
                domain=SCORE_DOMAIN,
                title="EQ-Bench 3 rubric score (0-100) with 95% intervals over tasks, overall and by task type",
                caption=f"Judge: {result.get('judge_model') or 'unknown'}; {result.get('judge_era') or ''}. "
                "Rubric numbers from different judges are not comparable.",
            ),
        ),
        tables=(
            FactsTable(
                ("judge", "comparable with", "tasks scored", "errors (excluded, as upstream)"),
                (
                    (
                        result.get("judge_model"),
                        result.get("judge_era"),
                        f"{counts.get('rubric_scored', 0)}/{result.get('n_items')}",
                        counts.get("error", 0),
                    ),
                ),
            ),
            FactsTable(("ability (0-20)", "mean", "95% low", "95% high", "tasks"), ability_rows),
            FactsTable(("task", "type", "status", "turns", "score 0-20", "error"), task_rows),
        ),
    )
