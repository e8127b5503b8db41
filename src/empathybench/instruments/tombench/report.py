"""ToMBench's section of report.html, as data (report/html.py draws it): accuracy per ability category and language,
per task and per ability, and how the replies were read (how often the upstream parser fell back to A)."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import interval
from empathybench.instruments import protocol
from empathybench.instruments.tombench.atoms import ATOMS, TASKS

ACCURACY_DOMAIN = (0.0, 100.0)  # percent correct


def _value(entry: Mapping[str, Any] | None) -> float | None:
    return (entry or {}).get("value")


def _ci(entry: Mapping[str, Any] | None) -> str:
    return interval((entry or {}).get("ci95"), 1)


def _overall(result: Mapping[str, Any]) -> protocol.StripChart:
    points = []
    for number, (condition, by_language) in enumerate((result.get("conditions") or {}).items()):
        for language, figures in by_language.items():
            entry = figures.get("accuracy") or {}
            low, high = entry.get("ci95") or (None, None)
            points.append(protocol.ChartPoint(f"{language} ({condition})", entry.get("value"), low, high, number))
    chance = result.get("chance")
    return protocol.StripChart(
        tuple(points),
        domain=ACCURACY_DOMAIN,
        references=(protocol.ChartLine(float(chance), "chance", "dotted"),) if chance is not None else (),
        title="accuracy per language and prompt (majority of the tries)",
        caption="Percent of items whose most common answer is the key, with 95% item-bootstrap intervals; chance: "
        "one uniform guess among each item's 2 or 4 options.",
        unit="%",
    )


def _by_category(headline: Mapping[str, Any]) -> protocol.GroupedBarsChart:
    series = tuple(
        (
            language,
            tuple(
                protocol.ChartPoint(category, _value((figures.get("by_category") or {}).get(category)), series=number)
                for category in ATOMS
            ),
        )
        for number, (language, figures) in enumerate(headline.items())
    )
    return protocol.GroupedBarsChart(
        tuple(ATOMS),
        series,
        unit="%",
        domain=ACCURACY_DOMAIN,
        title="accuracy per ATOMS ability category",
        caption="An item counts in every category its ability label names.",
    )


def _rows(headline: Mapping[str, Any], group: str, names: Sequence[str]) -> list[tuple[Any, ...]]:
    rows = []
    for name in names:
        entries = [(figures.get(group) or {}).get(name) for figures in headline.values()]
        if any(entries):
            cells: list[Any] = []
            for entry in entries:
                cells += [_value(entry), _ci(entry)]
            rows.append((name, *cells, max((e or {}).get("n") or 0 for e in entries)))
    return rows


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> protocol.ReportSection:
    conditions = result.get("conditions") or {}
    headline = conditions.get(result.get("headline_condition") or "") or {}
    if not headline:
        return protocol.ReportSection(note=result.get("headline_note") or "no item was answered")
    columns: list[str] = []
    for language in headline:
        columns += [f"{language} %", f"{language} 95% CI"]
    tasks = [t for t in TASKS if any(t in (f.get("by_task") or {}) for f in headline.values())]
    tasks += sorted({t for f in headline.values() for t in f.get("by_task") or {}} - set(tasks))
    abilities = [a for category in ATOMS.values() for a in category]
    reading = [
        (
            language,
            condition,
            _value(figures.get("accuracy")),
            figures.get("accuracy_strict_parser", figures.get("accuracy_upstream_parser")),
            figures.get("n_tries"),
            *(figures.get("methods") or {}).values(),
        )
        for condition, by_language in conditions.items()
        for language, figures in by_language.items()
    ]
    other = "strict" if result.get("parser") == "upstream" else "upstream"
    return protocol.ReportSection(
        charts=(_overall(result), _by_category(headline)),
        tables=(
            protocol.FactsTable(
                ("task (data file; the paper's 8 tasks first)", *columns, "items"),
                tuple(_rows(headline, "by_task", tasks)),
                digits=1,
                title="per task",
            ),
            protocol.FactsTable(
                ("ability (ATOMS, by category)", *columns, "items"),
                tuple(_rows(headline, "by_ability", abilities)),
                digits=1,
                title="per ability",
            ),
            protocol.FactsTable(
                (
                    "language",
                    "prompt",
                    f"accuracy % ({result.get('parser')} parser)",
                    f"{other} parser %",
                    "replies",
                    "[[X]]",
                    "[X]",
                    "last letter",
                    "no letter: read as A",
                ),
                tuple(reading),
                digits=1,
                title="how the replies were read",
            ),
        ),
        footnote=(str((result.get("human_reference") or {}).get("note") or ""),),
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table: its task, the vote of the headline prompt and the key."""
    condition = next(iter(record.get("conditions") or {}), "")
    tries = ((record.get("conditions") or {}).get(condition) or {}).get("tries") or []
    votes = "".join(str(t.get("answer") or "-") for t in tries)
    verdict = "right" if record.get("correct") else "wrong"
    return f"{record.get('task')}: votes {votes}, key {record.get('key')}, {verdict}"
