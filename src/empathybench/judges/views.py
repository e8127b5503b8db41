"""`empathybench judges` in the terminal and as a static page (DIR/index.html, DIR/evidence.csv). Every text that came
from a file (a judge's name in a user's report, a source's note) is printed through `formatting.printable` in the
terminal and escaped by the template in HTML."""

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.formatting import interval, number, printable

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


def _evidence_table(rows: Sequence[Mapping[str, Any]], title: str) -> Any:
    from rich.text import Text

    table = _titled_table(title)
    for header in ("judge", "source", "against", "aspect", "statistic"):
        table.add_column(header)
    for header in ("value [95%]", "n", "unit"):
        table.add_column(header, no_wrap=True)
    for row in rows:
        table.add_row(
            *(Text(printable(row[key], 60)) for key in ("judge", "source", "against", "aspect", "statistic")),
            Text(_figure(row["value"], row["ci95"])),
            Text(str(row["n"])),
            Text(row["unit"]),
        )
    return table


def render_evidence(document: Mapping[str, Any], console: Any) -> None:
    """The headline table, then each source's detail."""
    from rich.text import Text

    console.print(
        _evidence_table(document["headline"], "Judges held to evidence: agreement with people or with another judge")
    )
    for name, title in document["sources"].items():
        console.print()
        console.print(Text(printable(title, 160), "bold"))
        detail = document["detail"][name]
        if name == "mentalalign":
            render_mentalalign(detail, console)
        else:
            rows = [row for row in document["evidence"] if row["source"] == name]
            console.print(_evidence_table(rows, "every figure"))
            for note in detail.get("notes", ()):
                console.print(Text(printable(note, 300)))


def render_mentalalign(detail: Mapping[str, Any], console: Any) -> None:
    """The reproduction of the published tables (every difference), then what the paper does not give."""
    labels = {name: judge["label"] for name, judge in detail["judges"].items()}
    _print_human_table(detail, console)
    console.print(_icc_table(detail, labels))
    _print_icc_differences(detail, console)
    console.print(_item_table(detail, labels))
    console.print(_judge_pairs_table(detail, labels))
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


def _icc_table(detail: Mapping[str, Any], labels: Mapping[str, str]) -> Any:
    """The published ICC table beside its recomputation, judge by judge and attribute by attribute."""
    from rich.text import Text

    icc = _titled_table(
        "Published ICC table, recomputed by the authors' method (ICC(A,1), status: recomputed | published)"
    )
    for header in ("judge", "attribute", "ICC(C,1) [95%]", "published", "ICC(A,1)", "status"):
        icc.add_column(header, min_width=17 if header == "judge" else None)
    published = _published_icc(detail)
    for row in detail["icc_table"]:
        theirs = published.get((labels[row["judge"]], row["attribute"]), {})
        icc.add_row(
            Text(labels[row["judge"]]),
            Text(row["attribute"]),
            Text(_figure(row["icc_c1"], row["ci95"], 3)),
            Text(_figure(theirs.get("ICC(C,1)"), (theirs.get("ICC(C,1) 95% low"), theirs.get("ICC(C,1) 95% high")), 3)),
            Text(f"{number(row['icc_a1'], 3)} | {number(theirs.get('ICC(A,1)'), 3)}"),
            Text(f"{row['status']} | {theirs.get('status', row['status'])}"),
        )
    return icc


def _print_icc_differences(detail: Mapping[str, Any], console: Any) -> None:
    """How many published ICC and bias figures differ from the recomputed ones, per kind of figure."""
    from rich.text import Text

    counts: dict[str, int] = {}
    for cell in detail["icc_table_differences"]:
        counts[cell["figure"]] = counts.get(cell["figure"], 0) + 1
    console.print(
        Text(
            f"{len(detail['icc_table_differences'])} of {detail['icc_table_cells']} published ICC and bias figures "
            "differ from the recomputed ones at the printed precision ("
            + ", ".join(f"{figure} {n}" for figure, n in counts.items())
            + "); `--json` lists each"
        )
    )


def _item_table(detail: Mapping[str, Any], labels: Mapping[str, str]) -> Any:
    """Each judge's item-by-item agreement with the experts (not in the paper)."""
    from rich.text import Text

    items = _titled_table(
        "Item by item (not in the paper): quadratic-weighted kappa [95%], Spearman, mean bias (judge - experts)"
    )
    for header in ("judge", "attribute", "kappa", "Spearman", "bias", "n", "off scale"):
        items.add_column(header, min_width=17 if header == "judge" else None)
    for row in detail["item_agreement"]:
        items.add_row(
            Text(labels[row["judge"]]),
            Text(row["attribute"]),
            Text(_figure(row["quadratic_kappa"]["value"], row["quadratic_kappa"]["ci95"])),
            Text(_figure(row["spearman"]["value"], row["spearman"]["ci95"])),
            Text(_figure(row["mean_difference"]["value"], row["mean_difference"]["ci95"])),
            Text(str(row["n"])),
            Text(str(row["off_scale"])),
        )
    return items


def _judge_pairs_table(detail: Mapping[str, Any], labels: Mapping[str, str]) -> Any:
    """Each pair of judges' item-by-item kappa, one column per attribute."""
    from rich.text import Text

    pairs = _titled_table("Judge against judge, item by item: quadratic-weighted kappa")
    attributes = list(dict.fromkeys(row["attribute"] for row in detail["judge_pairs"]))
    pairs.add_column("judges", min_width=24)
    for attribute in attributes:
        pairs.add_column(attribute[:8], no_wrap=True)
    by_pair: dict[tuple[str, str], dict[str, Any]] = {}
    for row in detail["judge_pairs"]:
        by_pair.setdefault((row["first"], row["second"]), {})[row["attribute"]] = row
    for (first, second), cells in by_pair.items():
        pairs.add_row(
            Text(f"{labels[first]} × {labels[second]}"),
            *(Text(number(cells[a]["quadratic_kappa"]["value"], 2, missing="n/a")) for a in attributes),
        )
    return pairs


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
    return {
        "mentalalign": [
            (f"Published human table: {len(human)} of {detail['human_table_cells']} cells differ", human),
            (f"Published ICC and bias tables: {len(icc)} of {detail['icc_table_cells']} figures differ", icc),
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
