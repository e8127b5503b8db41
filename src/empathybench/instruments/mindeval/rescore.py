"""`empathybench rescore mindeval FILE`: the figures of a judgments file written by upstream's own scripts.

`mindeval/scripts/generate_judgments.py` writes one line per conversation: `parsed_judgment` (the five criteria,
Overall score and Average score), `unparsed_judgment` (the judge's reply without its thinking) and `thinking_trace`.
The README's figures are the means of `parsed_judgment` over the lines; here they come with 95% intervals, and each
`unparsed_judgment` is parsed again with our parser: the figures must agree with upstream's parsed values, and the
criteria the judge left out (which upstream silently scored 3) are counted.
"""

import math
from pathlib import Path
from typing import Any

from empathybench import formatting
from empathybench.errors import DataError, UserError
from empathybench.instruments.mindeval.parse import CRITERIA, OVERALL, SHORT, parse_judgment
from empathybench.instruments.support import jsonl_records, read_text_argument
from empathybench.stats.intervals import mean_interval

# 50 judgments of about 1 kB each, with thinking a few kB: this bounds what a wrong path can make us read.
MAX_JUDGMENTS_FILE_BYTES = 64 * 1024 * 1024
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
    records = jsonl_records(text, source=source)
    if not records:
        raise DataError(f"{source}: no judgment in it")
    upstream: dict[str, list[float]] = {name: [] for name in FIGURES}
    missing = dict.fromkeys(CRITERIA, 0)
    disagreeing: list[int] = []
    for number, record in enumerate(records, start=1):
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
    figures = {}
    for name in FIGURES:
        interval = mean_interval(upstream[name])
        figures[name] = {
            "mean": round(sum(upstream[name]) / len(upstream[name]), 6),
            "ci95": [round(interval[0], 4), round(interval[1], 4)] if interval else None,
        }
    return {
        "n_conversations": len(records),
        "figures": figures,
        "missing_criteria": missing,
        "n_missing_criteria": sum(missing.values()),
        "lines_our_parse_disagrees_with": disagreeing[:50],
        "n_disagreeing": len(disagreeing),
    }


def rescore_file(path: Path) -> dict[str, Any]:
    text = read_text_argument(path, limit=MAX_JUDGMENTS_FILE_BYTES, what="a MindEval judgments file")
    try:
        return rescore_judgments(text, source=str(path))
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
