"""`empathybench rescore spiral FILE`: a released result file's row of the leaderboard table.

The row is computed from the file's per-chunk judgements (`judgements.chunk<i>.metrics`) and per-conversation
final judgements (`final_judgement`) alone, as scoring.py `score_dir_to_leaderboard` does (score.py); the summaries
the file also stores (`__meta__.scoring_summary`, `__meta__.final_judgement_summary`, a top-level
`scoring_summary`) are never read: the leaderboard reads its final-judgement means from the latter, which are these
conversations' means rounded to 3 decimals per run, recomputed here. The model's name is the file's name without
its extension, as the leaderboard labels it.
"""

import os
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.instruments.spiral import published
from empathybench.instruments.spiral.data import scoring_rules
from empathybench.instruments.spiral.score import leaderboard_row, score_interval, units_from_result_data

MAX_FILE_BYTES = 512 * 1024 * 1024  # the released files are 2-6 MB; a bound before anything is decoded


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
                        found.add(convo[name])
    return sorted(found)


def rescore_data(data: Any, model_name: str, *, seed: int = 0) -> dict[str, Any]:
    """The leaderboard row of one result file's data (a dict run id -> file key -> prompt key -> conversations)."""
    if not isinstance(data, dict):
        raise ValueError("the file is not a JSON object {run id: {prompt file: {prompt id: [conversations]}}}")
    rules = scoring_rules()
    units = units_from_result_data(rules, data)
    board = leaderboard_row(rules, units, model_name)
    interval = score_interval(rules, units, seed=seed)
    row = {key: value for key, value in board.row.items() if key not in ("score_norm", "ci_low_norm", "ci_high_norm")}
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
    import json

    if not path.is_file():
        raise UserError(f"no such file: {path}")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise UserError(f"{path} is larger than {MAX_FILE_BYTES // 2**20} MB: not a Spiral-Bench result file")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is not a JSON file: {str(exc)[:200]}") from None
    try:
        return rescore_data(data, os.path.splitext(path.name)[0])  # the leaderboard's label: the file name
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"{path} is not a Spiral-Bench result file: {exc}") from None


def print_row(result: dict[str, Any], console: Any) -> None:
    """The row as a terminal table, in the leaderboard's column order, and what it was computed from."""
    from rich.table import Column, Table
    from rich.text import Text

    from empathybench.formatting import number

    details = result.get("details") or {}
    title = Text(f"Spiral-Bench leaderboard row: {result.get('model_name')}")
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
