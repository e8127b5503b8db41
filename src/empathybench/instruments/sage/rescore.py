"""`empathybench rescore sage FILE`: the README's three figures from an upstream result file.

A result file (SAGE/dataset/<simulator>/<model>_result.jsonl) holds one conversation per line: the final
`emo_point` and `emo_state`, and the `history` with the emotion after each of the person's lines. Score, Success
and Failure are computed from emo_point and emo_state, as the README's table; the history is read to count the
rounds and to check that each final emotion is the last one of its conversation.
"""

import math
from pathlib import Path
from typing import Any

from empathybench.errors import DataError, UserError
from empathybench.instruments.sage.data import jsonl_records
from empathybench.instruments.sage.score import figures, tally

# The released files are 3-4 MB; this bounds what a wrong path can make us read.
MAX_RESULT_FILE_BYTES = 256 * 1024 * 1024


def _final(record: dict[str, Any], number: int, source: str) -> tuple[int | float, str]:
    point, state = record.get("emo_point"), record.get("emo_state")
    if isinstance(point, bool) or not isinstance(point, int | float) or not math.isfinite(point):
        raise DataError(f"{source}: conversation {number} has no numeric emo_point")
    if not isinstance(state, str):
        raise DataError(f"{source}: conversation {number} has no emo_state")
    return point, state


def rescore_results(text: str, *, source: str = "result file") -> dict[str, Any]:
    records = jsonl_records(text, source=source)
    if not records:
        raise DataError(f"{source}: no conversation in it")
    finals = [_final(record, number, source) for number, record in enumerate(records, start=1)]
    result = figures([point for point, _ in finals], [state for _, state in finals])
    rounds: list[int] = []
    endings: list[str] = []
    disagreeing: list[str] = []
    for number, record in enumerate(records, start=1):
        history = record.get("history") if isinstance(record.get("history"), list) else []
        person_lines = [m for m in history if isinstance(m, dict) and m.get("role") == "user"]
        rounds.append(len(person_lines))
        endings.append("the model's reply" if history and history[-1].get("role") == "assistant" else "a person's line")
        last = person_lines[-1].get("emotion-point") if person_lines else None
        if last != record.get("emo_point"):
            disagreeing.append(str(record.get("id", number)))
    result.update(
        mean_turns=round(sum(rounds) / len(rounds), 4),
        ended_on=tally(endings),
        n_final_emotion_disagrees_with_history=len(disagreeing),
    )
    return result


def rescore_file(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"no such file: {path}") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    if size > MAX_RESULT_FILE_BYTES:
        raise UserError(f"{path} is {size} bytes; a SAGE result file is a few MB (limit {MAX_RESULT_FILE_BYTES})")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} is not UTF-8 text: {exc}") from None
    try:
        return rescore_results(text, source=str(path))
    except DataError as exc:
        raise UserError(str(exc)) from None


def render(result: Any, console: Any) -> None:
    """The text output: the README's three figures, then the details."""
    states = ", ".join(f"{state} {count}" for state, count in result["states"].items())
    console.print(
        f"Sentient score {result['score']} (mean final emotion {result['score_exact']}), "
        f"success {result['success']}, failure {result['failure']} ({result['n_people']} people)",
        highlight=False,
    )
    console.print(f"final states: {states}; mean turns {result['mean_turns']}", highlight=False)
    if result["n_final_emotion_disagrees_with_history"]:
        console.print(
            f"{result['n_final_emotion_disagrees_with_history']} final emotion(s) differ from the last emotion-point "
            "of their history",
            highlight=False,
        )
