"""`empathybench rescore sage FILE`: the README's three figures from an upstream result file.

A result file (SAGE/dataset/<simulator>/<model>_result.jsonl) holds one conversation per line: the final
`emo_point` and `emo_state`, and the `history` with the emotion after each of the person's lines. Score, Success
and Failure are computed from emo_point and emo_state, as the README's table; the history is read to count the
rounds and to check that each final emotion is the last one of its conversation.

The file is read line by line (split on "\n" only: some texts hold U+2028), each line parsed and folded into running
totals before the next is read, so memory stays a few times the longest line whatever the file's size; a line
over MAX_LINE_BYTES, or one that does not open an object, is refused before it is held whole or parsed.
Anything a line holds that is not a result (a number out of range, nesting too deep, a field of the wrong type) is
one line naming the file and the line; every text taken from the file is printable (no control character).
"""

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from empathybench.errors import DataError, UserError
from empathybench.formatting import printable
from empathybench.instruments.sage.score import figures_of_totals
from empathybench.instruments.support import bounded_lines, jsonl_lines

# The released files are 3-4 MB; this bounds what a wrong path can make us read.
MAX_RESULT_FILE_BYTES = 256 * 1024 * 1024
# One line is one conversation: the longest released line is 153 kB (gemini-2.5-flash-nothink's simulator files).
MAX_LINE_BYTES = 4 * 1024 * 1024
# An emotion point is 0-100 (upstream caps it at 100; a last change can take it a little below 0).
EMOTION_RANGE = (-1000.0, 1000.0)
STATE_CHARS = 40  # an emo_state is "Emotion-S" and the like
MAX_STATES = 100  # upstream has five


def _final(record: dict[str, Any], number: int, source: str) -> tuple[int | float, str]:
    point, state = record.get("emo_point"), record.get("emo_state")
    if isinstance(point, bool) or not isinstance(point, int | float):
        raise DataError(f"{source}: conversation {number} has no numeric emo_point")
    low, high = EMOTION_RANGE
    if isinstance(point, int) and not (low <= point <= high):  # a 401-digit int has no float
        raise DataError(f"{source}: conversation {number} has an emo_point out of range")
    if not math.isfinite(point) or not (low <= point <= high):
        raise DataError(f"{source}: conversation {number} has an emo_point out of range")
    if not isinstance(state, str):
        raise DataError(f"{source}: conversation {number} has no emo_state")
    return point, printable(state, STATE_CHARS)


@dataclass
class _Tally:
    """What is kept of the conversations read so far: running totals, so memory does not grow with the file."""

    total: Fraction = Fraction(0)  # the final emotions' sum, exact (the README rounds the mean half up)
    n_people: int = 0
    states: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    disagreeing: int = 0

    def add(self, record: dict[str, Any], number: int, source: str) -> None:
        point, state = _final(record, number, source)
        history = record.get("history")
        if history is not None and not isinstance(history, list):
            raise DataError(f"{source}: conversation {number} has a history that is not a list")
        entries = history or []
        if not all(isinstance(entry, dict) for entry in entries):
            raise DataError(f"{source}: conversation {number} has a history entry that is not an object")
        if state not in self.states and len(self.states) >= MAX_STATES:
            raise DataError(f"{source}: more than {MAX_STATES} different emo_state values: not a SAGE result file")
        person_lines = [entry for entry in entries if entry.get("role") == "user"]
        self.total += Fraction(point)
        self.n_people += 1
        self.states[state] += 1
        self.rounds += len(person_lines)
        self.endings[
            "the model's reply" if entries and entries[-1].get("role") == "assistant" else "a person's line"
        ] += 1
        last = person_lines[-1].get("emotion-point") if person_lines else None
        self.disagreeing += last != record.get("emo_point")


def rescore_lines(lines: Iterable[bytes | str], *, source: str = "result file") -> dict[str, Any]:
    """The README's figures from a result file's lines (bytes or text, without their "\n")."""
    kept = _Tally()
    for number, record in jsonl_lines(lines, source=source, max_line_bytes=MAX_LINE_BYTES):
        kept.add(record, number, source)
    if not kept.n_people:
        raise DataError(f"{source}: no conversation in it")
    result = figures_of_totals(kept.total, kept.n_people, kept.states)
    result.update(
        mean_turns=round(kept.rounds / kept.n_people, 4),
        ended_on=dict(kept.endings.most_common()),
        n_final_emotion_disagrees_with_history=kept.disagreeing,
    )
    return result


def rescore_results(text: str, *, source: str = "result file") -> dict[str, Any]:
    """`rescore_lines` of a file's whole text."""
    return rescore_lines(text.split("\n"), source=source)


def rescore_file(path: Path) -> dict[str, Any]:
    shown = printable(path, 300)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"no such file: {shown}") from None
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror}") from None
    if size > MAX_RESULT_FILE_BYTES:
        raise UserError(f"{shown} is {size} bytes; a SAGE result file is a few MB (limit {MAX_RESULT_FILE_BYTES})")
    try:
        with path.open("rb") as stream:  # a binary file's lines end at b"\n" only
            return rescore_lines(bounded_lines(stream, source=shown, max_line_bytes=MAX_LINE_BYTES), source=shown)
    except DataError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror}") from None


def render(result: Any, console: Any) -> None:
    """The text output: the README's three figures, then the details (every text from the file printable)."""
    states = ", ".join(f"{state} {count}" for state, count in result["states"].items())  # printable when read
    lines = [
        f"Sentient score {result['score']} (mean final emotion {result['score_exact']}), "
        f"success {result['success']}, failure {result['failure']} ({result['n_people']} people)",
        f"final states: {states}; mean turns {result['mean_turns']}",
    ]
    if result["n_final_emotion_disagrees_with_history"]:
        lines.append(
            f"{result['n_final_emotion_disagrees_with_history']} final emotion(s) differ from the last emotion-point "
            "of their history"
        )
    for line in lines:
        console.print(line, markup=False, highlight=False)
