"""The end-of-run table in the terminal."""

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from empathybench.report.format import interval, number


def print_summary(console: Console, summary: dict[str, Any]) -> None:
    # Model specs, notes and errors are printed literally (Text), never read as rich markup.
    title = f"EmpathyBench · {summary.get('model')} · preset {summary.get('preset')}"
    repeats = summary.get("repeats")
    if repeats:
        seeds = repeats.get("seeds") or []
        first_seed = f", seed {seeds[0]}" if seeds else ""
        title += f" · repeat 1 of {repeats['n']}{first_seed} (mean and SD over all repeats below)"
    table = Table(title=Text(title))
    table.add_column("benchmark", style="bold")
    table.add_column("score", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("parsed", justify="right")
    table.add_column("status")
    table.add_column("notes")
    for name, result in summary.get("benchmarks", {}).items():
        if result.get("status") == "skipped":
            table.add_row(name, "—", "", "—", Text("skipped", "yellow"), Text(str(result.get("error", ""))))
            continue
        status = result.get("status", "")
        style = "green" if status == "complete" else "yellow"
        table.add_row(
            name,
            number(result.get("score")),
            Text(interval(result.get("score_ci95"), 1)),
            f"{result.get('n_parsed', '—')}/{result.get('n_items', '—')}",
            Text(str(status), style),
            Text(str(result.get("headline_note", ""))),
        )
    console.print(table)
    if repeats:
        spread = Table(title=f"run-to-run variation over {repeats['n']} repeats")
        spread.add_column("figure")
        spread.add_column("mean", justify="right")
        spread.add_column("SD", justify="right")
        for key, entry in repeats["metrics"].items():
            spread.add_row(key, number(entry["mean"]), number(entry["sd"]))
        console.print(spread)
    usage = summary.get("usage", {})
    console.print(
        f"{usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} from cache, {usage.get('retries', 0)} retries, "
        f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens, "
        f"{summary.get('elapsed_s', 0):.1f} s" + (f" over {repeats['n']} repeats" if repeats else ""),
        highlight=False,
        markup=False,
    )
