"""What the atlas shows: per instrument, the leaderboard of recomputed figures beside the published ones."""

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from empathybench.atlas.place import figure_of, standing
from empathybench.formatting import fit_columns, interval, number

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

# A recomputed figure "reproduces" its published one when they agree to the published figure's rounding.
REPRODUCED_WITHIN = 0.05


def entries_of(atlas: Mapping[str, Any], instrument: str) -> list[Mapping[str, Any]]:
    return [entry for entry in atlas["entries"] if entry["instrument"] == instrument]


def build_lines(atlas: Mapping[str, Any]) -> Iterator[str]:
    """One line per instrument: how many models were recomputed, how many are published-only, how many
    recomputed figures reproduce their published one."""
    for name in atlas["instruments"]:
        entries = entries_of(atlas, name)
        recomputed = [e for e in entries if e["status"] == "recomputed"]
        only = len(entries) - len(recomputed)
        compared = [e for e in recomputed if e["difference"] is not None]
        reproduced = sum(1 for e in compared if abs(e["difference"]) <= REPRODUCED_WITHIN)
        largest = max((abs(e["difference"]) for e in compared), default=None)
        line = f"{name}: {len(recomputed)} recomputed, {only} published-only"
        if compared:
            line += (
                f"; {reproduced} of {len(compared)} reproduce their published figure (within {REPRODUCED_WITHIN}), "
                f"largest difference {number(largest, 2)}"
            )
        yield line


def ranked(entries: Sequence[Mapping[str, Any]], higher_is_better: bool | None) -> list[Mapping[str, Any]]:
    """Entries best first (highest first where neither direction is better): by recomputed figure, else by
    published figure (published-only entries)."""

    def figure(entry: Mapping[str, Any]) -> float:
        value, _ = figure_of(entry)
        if value is None:
            return float("inf")
        return value if higher_is_better is False else -value

    return sorted(entries, key=lambda e: (figure(e), e["model"]))


MAX_CELL_CHARS = 60


def setting_text(value: object) -> object:
    """A setting's value as shown: a one-value list (TactfulToM's `cot: [False]`) as that value, plainly."""
    if isinstance(value, list | tuple) and len(value) == 1:
        return value[0]
    return value


def plain(text: object, limit: int = MAX_CELL_CHARS) -> str:
    """Text from a file, safe for a terminal cell: control characters shown as '?', cut to `limit`."""
    cleaned = "".join(ch if ch.isprintable() else "?" for ch in str(text if text is not None else ""))
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def _interval(ci: Sequence[float | None] | None) -> str:
    return interval(ci, 1)


HEADERS = (
    ("#", "right"),
    ("model", "left"),
    ("recomputed", "right"),
    ("95% interval", "right"),
    ("n", "right"),
    ("published", "right"),
    ("difference", "right"),
)


def _board_rows(board: Mapping[str, Any]) -> "list[tuple[list[Text], str]]":
    """The leaderboard's rows in order, each its cells (as HEADERS) and its model's name."""
    from rich.text import Text

    rows: list[tuple[float | None, list[Text], str]] = []
    for row in board["rows"]:
        model = plain(row["model"]) + ("  (published only)" if row["status"] == "published-only" else "")
        cells = [
            Text("—" if row["rank"] is None else str(row["rank"])),  # None: a figure without a direction
            Text(model),
            Text(number(row["value"], 2)),
            Text(_interval(row["ci95"])),
            Text(number(row["n"])),
            Text(number(row["published"], 2)),
            Text(number(row["difference"], 2, signed=True)),
        ]
        rows.append((row["value"] if row["value"] is not None else row["published"], cells, plain(row["model"])))
    for run in _ranked_runs(board):
        label = f"▶ your run: {plain(run['model'])} ({plain(run['run'], 40)})"
        if not run["comparable"]:
            label += f"; not comparable: {plain(run['not_comparable_because'], 60)}"
        cells = [
            Text(f"{run['rank']}/{run['among']}", "bold"),
            Text(label, "bold"),
            Text(number(run["value"], 2), "bold"),
            Text(_interval(run["ci95"])),
            Text(number(run["n"])),
            Text(""),
            Text(""),
        ]
        rows.append((run["value"], cells, plain(run["model"])))
    descending = board.get("higher_is_better") is not False
    rows.sort(key=lambda row: (row[0] is None, -(row[0] or 0) if descending else (row[0] or 0)))
    return [(cells, model) for _, cells, model in rows]


def _leaderboard_table(board: Mapping[str, Any], console: Any) -> "Table":
    """One column per figure where the model names fit beside them whole; else (a narrow terminal, names of 40
    characters) each model's figures on the line under its name, so no name is cut."""
    from rich.table import Table
    from rich.text import Text

    title = Text(f"{plain(board['title'])}: {plain(board['metric'], 120)}")
    rows = _board_rows(board)
    names = [model for _, model in rows]
    table = Table(title=title, title_justify="left")
    for header, justify in HEADERS:
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for cells, _ in rows:
        table.add_row(*cells)
    if fit_columns(table, console, {1: names}):
        return table
    stacked = Table(title=title, title_justify="left")
    stacked.add_column("#", justify="right")
    stacked.add_column("model\nrecomputed [95% interval] n · published (difference)")
    for cells, _ in rows:
        rank, model, value, ci, n, published, difference = cells
        parts = [] if value.plain == "—" else [f"{value.plain} {ci.plain} n {n.plain}"]  # none: published only
        if published.plain not in ("", "—"):
            parts.append(f"published {published.plain}" + ("" if value.plain == "—" else f" ({difference.plain})"))
        figures = " · ".join(parts)
        stacked.add_row(rank, Text.assemble(model, "\n", Text(figures, "dim")))
    fit_columns(stacked, console, {1: names})
    return stacked


def render_leaderboards(boards: Mapping[str, Any], console: Any) -> None:
    """Each instrument's leaderboard as a terminal table, the user's runs marked among the published models."""
    from rich.text import Text

    for board in boards.values():
        table = _leaderboard_table(board, console)
        console.print(table)
        for run in board["runs"]:
            nearest = ", ".join(f"{plain(n['model'])} {number(n['value'], 2)}" for n in run["nearest"])
            if run["rank"] is None:  # no board of its setting, or a figure without a direction (then the nearest)
                line = f"  your run {plain(run['model'])}: {plain(standing(run), 160)}"
                console.print(Text(line if run.get("no_board_because") else f"{line}; nearest: {nearest}"))
                continue
            console.print(Text(f"  your run ranks {plain(standing(run), 80)}; nearest: {nearest}"))
            for match in run["matches"]:
                console.print(
                    Text(
                        f"  the atlas has {plain(match['model'])} ({match['relation']}): "
                        f"{number(match['value'], 2)} ({match['status']})"
                    )
                )
        if board["other_settings"]:
            console.print(Text(f"  {len(board['other_settings'])} released run(s) under other settings, not ranked:"))
        for line in _unpaired_other_settings(board):
            console.print(Text(line))
        for effect in board["setting_effects"]:
            changed = "; ".join(
                f"{plain(k, 30)} {plain(setting_text(a), 40)} → {plain(setting_text(b), 40)}"
                for k, (a, b) in effect["settings_changed"].items()
            )
            moved = f"{number(effect['published_setting_value'], 2)} → {number(effect['other_setting_value'], 2)}"
            paired = f"{number(effect['difference'], 1, signed=True)} {_interval(effect['ci95'])}"
            console.print(
                Text(f"  {plain(effect['model'])}: {changed}: {moved}, paired difference {paired} over {effect['n']}")
            )
        render_boards(board, console)
        console.print()


def _unpaired_other_settings(board: Mapping[str, Any]) -> Iterator[str]:
    """A line per run under another setting that no paired setting effect shows (e.g. another task or language,
    whose items are other questions): the model, the settings it differs in from the leaderboard's, its figure."""
    paired = {(e["model_id"], json_key(e["other_setting_value"])) for e in board["setting_effects"]}
    reference = {row["model_id"]: row["settings"] for row in board["rows"] if row["model_id"]}
    first = board["rows"][0]["settings"] if board["rows"] else {}
    for row in board["other_settings"]:
        if (row["model_id"], json_key(row["value"])) in paired:
            continue
        base = reference.get(row["model_id"], first)
        changed = {k: [base.get(k), row["settings"].get(k)] for k in sorted(set(base) | set(row["settings"]))}
        changed = {k: v for k, v in changed.items() if v[0] != v[1]}
        settings = ", ".join(f"{plain(k, 30)} {plain(setting_text(b), 30)}" for k, (_, b) in changed.items())
        settings = settings or "another setting"
        yield (
            f"  {plain(row['model'], 40)} ({settings}): {number(row['value'], 2)} {_interval(row['ci95'])}"
            f" over {number(row['n'])}"
        )


def json_key(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _no_verdict_because(row: Mapping[str, Any]) -> str:
    """A pair's verdict, else why it has none: an instrument without a direction, or too few models."""
    if row["verdict"]:
        return str(row["verdict"])
    if row.get("left_out"):
        return "no direction: no rho"
    return "n < 5: no verdict" if row["n"] < 5 else "—"


def _ranked_runs(board: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The runs ranked among the leaderboard's own rows (not those placed on another board, or not ranked)."""
    return [run for run in board["runs"] if run["rank"] is not None and not run.get("board")]


def render_boards(board: Mapping[str, Any], console: Any) -> None:
    """An instrument's other published boards (e.g. one per judge), and what changes between two of them."""
    from rich.table import Table
    from rich.text import Text

    for published in board.get("boards", []):
        settings = ", ".join(f"{plain(k, 30)} {plain(v, 60)}" for k, v in published["settings"].items())
        title = (
            f"{plain(published['board'])} ({plain(published['source'], 100)}; {settings}; {plain(published['date'])})"
        )
        columns = [plain(c, 30) for c in published["columns"]]
        headers = ("#", "model", "published", "95% interval", *columns)
        rows = []
        for row in published["rows"]:
            cells = [
                str(row["rank"]),
                plain(row["model"]),
                number(row["published"], 1),
                _interval(row["published_ci95"]),
            ]
            rows.append(cells + [number(row["figures"].get(c), 1) for c in published["columns"]])
        names = [cells[1] for cells in rows]
        table = Table(title=Text(title), title_justify="left")
        for header in headers:
            table.add_column(header, justify="left" if header == "model" else "right")  # type: ignore[arg-type]
        for cells in rows:
            table.add_row(*(Text(cell) for cell in cells))
        if not fit_columns(table, console, {1: names}):
            # a narrow terminal: each model's figures on the line under its name, so no name is cut
            table = Table(title=Text(title), title_justify="left")
            table.add_column("#", justify="right")
            table.add_column("model\n" + " · ".join(headers[2:]))
            for cells in rows:
                figures = f"{cells[2]} {cells[3]}" + "".join(
                    f" · {c} {v}" for c, v in zip(columns, cells[4:], strict=True)
                )
                table.add_row(Text(cells[0]), Text.assemble(cells[1], "\n", Text(figures, "dim")))
            fit_columns(table, console, {1: names})
        console.print(table)
    for effect in board.get("board_effects", []):
        changed = "; ".join(
            f"{plain(k, 30)} {plain(a, 40)} → {plain(b, 40)}" for k, (a, b) in effect["settings_changed"].items()
        )
        boards = " → ".join(plain(b, 40) for b in effect["boards"])
        console.print(Text(f"  {changed} ({boards}): {effect['n']} models on both", "bold"))
        without = effect.get("without_judges")
        rows = [("", figure) for figure in effect["figures"]]
        if without:
            left_out = ", ".join(plain(m, 60) for m in without["left_out"])
            rows += [(f" (without {left_out}, a board's judge: {without['n']})", f) for f in without["figures"]]
        for apart, figure in rows:
            low, high = figure["range"]
            order = figure["spearman"]
            console.print(
                Text(
                    f"    {plain(figure['label'], 80)}{apart}: mean {number(figure['mean_first'], 1)} → "
                    f"{number(figure['mean_second'], 1)}, change {number(figure['difference'], 2, signed=True)} "
                    f"{_interval(figure['ci95'])} (from {number(low, 1, signed=True)} to {number(high, 1, signed=True)}"
                    f"); order kept: Spearman {number(order['rho'], 2)} {interval(order['ci95'], 2)}"
                )
            )


def render_agreement(result: Mapping[str, Any], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(f"Do the instruments agree? Spearman's rho ({result['matching']})"), title_justify="left")
    for header in ("instruments", "n", "rho", "95% interval", "verdict"):
        table.add_column(header)
    for pair in result["pairs"]:
        table.add_row(
            Text(" × ".join(pair["instruments"])),
            Text(str(pair["n"])),
            Text(number(pair["rho"], 2)),
            Text(_interval(pair["ci95"])),
            Text(_no_verdict_because(pair)),
        )
    for row in result["capability"]:
        table.add_row(
            Text(f"{row['instrument']} × {plain(row['capability'])}"),
            Text(str(row["n"])),
            Text(number(row["rho"], 2)),
            Text(_interval(row["ci95"])),
            Text(_no_verdict_because(row)),
        )
    console.print(table)
    console.print(Text(result["method"]))


def _identity_decisions(matched: Mapping[str, Any]) -> list[str]:
    """Which sources decided that the run's name and the published name are this checkpoint, where the names alone
    do not (upstream's own name map, a run's date and the provider's alias history)."""
    published = matched.get("published_identity") or {}
    decisions = [matched.get("decided_by"), published.get("decided_by")]
    return [text for position, text in enumerate(decisions) if text and text not in decisions[:position]]


def render_reproduction(check: Mapping[str, Any], console: Any) -> None:
    """`report RUN --against-published`: per instrument, the matched published model, both figures, the difference,
    its interval and the verdict, then the settings that differ."""
    from rich.text import Text

    console.print(Text(f"{plain(check['model'], 80)} ({plain(check['run'], 80)}) against the published runs"))
    if not check["instruments"]:
        console.print(Text("  no instrument of this run is in the atlas"))
    for name, result in check["instruments"].items():
        if result["matched"] is None:
            console.print(Text(f"{name}: {result['why']} (run {number(result['run_value'], 2)})"))
            continue
        matched = result["matched"]
        head = (
            f"{name}: {plain(matched['model'])} ({matched['status']}): published {number(result['published_value'], 2)}"
            f", recomputed {number(result['recomputed_value'], 2)}, this run {number(result['run_value'], 2)}"
        )
        console.print(Text(head, "bold"))
        for decided in _identity_decisions(matched):
            console.print(Text(f"  the same checkpoint ({plain(matched['model_id'], 80)}): {plain(decided, 300)}"))
        from empathybench.atlas.reproduce import comparison_text

        console.print(Text(f"  {comparison_text(result['comparison'], result['margin'])}"))
        console.print(Text(f"  margin ±{number(float(result['margin']['value']), 2)}: {result['margin']['source']}"))
        for key, values in result["settings"]["differs"].items():
            console.print(
                Text(
                    f"  setting {plain(key, 40)}: run {plain(values['run'], 120)}, "
                    f"published {plain(values['published'], 120)}"
                )
            )
        unknown = result["settings"]["not_recorded_by_the_run"]
        if unknown:
            listed = ", ".join(f"{plain(k, 30)} {plain(v, 40)}" for k, v in unknown.items())
            console.print(Text(f"  published run's settings this run does not record: {listed}"))
        if result["not_comparable_because"]:
            console.print(Text(f"  not comparable: {plain(result['not_comparable_because'], 120)}"))
