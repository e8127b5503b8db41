"""The self-contained report.html: the EI profile at the top, one section per instrument with its charts, the samples
behind every number, and the comparison page of several runs. No network: charts are inline SVG, the one script is
inline and only opens the collapsed sample table a link points into."""

import html
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from empathybench.instruments.protocol import (
    Cell,
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
)
from empathybench.report import svg
from empathybench.report.format import interval, number
from empathybench.report.profile import build_profile, title_of
from empathybench.report.svg import Point, Reference
from empathybench.report.validity import answers_text, validity_of

_STYLE = """
:root{--ink:#1d2433;--muted:#5b6478;--line:#e3e6ee;--soft:#f6f7fb;--accent:#0072B2;--warn:#9a3412}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1120px;margin:0 auto;padding:1.5rem 1rem 4rem;
color:var(--ink);line-height:1.45;font-size:15px}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin:2rem 0 .4rem;padding-top:.6rem;
border-top:2px solid var(--line)}h3{font-size:1.02rem;margin:1.2rem 0 .3rem}
a{color:var(--accent)}.muted{color:var(--muted)}.small{font-size:.85rem}
.banner{border-left:4px solid #d97706;background:#fff7ed;padding:.6rem .9rem;margin:.8rem 0;border-radius:4px}
.banner.strong{border-color:#b42318;background:#fef3f2}
.profile{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:.9rem;margin:1rem 0}
.card{border:1px solid var(--line);border-radius:10px;padding:.9rem 1rem;background:#fff;break-inside:avoid}
.card h3{margin:0}.card .q{color:var(--muted);font-size:.86rem;margin:.15rem 0 .5rem}
.big{font-size:2rem;font-weight:650;font-variant-numeric:tabular-nums}.unit{color:var(--muted);font-size:.9rem}
.ci{color:var(--muted);font-variant-numeric:tabular-nums}.ref{font-size:.86rem;margin:.3rem 0}
.status{display:inline-block;font-size:.75rem;padding:.05rem .45rem;border-radius:999px;background:var(--soft);
border:1px solid var(--line);margin-left:.4rem;vertical-align:middle}
.status.skipped,.status.incomplete,.status.self-judged{background:#fff7ed;border-color:#fed7aa}
.status.invalid,.status.insufficient{background:#fef2f2;border-color:#fecaca;color:#991b1b}
table{border-collapse:collapse;width:100%;margin:.6rem 0;font-size:.9rem}
th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:1rem;align-items:start}
figure{margin:.4rem 0}figcaption{font-size:.82rem;color:var(--muted)}
details{margin:.6rem 0}summary{cursor:pointer;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:var(--soft);padding:.4rem;border-radius:4px;margin:0;
font-size:.8rem;max-height:14rem;overflow:auto}
.up{color:#b42318}.down{color:#0072B2}.sig{font-weight:600}
nav.toc a{margin-right:.9rem}
@media print{details{display:block}details>summary{list-style:none}pre{max-height:none}
.charts{grid-template-columns:1fr}body{max-width:none}}
"""

# Opens the <details> that holds the element a link points to (a sample row), on load and on every jump.
_SCRIPT = """
function openTarget(){var id=decodeURIComponent(location.hash.slice(1));if(!id)return;
var el=document.getElementById(id);while(el){if(el.tagName==='DETAILS'){el.open=true;}el=el.parentElement;}
var t=document.getElementById(id);if(t&&t.scrollIntoView){t.scrollIntoView();}}
window.addEventListener('hashchange',openTarget);window.addEventListener('DOMContentLoaded',openTarget);
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _num(value: Any, digits: int = 2) -> str:
    return _e(number(value, digits))


def _anchor(*parts: str) -> str:
    return "-".join("".join(c if c.isalnum() else "_" for c in str(p)) for p in parts)


def _figure(chart: str, caption: str = "") -> str:
    return f"<figure>{chart}" + (f"<figcaption>{_e(caption)}</figcaption>" if caption else "") + "</figure>"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f'<th class="{"num" if i in numeric else ""}">{_e(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"num" if i in numeric else ""}">{cell}</td>' for i, cell in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# ----------------------------------------------------------------------------------------------------------- profile


def _reference_text(reference: dict[str, Any] | None) -> str:
    if not reference:
        return ""
    kind = reference.get("kind")
    if kind == "human_norm":
        parts = [f"{_e(reference['label'])}: mean {_num(reference.get('mean'))}, SD {_num(reference.get('sd'))}"]
        if reference.get("percentile") is not None:
            parts.append(f"above {_num(reference['percentile'], 0)}% of people (normal approximation)")
        if reference.get("uniform_baseline") is not None:
            parts.append(f"uniform-answer baseline {_num(reference['uniform_baseline'], 1)}")
        return " · ".join(parts)
    if kind == "human_replies":
        text = f"{_e(reference['label'])}: {_num(reference.get('value'), 1)}% {interval(reference.get('ci95'), 1)}"
        if reference.get("published_raters") is not None:
            text += f" · {_e(reference.get('published_raters_label'))}: {_num(reference['published_raters'], 1)}%"
        return text
    if kind == "published_models":
        models = reference.get("models") or []
        if models:
            shown = ", ".join(f"{_e(m['label'])} {_num(m['value'], 1)}" for m in models[:4])
            return f"{_e(reference['label'])}: {shown}"
        return f"{_e(reference['label'])}: {_num(reference.get('value'), 1)}"
    return f"{_e(reference['label'])}: {_num(reference.get('value'), 2)}"


def _instrument(name: str) -> Any:
    """The installed instrument `name`, or None (a run directory may name one that is not installed)."""
    from empathybench.errors import UserError
    from empathybench.instruments.registry import load, names

    if name not in names():
        return None
    try:
        return load(name)
    except UserError:
        return None


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


def _render_section(section: ReportSection, name: str = "") -> str:
    """An instrument's ReportSection drawn: every label escaped, every number through the one formatter."""
    charts: list[str] = []
    for chart in section.charts:
        if isinstance(chart, StripChart):
            points = [Point(p.label, p.value, p.low, p.high, p.series) for p in chart.points]
            values = [p.value for p in points] + [v for p in points for v in (p.low, p.high)]
            drawn = svg.interval_strip(
                points,
                domain=_widen(chart.domain, values),
                references=[Reference(r.value, r.label, r.style) for r in chart.references],
                unit=chart.unit,
                title=chart.title,
            )
        elif isinstance(chart, GroupedBarsChart):
            drawn = svg.grouped_bars(
                list(chart.categories),
                {
                    name: [Point(p.label, p.value, p.low, p.high, p.series) for p in points]
                    for name, points in chart.series
                },
                unit=chart.unit,
                domain=chart.domain,
                title=chart.title,
            )
        elif isinstance(chart, NormalCurveChart):
            drawn = svg.normal_curve(
                mean=chart.mean,
                sd=chart.sd,
                marker=chart.marker,
                marker_label=chart.marker_label,
                interval=chart.interval,
                references=[Reference(r.value, r.label, r.style) for r in chart.references],
                title=chart.title,
            )
        elif isinstance(chart, LineChart):
            drawn = svg.line_chart(list(chart.x_labels), {n: list(v) for n, v in chart.series}, title=chart.title)
        elif isinstance(chart, HeatmapChart):
            drawn = svg.heatmap(
                list(chart.row_labels),
                list(chart.col_labels),
                [list(row) for row in chart.values],
                center=chart.center,
                unit=chart.unit,
                title=chart.title,
            )
        elif isinstance(chart, ScatterChart):
            drawn = svg.scatter(
                list(chart.points),
                x_label=chart.x_label,
                y_label=chart.y_label,
                diagonal=chart.diagonal,
                title=chart.title,
            )
        elif isinstance(chart, StackedBarsChart):
            drawn = svg.stacked_bars(
                [(label, dict(zip(chart.segments, shares, strict=True))) for label, shares in chart.rows],
                segments=list(chart.segments),
                colors=list(chart.colors) if chart.colors is not None else None,
                title=chart.title,
            )
        else:
            drawn = svg.histogram(list(chart.values), bins=chart.bins, unit=chart.unit, title=chart.title)
        charts.append(_figure(drawn, chart.caption))
    tables = [
        (f"<h3>{_e(table.title)}</h3>" if table.title is not None else "")
        + _table(
            table.headers,
            [[_cell(cell, _digits(table.digits, i), name) for i, cell in enumerate(row)] for row in table.rows],
            numeric=table.numeric,
        )
        for table in section.tables
    ]
    warning = f'<div class="banner strong">{_e(section.warning)}</div>' if section.warning is not None else ""
    note = f"<p>{_e(section.note)}</p>" if section.note is not None else ""
    drawn = f'<div class="charts">{"".join(charts)}</div>' if charts or not note else ""
    footnote = "".join(_num(part, section.footnote_digits) for part in section.footnote)
    return warning + note + drawn + "".join(tables) + (f"<p class=small>{footnote}</p>" if section.footnote else "")


def _cell(cell: Cell, digits: int, name: str) -> str:
    """A table cell: a number formatted, text escaped, a link to an item's sample row, a value with its marker."""
    if isinstance(cell, ItemLink):
        return f'<a href="#{_anchor("item", name, cell.item_id)}">{_e(cell.text)}</a>'
    if isinstance(cell, Marked):
        return f"{_num(cell.value, digits)} {_marker(cell.marker)}"
    return _num(cell, digits)


def _digits(digits: int | tuple[int, ...], column: int) -> int:
    return digits if isinstance(digits, int) else (digits[column] if column < len(digits) else 2)


def _section_body(name: str, result: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    instrument = _instrument(name)
    section = instrument.report_section(result, samples) if instrument is not None else None
    if section is not None:
        return _render_section(section, name)
    return ""


def _profile_points(row: dict[str, Any], series: int = 0, label: str = "this model") -> list[Point]:
    ci = row.get("ci95") or [None, None]
    return [Point(label, row.get("value"), ci[0], ci[1], series)]


def _reference_marks(row: dict[str, Any]) -> tuple[list[Point], list[Reference]]:
    """Human references drawn as a second point (when they carry an interval) or as reference lines."""
    reference = row.get("reference") or {}
    kind = reference.get("kind")
    points: list[Point] = []
    lines: list[Reference] = []
    if kind == "human_norm" and reference.get("mean") is not None:
        lines.append(Reference(float(reference["mean"]), "people", "solid"))
        if reference.get("uniform_baseline") is not None:
            lines.append(Reference(float(reference["uniform_baseline"]), "uniform answer", "dotted"))
    elif kind == "human_replies" and reference.get("value") is not None:
        ci = reference.get("ci95") or [None, None]
        points.append(Point("human replies", reference["value"], ci[0], ci[1], 2))
        if reference.get("published_raters") is not None:
            lines.append(Reference(float(reference["published_raters"]), "study raters", "dotted"))
    elif kind == "published_models":
        for model in (reference.get("models") or [])[:3]:
            lines.append(Reference(float(model["value"]), str(model["label"]), "dotted"))
    elif reference.get("value") is not None:
        lines.append(Reference(float(reference["value"]), str(reference.get("label", "")), "dashed"))
    return points, lines


def _profile_card(row: dict[str, Any]) -> str:
    name = row["benchmark"]
    validity = row.get("validity") or {"status": row.get("status") or "", "label": row.get("status") or ""}
    head = (
        f'<h3><a href="#bench-{_anchor(name)}">{_e(row["title"])}</a>'
        f'<span class="status {_e(validity["status"])}">{_e(validity["label"])}</span></h3>'
        f'<div class="q">{_e(row.get("question"))}</div>'
    )
    if row.get("value") is None:
        note = row.get("note") or "no headline figure"
        return (
            f'<div class="card" data-benchmark="{_e(name)}">{head}<div class="big">—</div>'
            f'<p class="small">{_e(note)}</p></div>'
        )
    points, lines = _reference_marks(row)
    values = [row["value"], *(row.get("ci95") or []), *(p.value for p in points), *(r.value for r in lines)]
    chart = svg.interval_strip(
        _profile_points(row) + points,
        domain=_domain(name, values),
        references=lines,
        unit="",
        width=360,
    )
    return (
        f'<div class="card" data-benchmark="{_e(name)}">{head}'
        f'<div><a class="big" href="#samples-{_anchor(name)}" title="the items behind this number">'
        f"{_num(row['value'], 2)}</a> <span class=unit>{_e(row.get('unit'))}</span></div>"
        f'<div class="ci">95% CI {interval(row.get("ci95"))} · n = {_e(row.get("n"))} · {_e(row.get("label"))}</div>'
        f'<div class="ref">{_reference_text(row.get("reference"))}</div>{chart}'
        + (f'<p class="small muted">{_e(row["note"])}</p>' if row.get("note") else "")
        + "</div>"
    )


# ----------------------------------------------------------------------------------------------- instrument sections


def _metrics_table(name: str, result: dict[str, Any]) -> str:
    rows = []
    for key, entry in (result.get("metrics") or {}).items():
        rows.append(
            [
                f'<a href="#samples-{_anchor(name)}">{_e(entry["label"])}</a>',
                _num(entry["value"]),
                interval(entry["ci95"]),
                _e(entry["unit"]),
                _num(entry["n"]),
                _reference_text(entry.get("reference")),
                f'<span class="small muted">{_e(entry["method"])}</span>',
                _e(key),
            ]
        )
    return _table(["figure", "value", "95% CI", "unit", "n", "reference", "interval", "key"], rows, numeric=(1, 4))


def _marker(marker: str | None) -> str:
    return {"up": '<span class="up sig">▲</span>', "down": '<span class="down sig">▼</span>'}.get(marker or "", "")


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


def _last_reply(record: dict[str, Any]) -> str:
    calls = record.get("calls") or []
    if not calls:
        return ""
    last = calls[-1]
    total = last.get("reply_chars")
    return _bounded(str(last.get("reply", "")), total if isinstance(total, int) else None)


def _last_reasoning(record: dict[str, Any]) -> str:
    """The last call's thinking, folded (it is long and never parsed), and whether its answer was truncated."""
    calls = record.get("calls") or []
    if not calls or not isinstance(calls[-1], dict):
        return ""
    last = calls[-1]
    truncated = '<span class="up">truncated: no answer arrived</span>' if last.get("truncated") else ""
    reasoning = last.get("reasoning")
    if not isinstance(reasoning, str):
        return truncated
    total = last.get("reasoning_chars")
    text = _bounded(reasoning, total if isinstance(total, int) else None)
    return f"{truncated}<details><summary>reasoning</summary><pre>{_e(text)}</pre></details>"


def _sample_summary(record: dict[str, Any]) -> str:
    """A short, benchmark-aware view of what was parsed from the replies."""
    if record.get("status") != "ok":
        return f'<span class="up">{_e(_bounded(str(record.get("error")), limit=1000))}</span>'
    name = record.get("benchmark")
    instrument = _instrument(str(name))
    sample_line = getattr(instrument, "sample_line", None)
    if callable(sample_line):  # the instrument's own one-line view of a record
        return _e(sample_line(record))
    return _e(json.dumps(record.get("parsed"), ensure_ascii=False)[:300])


def _samples_section(name: str, samples: list[dict[str, Any]]) -> str:
    rows = []
    for record in samples:
        score = record.get("score")
        rows.append(
            f'<tr id="{_anchor("item", name, record["item_id"])}"><td>{_e(record["item_id"])}</td>'
            f"<td>{_sample_summary(record)}</td>"
            f'<td class="num">{_num(score, 3) if isinstance(score, float | int) else "—"}</td>'
            f"<td>{_e(_bounded(str(record.get('parse_error') or ''), limit=1000))}</td>"
            f"<td>{len(record.get('calls') or [])}</td>"
            f"<td><pre>{_e(_last_reply(record))}</pre>{_last_reasoning(record)}</td></tr>"
        )
    return (
        f'<details id="samples-{_anchor(name)}"><summary>{len(samples)} items with the raw replies</summary>'
        "<table><thead><tr><th>item</th><th>parsed</th><th class=num>score</th><th>parse error</th><th>calls</th>"
        "<th>last reply</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></details>"
    )


def _benchmark_section(name: str, result: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    title = title_of(name)
    validity = validity_of(result)
    status = "".join(
        f'<span class="status {_e(cls)}">{_e(text)}</span>'
        for cls, text in [(validity["status"], validity["label"]), ("incomplete", "incomplete")]
        if cls != "incomplete" or result.get("status") == "incomplete"
    )
    head = f'<h2 id="bench-{_anchor(name)}">{_e(title)} {status}</h2>'
    if validity["reasons"] and result.get("status") != "skipped":
        head += "".join(f'<p class="banner">{_e(reason)}</p>' for reason in validity["reasons"])
    if result.get("status") == "skipped":
        skipped = f'<p class="banner">skipped: {_e(result.get("error"))}</p>'
        return f'<section data-benchmark="{_e(name)}">{head}{skipped}</section>'
    body = _section_body(name, result, samples)
    note = f'<p class="banner">{_e(result["headline_note"])}</p>' if result.get("headline_note") else ""
    note += f'<p class="muted small">answers: {_e(answers_text(result))}</p>'  # parse and truncated rates
    return (
        f'<section data-benchmark="{_e(name)}">{head}<p class="muted small">{_e(result.get("score_name"))}</p>{note}'
        f"{body}<h3>Figures with intervals</h3>{_metrics_table(name, result)}"
        f"{_samples_section(name, samples)}</section>"
    )


# ------------------------------------------------------------------------------------------------------------- pages


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>{body}</body></html>"
    )


def _repeats_section(summary: dict[str, Any]) -> str:
    repeats = summary.get("repeats")
    if not repeats:
        return ""
    rows = [
        [_e(key), " · ".join(_num(v) for v in entry["values"]), _num(entry["mean"]), _num(entry["sd"])]
        for key, entry in repeats["metrics"].items()
    ]
    return (
        f"<h2 id=repeats>Run-to-run variation ({repeats['n']} repeats)</h2><p class='small muted'>Seeds differ per "
        "repeat; at temperature 0 the spread shows serving nondeterminism only. The sections above show repeat 1.</p>"
        + _table(["figure", "values", "mean", "SD"], rows, numeric=(2, 3))
    )


def render_run_report(summary: dict[str, Any], run_info: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    model = str(summary.get("model"))
    profile = summary.get("profile") or build_profile(summary.get("benchmarks", {}))
    judge = run_info.get("judge") or {}
    banners = []
    if model == "local":
        banners.append(
            '<div class="banner">The embedded model (SmolLM2-135M) shows the pipeline working end to end; it is far '
            "too small to measure emotional intelligence.</div>"
        )
    if model.startswith("scripted/"):
        banners.append(
            '<div class="banner">A scripted model: the figures exercise the pipeline and mean nothing.</div>'
        )
    sections = [
        _benchmark_section(name, result, [s for s in samples if s.get("benchmark") == name])
        for name, result in summary.get("benchmarks", {}).items()
    ]
    toc = " ".join(f'<a href="#bench-{_anchor(r["benchmark"])}">{_e(r["title"])}</a>' for r in profile)
    usage = summary.get("usage", {})
    run_rows = [[_e(k), _num(v)] for k, v in usage.items()]
    run_rows.append(["judge", _e(judge.get("spec"))])
    run_rows.append(["elapsed", f"{_num(summary.get('elapsed_s'), 1)} s"])
    data_rows = [
        [_e(name), _e(f["key"]), f"<code>{_e(str(f['sha256'])[:16])}…</code>", _num(f["verified"])]
        for name, info in (run_info.get("benchmarks") or {}).items()
        for f in info.get("data_files", [])
    ]
    body = (
        f"<header><h1>EmpathyBench · {_e(model)}</h1><p class='muted'>preset {_e(summary.get('preset'))} · "
        f"EmpathyBench {_e(run_info.get('empathybench_version'))} · {_e(run_info.get('created'))} · "
        f"seed {_e((run_info.get('options') or {}).get('seed'))}</p>{''.join(banners)}"
        f"<nav class='toc small'>{toc} <a href='#run'>Run</a></nav></header>"
        "<h2 id=profile>Emotional-intelligence profile</h2><p class='small muted'>Each instrument's headline with its "
        "95% interval (seeded item bootstrap) beside its human or published reference. Numbers link to the items "
        "behind them.</p>"
        f"<div class='profile'>{''.join(_profile_card(r) for r in profile)}</div>"
        + "".join(sections)
        + _repeats_section(summary)
        + "<h2 id=run>Run</h2>"
        + _table(["", ""], run_rows)
        + "<h3>Data files</h3>"
        + _table(["benchmark", "file", "sha256", "verified"], data_rows)
    )
    return _page(f"EmpathyBench: {model}", body)


def write_run_reports(
    html_path: Path, summary: dict[str, Any], run_info: dict[str, Any], samples: list[dict[str, Any]]
) -> None:
    """A run's report.html at `html_path` and its report.md beside it."""
    from empathybench.redaction import redact
    from empathybench.report.markdown import render_run_markdown

    html_path.write_text(redact(render_run_report(summary, run_info, samples)), encoding="utf-8")
    html_path.with_suffix(".md").write_text(redact(render_run_markdown(summary)), encoding="utf-8")


# -------------------------------------------------------------------------------------------------------- comparison


def _verdict(row: dict[str, Any]) -> str:
    ci, p = row.get("ci95"), row.get("p")
    if not ci or ci[0] is None or p is None:
        return "—"
    if ci[0] > 0 or ci[1] < 0:
        direction = "higher" if ci[0] > 0 else "lower"
        return f"<b>{_e(row['first'])}</b> {direction}"
    return "no clear difference"


def _run_key(index: int) -> str:
    """A, B, ..., Z, then R27, R28, ...: short chart labels that no width cuts."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def render_comparison(comparison: dict[str, Any], summaries: list[dict[str, Any]]) -> str:
    labels = [r["label"] for r in comparison["runs"]]
    keys = [_run_key(i) for i in range(len(labels))]
    profiles = [s.get("profile") or build_profile(s.get("benchmarks", {})) for s in summaries]
    overlay = []
    for name, entry in comparison["benchmarks"].items():
        rows = [next((r for r in p if r["benchmark"] == name), None) for p in profiles]
        points = [  # chart labels are the run keys (A, B, ...) listed in full in the header: never cut alike
            Point(key, (row or {}).get("value"), *((row or {}).get("ci95") or [None, None]), series=i)
            for i, (key, row) in enumerate(zip(keys, rows, strict=True))
        ]
        first = next((r for r in rows if r and r.get("value") is not None), None)
        _, lines = _reference_marks(first or {})
        overlay.append(
            f'<div class="card" data-benchmark="{_e(name)}"><h3>{_e(entry["title"])}</h3>'
            f'<div class="q">{_e((first or {}).get("label") or "")}</div>'
            + svg.interval_strip(
                points,
                domain=_domain(name, [p.value for p in points] + [v for p in points for v in (p.low, p.high)]),
                references=lines,
                width=360,
            )
            + "</div>"
        )
    board_rows = []
    for entry in comparison["benchmarks"].values():
        for key, cells in entry["leaderboard"].items():
            board_rows.append(
                [
                    f"{_e(entry['title'])}{' ★' if key == entry['headline_metric'] else ''}",
                    _e(entry["metric_labels"].get(key, key)),
                ]
                + [f"{_num(c['value'])} <span class=ci>{interval(c['ci95'])}</span>" for c in cells]
            )
    paired_rows = []
    for entry in comparison["benchmarks"].values():
        for row in entry["paired"]:
            paired_rows.append(
                [
                    _e(entry["title"]),
                    _e(row["label"]),
                    f"{_e(row['first'])} − {_e(row['second'])}",
                    _num(row.get("n_shared")),
                    f"{_num(row.get('difference'))} <span class=ci>{interval(row.get('ci95'))}</span>",
                    _e(row.get("test") or row.get("note") or ""),
                    _num(row.get("p"), 4) if row.get("p") is not None else _e(row.get("p_note") or "—"),
                    _verdict(row),
                ]
            )
    body = (
        "<header><h1>EmpathyBench comparison</h1><p class='muted'>"
        + " · ".join(
            f"{key} = <b>{_e(r['label'])}</b> <span class=small>({_e(r['directory'])})</span>"
            for key, r in zip(keys, comparison["runs"], strict=True)
        )
        + "</p>"
        + "".join(f"<div class='banner'>{_e(warning)}</div>" for warning in comparison.get("warnings", []))
        + "</header><h2 id=profile>Profiles overlaid</h2><div class='profile'>"
        + "".join(overlay)
        + "</div><h2 id=leaderboard>Leaderboard</h2><p class='small muted'>★ the instrument's headline figure; "
        "brackets: 95% item-bootstrap intervals.</p>"
        + _table(["instrument", "figure", *labels], board_rows)
        + "<h2 id=paired>Paired differences on shared items</h2><p class='small muted'>Each run minus the first; "
        "interval: paired bootstrap over the shared items; test: the instrument's paired test (McNemar for right/"
        "wrong and Good/not, Wilcoxon signed-rank for item scores, paired t for mood shifts).</p>"
        + _table(
            ["instrument", "figure", "difference", "shared items", "Δ [95% CI]", "test", "p", "reading"],
            paired_rows,
            numeric=(3, 6),
        )
    )
    return _page("EmpathyBench comparison: " + " vs ".join(labels), body)
