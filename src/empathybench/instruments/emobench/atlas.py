"""EmoBench in the atlas: the released runs of the 2024 protocol (data/EU/Results/<model>/<model>-en[1-3].csv at
the pinned commit), scored by `rescore_directory` and `condition_item_means`, the code of `empathybench rescore
emobench DIR`. The headline is a run's: EU joint accuracy (emotion and cause both right), English, no CoT, the
mean over the 4 option orders; its items are each question's correctness over the orders (by the run's item ids).

Only the models whose files are pinned are scored (the others' files are not among the pinned data); the paper's
table was not readable, so the entries carry no published figure.
"""

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.instruments.protocol import AtlasScore, AtlasSource, ReleasedRun, ReproductionMargin
from empathybench.stats.intervals import mean_interval

RESULTS_PREFIX = "emobench/2024/data/EU/Results/"
LANGUAGE = "en"
TASK = "EU"
BASELINE_MODELS = frozenset({"random"})  # upstream's random answers: a baseline, not a model
SETTINGS = {"task": TASK, "language": LANGUAGE, "cot": False, "protocol": "2024 (4 orders x majority of 5)"}


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__)


def runs() -> Sequence[ReleasedRun]:
    by_model: dict[str, list[str]] = {}
    for key in sorted(pins()):
        if not key.startswith(RESULTS_PREFIX):
            continue
        model, name = key.removeprefix(RESULTS_PREFIX).split("/", 1)
        if name in {f"{model}-{LANGUAGE}{order}.csv" for order in ("", "1", "2", "3")}:  # the 4 option orders
            by_model.setdefault(model, []).append(key)
    return [
        ReleasedRun(model, tuple(keys), SETTINGS)
        for model, keys in sorted(by_model.items())
        if model not in BASELINE_MODELS
    ]


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    """The run's files in the upstream layout (a directory of their own), scored as `rescore emobench DIR`."""
    from empathybench.instruments.emobench.rescore import condition_item_means, rescore_directory

    with tempfile.TemporaryDirectory(prefix="empathybench-emobench-") as temporary:
        folder = Path(temporary) / "data" / TASK / "Results" / run.model
        folder.mkdir(parents=True)
        for key in run.files:
            shutil.copyfile(paths[key], folder / pins()[key].filename)
        try:
            result = rescore_directory(Path(temporary))
            items = condition_item_means(Path(temporary), TASK, run.model, LANGUAGE, False)
        except UserError as exc:
            raise DataError(str(exc)) from None
    rows = [
        r for r in result.rows if (r["task"], r["model"], r["language"], r["cot"]) == (TASK, run.model, "en", False)
    ]
    if not rows or rows[0]["accuracy"] is None or not items:
        skipped = "; ".join(result.skipped)[:200]
        raise DataError(f"{run.model}: no EU English result file counts ({skipped or 'none found'})")
    row = rows[0]
    keyed = {f"{TASK}-{LANGUAGE}-{qid}": value for qid, value in items.items()}
    return AtlasScore(
        value=float(row["accuracy"]),
        ci95=mean_interval(list(keyed.values()), scale=100.0),
        n=len(keyed),
        items=keyed,
        scale=100.0,
        settings={"orders": row["n_files"]},
        notes=tuple(f"skipped {note[:150]}" for note in result.skipped),
    )


ATLAS = AtlasSource(
    metric="EmoBench EU joint accuracy, English (%, 2024 protocol)",
    pins=pins,
    runs=runs,
    score=score,
    summary_metric="eu_joint_accuracy_en",
    reproduction_margin=ReproductionMargin(
        2.0,
        "2 percentage points of joint accuracy, a documented default: upstream publishes no run-to-run figure; 4 of "
        "the 200 EU items answered otherwise, of the order of what reordering the options moves (the released runs "
        "repeat each item on 4 option orders)",
    ),
)
