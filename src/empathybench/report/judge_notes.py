"""What is known about a judged instrument's judge, as report.html, report.md and the terminal say it. The caller
computes the entries (judges/known.py `report_judges`: per judged instrument, its judge, the evidence rows for
that judge's model, the commands that would add some) and hands them over; here they only become text, the same in
every view. Every text from a run or a file (the judge's spec) is plain text here: the templates escape it, the
terminal prints it through `formatting.printable`."""

from collections.abc import Mapping, Sequence
from typing import Any

from empathybench.formatting import interval, number, printable

NO_JUDGE_EVIDENCE = "no evidence for this judge"
JUDGE_HEADERS = ("source", "against", "aspect", "statistic", "value [95%]", "n", "unit")
MAX_TEXT = 300


def _short(title: Any) -> str:
    """A source's short name: its title up to the first colon ("MentalAlign-70k")."""
    return printable(str(title or "").split(":", 1)[0], 80)


def judge_name(entry: Mapping[str, Any]) -> str:
    judge = printable(entry.get("judge") or "unknown", 200)
    return f"{judge} (the model under test, judging itself)" if entry.get("self_judged") else judge


def figure(row: Mapping[str, Any]) -> str:
    return f"{number(row.get('value'), 2, missing='n/a')} {interval(row.get('ci95'), 2)}".rstrip()


def judge_rows(entry: Mapping[str, Any]) -> list[list[str]]:
    """The evidence rows for the judge, as table cells (JUDGE_HEADERS), headline rows first."""
    rows = sorted(entry.get("rows") or (), key=lambda row: not row.get("headline"))
    return [
        [
            _short(row.get("source_title") or row.get("source")),
            printable(row.get("against"), 80),
            printable(row.get("aspect"), 80),
            printable(row.get("statistic"), 80),
            figure(row),
            number(row.get("n")),
            printable(row.get("unit"), 10),
        ]
        for row in rows
    ]


def _headline(row: Mapping[str, Any]) -> str:
    return (
        f"{_short(row.get('source_title') or row.get('source'))}: {printable(row.get('statistic'), 80)} "
        f"{figure(row)} against {printable(row.get('against'), 80)} over {number(row.get('n'))} "
        f"{printable(row.get('unit'), 20)}s ({printable(row.get('aspect'), 80)})"
    )


def judge_line(entry: Mapping[str, Any]) -> str:
    """One line: the judge and its headline figures, or "no evidence for this judge", or why none could be read."""
    name = f"Its judge, {judge_name(entry)}"
    if entry.get("error"):
        return f"{name}: {printable(entry['error'], MAX_TEXT)}"
    headlines = [row for row in entry.get("rows") or () if row.get("headline")]
    if not entry.get("rows"):
        return f"{name}: {NO_JUDGE_EVIDENCE}."
    shown = "; ".join(_headline(row) for row in headlines) or "the figures below"
    return f"{name}: {shown}. Every figure for this judge below (all judges: empathybench judges)."


def commands_line(entry: Mapping[str, Any]) -> str:
    """The commands that would add evidence about the judge ("" when there are none)."""
    commands = [printable(command, MAX_TEXT) for command in entry.get("commands") or ()]
    if not commands:
        return ""
    lead = "To produce some" if not entry.get("rows") else "To add your own"
    # The command that reads what they write (judges/known.py); an entry from before it was recorded names a FILE.
    then = printable(entry.get("then") or "empathybench judges FILE", MAX_TEXT)
    return f"{lead}: {'; '.join(commands)} (then {then})."


def by_instrument(judges: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(entry.get("instrument")): entry for entry in judges}


def terminal_line(entry: Mapping[str, Any]) -> str:
    """The terminal's line under the summary table: the headline, or no evidence and the first command."""
    judge = f"judge {judge_name(entry)}"
    if entry.get("error"):
        return f"{judge}: {printable(entry['error'], MAX_TEXT)}"
    headlines = [row for row in entry.get("rows") or () if row.get("headline")]
    if headlines:
        return f"{judge}: " + "; ".join(_headline(row) for row in headlines) + " (every figure: report.html)"
    commands = [printable(command, MAX_TEXT) for command in entry.get("commands") or ()]
    return f"{judge}: {NO_JUDGE_EVIDENCE}" + (f"; to produce some: {commands[0]}" if commands else "")
