"""EQ-Bench's section of report.html, as data (report/html.py draws it)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.protocol import (
    ChartLine,
    ChartPoint,
    FactsTable,
    HistogramChart,
    ReportSection,
    StripChart,
)

SCORE_DOMAIN = (0.0, 100.0)  # 0: no better than random-like answers; 100: the reference answers


def _count(value: Any) -> str:
    return "—" if value is None else str(value)


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    score = (result.get("metrics") or {}).get("score") or {}
    reference = score.get("reference") or {}
    ci = score.get("ci95") or [None, None]
    points = [ChartPoint("this model", score.get("value"), ci[0], ci[1], 0)]
    points += [ChartPoint(str(m["label"]), float(m["value"]), series=7) for m in reference.get("models") or []]
    failures = result.get("parse_failures") or {}
    return ReportSection(
        charts=(
            StripChart(
                tuple(points),
                domain=SCORE_DOMAIN,
                references=(ChartLine(0.0, "random", "dotted"),),
                title="EQ-Bench score beside published reference models",
                caption="Published scores: official EQ-Bench v2 result files (revise prompt, English).",
            ),
            HistogramChart(
                tuple(10 * v for v in (score.get("items") or {}).values()),
                bins=10,
                title="item scores (x10, parsed items)",
                caption="Each item: 10 minus the scaled distance to the reference intensities, x10.",
            ),
        ),
        tables=(
            FactsTable(
                ("parsed", "valid (upstream 83.33% gate)", "lm-eval score (unparsed = 0)", "parse failures"),
                (
                    (
                        f"{_count(result.get('n_parsed'))}/{_count(result.get('n_items'))}",
                        result.get("valid"),
                        result.get("lm_eval_score"),
                        ", ".join(f"{k}: {v}" for k, v in failures.items()) or "none",
                    ),
                ),
            ),
        ),
    )
