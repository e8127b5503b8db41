"""The end-of-run table in the terminal: one short row per benchmark (fits 80 columns), notes below the table."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from empathybench.formatting import interval, number, printable, significant
from empathybench.report.cost import cost_line
from empathybench.report.judge_notes import terminal_line
from empathybench.report.profile import title_of
from empathybench.report.validity import (
    own_note,
    plugin_source,
    short_reason,
    truncated_share,
    truncated_text,
    validity_of,
)

STATUS_STYLES = {
    "valid": "green",
    "invalid": "red",
    "insufficient": "red",
    "self-judged": "yellow",
    "self-simulated": "yellow",
}


def demo_next_step(model: str) -> str:
    """The demo's last line: what it showed, and what to run for real numbers."""
    shown = "the embedded 135M model, far too small for meaningful scores" if model == "local" else model
    return (
        f"Demo done: the pipeline ran end to end on a few items of {shown}; the figures are not a measurement. "
        "For real numbers: empathybench run --model openai/<model> --judge openai/<judge> --preset paper "
        "(or --preset quick for a first look)."
    )


def demo_lines(summary: dict[str, Any], model: str, left_out: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The demo's account, one line per instrument: what the model did (answers parsed, scored) and the status;
    then one line per instrument `left_out` of it ((name, why)), with the command that runs its own cut."""
    who = "the 135M model" if model == "local" else model
    lines = []
    for name, result in summary.get("benchmarks", {}).items():
        title = title_of(name)
        if result.get("status") == "skipped":
            lines.append(f"{title}: skipped ({short_reason(str(result.get('error', '')))})")
            continue
        status = validity_of(result)["status"]
        parsed, items = result.get("n_parsed"), result.get("n_items")
        did = f"{parsed} of {items} parsed" if parsed is not None else f"{result.get('n_answered', items)} answered"
        if parsed == 0:
            did = f"{who} never gave a readable answer: {did}"
        lines.append(f"{title}: {did}, {status}")
    for name, why in left_out:
        command = f"empathybench run --bench {name} --preset demo"
        lines.append(f"{title_of(name)}: not in this demo ({why}); on its own: {command}")
    return lines


def summary_notes(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """One (benchmark, note) per benchmark with something to say, printed under the table: its status reasons,
    then the benchmark's own note."""
    notes: list[tuple[str, str]] = []
    for name, result in summary.get("benchmarks", {}).items():
        texts = list(validity_of(result)["reasons"])
        if result.get("status") == "incomplete":
            texts.append(f"incomplete: {result.get('n_failed_calls', 0)} items failed; run the same command again")
        note = own_note(result)
        if note:
            texts.append(note)
        if plugin_source(result):
            texts.append(f"instrument from {plugin_source(result)}")
        truncated = truncated_text(result)  # answers that never arrived, beside the parse rate in the table
        if truncated and all(truncated not in text for text in texts):
            texts.append(truncated)
        if texts:
            notes.append((name, "; ".join(texts)))
    return notes


def print_summary(console: Console, summary: dict[str, Any], judges: Sequence[Mapping[str, Any]] = ()) -> None:
    """The run's table, its notes, what is known about each judged instrument's judge (`judges`: computed by the
    caller, judges.known.report_judges), the run-to-run spread, the calls and the cost."""
    # Model specs, notes and errors are printed literally (Text), never read as rich markup.
    title = f"EmpathyBench · {summary.get('model')} · preset {summary.get('preset')}"
    repeats = summary.get("repeats")
    if repeats:
        seeds = repeats.get("seeds") or []
        first_seed = f", seed {seeds[0]}" if seeds else ""
        title += f" · repeat 1 of {repeats['n']}{first_seed} (mean and SD over all repeats below)"
    # the title wraps at the table's width: the table at least as wide as the model's name, which stays whole
    widest_word = max(cell_len(word) for word in title.split())
    table = Table(title=Text(title), min_width=min(console.width, widest_word + 4))
    table.add_column("benchmark", style="bold", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("95% CI", justify="right", no_wrap=True)
    table.add_column("parsed", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for name, result in summary.get("benchmarks", {}).items():
        status = validity_of(result)["status"]
        if result.get("status") == "incomplete":
            status += ", incomplete"
        style = STATUS_STYLES.get(status, "yellow")
        if result.get("status") == "skipped":
            table.add_row(Text(name), "—", "", "—", Text(status, style=style))
            continue
        table.add_row(
            Text(name),
            number(result.get("score")),
            Text(interval(result.get("score_ci95"), 1)),
            f"{result.get('n_parsed', '—')}/{result.get('n_items', '—')}"
            + (f" ({truncated_share(result)} truncated)" if result.get("n_truncated_calls") else ""),
            Text(status, style=style),
        )
    console.print(table)
    for name, text in summary_notes(summary):
        console.print(Text(f"  {name}: {text}"))
    for entry in judges:
        console.print(Text(f"  {printable(entry.get('instrument'), 60)}: {terminal_line(entry)}"))
    repeats = summary.get("repeats")
    if repeats:
        spread = Table(title=f"run-to-run variation over {repeats['n']} repeats")
        spread.add_column("figure")
        spread.add_column("mean", justify="right")
        spread.add_column("SD", justify="right")
        for key, entry in repeats["metrics"].items():
            spread.add_row(Text(key), number(entry["mean"]), number(entry["sd"]))
        console.print(spread)
    usage = summary.get("usage", {})
    console.print(
        f"{usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} from cache, {usage.get('retries', 0)} retries, "
        f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens, "
        f"{number(float(summary.get('elapsed_s') or 0), 1)} s" + (f" over {repeats['n']} repeats" if repeats else ""),
        highlight=False,
        markup=False,
    )
    spent = cost_line(summary.get("cost"))
    if spent is not None:
        console.print(spent, highlight=False, markup=False)
    session = summary.get("session") or {}
    if (session.get("n") or 1) > 1:  # a resumed run: the totals above are over every session, this is the last
        own = session.get("usage") or {}
        console.print(
            f"this session (#{session['n']}): {own.get('calls', 0)} calls, {own.get('cache_hits', 0)} from cache, "
            f"{own.get('prompt_tokens', 0)} prompt + {own.get('completion_tokens', 0)} completion tokens, "
            f"{number(float(session.get('elapsed_s') or 0), 1)} s",
            highlight=False,
        )


def p_text(row: dict[str, Any]) -> str:
    """A paired row's p-value with its test, or why it has none (never "p = None")."""
    if row.get("p") is None:
        return str(row.get("p_note") or row.get("note") or "no p-value")
    return f"{row.get('test')} p = {significant(row['p'])}"


def print_comparison(console: Console, comparison: dict[str, Any], written: list[Path]) -> None:
    """`report A B` in the terminal: the warnings, each headline difference, and where the files are."""
    for warning in comparison.get("warnings", []):
        console.print(Text(f"warning: {warning}", style="yellow"), soft_wrap=True)
    for entry in comparison["benchmarks"].values():
        for row in entry["paired"]:
            if row.get("metric") != entry["headline_metric"]:
                continue
            head = f"{entry['title']}: {row['first']} − {row['second']}"
            if row.get("difference") is None:
                console.print(Text(f"{head}: no difference ({row.get('p_note') or row.get('note')})"), soft_wrap=True)
                continue
            difference = number(float(row["difference"]), signed=True)
            console.print(
                Text(
                    f"{head} = {difference} {interval(row.get('ci95'))} on {row['n_shared']} shared "
                    f"items, {p_text(row)}"
                ),
                soft_wrap=True,
            )
    console.print(Text("comparison written to: " + ", ".join(str(path.resolve()) for path in written)), soft_wrap=True)
