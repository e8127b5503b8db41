"""Spiral-Bench in the atlas: the released result files (res_v0.2/<model>.json, 4 of the leaderboard's 12 present at
the pinned commit), each scored by `rescore_file`, the code of `empathybench rescore spiral FILE` (the leaderboard
formula over the chunk and final judgements; the stale summaries the files store are never read), beside the
leaderboard row the results notebook printed. The other 8 rows are published-only. The board on eqbench.com
(EQ-bench/EQ-bench-site@0b2daebe spiral-bench.js) is kept beside them: its rows that differ from the notebook's, or
are new, are published-only rows of that board (not ranked with the notebook's leaderboard).

The score is a weighted composite of metric means, not a mean over conversations: the entries carry no per-item
values, and their interval is the rescore's bootstrap over prompts.
"""

import csv
import json
import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.data.fetch import fetch_entry
from empathybench.data.parsed import assigned_literal, string_map
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.formatting import number
from empathybench.instruments.protocol import (
    AtlasScore,
    AtlasSource,
    PublishedFigure,
    PublishedOnly,
    ReleasedRun,
    ReproductionMargin,
)
from empathybench.instruments.spiral import published

ATLAS_PINS = "atlas_pins.json"
NOTEBOOK_KEY = "spiral/atlas/extract_results_for_leaderboard.ipynb"
NOTEBOOK_SOURCE = "sam-paech/spiral-bench@6b990fa7 extract_results_for_leaderboard.ipynb, leaderboard CSV output"
NAME_MAP_VARIABLE = "MODEL_NAME_SUBS"  # the notebook's own map of a run's model name to the name it shows
CSV_HEADING = "CSV for delusion-bench.js:"
MAX_NOTEBOOK_BYTES = 16 * 1024 * 1024
# The stale `scoring_summary` each released file stores (specs/atlas.md, "Traps"): named in the entry's notes.
STORED_SUMMARY_NOTE = (
    "the file's own scoring_summary is stale; the leaderboard's figure is recomputed from its judgements"
)


SITE_BOARD_KEY = "spiral/atlas/board-0b2daebe.csv"
SITE_BOARD = "eqbench.com @ 0b2daebe"
SITE_SOURCE = "EQ-bench/EQ-bench-site@0b2daebe spiral-bench.js (leaderboardDataDelusion)"
MAX_BOARD_BYTES = 1024 * 1024
MAX_BOARD_ROWS = 2000


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


def _settings() -> dict[str, object]:
    return {
        "simulator": published.PUBLISHED_SIMULATOR,
        "judge": published.PUBLISHED_JUDGE,
        "turns": published.PUBLISHED_TURNS,
        "openings": published.PUBLISHED_OPENINGS,
        "chunk_size": published.PUBLISHED_CHUNK_SIZE,
        "language": "en",
    }


def _notebook() -> dict[str, Any]:
    path = fetch_entry(pins()[NOTEBOOK_KEY]).path
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise DataError(f"{path.name} is larger than the results notebook can be")
    notebook = json.loads(path.read_text("utf-8"))
    if not isinstance(notebook, dict):
        raise DataError(f"{path.name} is not a notebook")
    return notebook


def name_map() -> Mapping[str, str]:
    """The notebook's own name map (MODEL_NAME_SUBS in a code cell), read without running it."""
    for cell in _notebook().get("cells", []):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            found = string_map(assigned_literal("".join(cell.get("source", [])), NAME_MAP_VARIABLE))
            if found:
                return found
    return {}


@cache
def leaderboard() -> dict[str, float]:
    """The notebook's leaderboard CSV (model_name -> score_0_100), read from its stored output."""
    notebook = _notebook()
    path = fetch_entry(pins()[NOTEBOOK_KEY]).path
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", []))
            if CSV_HEADING in text:
                lines = text.split(CSV_HEADING, 1)[1].strip().splitlines()
                rows = csv.DictReader(lines)
                return {row["model_name"]: float(row["score_0_100"]) for row in rows if row.get("score_0_100")}
    raise DataError(f"{path.name}: no leaderboard CSV in its outputs")


def runs() -> Sequence[ReleasedRun]:
    board = leaderboard()
    found = []
    for key, entry in sorted(pins().items()):
        if entry.path.startswith("res_v0.2/") and entry.filename.endswith(".json"):
            model = entry.filename.removesuffix(".json")  # the leaderboard labels a model by its file name
            figure = board.get(model)
            found.append(
                ReleasedRun(model, (key,), _settings(), PublishedFigure(figure, NOTEBOOK_SOURCE) if figure else None)
            )
    return found


def published_only() -> Sequence[PublishedOnly]:
    released = {run.model for run in runs()}
    notebook = [
        PublishedOnly(
            model, PublishedFigure(value, NOTEBOOK_SOURCE), "result file absent at the pinned commit", _settings()
        )
        for model, value in leaderboard().items()
        if model not in released
    ]
    return notebook + site_rows()


def site_board() -> dict[str, float]:
    """The site's board (model_name -> score_0_100)."""
    path = fetch_entry(pins()[SITE_BOARD_KEY]).path
    if path.stat().st_size > MAX_BOARD_BYTES:
        raise DataError(f"{path.name} is larger than a leaderboard block can be")
    rows = list(csv.DictReader(path.read_text("utf-8", errors="replace").splitlines()))[:MAX_BOARD_ROWS]
    try:
        board = {str(row["model_name"]).strip(): float(row["score_0_100"]) for row in rows}
    except (KeyError, TypeError, ValueError):
        raise DataError(f"{path.name} is not a Spiral-Bench leaderboard block") from None
    return {model: value for model, value in board.items() if model and math.isfinite(value)}


def site_rows() -> list[PublishedOnly]:
    """The site board's rows that differ from the notebook's leaderboard, or are not on it."""
    notebook = leaderboard()
    settings = {
        "board": SITE_BOARD,
        "board_source": SITE_SOURCE,
        "board_date": "the commit's date is not in the mirrored extract",
        "language": "en",
    }
    found = []
    for model, value in site_board().items():
        before = notebook.get(model)
        if before is not None and round(before, 1) == round(value, 1):
            continue
        why = f"a row of the published board {SITE_BOARD}; no released output; " + (
            f"the notebook's leaderboard shows {number(float(before), 1)}"
            if before is not None
            else "not on the notebook's leaderboard"
        )
        found.append(PublishedOnly(model, PublishedFigure(value, SITE_SOURCE), why, settings, primary=False))
    return found


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    from empathybench.instruments.spiral.rescore import rescore_file  # a build's, not a run's, import

    (key,) = run.files
    try:
        row = rescore_file(paths[key])
    except UserError as exc:
        raise DataError(str(exc)) from None
    details = row["details"]
    interval = details.get("score_0_100_ci95")
    settings: dict[str, object] = {}
    if details.get("user_models"):
        settings["simulator"] = ", ".join(str(m)[:100] for m in details["user_models"])
    return AtlasScore(
        value=float(row["score_0_100"]),
        ci95=(float(interval[0]), float(interval[1])) if interval else None,
        n=int(details["n_items"]),
        settings=settings,
        notes=(STORED_SUMMARY_NOTE,),
    )


ATLAS = AtlasSource(
    metric="Spiral-Bench score (0-100, higher = safer)",
    pins=pins,
    runs=runs,
    score=score,
    published_only=published_only,
    summary_metric="score_0_100",
    reproduction_margin=ReproductionMargin(
        3.0,
        "3 points of the 0-100 score, a documented default: upstream publishes no run-to-run figure (the site's CI "
        "columns equal the score); below the median gap between neighbouring published models (4.2 points), as for "
        "SAGE's 0-100 score",
    ),
    name_map=name_map,
)
