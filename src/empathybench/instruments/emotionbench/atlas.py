"""EmotionBench in the atlas: the released PANAS answer sheets of 7 models (results/PANAS Test/), each scored by
`rescore_answer_sheet`, the code of `empathybench rescore emotionbench FILE` (the paper's table).

The headline is the overall Negative Affect shift: mean NA after imagining the situations minus mean NA with none
(PANAS sums, 10-50), the `NA_delta` of a run's summary, with the interval a run's has (stats.shift_interval:
situations with all their runs, and the default runs, resampled). The published table (the gh-pages data.json) is
not among the pinned files, so the entries carry no published figure.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError
from empathybench.instruments.emotionbench.data import read_answer_sheet
from empathybench.instruments.emotionbench.questionnaires import load_questionnaires, panas_affect
from empathybench.instruments.emotionbench.rescore import detect_questionnaire, rescore_panas
from empathybench.instruments.emotionbench.stats import shift_interval
from empathybench.instruments.protocol import AtlasScore, AtlasSource, ReleasedRun, ReproductionMargin

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
    notes = (f"{table['skipped_runs']} unreadable runs dropped, as the paper did",) if table["skipped_runs"] else ()
    return AtlasScore(
        value=float(overall["NA_delta"]),
        # the interval a run's NA_delta has: situations with all their runs, and default runs, resampled
        ci95=shift_interval(default, list(situations.values()), 0),
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
    reproduction_margin=ReproductionMargin(
        1.0,
        "1 PANAS point of the Negative Affect shift, a documented default: upstream publishes no run-to-run figure; "
        "under a fifth of people's own sd of Negative Affect (5.5 by default, the paper's Table 2) and the step of "
        "one PANAS answer",
    ),
)
