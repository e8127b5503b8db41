"""EmotionBench in the atlas: the released PANAS answer sheets of 7 models (results/PANAS Test/), each scored by
`rescore_answer_sheet`, the code of `empathybench rescore emotionbench FILE` (the paper's table).

The headline is the overall Negative Affect shift: mean NA after imagining the situations minus mean NA with none
(PANAS sums, 10-50), the `NA_delta` of a run's summary, with the interval a run's has (stats.shift_interval:
situations with all their runs, and the default runs, resampled). The published figure is the project's leaderboard
(data.json on the gh-pages commit a7e95ec4, pinned): its overall Negative Affect minus its Control one, for 22 models,
6 of them among the released sheets (llama3.1-8b has a sheet and no row); the other 16 are published-only.
"""

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.data.fetch import fetch_entry
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError
from empathybench.formatting import number
from empathybench.instruments.emotionbench.data import read_answer_sheet
from empathybench.instruments.emotionbench.questionnaires import load_questionnaires, panas_affect
from empathybench.instruments.emotionbench.rescore import detect_questionnaire, rescore_panas
from empathybench.instruments.emotionbench.stats import shift_interval
from empathybench.instruments.protocol import (
    AtlasScore,
    AtlasSource,
    PublishedFigure,
    PublishedOnly,
    ReleasedRun,
    ReproductionMargin,
)

ATLAS_PINS = "atlas_pins.json"
SHEET_SUFFIX = "-PANAS-testing.csv"
MAX_SHEET_BYTES = 64 * 1024 * 1024  # the released sheets are about 640 kB
SETTINGS = {"questionnaire": "PANAS", "situations": "paper", "language": "en"}
BOARD_KEY = "emotionbench/atlas/data.json"
MAX_BOARD_BYTES = 16 * 1024 * 1024  # the leaderboard is 127 kB
BOARD_SOURCE = "CUHK-ARISE/EmotionBench@a7e95ec4 (gh-pages) data.json: overall minus Control Negative Affect"
NEGATIVE = "Negative Affect"
# A released sheet's model (its file name) -> its row in the leaderboard: the same run, named by the site.
BOARD_NAMES = {
    "davinci-003": "Text-Davinci-003",
    "gpt-3.5-turbo": "GPT-3.5-Turbo",
    "gpt-4": "GPT-4",
    "llama2-13b": "LLaMA-2-13B",
    "llama2-7b": "LLaMA-2-7B",
    "mixtral-8x22b": "Mixtral-8x22B",
}
NOT_RELEASED = "answers not released (the leaderboard's row only)"


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


@cache
def board() -> dict[str, dict[str, Any]]:
    """The leaderboard: model as the site names it -> {"Control", "Overall", emotion -> factor -> figures}."""
    path = fetch_entry(pins()[BOARD_KEY]).path
    if path.stat().st_size > MAX_BOARD_BYTES:
        raise DataError(f"{path.name} is larger than the EmotionBench leaderboard can be")
    try:
        rows = json.loads(path.read_text("utf-8"))
        if not isinstance(rows, dict):
            raise ValueError("not an object")
        for row in rows.values():
            float(row["Overall"][NEGATIVE]) - float(row["Control"][NEGATIVE])  # every row has the headline's parts
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path.name} is not the EmotionBench leaderboard: {str(exc)[:200]}") from None
    return rows


def _published(board_name: str | None) -> PublishedFigure | None:
    row = board().get(board_name) if board_name else None
    if row is None:
        return None
    return PublishedFigure(round(float(row["Overall"][NEGATIVE]) - float(row["Control"][NEGATIVE]), 4), BOARD_SOURCE)


def runs() -> Sequence[ReleasedRun]:
    found = []
    for key, entry in sorted(pins().items()):
        if entry.filename.endswith(SHEET_SUFFIX):
            model = entry.filename.removesuffix(SHEET_SUFFIX)
            found.append(ReleasedRun(model, (key,), SETTINGS, _published(BOARD_NAMES.get(model))))
    return found


def published_only() -> Sequence[PublishedOnly]:
    """The leaderboard's models whose answers were not released."""
    released = set(BOARD_NAMES.values())
    return [
        PublishedOnly(name, figure, NOT_RELEASED, SETTINGS)
        for name in board()
        if name not in released and (figure := _published(name)) is not None
    ]


def _differing_factors(model: str, table: Mapping[str, Any]) -> list[str]:
    """The factors whose evoked Negative Affect the leaderboard shows otherwise than the released sheet gives (a
    factor is `<emotion>-<n>`, the leaderboard's n-th factor of that emotion)."""
    row = board().get(BOARD_NAMES.get(model, ""))
    if row is None:
        return []
    ours = {r["factor"]: r for r in table["rows"] if r.get("level") == "factor"}
    differing = []
    for emotion, factors in row.items():
        if emotion in ("Control", "Overall") or not isinstance(factors, dict):
            continue
        for index, (name, figures) in enumerate(factors.items()):
            mine = ours.get(f"{emotion}-{index}")
            published = figures.get(NEGATIVE) if isinstance(figures, dict) else None
            if mine is None or not isinstance(published, int | float) or mine["NA_mean"] is None:
                continue
            if abs(float(published) - mine["NA_mean"]) > 0.005:
                differing.append(
                    f"{emotion}: {str(name)[:60]} {number(float(published), 4)} against "
                    f"{number(float(mine['NA_mean']), 4)} "
                    f"({mine['n']} readable runs)"
                )
    return differing


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    (key,) = run.files
    path = paths[key]
    if path.stat().st_size > MAX_SHEET_BYTES:
        raise DataError(f"{path.name} is larger than an EmotionBench answer sheet can be")
    try:
        sheet = read_answer_sheet(path)  # read once: the table and the interval come from the same responses
        panas = load_questionnaires()["PANAS"]
        if detect_questionnaire(sheet, {"PANAS": panas}, path) is not panas:
            raise ValueError("not a PANAS sheet")
        table = rescore_panas(sheet, panas)
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path.name} is not an EmotionBench answer sheet: {str(exc)[:200]}") from None
    overall = table["rows"][-1]
    if overall.get("level") != "overall" or overall.get("NA_delta") is None:
        raise DataError(f"{path.name}: too few readable responses for the default-vs-evoked shift")
    default: list[float] = []
    situations: dict[tuple[str, int], list[float]] = {}
    for response in sheet.responses:
        if response.answers is None or len(response.answers) != len(panas.items):
            continue  # dropped, as the paper did (rescore_panas drops the same)
        negative = panas_affect(panas, response.answers)[1]
        if response.factor_key is None:
            default.append(negative)
        else:
            situations.setdefault((response.factor_key, response.scenario_index), []).append(negative)
    notes = [f"{table['skipped_runs']} unreadable runs dropped, as the paper did"] if table["skipped_runs"] else []
    differing = _differing_factors(run.model, table)
    if differing:
        notes.append(
            "the leaderboard's evoked Negative Affect differs from the released sheet's in " + "; ".join(differing)
        )
    return AtlasScore(
        value=float(overall["NA_delta"]),
        # the interval a run's NA_delta has: situations with all their runs, and default runs, resampled
        ci95=shift_interval(default, list(situations.values()), 0),
        n=int(overall["n"]),
        figures={"PA_delta": overall["PA_delta"], "default_runs": len(default)},
        notes=tuple(notes),
    )


ATLAS = AtlasSource(
    metric="overall Negative Affect shift (PANAS points, evoked minus default)",
    pins=pins,
    runs=runs,
    score=score,
    published_only=published_only,
    summary_metric="NA_delta",
    higher_is_better=None,  # a shift is not better for being larger: people's own shift is the reference
    reproduction_margin=ReproductionMargin(
        1.0,
        "1 PANAS point of the Negative Affect shift, a documented default: upstream publishes no run-to-run figure; "
        "under a fifth of people's own sd of Negative Affect (5.5 by default, the paper's Table 2) and the step of "
        "one PANAS answer",
    ),
)
