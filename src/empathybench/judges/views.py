"""`empathybench judges` in the terminal and as a static page (DIR/index.html, DIR/evidence.csv). Every text that came
from a file (a judge's name in a user's report, a source's note) is printed through `formatting.printable` in the
terminal and escaped by the template in HTML."""

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.formatting import fit_columns, interval, number, printable

EVIDENCE_COLUMNS = ("judge", "source", "against", "aspect", "statistic", "value", "ci95", "n", "unit", "note")


def _figure(value: Any, ci: Sequence[float | None] | None, digits: int = 2) -> str:
    text = number(value, digits, missing="n/a")
    return f"{text} {interval(ci, digits)}".rstrip()


def _titled_table(title: str) -> Any:
    """An empty table in the house style: its title left above it, a rule under the header only."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    return Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)


Column = tuple[str, bool]  # a header, and whether its cells keep to one line (figures)
Row = tuple[Sequence[str], str]  # the cells (the name first), and the figures under the name when stacked


def _laid_out(title: str, columns: Sequence[Column], rows: Sequence[Row], console: Any, stacked_header: str) -> Any:
    """A table whose first column holds names (judges, pairs of judges), never cut: one column per figure where the
    names fit beside them whole (formatting.fit_columns); else each row's name on one line and its figures on the
    line under it (as atlas/views.py lays out a narrow leaderboard)."""
    from rich.text import Text

    names = [cells[0] for cells, _ in rows]
    table = _titled_table(title)
    for header, one_line in columns:
        table.add_column(header, no_wrap=one_line)
    for cells, _ in rows:
        table.add_row(*(Text(cell) for cell in cells))
    if fit_columns(table, console, {0: names}):
        return table
    stacked = _titled_table(title)
    stacked.add_column(stacked_header)
    for cells, figures in rows:
        stacked.add_row(Text.assemble(Text(cells[0]), "\n", Text(figures, "dim")))
    fit_columns(stacked, console, {0: names})
    return stacked


def _evidence_table(rows: Sequence[Mapping[str, Any]], title: str, console: Any) -> Any:
    laid: list[Row] = []
    for row in rows:
        judge, source, against, aspect, statistic = (
            printable(row[key], 60) for key in ("judge", "source", "against", "aspect", "statistic")
        )
        value, n, unit = _figure(row["value"], row["ci95"]), str(row["n"]), printable(row["unit"], 20)
        figures = f"{source}, against {against}: {aspect}: {statistic} {value}, n {n} {unit}"
        laid.append(((judge, source, against, aspect, statistic, value, n, unit), figures))
    columns = [(header, False) for header in ("judge", "source", "against", "aspect", "statistic")]
    columns += [(header, True) for header in ("value [95%]", "n", "unit")]
    return _laid_out(title, columns, laid, console, "judge\nsource, against: aspect: statistic value [95%], n unit")


def render_evidence(document: Mapping[str, Any], console: Any) -> None:
    """The headline table, then each source's detail."""
    from rich.text import Text

    console.print(
        _evidence_table(
            document["headline"], "Judges held to evidence: agreement with people or with another judge", console
        )
    )
    for name, title in document["sources"].items():
        console.print()
        console.print(Text(printable(title, 160), "bold"))
        detail = document["detail"][name]
        if name == "mentalalign":
            render_mentalalign(detail, console)
        else:
            rows = [row for row in document["evidence"] if row["source"] == name]
            console.print(_evidence_table(rows, "every figure", console))
            for note in detail.get("notes", ()):
                console.print(Text(printable(note, 300)))


def render_mentalalign(detail: Mapping[str, Any], console: Any) -> None:
    """The reproduction of the published tables (every difference), then what the paper does not give."""
    labels = {name: judge["label"] for name, judge in detail["judges"].items()}
    _print_human_table(detail, console)
    console.print(_icc_table(detail, labels, console))
    _print_icc_differences(detail, console)
    _print_bias_differences(detail, console)
    console.print(_item_table(detail, labels, console))
    console.print(_judge_pairs_table(detail, labels, console))
    _print_cells_read(detail, labels, console)


def _print_human_table(detail: Mapping[str, Any], console: Any) -> None:
    """How many cells of the published human table recompute as printed, and each that does not."""
    from rich.text import Text

    differences = detail["human_table_differences"]
    console.print(
        Text(
            f"Published human table: {detail['human_table_cells'] - len(differences)} of {detail['human_table_cells']} "
            "cells recomputed as printed (mean expert rating over the conversations, 2 decimals)"
        )
    )
    for cell in differences:
        console.print(
            Text(
                f"  differs: {cell['model']} {cell['attribute']}: recomputed {number(cell['recomputed'], 3)}"
                + (f" (n {cell['n']})" if cell["n"] is not None else "")
                + f", published {number(cell['published'], 2)}"
            )
        )


def _icc_table(detail: Mapping[str, Any], labels: Mapping[str, str], console: Any) -> Any:
    """The published ICC table beside its recomputation, judge by judge and attribute by attribute."""
    published = _published_icc(detail)
    rows: list[Row] = []
    for row in detail["icc_table"]:
        theirs = published.get((labels[row["judge"]], row["attribute"]), {})
        ours = _figure(row["icc_c1"], row["ci95"], 3)
        bounds = (theirs.get("ICC(C,1) 95% low"), theirs.get("ICC(C,1) 95% high"))
        their_figure = _figure(theirs.get("ICC(C,1)"), bounds, 3)
        agreement = f"{number(row['icc_a1'], 3)} | {number(theirs.get('ICC(A,1)'), 3)}"
        status = f"{row['status']} | {theirs.get('status', row['status'])}"
        figures = f"{row['attribute']}: {ours}, published {their_figure}; ICC(A,1) {agreement}; status {status}"
        rows.append(((labels[row["judge"]], row["attribute"], ours, their_figure, agreement, status), figures))
    columns = [("judge", False), ("attribute", False), ("ICC(C,1) [95%]", True), ("published", True)]
    columns += [("ICC(A,1)", True), ("status", True)]
    return _laid_out(
        "Published ICC table, recomputed by the authors' method (ICC(A,1), status: recomputed | published)",
        columns,
        rows,
        console,
        "judge\nattribute: ICC(C,1) [95%], published; ICC(A,1); status",
    )


def _print_icc_differences(detail: Mapping[str, Any], console: Any) -> None:
    """How many published ICC figures differ from the recomputed ones, per kind of figure; the interval ends' are
    systematic, of a cause not known (docs/judges.md)."""
    from rich.text import Text

    differences = detail["icc_table_differences"]
    ends = [c for c in differences if c["figure"] in ("ICC(C,1) 95% low", "ICC(C,1) 95% high")]
    higher = sum(1 for c in ends if (c["difference"] or 0.0) > 0)
    points = [abs(c["difference"] or 0.0) for c in differences if c["figure"] in ("ICC(C,1)", "ICC(A,1)")]
    console.print(
        Text(
            f"{len(differences)} of {detail['icc_table_cells']} published ICC figures differ from the recomputed ones "
            f"at the printed precision ({_counts(differences)}); `--json` lists each"
            + (f". The point estimates agree within {number(float(max(points)), 4)}" if points else "")
            + (
                f". The interval ends differ systematically ({higher} of the {len(ends)} differing ends are "
                "recomputed higher), for a cause not known"
                if ends
                else ""
            )
        )
    )


def _print_bias_differences(detail: Mapping[str, Any], console: Any) -> None:
    """How many published bias-table figures differ from the recomputed ones (every rating pair pooled, the authors'
    calculate_real_mse_rmse.py), per kind of figure, with the largest difference of each."""
    from rich.text import Text

    differences = detail.get("bias_table_differences", [])
    largest: dict[str, float] = {}
    higher: dict[str, int] = {}
    for cell in differences:
        largest[cell["figure"]] = max(largest.get(cell["figure"], 0.0), abs(cell["difference"] or 0.0))
        higher[cell["figure"]] = higher.get(cell["figure"], 0) + ((cell["difference"] or 0.0) > 0)
    console.print(
        Text(
            f"Published bias table (human mean, judge mean, bias, MSE; every rating pair pooled, as the authors "
            f"compute it): {detail.get('bias_table_cells', 0) - len(differences)} of "
            f"{detail.get('bias_table_cells', 0)} figures recomputed as printed"
            + (
                "; differ: "
                + ", ".join(
                    f"{figure} {n} ({higher[figure]} recomputed higher; by at most {number(float(largest[figure]), 4)})"
                    for figure, n in _tally(differences)
                )
                if differences
                else ""
            )
        )
    )


def _tally(cells: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for cell in cells:
        counts[cell["figure"]] = counts.get(cell["figure"], 0) + 1
    return list(counts.items())


def _counts(cells: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{figure} {n}" for figure, n in _tally(cells))


def _item_table(detail: Mapping[str, Any], labels: Mapping[str, str], console: Any) -> Any:
    """Each judge's item-by-item agreement with the experts (not in the paper)."""
    rows: list[Row] = []
    for row in detail["item_agreement"]:
        kappa = _figure(row["quadratic_kappa"]["value"], row["quadratic_kappa"]["ci95"])
        spearman = _figure(row["spearman"]["value"], row["spearman"]["ci95"])
        bias = _figure(row["mean_difference"]["value"], row["mean_difference"]["ci95"])
        n, off = str(row["n"]), str(row["off_scale"])
        figures = f"{row['attribute']}: kappa {kappa}, Spearman {spearman}, bias {bias}, n {n}, off scale {off}"
        rows.append(((labels[row["judge"]], row["attribute"], kappa, spearman, bias, n, off), figures))
    columns = [("judge", False), ("attribute", False)]
    columns += [(header, True) for header in ("kappa", "Spearman", "bias", "n", "off scale")]
    return _laid_out(
        "Item by item (not in the paper): quadratic-weighted kappa [95%], Spearman, mean bias (judge - experts)",
        columns,
        rows,
        console,
        "judge\nattribute: kappa, Spearman, bias [95%], n, off scale",
    )


def _judge_pairs_table(detail: Mapping[str, Any], labels: Mapping[str, str], console: Any) -> Any:
    """Each pair of judges' item-by-item kappa, one column per attribute."""
    attributes = list(dict.fromkeys(row["attribute"] for row in detail["judge_pairs"]))
    by_pair: dict[tuple[str, str], dict[str, Any]] = {}
    for row in detail["judge_pairs"]:
        by_pair.setdefault((row["first"], row["second"]), {})[row["attribute"]] = row
    rows: list[Row] = []
    for (first, second), cells in by_pair.items():
        kappas = [number(cells[a]["quadratic_kappa"]["value"], 2, missing="n/a") for a in attributes]
        figures = ", ".join(f"{a} {k}" for a, k in zip(attributes, kappas, strict=True))
        rows.append(((f"{labels[first]} × {labels[second]}", *kappas), figures))
    columns = [("judges", False), *((attribute[:8], True) for attribute in attributes)]
    return _laid_out(
        "Judge against judge, item by item: quadratic-weighted kappa", columns, rows, console, "judges\nkappa"
    )


def _print_cells_read(detail: Mapping[str, Any], labels: Mapping[str, str], console: Any) -> None:
    """How many cells of each source were read, by status."""
    from rich.text import Text

    console.print(
        Text(
            "cells read: "
            + "; ".join(
                f"{labels.get(who, who)}: " + ", ".join(f"{n} {status}" for status, n in counts.items() if n)
                for who, counts in detail["cells_read"].items()
            )
        )
    )


def _published_icc(detail: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(judge label, attribute) -> {figure: published value}, for the figures that differ and those that match: the
    recomputed value where it matches (it prints as the published one)."""
    published: dict[tuple[str, str], dict[str, Any]] = {}
    labels = {name: judge["label"] for name, judge in detail["judges"].items()}
    for row in detail["icc_table"]:
        ci = row["ci95"] or [None, None]
        published[labels[row["judge"]], row["attribute"]] = {
            "ICC(C,1)": row["icc_c1"],
            "ICC(C,1) 95% low": ci[0],
            "ICC(C,1) 95% high": ci[1],
            "ICC(A,1)": row["icc_a1"],
            "status": row["status"],
        }
    for cell in detail["icc_table_differences"]:
        published.setdefault((cell["judge"], cell["attribute"]), {})[cell["figure"]] = cell["published"]
    return published


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Judges held to evidence</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;max-width:80rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:600}
</style></head><body>
<h1>Judges held to evidence</h1>
<p>Per judge model and evidence source: the judge's agreement with people or with another judge, its 95% interval, n
and the unit (items, rated models, a conversation's chunks or whole conversations). Every figure:
<a href="evidence.csv">evidence.csv</a>.</p>
{% for name, title in sources.items() %}
<h2>{{ title }}</h2>
<table><caption>headline and every figure</caption>
<tr><th>judge</th><th>against</th><th>aspect</th><th>statistic</th><th>value</th><th>95% interval</th><th>n</th>
<th>unit</th><th>note</th></tr>
{% for row in evidence if row.source == name %}
<tr{% if row.headline %} style="font-weight:600"{% endif %}><td>{{ row.judge }}</td><td>{{ row.against }}</td>
<td>{{ row.aspect }}</td><td>{{ row.statistic }}</td><td class="num">{{ row.value_text }}</td>
<td class="num">{{ row.ci_text }}</td><td class="num">{{ row.n }}</td><td>{{ row.unit }}</td>
<td>{{ row.note }}</td></tr>
{% endfor %}
</table>
{% for heading, lines in differences.get(name, []) %}
<h3>{{ heading }}</h3><ul>{% for line in lines %}<li>{{ line }}</li>{% endfor %}</ul>
{% endfor %}
{% endfor %}
</body></html>
"""


def _difference_lines(document: Mapping[str, Any]) -> dict[str, list[tuple[str, list[str]]]]:
    detail = document["detail"].get("mentalalign")
    if detail is None:
        return {}
    human = [
        f"{c['model']} {c['attribute']}: recomputed {number(c['recomputed'], 3)}, published {number(c['published'], 2)}"
        for c in detail["human_table_differences"]
    ]
    icc = [
        f"{c['judge']} {c['attribute']} {c['figure']}: recomputed {number(c['recomputed'], 3)}, "
        f"published {number(c['published'], 3)}"
        for c in detail["icc_table_differences"]
    ]
    bias = [
        f"{c['judge']} {c['attribute']} {c['figure']}: recomputed {number(c['recomputed'], 4)}, "
        f"published {number(c['published'], 3)}"
        for c in detail.get("bias_table_differences", [])
    ]
    return {
        "mentalalign": [
            (f"Published human table: {len(human)} of {detail['human_table_cells']} cells differ", human),
            (f"Published ICC table: {len(icc)} of {detail['icc_table_cells']} figures differ", icc),
            (f"Published bias table: {len(bias)} of {detail.get('bias_table_cells', 0)} figures differ", bias),
        ]
    }


def _csv_text(value: Any) -> Any:
    """A text cell that a spreadsheet would run as a formula (=, +, -, @ first) is kept as text by a leading quote;
    numbers stay numbers."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def write_html(document: Mapping[str, Any], directory: Path) -> list[Path]:
    """DIR/index.html (self-contained, escaped by jinja2's autoescape) and DIR/evidence.csv."""
    import jinja2

    directory.mkdir(parents=True, exist_ok=True)
    rows = [
        row | {"value_text": number(row["value"], 3, missing="n/a"), "ci_text": interval(row["ci95"], 3)}
        for row in document["evidence"]
    ]
    environment = jinja2.Environment(autoescape=True)
    page = environment.from_string(_PAGE).render(
        sources=document["sources"], evidence=rows, differences=_difference_lines(document)
    )
    index = directory / "index.html"
    index.write_text(page, encoding="utf-8")
    table = directory / "evidence.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(EVIDENCE_COLUMNS)
        for row in document["evidence"]:
            ci = row["ci95"] or [None, None]
            cells = [_csv_text(row[key]) for key in EVIDENCE_COLUMNS]
            cells[EVIDENCE_COLUMNS.index("ci95")] = f"{ci[0]};{ci[1]}" if row["ci95"] else ""
            writer.writerow(cells)
    return [index, table]
