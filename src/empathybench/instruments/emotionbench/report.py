"""EmotionBench's section of report.html, as data (report/html.py draws it)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import number
from empathybench.instruments.protocol import (
    ChartPoint,
    FactsTable,
    GroupedBarsChart,
    HeatmapChart,
    ItemLink,
    Marked,
    ReportSection,
    ScatterChart,
)

SHIFT_DOMAIN = (-1.0, 1.0)  # the profile's axis: the headline is a correlation with people's shifts


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    emotions = result.get("emotions") or {}
    alignment = result.get("human_alignment") or {}
    human = alignment.get("human_by_emotion") or {}
    if not emotions:
        return ReportSection(note=result.get("headline_note") or "no parsed runs")
    names = tuple(emotions)
    charts: list[GroupedBarsChart | HeatmapChart | ScatterChart] = []
    for affect, meaning in (("NA", "Negative Affect"), ("PA", "Positive Affect")):
        series = (
            ("this model", tuple(ChartPoint(e, emotions[e][affect]["delta"]) for e in names)),
            ("people", tuple(ChartPoint(e, (human.get(e) or {}).get(f"{affect}_delta"), series=2) for e in names)),
        )
        charts.append(
            GroupedBarsChart(
                names,
                series,
                title=f"{meaning} shift after imagining the situations",
                caption="Evoked minus default PANAS sum; people: paired before/after of the crowd study.",
            )
        )
    factors = alignment.get("factors") or []
    if factors:
        charts.append(
            HeatmapChart(
                tuple(f["factor"] for f in factors),
                ("model PA", "people PA", "model NA", "people NA"),
                tuple(
                    (f["model_PA_delta"], f["human_PA_delta"], f["model_NA_delta"], f["human_NA_delta"])
                    for f in factors
                ),
                title="shift per factor (red up, blue down)",
                caption="One row per factor of the situations asked.",
            )
        )
        charts.append(
            ScatterChart(
                tuple(
                    (f["human_NA_delta"], f["model_NA_delta"], f["factor"])
                    for f in factors
                    if f["model_NA_delta"] is not None and f["human_NA_delta"] is not None
                ),
                x_label="people: NA shift",
                y_label="model: NA shift",
                diagonal=True,
                title="alignment with people (NA), one dot per factor",
            )
        )
    first_item: dict[Any, str] = {}
    for record in samples:
        first_item.setdefault(record.get("emotion"), record["item_id"])
    rows = tuple(
        (
            ItemLink(e, first_item.get(e, "")),
            emotions[e]["n"],
            Marked(emotions[e]["PA"]["delta"], emotions[e]["PA"]["marker"]),
            (human.get(e) or {}).get("PA_delta"),
            Marked(emotions[e]["NA"]["delta"], emotions[e]["NA"]["marker"]),
            (human.get(e) or {}).get("NA_delta"),
        )
        for e in names
    )
    dropped = (result.get("runs") or {}).get("failed_dropped")
    return ReportSection(
        charts=tuple(charts),
        tables=(
            FactsTable(
                ("emotion", "runs", "model PA shift", "people PA shift", "model NA shift", "people NA shift"),
                rows,
                numeric=(1, 2, 3, 4, 5),
            ),
        ),
        footnote=(
            "Parse failures: ",
            result.get("parse_failure_rate"),
            " of runs (",
            "" if dropped is None else str(dropped),
            " dropped, as the paper did). ▲/▼: significant at α = 0.01 (F-test, then Student or Welch t-test). ",
            alignment.get("note") or "",
        ),
        footnote_digits=3,
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table: how many runs parsed and their mean PA and NA."""
    runs = record.get("runs") or []
    parsed = [r for r in runs if r.get("answers") is not None]
    na = [r["NA"] for r in parsed if "NA" in r]
    pa = [r["PA"] for r in parsed if "PA" in r]
    text = f"{len(parsed)}/{len(runs)} runs parsed"
    if na:
        text += f"; PA {number(sum(pa) / len(pa), 1)}, NA {number(sum(na) / len(na), 1)}"
    return text
