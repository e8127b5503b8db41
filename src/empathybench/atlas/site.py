"""`empathybench atlas --html DIR`: the atlas as a self-contained static page (DIR/index.html, no network: its
style, script and charts inline) with the agreement matrix as CSV beside it (DIR/agreement.csv).

Drawn with the report's own parts (report/html.py: tables, charts as data, escaping by the templates), so the page
looks like, and is as safe as, every report.
"""

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathybench.atlas.analysis import agreement, matrix_rows
from empathybench.formatting import interval, number
from empathybench.instruments.protocol import ChartPoint, HeatmapChart, ReportSection, StripChart
from empathybench.report.page import Block, Piece, Table

MAX_TEXT = 200
MAX_NOTE = 1000  # a note under its table has the page's width: no cause to cut one of 204 characters


@dataclass(frozen=True)
class AtlasPage:
    title: str
    intro: str
    toc: tuple[tuple[str, str], ...]
    blocks: tuple[Block, ...]


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: Any) -> tuple[Piece, ...]:
    return (Piece(_text(text)),)


def _domain(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 1.0
    return low - pad, high + pad


def _note_links(notes: Sequence[str], numbered: dict[str, int], anchor: str) -> tuple[Piece, ...]:
    """A row's notes as links to their numbers under the table, each note numbered once per table (27 rows of
    EQ-Bench 3 share one 187-character note)."""
    links: list[Piece] = []
    for note in notes:
        text = _text(note, MAX_NOTE)
        number = numbered.setdefault(text, len(numbered) + 1)
        if links:
            links.append(Piece(" "))
        links.append(Piece(f"[{number}]", href=f"#{anchor}-note-{number}", title=text))
    return tuple(links)


def _board_block(name: str, board: Mapping[str, Any]) -> Block:
    from empathybench.report.html import draw_section

    anchor = f"atlas-{name}"
    numbered: dict[str, int] = {}
    rows = []
    for row in board["rows"]:
        status = "published only" if row["status"] == "published-only" else "recomputed"
        rows.append(
            (
                _cell(row["rank"]),
                _cell(row["model"]),
                _cell(status),
                _cell(number(row["value"])),
                _cell(interval(row["ci95"])),
                _cell(number(row["n"])),
                _cell(number(row["published"])),
                _cell(number(row["difference"], signed=True)),
                _note_links(row["notes"], numbered, anchor),
            )
        )
    for run in board["runs"]:
        label = f"▶ your run: {run['model']} ({run['run']})"
        if not run["comparable"]:
            label += f"; not comparable: {run['not_comparable_because']}"
        nearest = ", ".join(f"{n['model']} {number(n['value'])}" for n in run["nearest"])
        rows.append(
            (
                _cell(f"{run['rank']} of {run['among']}"),
                # the nearest models under the label, in the column as wide as the longest model name
                (Piece(_text(label), strong=True), Piece(_text(f" · nearest: {nearest}"), cls="small muted")),
                _cell("your run"),
                _cell(number(run["value"])),
                _cell(interval(run["ci95"])),
                _cell(number(run["n"])),
                _cell(""),
                _cell(""),
                _cell(""),
            )
        )
    headers = ("#", "model", "status", "recomputed", "95% interval", "n", "published", "difference", "notes")
    points = [
        ChartPoint(_text(row["model"])[:40], row["value"], *(row["ci95"] or (None, None)))
        for row in board["rows"]
        if row["value"] is not None
    ]
    points += [
        ChartPoint(f"your run: {_text(run['model'])[:30]}", run["value"], *(run["ci95"] or (None, None)), series=1)
        for run in board["runs"]
    ]
    sections = []
    values = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
    if values:
        chart = StripChart(tuple(points), _domain(values), title=f"{board['title']}: recomputed, with 95% intervals")
        sections.append(draw_section(ReportSection(charts=(chart,)), name))
    if board["setting_effects"]:
        effect_points = tuple(
            ChartPoint(
                _text(f"{e['model']}: " + ", ".join(f"{k} → {b}" for k, (_, b) in e["settings_changed"].items()))[:60],
                e["difference"],
                *(e["ci95"] or (None, None)),
            )
            for e in board["setting_effects"]
        )
        ends = [v for p in effect_points for v in (p.value, p.low, p.high) if v is not None] + [0.0]
        chart = StripChart(
            effect_points,
            _domain(ends),
            title="The same model, one setting changed: paired difference over shared items",
        )
        sections.append(draw_section(ReportSection(charts=(chart,)), f"{name}-effects"))
    table = Table(headers, tuple(rows), numeric=(0, 3, 4, 5, 6, 7), notes=tuple(numbered), anchor=anchor)
    return Block(
        anchor=anchor,
        title=_text(board["title"]),
        intro=_text(board["metric"]) + ". Published-only: a published figure and no released output to score.",
        tables=(table,),
        sections=tuple(sections),
    )


def _agreement_block(result: Mapping[str, Any]) -> Block:
    from empathybench.report.html import draw_section

    instruments = list(result["instruments"])
    rho = {tuple(p["instruments"]): p["rho"] for p in result["pairs"]}
    capability = sorted({row["capability"] for row in result["capability"]})
    columns = instruments + capability
    values = []
    for first in instruments:
        row: list[float | None] = []
        for second in instruments:
            row.append(1.0 if first == second else rho.get((first, second), rho.get((second, first))))
        for label in capability:
            match = next(
                (r for r in result["capability"] if r["instrument"] == first and r["capability"] == label), None
            )
            row.append(match["rho"] if match else None)
        values.append(tuple(row))
    heatmap = HeatmapChart(
        tuple(instruments),
        tuple(columns),
        tuple(values),
        title="Spearman's rho over the models both scored",
        caption="n and the interval of each cell are in the table below; no verdict below 5 models",
    )
    rows = tuple(
        (
            _cell(" × ".join(p["instruments"]) if "instruments" in p else f"{p['instrument']} × {p['capability']}"),
            _cell(p["n"]),
            _cell(number(p["rho"])),
            _cell(interval(p["ci95"])),
            _cell(p["verdict"] or ("no verdict: n < 5" if p["n"] < 5 else "—")),
        )
        for p in [*result["pairs"], *result["capability"]]
    )
    return Block(
        anchor="agreement",
        title="Do the instruments agree?",
        intro=_text(result["method"]) + f". Matching: {result['matching']}; {result['figures']}.",
        tables=(Table(("pair", "n", "rho", "95% interval", "verdict"), rows, numeric=(1, 2, 3)),),
        sections=(draw_section(ReportSection(charts=(heatmap,)), "agreement"),),
    )


def write_site(directory: Path, boards: Mapping[str, Any], atlas: Mapping[str, Any]) -> list[Path]:
    """DIR/index.html and DIR/agreement.csv; returns the files written."""
    from empathybench.redaction import redact
    from empathybench.report.html import environment

    result = agreement(atlas)
    blocks = [_board_block(name, board) for name, board in boards.items()]
    blocks.append(_agreement_block(result))
    page = AtlasPage(
        title="EmpathyBench atlas: the published models, recomputed",
        intro="Every released per-model output scored again by the instrument's own scorer, beside the published "
        "figure; your runs placed among them.",
        toc=tuple((b.anchor, b.title) for b in blocks),
        blocks=tuple(blocks),
    )
    directory.mkdir(parents=True, exist_ok=True)
    index = directory / "index.html"
    index.write_text(redact(environment().get_template("atlas.html.j2").render(page=page)), "utf-8")
    matrix = directory / "agreement.csv"
    with matrix.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(matrix_rows(result))
    return [index, matrix]
