"""EmotionBench in the atlas: the released PANAS answer sheets of 7 models (results/PANAS Test/), each scored by
`rescore_answer_sheet`, the code of `empathybench rescore emotionbench FILE` (the paper's table).

The headline is the overall Negative Affect shift: mean NA after imagining the situations minus mean NA with none
(PANAS sums, 10-50), the `NA_delta` of a run's summary. Its interval resamples the default and the evoked responses
independently (the project's one bootstrap generator). The published table (the gh-pages data.json) is not among the
pinned files, so the entries carry no published figure.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.instruments.emotionbench.data import read_answer_sheet
from empathybench.instruments.emotionbench.questionnaires import load_questionnaires
from empathybench.instruments.emotionbench.rescore import panas_responses, rescore_answer_sheet
from empathybench.instruments.protocol import AtlasScore, AtlasSource, ReleasedRun
from empathybench.stats.bootstrap import RESAMPLES, generator, percentile_interval

ATLAS_PINS = "atlas_pins.json"
SHEET_SUFFIX = "-PANAS-testing.csv"
MAX_SHEET_BYTES = 64 * 1024 * 1024  # the released sheets are about 640 kB
SETTINGS = {"questionnaire": "PANAS", "situations": "paper", "language": "en"}


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


def runs() -> Sequence[ReleasedRun]:
    return [
        ReleasedRun(entry.filename.removesuffix(SHEET_SUFFIX), (key,), SETTINGS)
        for key, entry in sorted(pins().items())
        if entry.filename.endswith(SHEET_SUFFIX)
    ]


def _shift_interval(default: Sequence[float], evoked: Sequence[float], seed: int = 0) -> tuple[float, float] | None:
    """Percentile interval of mean(evoked) - mean(default), each group resampled on its own."""
    if len(default) < 2 or len(evoked) < 2:
        return None
    import numpy as np  # here, not with the module (a run that computes no interval needs none)

    rng = generator(seed)
    default_values, evoked_values = np.asarray(default, dtype=float), np.asarray(evoked, dtype=float)
    draws = [
        evoked_values[rng.integers(0, evoked_values.size, evoked_values.size)].mean()
        - default_values[rng.integers(0, default_values.size, default_values.size)].mean()
        for _ in range(RESAMPLES)
    ]
    return percentile_interval(draws)


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    (key,) = run.files
    path = paths[key]
    if path.stat().st_size > MAX_SHEET_BYTES:
        raise DataError(f"{path.name} is larger than an EmotionBench answer sheet can be")
    try:
        table = rescore_answer_sheet(path)
        responses, _ = panas_responses(read_answer_sheet(path), load_questionnaires()["PANAS"])
    except UserError as exc:
        raise DataError(str(exc)) from None
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path.name} is not an EmotionBench answer sheet: {str(exc)[:200]}") from None
    overall = table["rows"][-1]
    if overall.get("level") != "overall" or overall.get("NA_delta") is None:
        raise DataError(f"{path.name}: too few readable responses for the default-vs-evoked shift")
    default = [r.scores["NA"] for r in responses if r.factor_key is None]
    evoked = [r.scores["NA"] for r in responses if r.factor_key is not None]
    notes = (f"{table['skipped_runs']} unreadable runs dropped, as the paper did",) if table["skipped_runs"] else ()
    return AtlasScore(
        value=float(overall["NA_delta"]),
        ci95=_shift_interval(default, evoked),
        n=int(overall["n"]),
        figures={"PA_delta": overall["PA_delta"], "default_runs": len(default)},
        notes=notes,
    )


ATLAS = AtlasSource(
    metric="overall Negative Affect shift (PANAS points, evoked minus default)",
    pins=pins,
    runs=runs,
    score=score,
    summary_metric="NA_delta",
    higher_is_better=None,  # a shift is not better for being larger: people's own shift is the reference
)
