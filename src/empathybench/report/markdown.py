"""report.md: the profile and every figure with its interval, as Markdown tables to paste into papers and PRs."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import interval, number
from empathybench.instruments.protocol import ItemLink, Marked, ReportSection
from empathybench.report.cost import cost_line
from empathybench.report.judge_notes import JUDGE_HEADERS, by_instrument, commands_line, judge_line, judge_rows
from empathybench.report.page import STANDING_HEADERS, STANDING_INTRO
from empathybench.report.profile import build_profile, title_of
from empathybench.report.validity import answers_text, own_note, plugin_source, validity_of


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _reference(reference: dict[str, Any] | None) -> str:
    if not reference:
        return ""
    if reference.get("kind") == "human_norm":
        return f"{reference['label']}: mean {number(reference.get('mean'))}, SD {number(reference.get('sd'))}"
    if reference.get("kind") == "published_models" and reference.get("models"):
        return "published: " + ", ".join(f"{m['label']} {number(m['value'])}" for m in reference["models"][:3])
    return f"{reference['label']}: {number(reference.get('value'))}"


def _published_part(standing: Sequence[Mapping[str, str]]) -> list[str]:
    """The run among the published models (the atlas), as in report.html; nothing without it."""
    if not standing:
        return []
    rows = [[title_of(row[key]) if key == "instrument" else row[key] for key in STANDING_HEADERS] for row in standing]
    return ["", "## Among the published models", "", STANDING_INTRO, "", _table(list(STANDING_HEADERS), rows)]


def _judge_part(entry: Mapping[str, Any] | None) -> list[str]:
    """What is known about the instrument's judge, as in report.html; nothing for an instrument with no judge."""
    if entry is None:
        return []
    parts = ["", _cell(judge_line(entry))]
    rows = judge_rows(entry)
    if rows:
        parts += ["", _table(list(JUDGE_HEADERS), rows)]  # type: ignore[arg-type]
    commands = commands_line(entry)
    return parts + (["", _cell(commands)] if commands else [])


def render_run_markdown(
    summary: dict[str, Any],
    run_info: dict[str, Any] | None = None,
    standing: Sequence[Mapping[str, str]] = (),
    judges: Sequence[Mapping[str, Any]] = (),
) -> str:
    profile = summary.get("profile") or build_profile(summary.get("benchmarks", {}))
    parts = [
        f"# EmpathyBench · {summary.get('model')} · preset {summary.get('preset')}",
        "",
        *([f"Read from {_cell(str(summary['source']))}.", ""] if summary.get("source") else []),
        "## Emotional-intelligence profile",
        "",
        _table(
            ["instrument", "figure", "value", "95% CI", "n", "reference", "status"],
            [
                [
                    row["title"],
                    row.get("label") or "—",
                    number(row.get("value")),
                    interval(row.get("ci95"), missing="—"),
                    row.get("n", 0),
                    _reference(row.get("reference")),
                    (row.get("validity") or {}).get("label") or row.get("status") or "",
                ]
                for row in profile
            ],
        ),
    ]
    spent = cost_line(summary.get("cost"))
    if spent is not None:
        parts += ["", _cell(spent)]
    parts += _published_part(standing)
    judged = by_instrument(judges)
    for name, result in summary.get("benchmarks", {}).items():
        parts += ["", f"## {title_of(name)}", ""]
        if result.get("status") == "skipped":
            parts.append(f"Skipped: {result.get('error')}")
            continue
        validity = validity_of(result)
        parts += [f"**Status: {validity['label']}**" + "".join(f"; {_cell(r)}" for r in validity["reasons"]), ""]
        note = own_note(result)
        if note:
            parts += [f"> {_cell(note)}", ""]
        if plugin_source(result):
            parts += [f"Instrument from {_cell(plugin_source(result))}.", ""]
        parts += [f"Answers: {_cell(answers_text(result))}", ""]  # the parse rate and the truncated rate beside it
        parts.append(
            _table(
                ["figure", "value", "95% CI", "unit", "n"],
                [
                    [
                        entry["label"],
                        number(entry["value"]),
                        interval(entry["ci95"], missing="—"),
                        entry["unit"],
                        entry["n"],
                    ]
                    for entry in (result.get("metrics") or {}).values()
                ],
            )
        )
        parts += _judge_part(judged.get(name))
    repeats = summary.get("repeats")
    if repeats:
        parts += [
            "",
            f"## Run-to-run variation ({repeats['n']} repeats)",
            "",
            _table(
                ["figure", "mean", "SD"],
                [[key, number(e["mean"]), number(e["sd"])] for key, e in repeats["metrics"].items()],
            ),
        ]
    parts += ["", "Intervals: seeded percentile bootstrap over items (95%). Generated by EmpathyBench.", ""]
    return "\n".join(parts)


def _section_cell(cell: Any, digits: int) -> str:
    if isinstance(cell, ItemLink):
        return cell.text
    if isinstance(cell, Marked):
        return number(cell.value, digits) + {"up": " ▲", "down": " ▼"}.get(cell.marker or "", "")
    return number(cell, digits)


def section_markdown(title: str, section: ReportSection) -> str:
    """An instrument's section as Markdown: its note, warning and tables (charts are in the HTML only)."""
    lines = [f"## {_cell(title)}", ""]
    lines += [f"**{_cell(section.warning)}**", ""] if section.warning else []
    lines += [_cell(section.note), ""] if section.note else []
    for table in section.tables:
        lines += [f"### {_cell(table.title)}", ""] if table.title else []
        rows = [[_section_cell(c, table.digits_of(i)) for i, c in enumerate(r)] for r in table.rows]
        lines += [_table(list(table.headers), rows), ""]
    return "\n".join(lines)


def render_comparison_markdown(
    comparison: dict[str, Any], sections: Mapping[str, tuple[str, ReportSection]] | None = None
) -> str:
    labels = [r["label"] for r in comparison["runs"]]
    board: list[list[Any]] = []
    paired: list[list[Any]] = []
    for entry in comparison["benchmarks"].values():
        for key, cells in entry["leaderboard"].items():
            mark = " ★" if key == entry["headline_metric"] else ""
            label = entry["metric_labels"].get(key, key)
            cells_text = [f"{number(c['value'])} {interval(c['ci95'], missing='—')}" for c in cells]
            board.append([entry["title"] + mark, label, *cells_text])
        for row in entry["paired"]:
            paired.append(
                [
                    entry["title"],
                    row["label"],
                    f"{row['first']} − {row['second']}",
                    number(row.get("n_shared")),
                    f"{number(row.get('difference'))} {interval(row.get('ci95'), missing='—')}",
                    row.get("test") or row.get("note") or "",
                    number(row.get("p"), 4) if row.get("p") is not None else row.get("p_note") or "—",
                ]
            )
    return "\n".join(
        [
            "# EmpathyBench comparison: " + " vs ".join(labels),
            "",
            *[
                f"- **{_cell(r['label'])}**: `{_cell(r['directory'])}`"
                + (f" (read from {_cell(r['source'])})" if r.get("source") else "")
                for r in comparison["runs"]
            ],
            "",
            *(
                ["## Warnings", "", *[f"- {_cell(w)}" for w in comparison.get("warnings", [])], ""]
                if comparison.get("warnings")
                else []
            ),
            "## Leaderboard (★ headline figure; 95% item-bootstrap intervals)",
            "",
            _table(["instrument", "figure", *labels], board),
            "",
            "## Paired differences on shared items",
            "",
            _table(["instrument", "figure", "difference", "shared", "Δ [95% CI]", "test", "p"], paired),
            "",
            *(section_markdown(title, section) for title, section in (sections or {}).values()),
        ]
    )
