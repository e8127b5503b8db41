"""`empathybench rescore spiral FILE`: a released result file's row of the leaderboard table.

The row is computed from the file's per-chunk judgements (`judgements.chunk<i>.metrics`) and per-conversation
final judgements (`final_judgement`) alone, as scoring.py `score_dir_to_leaderboard` does (score.py); the summaries
the file also stores (`__meta__.scoring_summary`, `__meta__.final_judgement_summary`, a top-level
`scoring_summary`) are never read: the leaderboard reads its final-judgement means from the latter, which are these
conversations' means rounded to 3 decimals per run, recomputed here. The model's name is the file's name without
its extension, as the leaderboard labels it.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.instruments.spiral import published
from empathybench.instruments.spiral.data import scoring_rules
from empathybench.instruments.spiral.score import (
    SKIPPED_RUN_KEYS,
    Unit,
    leaderboard_row,
    score_interval,
    units_from_result_data,
)

MAX_FILE_BYTES = 512 * 1024 * 1024  # the released files are 2-6 MB; a bound before anything is decoded
NAME_CHARS = 120  # a model's name from the file, as shown
CONVERSATION_NAMES = ("user_model", "evaluated_model")


def _compact_chunk(chunk: Any) -> Any:
    """What unit_from_conversations reads of a chunk: whether it is an error stub and its numeric metrics (from
    `metrics` when that is an object, else from the chunk itself)."""
    if not isinstance(chunk, dict):
        return None
    source = chunk["metrics"] if isinstance(chunk.get("metrics"), dict) else chunk
    kept: dict[str, Any] = {"metrics": {k: v for k, v in source.items() if isinstance(v, int | float)}}
    if "error" in chunk:
        kept["error"] = True
    return kept


def compact_conversation(convo: Any) -> Any:
    """A conversation reduced to what the leaderboard and the details read (its texts dropped), so that a file is
    held one conversation at a time; unit_from_conversations reads the reduced one as it reads the whole."""
    if not convo or not isinstance(convo, dict):
        return None
    kept: dict[str, Any] = {"counted": True}
    if "final_judgement" in convo:
        kept["final_judgement"] = convo["final_judgement"]
    judgements = convo.get("judgements", {})
    if isinstance(judgements, dict):
        kept["judgements"] = {key: _compact_chunk(chunk) for key, chunk in judgements.items()}
    else:
        kept["judgements"] = None
    for name in CONVERSATION_NAMES:
        if isinstance(convo.get(name), str):
            kept[name] = convo[name]
    return kept


def _value_events(first: str, value: Any, events: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """The events of one value whose first event was (first, value), that one included, read from `events`."""
    yield first, value
    depth = 1 if first in ("start_map", "start_array") else 0
    while depth:
        event, item = next(events)
        yield event, item
        depth += event in ("start_map", "start_array")
        depth -= event in ("end_map", "end_array")


def _skip(first: str, events: Iterator[tuple[str, Any]]) -> None:
    """Consume the rest of a value whose first event was `first`."""
    for _ in _value_events(first, None, events):
        pass


def _value(first: str, value: Any, events: Iterator[tuple[str, Any]]) -> Any:
    """The JSON value whose first event was (first, value), built by ijson's builder."""
    import ijson

    builder = ijson.ObjectBuilder()
    for event, item in _value_events(first, value, events):
        builder.event(event, item)
    return builder.value


def _kept_entries(
    events: Iterator[tuple[str, Any]], holder: dict[str, Any], opens: str, keep: Any = None
) -> Iterator[str]:
    """The keys of the object being read (its start_map read) whose value opens with `opens` ("start_map",
    "start_array") and that `keep` accepts; every other entry is skipped and held as None. The caller reads each
    kept entry's value before asking for the next."""
    while True:
        event, key = next(events)
        if event == "end_map":
            return
        first, _ = next(events)
        if first != opens or (keep is not None and not keep(key)):
            _skip(first, events)
            holder[key] = None
            continue
        yield key


def stream_result_data(stream: IO[bytes]) -> dict[str, Any]:
    """A result file's data as `units_from_result_data` reads it, built while the file is read: each conversation
    reduced as soon as it is parsed; what it skips is held as None. A key given twice keeps its later value in its
    first place, as json.loads."""
    import ijson

    events = ijson.basic_parse(stream, use_float=True)
    first, _ = next(events)
    if first != "start_map":
        raise ValueError("the file is not a JSON object {run id: {prompt file: {prompt id: [conversations]}}}")
    data: dict[str, Any] = {}
    for run_id in _kept_entries(events, data, "start_map"):
        run: dict[str, Any] = {}
        data[run_id] = run
        for file_key in _kept_entries(events, run, "start_map", lambda key: key not in SKIPPED_RUN_KEYS):
            prompts: dict[str, Any] = {}
            run[file_key] = prompts
            for prompt_key in _kept_entries(events, prompts, "start_array"):
                conversations = []
                while True:
                    event, item = next(events)
                    if event == "end_array":
                        break
                    conversations.append(compact_conversation(_value(event, item, events)))
                prompts[prompt_key] = conversations
    for _ in events:  # the rest must be nothing but valid JSON's end
        pass
    return data


def _conversation_field(data: dict[str, Any], name: str) -> list[str]:
    found: set[str] = set()
    for run_bucket in data.values():
        if not isinstance(run_bucket, dict):
            continue
        for file_results in run_bucket.values():
            if not isinstance(file_results, dict):
                continue
            for conversations in file_results.values():
                for convo in conversations if isinstance(conversations, list) else []:
                    if isinstance(convo, dict) and isinstance(convo.get(name), str):
                        found.add(printable(convo[name], NAME_CHARS))
    return sorted(found)


def rescore_data(data: Any, model_name: str, *, seed: int = 0) -> dict[str, Any]:
    """The leaderboard row of one result file's data (a dict run id -> file key -> prompt key -> conversations)."""
    if not isinstance(data, dict):
        raise ValueError("the file is not a JSON object {run id: {prompt file: {prompt id: [conversations]}}}")
    rules = scoring_rules()
    units: list[Unit] = units_from_result_data(rules, data)
    board = leaderboard_row(rules, units, printable(model_name, NAME_CHARS))
    interval = score_interval(rules, units, seed=seed)
    # the columns are the file's own metric names: printable, as every text from a file
    dropped = ("score_norm", "ci_low_norm", "ci_high_norm")
    row = {printable(key, NAME_CHARS): value for key, value in board.row.items() if key not in dropped}
    user_models = _conversation_field(data, "user_model")
    simulator_ok = bool(user_models) and all(published.is_published_simulator(m) for m in user_models)
    return {
        **row,
        "details": {
            "score_0_100_unrounded": round(board.score_0_100, 4),
            "score_0_100_ci95": [round(interval[0], 2), round(interval[1], 2)] if interval else None,
            "ci_method": "percentile bootstrap over prompts, 2000 resamples, seed 0, 95% (not in the published table)",
            "n_items": board.n_items,
            "n_conversations": sum(u.n_conversations for u in units),
            "n_chunks": sum(u.n_chunks for u in units),
            "n_chunk_errors": sum(u.n_chunk_errors for u in units),
            "n_final_judgements": board.n_final,
            "evaluated_models": _conversation_field(data, "evaluated_model"),
            "user_models": user_models,
            "user_model_as_published": simulator_ok,
            "judge": "not recorded in result files; the leaderboard's is " + published.PUBLISHED_JUDGE,
        },
    }


def rescore_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore spiral FILE`: one UserError line for a file that is not a Spiral-Bench result file."""
    import ijson

    shown = printable(path, 300)
    if not path.is_file():
        raise UserError(f"no such file: {shown}")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise UserError(f"{shown} is larger than {MAX_FILE_BYTES // 2**20} MB: not a Spiral-Bench result file")
    try:
        with path.open("rb") as stream:
            data = stream_result_data(stream)
    except (OSError, ijson.JSONError, StopIteration, UnicodeDecodeError) as exc:
        raise UserError(f"{shown} is not a JSON file: {printable(exc, 200)}") from None
    except ValueError as exc:
        raise UserError(f"{shown} is not a Spiral-Bench result file: {printable(exc, 200)}") from None
    try:
        return rescore_data(data, os.path.splitext(path.name)[0])  # the leaderboard's label: the file name
    except (TypeError, ValueError, KeyError, OverflowError, RecursionError) as exc:
        raise UserError(f"{shown} is not a Spiral-Bench result file: {printable(exc, 200)}") from None


def print_row(result: dict[str, Any], console: Any) -> None:
    """The row as a terminal table, in the leaderboard's column order, and what it was computed from."""
    from rich.table import Column, Table
    from rich.text import Text

    from empathybench.formatting import number

    details = result.get("details") or {}
    title = Text(f"Spiral-Bench leaderboard row: {result.get('model_name')}")  # printable since rescore_data
    table = Table("column", Column("value", justify="right"), title=title)
    for key, value in result.items():
        if key in ("model_name", "details"):
            continue
        table.add_row(key, number(float(value), 1 if key == "score_0_100" else 3))
    console.print(table)
    ci = details.get("score_0_100_ci95")
    if ci:
        console.print(f"score_0_100 95% CI [{number(ci[0], 1)}, {number(ci[1], 1)}] ({details.get('ci_method')})")
    console.print(
        Text(
            f"{details.get('n_conversations')} conversations, {details.get('n_chunks')} judged chunks "
            f"({details.get('n_chunk_errors')} unreadable), {details.get('n_final_judgements')} final judgements; "
            f"user agent {', '.join(details.get('user_models') or []) or 'unknown'}; judge {details.get('judge')}"
        )
    )
