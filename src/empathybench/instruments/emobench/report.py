"""EmoBench's section of report.html, as data (report/html.py draws it): per task and language of each condition,
the accuracy per category beside the trivial baselines, per-order spread and the invalid rate."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import number
from empathybench.instruments.protocol import ChartLine, ChartPoint, FactsTable, ReportSection, StripChart

ACCURACY_DOMAIN = (0.0, 100.0)  # percent correct
_BASELINE_STYLES = {"chance": "dotted", "always_A": "dashed", "longest_option": "dashed"}


def _point(label: str, entry: Mapping[str, Any], series: int) -> ChartPoint:
    ci = entry.get("ci95") or [None, None]
    return ChartPoint(label, entry.get("value"), ci[0], ci[1], series)


def _chart(condition: str, key: str, figures: Mapping[str, Any]) -> StripChart:
    points = [_point(f"all {figures.get('task', '')} items", figures.get("accuracy") or {}, 0)]
    for name in ("emotion_accuracy", "cause_accuracy"):
        if figures.get(name):
            points.append(_point(name.replace("_", " ").replace("accuracy", "only"), figures[name], 1))
    for name, entry in (figures.get("by_category") or {}).items():
        points.append(_point(str(name), entry, 2))
    references = tuple(
        ChartLine(float(value), name.replace("_", " "), _BASELINE_STYLES.get(name, "dashed"))
        for name, value in (figures.get("baselines") or {}).items()
        if value is not None
    )
    return StripChart(
        tuple(points),
        domain=ACCURACY_DOMAIN,
        references=references,
        title=f"{key} accuracy per category ({condition})",
        caption="Percent correct with 95% intervals; lines: the always-A, longest-option and chance baselines on "
        "the same items and orders (option position moves these scores).",
    )


def _spread(per_order: Mapping[str, Any], spread: Mapping[str, Any] | None) -> str:
    orders = ", ".join(f"{order}: {number(float(value), 1)}" for order, value in per_order.items() if value is not None)
    if spread:
        orders += f" (max-min {number(float(spread['max_minus_min']), 1)})"
    return orders or "—"


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    charts = []
    rows = []
    for condition, by_key in (result.get("conditions") or {}).items():
        for key, figures in (by_key or {}).items():
            charts.append(_chart(condition, key, figures))
            baselines = figures.get("baselines") or {}
            rows.append(
                (
                    condition,
                    key,
                    (figures.get("accuracy") or {}).get("value"),
                    baselines.get("always_A"),
                    baselines.get("longest_option"),
                    baselines.get("chance"),
                    _spread(figures.get("per_order_accuracy") or {}, figures.get("order_spread")),
                    figures.get("invalid_rate"),
                    figures.get("n_items"),
                )
            )
    human = result.get("human_baseline") or {}
    notes = tuple((str(note),) for note in result.get("notes") or ())
    tables = [
        FactsTable(
            (
                "condition",
                "task-language",
                "accuracy %",
                "always-A %",
                "longest option %",
                "chance %",
                "accuracy % per order",
                "invalid answers %",
                "items",
            ),
            tuple(rows),
        ),
        FactsTable(("human baseline",), ((human.get("note") or "not available",),)),
    ]
    if notes:
        tables.append(FactsTable(("note",), notes))
    return ReportSection(charts=tuple(charts), tables=tuple(tables))
