"""A user's run among the published models: per instrument, its headline in the atlas's distribution (rank among n,
the nearest published models) and, where its model is an atlas model, which entry that is.

A run is read through the one run-directory reader (rundir.reader); its figure is the summary metric the atlas names
for the instrument (`summary_metric`), so it is compared with the same quantity. A run whose summary says it is not
comparable with the published protocol (a `comparable_with_published` of false, a self-judged or self-simulated
demo) is placed apart: ranked, but marked not comparable, with the reason. Where an instrument says its runs are
placed among published boards (`board_placement`, e.g. one board per judge), a run is ranked among the rows of the
board whose setting is the run's, by the board's column the instrument names, and the placement names that board. A
figure without a direction (`higher_is_better` None, e.g. EmotionBench's shift of affect) is not ranked: the
placement lists the published models nearest by value only.
"""

import math
from collections.abc import Mapping
from typing import Any

from empathybench.models.identity import identity_table
from empathybench.rundir.reader import RunData

NEAREST = 3
NO_DIRECTION = "no direction: not ranked (the nearest published models by value)"


def figure_of(entry: Mapping[str, Any]) -> tuple[float | None, str]:
    """An entry's figure for ranking: the recomputed one, else (published-only) the published one."""
    if entry.get("value") is not None:
        return float(entry["value"]), "recomputed"
    published = entry.get("published") or {}
    value = published.get("value")
    return (float(value), "published") if isinstance(value, int | float) else (None, "none")


def run_metric(run: RunData, instrument: str, metric_key: str) -> Mapping[str, Any] | None:
    entry = (run.summary.get("benchmarks") or {}).get(instrument)
    if not isinstance(entry, dict):
        return None
    metric = (entry.get("metrics") or {}).get(metric_key)
    return metric if isinstance(metric, dict) and isinstance(metric.get("value"), int | float) else None


def not_comparable_because(run: RunData, instrument: str) -> str | None:
    """Why a run's figure cannot stand beside the published ones, as its own summary says (None: nothing says so)."""
    entry = (run.summary.get("benchmarks") or {}).get(instrument) or {}
    if entry.get("comparable_with_published") is False:
        return str(entry.get("comparability") or "its summary says it is not comparable with the published runs")
    judge = entry.get("judge") or {}
    if isinstance(judge, dict) and judge.get("self_judging"):
        return "self-judged"
    if entry.get("self_simulated"):
        return "self-simulated"
    return None


def _same_model(first: str, second: str) -> bool:
    """Two names of one model (e.g. a run's judge and a board's): the same checkpoint, or the same text."""
    if first.strip().lower() == second.strip().lower():
        return True
    table = identity_table()
    a, b = table.match(first), table.match(second)
    return a is not None and b is not None and a.id is not None and a.id == b.id


def boards_of(atlas: Mapping[str, Any], instrument: str) -> dict[str, list[Mapping[str, Any]]]:
    """An instrument's published boards other than its ranked leaderboard: board label -> its rows, in atlas order."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for entry in atlas["entries"]:
        board = (entry.get("settings") or {}).get("board")
        if entry["instrument"] == instrument and not entry["primary"] and board:
            found.setdefault(str(board), []).append(entry)
    return found


def board_for_run(
    atlas: Mapping[str, Any], instrument: str, run: RunData
) -> tuple[str | None, list[tuple[Mapping[str, Any], float]], str | None]:
    """(board, its rows with the figure a run is compared with, why none) for an instrument that places runs among
    its published boards: the board whose setting (e.g. its judge) is the run's."""
    placement = atlas["instruments"][instrument].get("board_placement") or {}
    setting, figure = str(placement.get("setting")), str(placement.get("figure"))
    entry = (run.summary.get("benchmarks") or {}).get(instrument) or {}
    mine = str(entry.get(str(placement.get("run_field"))) or "").strip()
    if not mine:
        return None, [], f"the run does not record its {setting}"
    for board, rows in boards_of(atlas, instrument).items():
        theirs = str(rows[0]["settings"].get(setting) or "")
        if theirs and _same_model(mine, theirs):
            figures = [(row, float(row["figures"][figure])) for row in rows if _finite(row["figures"].get(figure))]
            return board, figures, None
    return None, [], f"no published board was rated by this run's {setting} ({mine[:100]}): no rank"


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def place_run(atlas: Mapping[str, Any], run: RunData) -> list[dict[str, Any]]:
    """The run's place in each instrument of the atlas it ran (instruments whose figures a run cannot be set beside
    are left out): among the ranked entries, or, where the instrument places runs among its published boards, among
    the rows of the board whose setting is the run's (no rank when none is)."""
    model = str(run.summary.get("model", ""))
    match = identity_table().match(model) if model else None
    placements = []
    for instrument, described in atlas["instruments"].items():
        metric_key = described.get("summary_metric")
        metric = run_metric(run, instrument, metric_key) if metric_key else None
        if metric is None:
            continue
        value = float(metric["value"])
        board: str | None = None
        no_board: str | None = None
        if described.get("board_placement"):
            board, figures, no_board = board_for_run(atlas, instrument, run)
            entries = [e for e, _ in figures]
        else:
            entries = [e for e in atlas["entries"] if e["instrument"] == instrument and e["primary"]]
            figures = [(e, figure) for e in entries if (figure := figure_of(e)[0]) is not None]
        higher_is_better = described.get("higher_is_better")
        better = [e for e, figure in figures if (figure < value if higher_is_better is False else figure > value)]
        nearest = sorted(figures, key=lambda pair: (abs(pair[1] - value), pair[0]["model"]))[:NEAREST]
        same = []
        if match is not None:
            same = [
                (e, figure)
                for e, figure in ((e, _figure_in(e, figures)) for e in entries)
                if (match.id is not None and e["model_id"] == match.id)
                or (match.id is None and e["family"] == match.family)
            ]
        reason = not_comparable_because(run, instrument)
        unranked = no_board or (NO_DIRECTION if higher_is_better is None else None)
        placements.append(
            {
                "instrument": instrument,
                "run": str(run.directory),
                "model": model,
                "value": value,
                "ci95": metric.get("ci95"),
                "n": metric.get("n"),
                "rank": None if unranked else len(better) + 1,
                "among": None if unranked else len(figures) + 1,
                "board": board,
                "no_board_because": no_board,
                "no_rank_because": unranked,
                "comparable": reason is None,
                "not_comparable_because": reason,
                "nearest": [
                    {"model": e["model"], "model_id": e["model_id"], "value": figure, "status": e["status"]}
                    for e, figure in nearest
                ],
                "matches": [
                    {
                        "model": e["model"],
                        "model_id": e["model_id"],
                        "relation": match.relation if match is not None else None,
                        "value": figure,
                        "status": e["status"],
                    }
                    for e, figure in same
                ],
            }
        )
    return placements


def standing(placement: Mapping[str, Any]) -> str:
    """A placement's rank as text: "3 of 47", with the board it was placed on, or why it has no rank."""
    if placement.get("rank") is None:
        return str(placement.get("no_rank_because") or placement.get("no_board_because") or "no rank")
    text = f"{placement['rank']} of {placement['among']}"
    return f"{text} on {placement['board']}" if placement.get("board") else text


def _figure_in(entry: Mapping[str, Any], figures: list[tuple[Mapping[str, Any], float]]) -> float | None:
    """The figure an entry is ranked by in this placement (its board column, or its own figure)."""
    return next((figure for e, figure in figures if e is entry), None)
