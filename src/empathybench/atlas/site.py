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
from empathybench.atlas.place import standing
from empathybench.atlas.views import setting_text
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
    home: str | None = None  # a model page's link back to the atlas


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: Any) -> tuple[Piece, ...]:
    return (Piece(_text(text)),)


def _domain(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 1.0
    return low - pad, high + pad


def _model_cell(model: Any, model_id: str | None, links: Mapping[str, str]) -> tuple[Piece, ...]:
    """A model's name, linked to its model page where it has one."""
    link = links.get(model_id or "")
    return (Piece(_text(model), href=link),) if link else _cell(model)


def _nearest_cell(nearest: Sequence[Mapping[str, Any]], links: Mapping[str, str]) -> tuple[Piece, ...]:
    pieces = [Piece("nearest: ")]
    for number_in_list, row in enumerate(nearest):
        pieces += [Piece(", ")] if number_in_list else []
        pieces += [*_model_cell(row["model"], row.get("model_id"), links), Piece(f" {number(row['value'])}")]
    return tuple(pieces)


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


def _board_block(name: str, board: Mapping[str, Any], links: Mapping[str, str]) -> Block:
    from empathybench.report.html import draw_section

    anchor = f"atlas-{name}"
    numbered: dict[str, int] = {}
    rows = []
    for row in board["rows"]:
        status = "published only" if row["status"] == "published-only" else "recomputed"
        rows.append(
            (
                _cell(row["rank"]),
                _model_cell(row["model"], row["model_id"], links),
                _cell(status),
                _cell(number(row["value"])),
                _cell(interval(row["ci95"])),
                _cell(number(row["n"])),
                _cell(number(row["published"])),
                _cell(number(row["difference"], signed=True)),
                _note_links(row["notes"], numbered, anchor),
            )
        )
    for run in (r for r in board["runs"] if not r.get("board") and not r.get("no_board_because")):
        label = f"▶ your run: {run['model']} ({run['run']})"
        if not run["comparable"]:
            label += f"; not comparable: {run['not_comparable_because']}"
        rows.append(
            (
                _cell("not ranked" if run["rank"] is None else f"{run['rank']} of {run['among']}"),  # no direction
                # the nearest models under the label, in the column as wide as the longest model name
                (
                    Piece(_text(label), strong=True),
                    Piece(" · ", cls="small muted"),
                    *_nearest_cell(run["nearest"], links),
                ),
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
        if not run.get("board") and not run.get("no_board_because")
    ]
    sections = []
    values = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
    if values:
        chart = StripChart(tuple(points), _domain(values), title=f"{board['title']}: recomputed, with 95% intervals")
        sections.append(draw_section(ReportSection(charts=(chart,)), name))
    if board["setting_effects"]:
        effect_points = tuple(
            ChartPoint(
                _text(
                    f"{e['model']}: "
                    + ", ".join(f"{k} → {setting_text(b)}" for k, (_, b) in e["settings_changed"].items())
                )[:60],
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


def _published_board_table(
    published: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], links: Mapping[str, str]
) -> Table:
    """One published board (e.g. one judge's): its rows by the published figure, the runs placed on it."""
    columns = tuple(published["columns"])
    rows = [
        (
            _cell(row["rank"]),
            _model_cell(row["model"], row["model_id"], links),
            _cell(number(row["published"], 1)),
            _cell(interval(row["published_ci95"], 1)),
            *(_cell(number(row["figures"].get(c), 1)) for c in columns),
            # the first note says what every row of a board is; the rest are the row's own (its site mark, its judge)
            (Piece(_text("; ".join(row["notes"][1:]), MAX_NOTE)),),
        )
        for row in published["rows"]
    ]
    for run in runs:
        if run.get("board") != published["board"]:
            continue
        label = f"▶ your run: {run['model']} ({run['run']}), {standing(run)} by {', '.join(columns)}"
        if not run["comparable"]:
            label += f"; not comparable: {run['not_comparable_because']}"
        cells = [_cell(f"{run['rank']} of {run['among']}"), (Piece(_text(label), strong=True),), _cell(""), _cell("")]
        cells += [_cell(number(run["value"], 1)) for _ in columns[:1]] + [_cell("") for _ in columns[1:]]
        rows.append(
            (*cells, _cell("nearest: " + ", ".join(f"{n['model']} {number(n['value'])}" for n in run["nearest"])))
        )
    settings = ", ".join(f"{k} {v}" for k, v in published["settings"].items())
    return Table(
        ("#", "model", "published", "95% interval", *columns, "notes"),
        tuple(rows),
        numeric=tuple(range(2, 4 + len(columns))),
        title=_text(f"{published['board']}: {published['source']}; {settings}; {published['date']}"),
    )


def _effect_row(changed: str, figure: Mapping[str, Any], n: int, models: str) -> tuple[tuple[Piece, ...], ...]:
    low, high = figure["range"]
    order = figure["spearman"]
    return (
        _cell(changed),
        _cell(figure["label"]),
        _cell(f"{n} ({models})"),
        _cell(f"{number(figure['mean_first'], 1)} → {number(figure['mean_second'], 1)}"),
        _cell(number(figure["difference"], signed=True)),
        _cell(interval(figure["ci95"])),
        _cell(f"{number(low, 1, signed=True)} to {number(high, 1, signed=True)}"),
        _cell(number(order["rho"])),
        _cell(interval(order["ci95"])),
    )


def _boards_block(name: str, board: Mapping[str, Any], links: Mapping[str, str]) -> Block | None:
    """An instrument's other published boards and what changes between them (None: it has none)."""
    from empathybench.report.html import draw_section

    if not board.get("boards"):
        return None
    tables = [_published_board_table(published, board["runs"], links) for published in board["boards"]]
    unplaced = [run for run in board["runs"] if run["rank"] is None]
    effect_rows = []
    effect_notes: list[str] = []
    points = []
    for effect in board.get("board_effects", []):
        changed = "; ".join(
            f"{k} {setting_text(a)} → {setting_text(b)}" for k, (a, b) in effect["settings_changed"].items()
        )
        without = effect.get("without_judges")
        for figure in effect["figures"]:
            order = figure["spearman"]
            effect_rows.append(_effect_row(changed, figure, effect["n"], "all"))
            points.append(
                ChartPoint(_text(f"{figure['label']}: {changed}")[:60], order["rho"], *(order["ci95"] or (None, None)))
            )
        if without:
            # a judge rating its own replies may favour them: the same figures without the boards' judges
            left_out = ", ".join(_text(m, 80) for m in without["left_out"])
            effect_notes.append(f"without judges: without {left_out}, a board's judge, rated by itself there")
            effect_rows += [_effect_row(changed, f, without["n"], "without judges") for f in without["figures"]]
    if effect_rows:
        headers = ("setting changed", "figure", "models", "mean", "change", "95% interval", "range", "Spearman", "95%")
        tables.append(
            Table(
                headers,
                tuple(effect_rows),
                numeric=(4, 7),
                title="What changes between the boards",
                notes=tuple(effect_notes),
                anchor=f"atlas-{name}-board-effects",
            )
        )
    sections = []
    if points:
        chart = StripChart(tuple(points), (0.0, 1.0), title="Does the order hold? Spearman's rho between the boards")
        sections.append(draw_section(ReportSection(charts=(chart,)), f"{name}-boards"))
    intro = "Published-only rows of the instrument's other published boards (never ranked with the leaderboard above)."
    if unplaced:
        intro += " " + " ".join(f"Your run {run['model']}: {run['no_board_because']}." for run in unplaced)
    return Block(
        anchor=f"atlas-{name}-boards",
        title=_text(f"{board['title']}: published boards"),
        intro=_text(intro),
        tables=tuple(tables),
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
        caption="n and the interval of each cell are in the table below; no rho and no verdict below 5 models",
    )
    rows = tuple(
        (
            _cell(" × ".join(p["instruments"]) if "instruments" in p else f"{p['instrument']} × {p['capability']}"),
            _cell(p["n"]),
            _cell(number(p["rho"])),
            _cell(interval(p["ci95"])),
            _cell(
                p["verdict"]
                or ("no direction: no rho" if p.get("left_out") else "no verdict: n < 5" if p["n"] < 5 else "—")
            ),
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


def write_site(
    directory: Path,
    boards: Mapping[str, Any],
    atlas: Mapping[str, Any],
    judges: Sequence[Mapping[str, Any]] | None = None,
) -> list[Path]:
    """DIR/index.html, DIR/agreement.csv and a page per model (DIR/models/); with `judges` (the judge evidence rows,
    computed by the caller: judges.known.builtin_evidence) a Judges block and DIR/judges.html. Returns the files
    written (the model pages as their folder)."""
    from empathybench.atlas.model_site import model_links
    from empathybench.redaction import redact
    from empathybench.report.html import environment

    result = agreement(atlas)
    links = model_links(atlas)
    blocks = []
    for name, board in boards.items():
        blocks.append(_board_block(name, board, links))
        published = _boards_block(name, board, links)
        if published is not None:
            blocks.append(published)
    blocks.append(_agreement_block(result))
    if judges:
        from empathybench.atlas.judges_site import judges_block

        blocks.append(judges_block(judges))
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
    written = [index, matrix, _write_model_pages(directory, atlas, links)]
    return written + ([_write_judges_page(directory, judges)] if judges else [])


def _write_judges_page(directory: Path, judges: Sequence[Mapping[str, Any]]) -> Path:
    """DIR/judges.html: every judge's figures, linking back to the index."""
    from empathybench.atlas.judges_site import JUDGES_PAGE, PAGE_INTRO, judges_page_blocks
    from empathybench.redaction import redact
    from empathybench.report.html import environment

    blocks = judges_page_blocks(judges)
    toc = tuple((b.anchor, b.title) for b in blocks)
    page = AtlasPage("Judges held to evidence", PAGE_INTRO, toc, tuple(blocks), home="index.html")
    path = directory / JUDGES_PAGE
    path.write_text(redact(environment().get_template("atlas.html.j2").render(page=page)), "utf-8")
    return path


def _write_model_pages(directory: Path, atlas: Mapping[str, Any], links: Mapping[str, str]) -> Path:
    """DIR/models/<id>.html for every checkpoint with an atlas entry, each linking back to the index; returns the
    folder."""
    from empathybench.atlas.model_site import MODELS_DIR, model_pages
    from empathybench.redaction import redact
    from empathybench.report.html import environment

    template = environment().get_template("atlas.html.j2")
    (directory / MODELS_DIR).mkdir(parents=True, exist_ok=True)
    for link, title, intro, blocks in model_pages(atlas, links):
        toc = tuple((b.anchor, b.title) for b in blocks)
        page = AtlasPage(title=title, intro=intro, toc=toc, blocks=tuple(blocks), home="../index.html")
        (directory / link).write_text(redact(template.render(page=page)), "utf-8")
    return directory / MODELS_DIR
