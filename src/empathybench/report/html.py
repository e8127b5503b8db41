"""The self-contained report.html: the EI profile at the top, one section per instrument with its charts, the samples
behind every number, and the comparison page of several runs. No network: charts are inline SVG, the one script is
inline and only opens the collapsed sample table a link points into.

Python builds the pages as data (report/page.py) with every number formatted by empathybench.formatting; the jinja2
templates in report/templates lay them out with autoescape on, so model replies, errors, labels and file contents are
escaped by construction. The only markup that enters a page from Python is a chart that report/svg.py drew (it
escapes every label it places)."""

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from empathybench.formatting import interval, number
from empathybench.instruments.protocol import Cell as SectionCell
from empathybench.instruments.protocol import (
    ChartLine,
    ChartPoint,
    GroupedBarsChart,
    HeatmapChart,
    ItemLink,
    LineChart,
    Marked,
    NormalCurveChart,
    ReportSection,
    ScatterChart,
    StackedBarsChart,
    StripChart,
    TrajectoryChart,
)
from empathybench.report import svg
from empathybench.report.cost import cost_line
from empathybench.report.judge_notes import JUDGE_HEADERS, by_instrument, commands_line, judge_line, judge_rows
from empathybench.report.page import (
    NO_PUBLISHED_RUN,
    STANDING_HEADERS,
    STANDING_INTRO,
    Block,
    Cell,
    ComparisonPage,
    DrawnChart,
    DrawnSection,
    InstrumentPart,
    JudgePart,
    OverlayCard,
    Piece,
    ProfileCard,
    RunPage,
    RunRef,
    SampleRow,
    Status,
    Table,
)
from empathybench.report.profile import build_profile, title_of
from empathybench.report.validity import answers_text, own_note, plugin_source, short_reason, validity_of

# A word Chromium may break inside (Unicode's line-breaking rules): after a hyphen or dash, a slash, a closing brace,
# "?", "!", "|", "…" or "·" ("gpt-4-1106-" / "preview"); a decimal point, comma or bracket alone breaks nothing.
_BREAKABLE_WORD = re.compile(r"\S*[-\u2010-\u2015/\\?!|}\u2026\u00b7]\S*")


def whole_words(text: object) -> Markup:
    """Text escaped, each word Chromium could break inside in a `<span class="w">` the stylesheet keeps on one line,
    so a table cell wraps between words and never inside one (a model name, owner/repo@commit)."""
    return Markup("").join(
        Markup('<span class="w">{}</span>').format(part) if len(part) > 1 and _BREAKABLE_WORD.fullmatch(part) else part
        for part in re.split(r"(\s+)", str(text))
        if part
    )


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The templates of report/templates (shipped in the wheel), autoescaping everything, failing on a missing name."""
    templates = Environment(
        loader=PackageLoader("empathybench.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    templates.filters["whole_words"] = whole_words
    return templates


def _render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def _text(value: Any) -> str:
    """A value shown as text ("" for None); the template escapes it."""
    return "" if value is None else str(value)


def _cell(*pieces: Piece | str) -> Cell:
    return tuple(p if isinstance(p, Piece) else Piece(p) for p in pieces)


def _anchor(*parts: str) -> str:
    return "-".join("".join(c if c.isalnum() else "_" for c in str(p)) for p in parts)


# ----------------------------------------------------------------------------------------------------------- profile


def _reference_text(reference: dict[str, Any] | None) -> str:
    if not reference:
        return ""
    kind = reference.get("kind")
    label = _text(reference.get("label"))
    if kind == "human_norm":
        parts = [f"{label}: mean {number(reference.get('mean'))}, SD {number(reference.get('sd'))}"]
        if reference.get("percentile") is not None:
            parts.append(f"above {number(reference['percentile'], 0)}% of people (normal approximation)")
        if reference.get("uniform_baseline") is not None:
            parts.append(f"uniform-answer baseline {number(reference['uniform_baseline'], 1)}")
        return " · ".join(parts)
    if kind == "human_replies":
        text = f"{label}: {number(reference.get('value'), 1)}% {interval(reference.get('ci95'), 1)}"
        if reference.get("published_raters") is not None:
            raters = _text(reference.get("published_raters_label"))
            text += f" · {raters}: {number(reference['published_raters'], 1)}%"
        return text
    if kind == "published_models":
        models = reference.get("models") or []
        if models:
            shown = ", ".join(f"{_text(m['label'])} {number(m['value'], 1)}" for m in models[:4])
            return f"{label}: {shown}"
        return f"{label}: {number(reference.get('value'), 1)}"
    return f"{label}: {number(reference.get('value'), 2)}"


def _instrument(name: str) -> Any:
    """The installed instrument `name`, or None (a run directory may name one that is not installed)."""
    from empathybench.instruments.registry import installed

    return installed(name)


def _domain(name: str, values: Sequence[float | None]) -> tuple[float, float]:
    instrument = _instrument(name)
    base = instrument.chart_domain if instrument is not None else None
    return _widen(base, values)


def _widen(base: tuple[float, float] | None, values: Sequence[float | None]) -> tuple[float, float]:
    """The chart axis: `base` widened to show every value (from the values alone without a base)."""
    present = [v for v in values if v is not None]
    if base is None:
        base = (min(present, default=0.0), max(present, default=1.0))
    low = min([base[0], *present])
    high = max([base[1], *present])
    return (low, high) if high > low else (low - 1, high + 1)


def _draw_chart(chart: Any) -> Markup:
    """One chart of a ReportSection drawn by report/svg.py (which escapes every label it places)."""
    if isinstance(chart, StripChart):
        points = list(chart.points)
        values = [p.value for p in points] + [v for p in points for v in (p.low, p.high)]
        return svg.interval_strip(
            points,
            domain=_widen(chart.domain, values),
            references=list(chart.references),
            unit=chart.unit,
            title=chart.title,
        )
    if isinstance(chart, GroupedBarsChart):
        return svg.grouped_bars(
            list(chart.categories),
            {name: list(points) for name, points in chart.series},
            unit=chart.unit,
            domain=chart.domain,
            title=chart.title,
        )
    if isinstance(chart, NormalCurveChart):
        return svg.normal_curve(
            mean=chart.mean,
            sd=chart.sd,
            marker=chart.marker,
            marker_label=chart.marker_label,
            interval=chart.interval,
            references=list(chart.references),
            title=chart.title,
        )
    if isinstance(chart, LineChart):
        return svg.line_chart(list(chart.x_labels), {n: list(v) for n, v in chart.series}, title=chart.title)
    if isinstance(chart, TrajectoryChart):
        return svg.trajectories(
            list(chart.x_labels),
            [
                (g.name, [list(p) for p in g.paths], list(g.summary) if g.summary is not None else None)
                for g in chart.groups
            ],
            references=list(chart.references),
            domain=chart.domain,
            unit=chart.unit,
            title=chart.title,
        )
    if isinstance(chart, HeatmapChart):
        return svg.heatmap(
            list(chart.row_labels),
            list(chart.col_labels),
            [list(row) for row in chart.values],
            center=chart.center,
            unit=chart.unit,
            title=chart.title,
        )
    if isinstance(chart, ScatterChart):
        return svg.scatter(
            list(chart.points),
            x_label=chart.x_label,
            y_label=chart.y_label,
            diagonal=chart.diagonal,
            title=chart.title,
        )
    if isinstance(chart, StackedBarsChart):
        return svg.stacked_bars(
            [(label, dict(zip(chart.segments, shares, strict=True))) for label, shares in chart.rows],
            segments=list(chart.segments),
            colors=list(chart.colors) if chart.colors is not None else None,
            title=chart.title,
        )
    return svg.histogram(list(chart.values), bins=chart.bins, unit=chart.unit, title=chart.title)


def draw_section(section: ReportSection, name: str = "") -> DrawnSection:
    """An instrument's ReportSection as page data: charts drawn, every number through the one formatter."""
    tables = tuple(
        Table(
            headers=tuple(table.headers),
            rows=tuple(
                tuple(_section_cell(cell, table.digits_of(i), name) for i, cell in enumerate(row)) for row in table.rows
            ),
            numeric=tuple(table.numeric),
            title=table.title,
        )
        for table in section.tables
    )
    footnote = "".join(number(part, section.footnote_digits) for part in section.footnote) if section.footnote else None
    return DrawnSection(
        charts=tuple(DrawnChart(_draw_chart(chart), chart.caption) for chart in section.charts),
        tables=tables,
        note=section.note,
        warning=section.warning,
        footnote=footnote,
    )


def _section_cell(cell: SectionCell, digits: int, name: str) -> Cell:
    """A table cell: a number formatted, text as it is, a link to an item's sample row, a value with its marker."""
    if isinstance(cell, ItemLink):
        return _cell(Piece(cell.text, href="#" + _anchor("item", name, cell.item_id)))
    if isinstance(cell, Marked):
        return _cell(f"{number(cell.value, digits)} ", *_marker(cell.marker))
    return _cell(number(cell, digits))


def _section_body(name: str, result: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    """The instrument's own section as HTML ("" when it has none)."""
    drawn = _drawn_section(name, result, samples)
    return "" if drawn is None else _render("section.html.j2", section=drawn)


def _drawn_section(name: str, result: dict[str, Any], samples: list[dict[str, Any]]) -> DrawnSection | None:
    instrument = _instrument(name)
    section = instrument.report_section(result, samples) if instrument is not None else None
    return None if section is None else draw_section(section, name)


def _profile_points(row: dict[str, Any], series: int = 0, label: str = "this model") -> list[ChartPoint]:
    ci = row.get("ci95") or [None, None]
    return [ChartPoint(label, row.get("value"), ci[0], ci[1], series)]


def _reference_marks(row: dict[str, Any]) -> tuple[list[ChartPoint], list[ChartLine]]:
    """Human references drawn as a second point (when they carry an interval) or as reference lines."""
    reference = row.get("reference") or {}
    kind = reference.get("kind")
    points: list[ChartPoint] = []
    lines: list[ChartLine] = []
    if kind == "human_norm" and reference.get("mean") is not None:
        lines.append(ChartLine(float(reference["mean"]), "people", "solid"))
        if reference.get("uniform_baseline") is not None:
            lines.append(ChartLine(float(reference["uniform_baseline"]), "uniform answer", "dotted"))
    elif kind == "human_replies" and reference.get("value") is not None:
        ci = reference.get("ci95") or [None, None]
        points.append(ChartPoint("human replies", reference["value"], ci[0], ci[1], 2))
        if reference.get("published_raters") is not None:
            lines.append(ChartLine(float(reference["published_raters"]), "study raters", "dotted"))
    elif kind == "published_models":
        for model in (reference.get("models") or [])[:3]:
            lines.append(ChartLine(float(model["value"]), str(model["label"]), "dotted"))
    elif reference.get("value") is not None:
        lines.append(ChartLine(float(reference["value"]), str(reference.get("label", "")), "dashed"))
    return points, lines


def _profile_card(row: dict[str, Any]) -> ProfileCard:
    name = row["benchmark"]
    validity = row.get("validity") or {"status": row.get("status") or "", "label": row.get("status") or ""}
    common = {
        "name": _text(name),
        "title": _text(row["title"]),
        "anchor": f"bench-{_anchor(name)}",
        "status": Status(_text(validity["status"]), _text(validity["label"])),
        "question": _text(row.get("question")),
    }
    if row.get("value") is None:
        return ProfileCard(**common, value=None, note=_text(short_reason(str(row.get("note") or "no headline figure"))))
    points, lines = _reference_marks(row)
    values = [row["value"], *(row.get("ci95") or []), *(p.value for p in points), *(r.value for r in lines)]
    chart = svg.interval_strip(
        _profile_points(row) + points,
        domain=_domain(name, values),
        references=lines,
        unit="",
        width=360,
    )
    return ProfileCard(
        **common,
        value=number(row["value"], 2),
        # a card says its note in a few words: the section says the whole of it, once
        note=_text(short_reason(str(row.get("note") or ""))),
        samples_anchor=f"samples-{_anchor(name)}",
        unit=_text(row.get("unit")),
        ci=interval(row.get("ci95")),
        n=_text(row.get("n")),
        label=_text(row.get("label")),
        reference=_reference_text(row.get("reference")),
        chart=chart,
    )


# ----------------------------------------------------------------------------------------------- instrument sections


def _metrics_table(name: str, result: dict[str, Any]) -> Table:
    rows = []
    for key, entry in (result.get("metrics") or {}).items():
        rows.append(
            (
                _cell(Piece(_text(entry["label"]), href=f"#samples-{_anchor(name)}")),
                _cell(number(entry["value"])),
                _cell(interval(entry["ci95"])),
                _cell(_text(entry["unit"])),
                _cell(number(entry["n"])),
                _cell(_reference_text(entry.get("reference"))),
                _cell(Piece(_text(entry["method"]), cls="small muted")),
                _cell(_text(key)),
            )
        )
    headers = ("figure", "value", "95% CI", "unit", "n", "reference", "interval", "key")
    return Table(headers, tuple(rows), numeric=(1, 2, 4))


def _marker(marker: str | None) -> tuple[Piece, ...]:
    symbol = {"up": Piece("▲", cls="up sig"), "down": Piece("▼", cls="down sig")}.get(marker or "")
    return (symbol,) if symbol is not None else ()


# ---------------------------------------------------------------------------------------------------------- samples


# A reply (or an error or parse reason) is shown up to this many characters: enough to read any real reply's
# answer, while a run of megabyte replies still makes a page of a few hundred kB.
REPORT_TEXT_CHARS = 4000


def _bounded(text: str, total: int | None = None, limit: int = REPORT_TEXT_CHARS) -> str:
    """`text` cut at `limit` characters with a note saying so; `total`: the length before earlier cuts."""
    total = max(total or 0, len(text))
    if total <= limit:
        return text
    return f"{text[:limit]}\n… [cut at {limit} of {total} characters]"


def _last_reply(record: Mapping[str, Any]) -> str:
    calls = record.get("calls") or []
    if not calls:
        return ""
    last = calls[-1]
    total = last.get("reply_chars")
    return _bounded(str(last.get("reply", "")), total if isinstance(total, int) else None)


def _last_reasoning(record: Mapping[str, Any]) -> tuple[bool, str | None]:
    """Whether the last call's answer was truncated, and its thinking (folded: long and never parsed)."""
    calls = record.get("calls") or []
    if not calls or not isinstance(calls[-1], dict):
        return False, None
    last = calls[-1]
    reasoning = last.get("reasoning")
    if not isinstance(reasoning, str):
        return bool(last.get("truncated")), None
    total = last.get("reasoning_chars")
    return bool(last.get("truncated")), _bounded(reasoning, total if isinstance(total, int) else None)


def _sample_summary(record: Mapping[str, Any]) -> str:
    """A short, benchmark-aware view of what was parsed from the replies (or the error, for a failed item)."""
    if record.get("status") != "ok":
        return _bounded(str(record.get("error")), limit=1000)
    instrument = _instrument(str(record.get("benchmark")))
    line = instrument.sample_line(record) if instrument is not None else None
    if line is not None:  # the instrument's own one-line view of a record
        return str(line)
    return json.dumps(record.get("parsed"), ensure_ascii=False)[:300]


def _sample_text(name: str, record: Mapping[str, Any]) -> str | None:
    """The instrument's full view of one record (e.g. a conversation's every turn), shown folded; plain text."""
    instrument = _instrument(name)
    text = instrument.sample_text(record) if instrument is not None else None
    return None if text is None else _bounded(str(text), limit=8 * REPORT_TEXT_CHARS)


def _sample_row(name: str, record: Mapping[str, Any]) -> SampleRow:
    score = record.get("score")
    truncated, reasoning = _last_reasoning(record)
    return SampleRow(
        anchor=_anchor("item", name, record["item_id"]),
        item_id=_text(record["item_id"]),
        parsed=_sample_summary(record),
        failed=record.get("status") != "ok",
        score=number(score, 3) if isinstance(score, float | int) else "—",
        parse_error=_bounded(str(record.get("parse_error") or ""), limit=1000),
        calls=len(record.get("calls") or []),
        reply=_last_reply(record),
        truncated=truncated,
        reasoning=reasoning,
        transcript=_sample_text(name, record),
    )


def _judge_part(entry: Mapping[str, Any] | None) -> JudgePart | None:
    """What is known about the instrument's judge (report/judge_notes.py); None for an instrument with no judge."""
    if entry is None:
        return None
    rows = tuple(tuple(_cell(_text(text)) for text in row) for row in judge_rows(entry))
    table = Table(JUDGE_HEADERS, rows, numeric=(4, 5)) if rows else None
    return JudgePart(_text(judge_line(entry)), table, _text(commands_line(entry)))


def _instrument_part(
    name: str,
    result: dict[str, Any],
    samples: list[dict[str, Any]],
    published: str = "",
    judge: Mapping[str, Any] | None = None,
) -> InstrumentPart:
    validity = validity_of(result)
    statuses = tuple(
        Status(_text(cls), _text(text))
        for cls, text in [(validity["status"], validity["label"]), ("incomplete", "incomplete")]
        if cls != "incomplete" or result.get("status") == "incomplete"
    )
    skipped = result.get("status") == "skipped"
    common = {
        "name": _text(name),
        "anchor": f"bench-{_anchor(name)}",
        "title": _text(title_of(name)),
        "statuses": statuses,
        "reasons": () if skipped else tuple(_text(reason) for reason in validity["reasons"]),
    }
    if skipped:
        return InstrumentPart(**common, skipped=_text(result.get("error")))
    return InstrumentPart(
        **common,
        skipped=None,
        score_name=_text(" · ".join(filter(None, [str(result.get("score_name") or ""), plugin_source(result)]))),
        headline_note=_text(own_note(result)),
        answers=_text(answers_text(result)),
        published=_text(published),
        judge=_judge_part(judge),
        body=_drawn_section(name, result, samples),
        metrics=_metrics_table(name, result),
        samples_anchor=f"samples-{_anchor(name)}",
        samples=tuple(_sample_row(name, record) for record in samples),
    )


# ------------------------------------------------------------------------------------------------------------- pages


def _repeats_block(summary: dict[str, Any]) -> Block | None:
    repeats = summary.get("repeats")
    if not repeats:
        return None
    rows = tuple(
        (
            _cell(_text(key)),
            _cell(" · ".join(number(v) for v in entry["values"])),
            _cell(number(entry["mean"])),
            _cell(number(entry["sd"])),
        )
        for key, entry in repeats["metrics"].items()
    )
    return Block(
        anchor="repeats",
        title=f"Run-to-run variation ({number(repeats['n'])} repeats)",
        intro="Seeds differ per repeat; at temperature 0 the spread shows serving nondeterminism only. The sections "
        "above show repeat 1.",
        tables=(Table(("figure", "values", "mean", "SD"), rows, numeric=(2, 3)),),
    )


def _run_block(summary: dict[str, Any], run_info: dict[str, Any]) -> Block:
    judge = run_info.get("judge") or {}
    run_rows = [(_cell(_text(k)), _cell(number(v))) for k, v in (summary.get("usage") or {}).items()]
    run_rows.append((_cell("judge"), _cell(_text(judge.get("spec")))))
    run_rows.append((_cell("elapsed"), _cell(f"{number(summary.get('elapsed_s'), 1)} s")))
    data_rows = tuple(
        (
            _cell(_text(name)),
            _cell(_text(f["key"])),
            _cell(Piece(f"{str(f['sha256'])[:16]}…", code=True)),
            _cell(number(f["verified"])),
        )
        for name, info in (run_info.get("benchmarks") or {}).items()
        for f in info.get("data_files", [])
    )
    return Block(
        anchor="run",
        title="Run",
        tables=(
            Table(("", ""), tuple(run_rows)),
            Table(("benchmark", "file", "sha256", "verified"), data_rows, title="Data files"),
        ),
    )


def _published_line(row: Mapping[str, str] | None) -> str:
    if row is None:
        return ""
    rank = row["rank"]
    # "3 of 24": a rank; else why there is none (no board of the run's judge, a figure without a direction)
    line = f"{'rank ' if rank[:1].isdigit() else ''}{rank}; nearest {row['nearest published models']}"
    return line if row["reproduction"] in (NO_PUBLISHED_RUN, rank) else f"{line}; {row['reproduction']}"


def _published_block(standing: Sequence[Mapping[str, str]]) -> Block | None:
    """The run among the published models: rank among n, the nearest ones, and the reproduction check where its
    model is an atlas model; runs whose settings are not comparable are marked so."""
    if not standing:
        return None
    rows = tuple(
        tuple(_cell(_text(title_of(row[key]) if key == "instrument" else row[key])) for key in STANDING_HEADERS)
        for row in standing
    )
    return Block(
        anchor="published",
        title="Among the published models",
        intro=STANDING_INTRO,
        tables=(Table(STANDING_HEADERS, rows),),
    )


def run_page(
    summary: dict[str, Any],
    run_info: dict[str, Any],
    samples: list[dict[str, Any]],
    standing: Sequence[Mapping[str, str]] = (),
    judges: Sequence[Mapping[str, Any]] = (),
) -> RunPage:
    """report.html of one run as data; `standing`: the run among the published models (atlas.report_standing);
    `judges`: what is known about each judged instrument's judge (judges.known.report_judges)."""
    model = str(summary.get("model"))
    profile = summary.get("profile") or build_profile(summary.get("benchmarks", {}))
    banners = []
    if model == "local":
        banners.append(
            "The embedded model (SmolLM2-135M) shows the pipeline working end to end; it is far too small to measure "
            "emotional intelligence."
        )
    if model.startswith("scripted/"):
        banners.append("A scripted model: the figures exercise the pipeline and mean nothing.")
    if summary.get("source"):  # read from another harness's logs (the inspect bridge)
        banners.append(f"Read from {summary['source']}: inspect made every model call; the figures are EmpathyBench's.")
    placed = {row["instrument"]: row for row in standing}
    judged = by_instrument(judges)
    instruments = tuple(
        _instrument_part(
            name,
            result,
            [s for s in samples if s.get("benchmark") == name],
            _published_line(placed.get(name)),
            judged.get(name),
        )
        for name, result in summary.get("benchmarks", {}).items()
    )
    toc = tuple(Piece(_text(r["title"]), href=f"#bench-{_anchor(r['benchmark'])}") for r in profile)
    blocks = tuple(
        b for b in (_published_block(standing), _repeats_block(summary), _run_block(summary, run_info)) if b is not None
    )
    facts = (
        f"preset {_text(summary.get('preset'))}",
        f"EmpathyBench {_text(run_info.get('empathybench_version'))}",
        _text(run_info.get("created")),
        f"seed {_text((run_info.get('options') or {}).get('seed'))}",
    )
    return RunPage(
        title=f"EmpathyBench: {model}",
        heading=f"EmpathyBench · {model}",
        facts=facts,
        banners=tuple(banners),
        toc=(*toc, Piece("Run", href="#run")),
        cards=tuple(_profile_card(r) for r in profile),
        instruments=instruments,
        blocks=blocks,
        cost=cost_line(summary.get("cost")),
    )


def render_run_report(
    summary: dict[str, Any],
    run_info: dict[str, Any],
    samples: list[dict[str, Any]],
    standing: Sequence[Mapping[str, str]] = (),
    judges: Sequence[Mapping[str, Any]] = (),
) -> str:
    return _render("run_report.html.j2", page=run_page(summary, run_info, samples, standing, judges))


def write_run_reports(
    html_path: Path,
    summary: dict[str, Any],
    run_info: dict[str, Any],
    samples: list[dict[str, Any]],
    standing: Sequence[Mapping[str, str]] = (),
    judges: Sequence[Mapping[str, Any]] = (),
) -> None:
    """A run's report.html at `html_path` and its report.md beside it; `standing`: the run among the published models
    (atlas.report_standing), `judges`: what is known about each judged instrument's judge
    (judges.known.report_judges), each computed once by the caller for both."""
    from empathybench.redaction import redact
    from empathybench.report.markdown import render_run_markdown

    html = render_run_report(summary, run_info, samples, standing, judges)
    html_path.write_text(redact(html), encoding="utf-8")
    markdown = render_run_markdown(summary, run_info, standing, judges)
    html_path.with_suffix(".md").write_text(redact(markdown), encoding="utf-8")


# -------------------------------------------------------------------------------------------------------- comparison


def _verdict(row: dict[str, Any]) -> Cell:
    ci, p = row.get("ci95"), row.get("p")
    if not ci or ci[0] is None or p is None:
        return _cell("—")
    if ci[0] > 0 or ci[1] < 0:
        direction = "higher" if ci[0] > 0 else "lower"
        return _cell(Piece(_text(row["first"]), strong=True), f" {direction}")
    return _cell("no clear difference")


def _run_key(index: int) -> str:
    """A, B, ..., Z, then R27, R28, ...: short chart labels that no width cuts."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def _with_interval(value: Any, ci: Any) -> Cell:
    return _cell(f"{number(value)} ", Piece(interval(ci), cls="ci"))


def _leaderboard_block(comparison: dict[str, Any], labels: list[str]) -> Block:
    rows = []
    for entry in comparison["benchmarks"].values():
        for key, cells in entry["leaderboard"].items():
            headline = " ★" if key == entry["headline_metric"] else ""
            rows.append(
                (
                    _cell(f"{_text(entry['title'])}{headline}"),
                    _cell(_text(entry["metric_labels"].get(key, key))),
                    *(_with_interval(c["value"], c["ci95"]) for c in cells),
                )
            )
    return Block(
        anchor="leaderboard",
        title="Leaderboard",
        intro="★ the instrument's headline figure; brackets: 95% item-bootstrap intervals.",
        tables=(Table(("instrument", "figure", *labels), tuple(rows)),),
    )


def _paired_block(comparison: dict[str, Any]) -> Block:
    rows = []
    for entry in comparison["benchmarks"].values():
        for row in entry["paired"]:
            p = number(row.get("p"), 4) if row.get("p") is not None else _text(row.get("p_note") or "—")
            rows.append(
                (
                    _cell(_text(entry["title"])),
                    _cell(_text(row["label"])),
                    _cell(f"{_text(row['first'])} − {_text(row['second'])}"),
                    _cell(number(row.get("n_shared"))),
                    _with_interval(row.get("difference"), row.get("ci95")),
                    _cell(_text(row.get("test") or row.get("note") or "")),
                    _cell(p),
                    _verdict(row),
                )
            )
    headers = ("instrument", "figure", "difference", "shared items", "Δ [95% CI]", "test", "p", "reading")
    return Block(
        anchor="paired",
        title="Paired differences on shared items",
        intro="Each run minus the first; interval: paired bootstrap over the shared items; test: the instrument's "
        "paired test (McNemar for right/wrong and Good/not, Wilcoxon signed-rank for item scores, paired t for mood "
        "shifts).",
        tables=(Table(headers, tuple(rows), numeric=(3, 4, 6)),),
    )


def comparison_page(
    comparison: dict[str, Any],
    summaries: list[dict[str, Any]],
    sections: Mapping[str, tuple[str, ReportSection]] | None = None,
) -> ComparisonPage:
    """The comparison of several runs as data; `sections`: the instruments' judged comparisons (name -> (title,
    section)), as blocks at the end."""
    labels = [_text(r["label"]) for r in comparison["runs"]]
    keys = [_run_key(i) for i in range(len(labels))]
    profiles = [s.get("profile") or build_profile(s.get("benchmarks", {})) for s in summaries]
    overlay = []
    for name, entry in comparison["benchmarks"].items():
        rows = [next((r for r in p if r["benchmark"] == name), None) for p in profiles]
        points = [  # chart labels are the run keys (A, B, ...) listed in full in the header: never cut alike
            ChartPoint(key, (row or {}).get("value"), *((row or {}).get("ci95") or [None, None]), series=i)
            for i, (key, row) in enumerate(zip(keys, rows, strict=True))
        ]
        first = next((r for r in rows if r and r.get("value") is not None), None)
        _, lines = _reference_marks(first or {})
        chart = svg.interval_strip(
            points,
            domain=_domain(name, [p.value for p in points] + [v for p in points for v in (p.low, p.high)]),
            references=lines,
            width=360,
        )
        overlay.append(OverlayCard(_text(name), _text(entry["title"]), _text((first or {}).get("label") or ""), chart))
    runs = tuple(
        RunRef(
            key,
            _text(r["label"]),
            _text(r["directory"] + (f" (read from {r['source']})" if r.get("source") else "")),
        )
        for key, r in zip(keys, comparison["runs"], strict=True)
    )
    return ComparisonPage(
        title="EmpathyBench comparison: " + " vs ".join(labels),
        runs=runs,
        warnings=tuple(_text(w) for w in comparison.get("warnings", [])),
        overlay=tuple(overlay),
        blocks=(
            _leaderboard_block(comparison, labels),
            _paired_block(comparison),
            *(
                Block(anchor=_anchor("judged", name), title=_text(title), sections=(draw_section(section, name),))
                for name, (title, section) in (sections or {}).items()
            ),
        ),
    )


def render_comparison(
    comparison: dict[str, Any],
    summaries: list[dict[str, Any]],
    sections: Mapping[str, tuple[str, ReportSection]] | None = None,
) -> str:
    return _render("comparison.html.j2", page=comparison_page(comparison, summaries, sections))
