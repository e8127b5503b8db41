"""SECEU's section of report.html, as data (report/html.py draws it)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.protocol import ChartLine, FactsTable, LineChart, NormalCurveChart, ReportSection

EQ_DOMAIN = (40.0, 140.0)  # the human EQ scale (mean 100, SD 15), +-4 SD and a margin for the uniform answer


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    eq = (result.get("metrics") or {}).get("eq") or {}
    uniform = (result.get("uniform_baseline") or {}).get("eq")
    ci = eq.get("ci95")
    return ReportSection(
        charts=(
            NormalCurveChart(
                mean=100.0,
                sd=15.0,
                marker=eq.get("value"),
                marker_label="this model",
                interval=(ci[0], ci[1]) if ci and None not in ci else None,
                references=(ChartLine(float(uniform), "uniform answer", "dotted"),) if uniform is not None else (),
                title="SECEU EQ on the human norm (mean 100, SD 15)",
                caption=(
                    "Shaded: the share of people below (normal approximation; the human distances are right-skewed)."
                ),
            ),
            LineChart(
                tuple(f"#{i}" for i in result.get("item_ids") or []),
                (
                    ("this model", tuple(result.get("item_distances") or [])),
                    ("people (mean distance)", tuple(result.get("human_item_distances") or [])),
                ),
                title="distance to the human standard, per item (lower = closer to people)",
                caption="The pattern r is the correlation of the two lines across items.",
            ),
        ),
        tables=(
            FactsTable(
                ("SECEU distance", "band", "pattern r", "human-like", "no response", "status"),
                (
                    (
                        result.get("seceu_score"),
                        result.get("band"),
                        result.get("pattern_r"),
                        result.get("human_like"),
                        result.get("n_no_response"),
                        result.get("seceu_status"),
                    ),
                ),
                digits=3,
            ),
        ),
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table: its distance to the human standard."""
    return f"distance {record.get('distance')}" + (" (no response)" if record.get("no_response") else "")
