"""GIEBench's section of report.html, as data (report/html.py draws it)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.instruments.protocol import (
    ChartLine,
    ChartPoint,
    FactsTable,
    GroupedBarsChart,
    ReportSection,
    StripChart,
)

ACCURACY_DOMAIN = (0.0, 100.0)  # accuracy in %
CHANGE_DOMAIN = (-40.0, 40.0)  # the headline: change in accuracy from Raw, percentage points


def _accuracy(condition: Mapping[str, Any], dimension: str) -> float | None:
    return ((condition.get("by_dimension") or {}).get(dimension) or {}).get("accuracy")


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    conditions = result.get("conditions") or {}
    if not conditions:
        return ReportSection(note=result.get("headline_note") or "no answers")
    dimensions = sorted({d for c in conditions.values() for d in (c.get("by_dimension") or {})})
    series = tuple(
        (
            condition,
            tuple(
                ChartPoint(
                    d, ((conditions[condition].get("by_dimension") or {}).get(d) or {}).get("accuracy"), series=i
                )
                for d in dimensions
            ),
        )
        for i, condition in enumerate(conditions)
    )
    metrics = result.get("metrics") or {}
    strip_points = tuple(
        ChartPoint(m["label"], m["value"], *(m["ci95"] or [None, None]), series=i)
        for i, m in enumerate(
            metrics[f"accuracy_{c.lower()}"] for c in conditions if f"accuracy_{c.lower()}" in metrics
        )
    )
    changes = result.get("change_from_raw") or {}
    return ReportSection(
        charts=(
            GroupedBarsChart(
                tuple(dimensions),
                series,
                unit="%",
                domain=ACCURACY_DOMAIN,
                title="accuracy per dimension by condition",
                caption="Raw: no identity; ID: with the identity; COT: identity and an instruction to take its "
                "standpoint.",
            ),
            StripChart(
                strip_points,
                domain=ACCURACY_DOMAIN,
                references=(ChartLine(25.0, "chance", "dotted"),),
                unit="%",
                title="accuracy by condition",
            ),
        ),
        tables=(
            FactsTable(
                ("condition vs Raw", "Δ pp", "wrong→right", "right→wrong", "McNemar p"),
                tuple(
                    (c, t.get("delta_pp"), t.get("wrong_to_right"), t.get("right_to_wrong"), t.get("mcnemar_p"))
                    for c, t in changes.items()
                ),
                digits=(2, 2, 2, 2, 4),
                numeric=(1, 2, 3, 4),
            ),
        ),
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table: the parsed choice and whether it was right."""
    import json

    return json.dumps({"parsed": record.get("parsed"), "correct": record.get("correct")})
