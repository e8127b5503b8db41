"""`empathybench rescore mindeval FILE`: the figures of a judgments file written by upstream's own scripts.

`mindeval/scripts/generate_judgments.py` writes one line per conversation: `parsed_judgment` (the five criteria,
Overall score and Average score), `unparsed_judgment` (the judge's reply without its thinking) and `thinking_trace`.
The README's figures are the means of `parsed_judgment` over the lines; here they come with 95% intervals, and each
`unparsed_judgment` is parsed again with our parser: the figures must agree with upstream's parsed values, and the
criteria the judge left out (which upstream silently scored 3) are counted.
"""

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from empathybench import formatting
from empathybench.errors import DataError, UserError
from empathybench.instruments.mindeval.parse import CRITERIA, OVERALL, SHORT, parse_judgment
from empathybench.instruments.support import jsonl_file, jsonl_lines
from empathybench.stats.intervals import mean_interval

# 50 judgments of about 1 kB each, with thinking a few kB: this bounds what a wrong path can make us read.
MAX_JUDGMENTS_FILE_BYTES = 64 * 1024 * 1024
# One line is one judgment: the reply and its thinking, at most the 16,000-token budget (about 64 kB) each.
MAX_LINE_BYTES = 1024 * 1024
FIGURES = (*CRITERIA, OVERALL)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int past any float
        return None
    return number if math.isfinite(number) else None


def rescore_judgments(text: str, *, source: str = "judgments file") -> dict[str, Any]:
    return rescore_records(jsonl_lines(text.split("\n"), source=source, max_line_bytes=MAX_LINE_BYTES), source=source)


def rescore_records(records: Iterable[tuple[int, dict[str, Any]]], *, source: str) -> dict[str, Any]:
    """The figures of (line number, judgment) pairs, each folded in before the next is read."""
    upstream: dict[str, list[float]] = {name: [] for name in FIGURES}
    missing = dict.fromkeys(CRITERIA, 0)
    disagreeing: list[int] = []
    n_conversations = 0
    for number, record in records:
        n_conversations += 1
        parsed, unparsed = record.get("parsed_judgment"), record.get("unparsed_judgment")
        if not isinstance(parsed, dict) or not isinstance(unparsed, str):
            raise DataError(f"{source}: line {number} has no parsed_judgment object or unparsed_judgment text")
        values = {name: _number(parsed.get(name)) for name in FIGURES}
        absent = [name for name, value in values.items() if value is None]
        if absent:
            raise DataError(f"{source}: line {number} has no number for {', '.join(absent)}")
        for name in FIGURES:
            upstream[name].append(values[name])  # type: ignore[arg-type]
        ours = parse_judgment(unparsed)
        for name in ours.missing:
            missing[name] += 1
        if any(not math.isclose(ours.scores[name], values[name] or 0.0, abs_tol=1e-9) for name in FIGURES):
            disagreeing.append(number)
    if not n_conversations:
        raise DataError(f"{source}: no judgment in it")
    figures = {}
    for name in FIGURES:
        interval = mean_interval(upstream[name])
        figures[name] = {
            "mean": round(sum(upstream[name]) / len(upstream[name]), 6),
            "ci95": [round(interval[0], 4), round(interval[1], 4)] if interval else None,
        }
    return {
        "n_conversations": n_conversations,
        "figures": figures,
        "missing_criteria": missing,
        "n_missing_criteria": sum(missing.values()),
        "lines_our_parse_disagrees_with": disagreeing[:50],
        "n_disagreeing": len(disagreeing),
    }


def rescore_file(path: Path) -> dict[str, Any]:
    """The figures of a judgments file, read a line at a time (a line over MAX_LINE_BYTES, or one that is not an
    object, refused before it is held whole or parsed)."""
    what = "a MindEval judgments file"
    lines = jsonl_file(path, what=what, max_file_bytes=MAX_JUDGMENTS_FILE_BYTES, max_line_bytes=MAX_LINE_BYTES)
    try:
        return rescore_records(lines, source=formatting.printable(path, 300))
    except DataError as exc:
        raise UserError(str(exc)) from None


def render(result: Any, console: Any) -> None:
    """The text output: the Overall and the five means with their intervals, then what the parse found."""
    parts = []
    for name in FIGURES:
        entry = result["figures"][name]
        low, high = entry["ci95"] or (None, None)
        parts.append(f"{SHORT.get(name, 'Overall')} {formatting.number(entry['mean'], 3)} [{low}, {high}]")
    console.print(f"{result['n_conversations']} conversations: " + "; ".join(parts), highlight=False, markup=False)
    console.print(
        f"left out by the judge (scored 3 by upstream): {result['n_missing_criteria']} criterion scores; our parse "
        f"disagrees with upstream's on {result['n_disagreeing']} line(s)",
        highlight=False,
        markup=False,
    )
