"""What the atlas shows: per instrument, the leaderboard of recomputed figures beside the published ones."""

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from empathybench.atlas.place import figure_of
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
            Text(str(row["rank"])),
            Text(model),
            Text(number(row["value"], 2)),
            Text(_interval(row["ci95"])),
            Text(number(row["n"])),
            Text(number(row["published"], 2)),
            Text(number(row["difference"], 2, signed=True)),
        ]
        rows.append((row["value"] if row["value"] is not None else row["published"], cells, plain(row["model"])))
    for run in board["runs"]:
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
            console.print(Text(f"  your run ranks {run['rank']} of {run['among']}; nearest: {nearest}"))
            for match in run["matches"]:
                console.print(
                    Text(
                        f"  the atlas has {plain(match['model'])} ({match['relation']}): "
                        f"{number(match['value'], 2)} ({match['status']})"
                    )
                )
        if board["other_settings"]:
            console.print(Text(f"  {len(board['other_settings'])} released run(s) under other settings, not ranked:"))
        for effect in board["setting_effects"]:
            changed = "; ".join(
                f"{plain(k, 30)} {plain(a, 40)} → {plain(b, 40)}" for k, (a, b) in effect["settings_changed"].items()
            )
            moved = f"{number(effect['published_setting_value'], 1)} → {number(effect['other_setting_value'], 1)}"
            paired = f"{number(effect['difference'], 1, signed=True)} {_interval(effect['ci95'])}"
            console.print(
                Text(f"  {plain(effect['model'])}: {changed}: {moved}, paired difference {paired} over {effect['n']}")
            )
        console.print()


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
            Text(pair["verdict"] or ("n < 5: no verdict" if pair["n"] < 5 else "—")),
        )
    for row in result["capability"]:
        table.add_row(
            Text(f"{row['instrument']} × {plain(row['capability'])}"),
            Text(str(row["n"])),
            Text(number(row["rho"], 2)),
            Text(_interval(row["ci95"])),
            Text(row["verdict"] or ("n < 5: no verdict" if row["n"] < 5 else "—")),
        )
    console.print(table)
    console.print(Text(result["method"]))


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
        comparison = result["comparison"]
        if comparison is None:
            console.print(Text("  no paired comparison: no shared items and no interval"))
        else:
            console.print(
                Text(
                    f"  difference {number(comparison['difference'], 2, signed=True)} {_interval(comparison['ci95'])} "
                    f"over {comparison['n']} ({comparison['kind']}): {comparison['verdict'] or 'no verdict'}"
                )
            )
        for key, values in result["settings"]["differs"].items():
            console.print(
                Text(f"  setting {plain(key, 40)}: run {plain(values['run'])}, published {plain(values['published'])}")
            )
        unknown = result["settings"]["not_recorded_by_the_run"]
        if unknown:
            listed = ", ".join(f"{plain(k, 30)} {plain(v, 40)}" for k, v in unknown.items())
            console.print(Text(f"  published run's settings this run does not record: {listed}"))
        if result["not_comparable_because"]:
            console.print(Text(f"  not comparable: {plain(result['not_comparable_because'], 120)}"))
