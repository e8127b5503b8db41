"""EQ-Bench 3 in the atlas: the released pairwise judge verdicts of the April 2025 leaderboard (6,452 records, 27
models, judge Claude 3.7 Sonnet), scored by `rescore_elo_file`, the code of `empathybench rescore eqbench3 FILE`:
every margin re-derived from its stored verdict and the ratings re-solved (TrueSkill, the 8c3a125 rules), then
normalised with the published anchors. The published figure is the normalised Elo the file stores.

One file holds every model, so it is scored once per process and each model's entry reads its rating. An Elo is not
a mean over items: the entries carry no per-item values, their interval is the solved rating +- 1.96 sigma on the
normalised scale. Today's boards on eqbench.com (boards.py) are published-only rows beside them, one board per
judge: a run's rubric score is placed among the rubric column of the board its judge rated, never among the Elos.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.data.fetch import fetch_entry
from empathybench.data.parsed import assigned_literal, string_map
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError
from empathybench.instruments.eqbench3 import boards
from empathybench.instruments.protocol import (
    AtlasScore,
    AtlasSource,
    PublishedFigure,
    PublishedOnly,
    ReleasedRun,
    ReproductionMargin,
)

ATLAS_PINS = "atlas_pins.json"
VERDICTS_KEY = "eqbench3/atlas/canonical_leaderboard_elo_results.json.gz"
# upstream's map of a run's model name to the leaderboard's name (utils/constants.py MODEL_NAME_SUBS, lines 73-102)
NAME_MAP_KEY = "eqbench3/atlas/constants.py"
NAME_MAP_VARIABLE = "MODEL_NAME_SUBS"
MAX_NAME_MAP_BYTES = 1024 * 1024
VERDICTS_SOURCE = "elo_norm in EQ-bench/eqbench3@f1688609 data/canonical_leaderboard_elo_results.json.gz"
PUBLISHED_JUDGE = "claude-3-7-sonnet-20250219"  # the Sonnet-3.7 judge era of the April 2025 file (eras.py)
Z95 = 1.96
MAX_VERDICTS_BYTES = 64 * 1024 * 1024  # the released file is 4 MB compressed, 24 MB of JSON
RESOLVE_NOTE = (
    "ratings re-solved from the stored verdicts (TrueSkill, the 8c3a125 rules); upstream's stored ratings came from "
    "its own incremental solve, which the re-solve matches to within a few points"
)


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


@cache
def _scored(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, float]], Counter[str]]:
    """The rescore of the verdict file (its re-solved ratings), the ratings it stores and how many valid verdicts
    each model took part in; once per process."""
    # rescore imports scipy.stats (~0.6 s): only a build pays for it, never loading the instrument
    from empathybench.instruments.eqbench3.rescore import (
        read_json_file,
        rescore_elo_file,
        stored_ratings,
        valid_comparisons,
    )

    if path.stat().st_size > MAX_VERDICTS_BYTES:
        raise DataError(f"{path.name} is larger than the released verdict file can be")
    try:
        data = read_json_file(path)
        verdicts: Counter[str] = Counter()
        for record in valid_comparisons(data):
            pair = record.get("pair") or {}
            verdicts.update({str(pair.get("test_model")), str(pair.get("neighbor_model"))})
        return rescore_elo_file(data), stored_ratings(data), verdicts
    except (KeyError, TypeError, ValueError, AttributeError, EOFError, OSError) as exc:
        raise DataError(f"{path.name} is not an EQ-Bench 3 Elo results file: {str(exc)[:200]}") from None


def _stored_models() -> list[str]:
    """The models of the file, from its own ratings (read when the build asks; the file is pinned)."""
    from empathybench.data.fetch import fetch_entry

    path = fetch_entry(pins()[VERDICTS_KEY]).path
    return sorted(_scored(path)[1])


def runs() -> Sequence[ReleasedRun]:
    settings = {"judge": PUBLISHED_JUDGE, "language": "en", "protocol": "pairwise Elo"}
    models = _stored_models()
    return [ReleasedRun(model, (VERDICTS_KEY,), settings) for model in models]


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    result, stored, verdicts = _scored(paths[VERDICTS_KEY])
    solved = result["resolved_8c3a125"]
    ratings = solved["ratings"].get(run.model)
    if ratings is None:
        raise DataError(f"{run.model}: not among the file's re-solved ratings")
    scale = float(result["normalisation"]["scale"])  # elo_norm = scale x elo + shift
    norm, sigma = float(ratings["elo_norm"]), float(ratings["sigma"]) * abs(scale)
    entry = stored.get(run.model, {})
    self_judged = boards.judged_by_itself(run.model, PUBLISHED_JUDGE)
    published = None
    if isinstance(entry.get("elo_norm"), int | float):
        published = PublishedFigure(round(float(entry["elo_norm"]), 2), VERDICTS_SOURCE)
    return AtlasScore(
        value=norm,
        ci95=(norm - Z95 * sigma, norm + Z95 * sigma),
        n=verdicts[run.model],  # the valid verdicts it took part in
        published=published,
        # its pairwise judge is itself (anthropic/claude-3.7-sonnet): marked as a board's self-judged row is
        notes=(RESOLVE_NOTE, *((boards.self_judged_note(PUBLISHED_JUDGE),) if self_judged else ())),
    )


def name_map() -> Mapping[str, str]:
    """Upstream's own name map (MODEL_NAME_SUBS), read from the pinned constants.py without running it."""
    path = fetch_entry(pins()[NAME_MAP_KEY]).path
    if path.stat().st_size > MAX_NAME_MAP_BYTES:
        raise DataError(f"{path.name} is larger than EQ-Bench 3's constants.py can be")
    return string_map(assigned_literal(path.read_text("utf-8"), NAME_MAP_VARIABLE))


def published_only() -> Sequence[PublishedOnly]:
    return boards.published_boards(pins())


ATLAS = AtlasSource(
    metric="EQ-Bench 3 normalised Elo (pairwise, judge Claude 3.7 Sonnet)",
    pins=pins,
    runs=runs,
    score=score,
    published_only=published_only,
    summary_metric="score",  # the run's rubric score (0-100), placed among a board's rubric column
    board_placement=boards.PLACEMENT,
    board_figures=boards.BOARD_FIGURES,
    board_headline="normalised Elo (elo_norm)",
    reproduction_margin=ReproductionMargin(
        1.5,
        "1.5 rubric points (0-100), upstream's own repeatability: the rubric score of one model over 10 iterations had "
        "sd 0.75, range 76.35-78.70 (eqbench.com about.html); m = 2 sd, about the half-range of those iterations. "
        "In rubric points: it applies to a run's rubric score, not to the Elo ratings. m bounds a difference of run "
        "means over the same 45 scenarios; the check's interval is the run's own bootstrap over its scenarios, which "
        "also carries the spread between scenarios and is often wider than ±1.5: such a run reads inconclusive and "
        "its line says why (m is not widened to the run's noise: that would call real differences consistent)",
    ),
    name_map=name_map,
)
