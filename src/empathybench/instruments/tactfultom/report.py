"""TactfulToM's section of report.html, as data (report/html.py draws it): accuracy per question category with and
without chain of thought, with 95% intervals, the overall figures, and how the replies were read."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import interval
from empathybench.instruments import protocol
from empathybench.instruments.tactfultom.score import CATEGORIES, SHORT_NAMES

ACCURACY_DOMAIN = (0.0, 100.0)  # percent correct
OVERALL_FIGURES = (("overall_macro", "macro"), ("overall_macro_chart", "chart's 6"), ("overall_micro", "micro"))


def _point(label: str, entry: Mapping[str, Any] | None, series: int) -> protocol.ChartPoint:
    entry = entry or {}
    low, high = entry.get("ci95") or (None, None)
    return protocol.ChartPoint(label, entry.get("value"), low, high, series)


def _categories_chart(conditions: Mapping[str, Any]) -> protocol.GroupedBarsChart:
    present = [c for c in CATEGORIES if any(c in (f.get("categories") or {}) for f in conditions.values())]
    series = tuple(
        (
            "with chain of thought" if name == "cot" else "without chain of thought",
            tuple(_point(SHORT_NAMES[c], (figures.get("categories") or {}).get(c), number) for c in present),
        )
        for number, (name, figures) in enumerate(conditions.items())
    )
    return protocol.GroupedBarsChart(
        tuple(SHORT_NAMES[c] for c in present),
        series,
        unit="%",
        domain=ACCURACY_DOMAIN,
        title="accuracy per question category",
        caption="Percent of questions answered right in the scored format (yes/no, option number or list), with 95% "
        "question-bootstrap intervals. Comprehension's key is always No: a constant No scores 100.",
    )


def _overall_chart(result: Mapping[str, Any]) -> protocol.StripChart:
    metrics = result.get("metrics") or {}
    points = []
    for number, name in enumerate(result.get("conditions") or {}):
        suffix = "" if name == result.get("headline_condition") else f"_{name}"
        for key, shown in OVERALL_FIGURES:
            if key + suffix in metrics:
                points.append(_point(f"{shown} ({name})", metrics.get(key + suffix), number))
    return protocol.StripChart(
        tuple(points),
        domain=ACCURACY_DOMAIN,
        title="overall accuracy (ours): macro over the 11 categories and over the paper chart's, micro over questions",
        caption="Upstream reports categories only; the macro mean counts each category once (the headline), the "
        "chart's mean counts the paper chart's categories once (6 of its 7: justification is not asked), the micro "
        "mean counts each question once (about half of them are belief questions).",
        unit="%",
    )


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> protocol.ReportSection:
    conditions = result.get("conditions") or {}
    if not conditions:
        return protocol.ReportSection(note=result.get("headline_note") or "no question was answered")
    names = list(conditions)
    columns: list[str] = []
    for name in names:
        columns += [f"{name} %", f"{name} 95% CI"]
    rows = []
    for category in CATEGORIES:
        entries = [(conditions[name].get("categories") or {}).get(category) for name in names]
        if not any(entries):
            continue
        cells: list[Any] = []
        for entry in entries:
            cells += [(entry or {}).get("value"), interval((entry or {}).get("ci95"), 1)]
        rows.append((category, *cells, max((e or {}).get("n") or 0 for e in entries)))
    checked = {name: f["freeform_check"] for name, f in conditions.items() if f.get("freeform_check")}
    freeform_rows = []
    for category in ("overall", *CATEGORIES):
        entries = [
            (c.get("overall") if category == "overall" else (c.get("categories") or {}).get(category))
            for c in checked.values()
        ]
        if any(entries):
            cells = [x for e in entries for x in ((e or {}).get("value"), interval((e or {}).get("ci95"), 1))]
            freeform_rows.append((category, *cells, max((e or {}).get("n") or 0 for e in entries)))
    freeform_table = protocol.FactsTable(
        ("free-form answers of", *(x for name in checked for x in (f"{name} %", f"{name} 95% CI")), "questions"),
        tuple(freeform_rows),
        digits=1,
        title="free-form answers whose most similar option is the gold one (ours; all-MiniLM-L6-v2)",
    )
    lenient_rows = []
    for category in CATEGORIES:
        pairs = [
            ((f.get("categories") or {}).get(category), (f.get("lenient_lists") or {}).get(category))
            for f in conditions.values()
        ]
        if any(lenient for _, lenient in pairs):
            cells = [
                x for upstream, lenient in pairs for x in ((upstream or {}).get("value"), (lenient or {}).get("value"))
            ]
            lenient_rows.append((category, *cells))
    lenient_table = protocol.FactsTable(
        ("list question", *(x for name in names for x in (f"{name}: upstream %", f"{name}: lenient % (ours)"))),
        tuple(lenient_rows),
        digits=1,
        title="list answers read as upstream reads them and leniently (ours: split at commas and 'and', periods and "
        "case ignored)",
    )
    reading = tuple((name, figures.get("n_scored"), figures.get("n_unread")) for name, figures in conditions.items())
    return protocol.ReportSection(
        charts=(_overall_chart(result), _categories_chart(conditions)),
        tables=(
            protocol.FactsTable(
                ("category (upstream's name)", *columns, "questions"),
                tuple(rows),
                digits=1,
                title="per question category",
            ),
            protocol.FactsTable(
                ("prompt", "scored replies", "no readable answer (counted wrong)"),
                reading,
                title="how the replies were read",
            ),
            *((lenient_table,) if lenient_rows else ()),
            *((freeform_table,) if checked else ()),
        ),
        footnote=(
            str(result.get("freeform_note") or ""),
            str((result.get("human_reference") or {}).get("note") or ""),
        ),
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table: its category, the answer read in the headline prompt and the key."""
    conditions = record.get("conditions") or {}
    first = next(iter(conditions.values()), {})
    read = (first.get(record.get("scored_format")) or {}).get("read")
    verdict = "right" if record.get("correct") else "wrong"
    where = f"{record.get('category')} ({record.get('scored_format')})"
    return f"{where}: read {read!r}, key {record.get('gold')!r}, {verdict}"


def comparison_section(results: Sequence[tuple[str, Mapping[str, Any]]]) -> protocol.ReportSection:
    """Several runs side by side: each category's accuracy in each run's headline condition, with intervals."""
    headlines = [
        (label, (result.get("conditions") or {}).get(result.get("headline_condition") or "") or {})
        for label, result in results
    ]
    present = [c for c in CATEGORIES if any(c in (f.get("categories") or {}) for _, f in headlines)]
    series = tuple(
        (label, tuple(_point(SHORT_NAMES[c], (figures.get("categories") or {}).get(c), number) for c in present))
        for number, (label, figures) in enumerate(headlines)
    )
    chart = protocol.GroupedBarsChart(
        tuple(SHORT_NAMES[c] for c in present),
        series,
        unit="%",
        domain=ACCURACY_DOMAIN,
        title="TactfulToM: accuracy per question category, the runs side by side",
        caption="Each run's headline condition (without chain of thought unless it ran only with it), with 95% "
        "question-bootstrap intervals.",
    )
    return protocol.ReportSection(charts=(chart,))
