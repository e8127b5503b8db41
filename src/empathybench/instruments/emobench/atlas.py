"""EmoBench in the atlas: the released runs of the 2024 protocol without CoT (data/{EU,EA}/Results/<model>/
<model>-{en,zh}{,1,2,3}.csv at the pinned commit, in atlas_pins.json), scored by `rescore_directory` and
`condition_item_means`, the code of `empathybench rescore emobench DIR`: every model in both tasks and both languages.

The headline (the primary entry) is a run's: EU joint accuracy (emotion and cause both right), English, the mean
over the 4 option orders (a suffix digit names the permuted order the file used: the four files are one run each
over another order, never repeats pooled as samples); its items are each question's correctness over the orders, by
the run's item ids. EU in Chinese and EA in either language are the same models under another setting (not primary:
listed, not ranked). EA's older result files are not row-aligned with today's items (specs/emobench.md section 7),
so EA entries carry no per-item values (their interval is still over the rows). The paper's table was not readable,
so the entries carry no published figure.
"""

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.instruments.protocol import AtlasScore, AtlasSource, ReleasedRun, ReproductionMargin
from empathybench.stats.intervals import mean_interval

ATLAS_PINS = "atlas_pins.json"
RESULTS_PREFIX = "emobench/2024/data/"
TASKS = ("EU", "EA")
LANGUAGES = ("en", "zh")
HEADLINE = ("EU", "en")  # a run's headline: what the atlas ranks
ORDERS = ("", "1", "2", "3")  # the original option order and data_permute_{1,2,3}
BASELINE_MODELS = frozenset({"random"})  # upstream's random answers: a baseline, not a model
PROTOCOL = "2024 (4 orders x majority of 5)"
EA_ITEMS_NOTE = "EA rows of the released files are not aligned with today's item ids: no per-item values"


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


def runs() -> Sequence[ReleasedRun]:
    """One run per model, task and language: its files of the 4 option orders (without CoT)."""
    by_condition: dict[tuple[str, str, str], list[str]] = {}
    for key in sorted(pins()):
        if not key.startswith(RESULTS_PREFIX):
            continue
        parts = key.removeprefix(RESULTS_PREFIX).split("/")
        if len(parts) != 4 or parts[0] not in TASKS or parts[1] != "Results":
            continue
        task, _, model, name = parts
        for language in LANGUAGES:
            if name in {f"{model}-{language}{order}.csv" for order in ORDERS}:
                by_condition.setdefault((model, task, language), []).append(key)
    order = {
        (task, language): n for n, (task, language) in enumerate((HEADLINE, ("EU", "zh"), ("EA", "en"), ("EA", "zh")))
    }
    return [
        ReleasedRun(
            model,
            tuple(keys),
            {"task": task, "language": language, "cot": False, "protocol": PROTOCOL},
            primary=(task, language) == HEADLINE,
        )
        for (model, task, language), keys in sorted(
            by_condition.items(), key=lambda i: (order[i[0][1:]], i[0][0].lower())
        )
        if model not in BASELINE_MODELS
    ]


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    """The run's files in the upstream layout (a directory of their own), scored as `rescore emobench DIR`."""
    from empathybench.instruments.emobench.rescore import condition_item_means, rescore_directory

    task, language = str(run.settings["task"]), str(run.settings["language"])
    with tempfile.TemporaryDirectory(prefix="empathybench-emobench-") as temporary:
        folder = Path(temporary) / "data" / task / "Results" / run.model
        folder.mkdir(parents=True)
        for key in run.files:
            shutil.copyfile(paths[key], folder / pins()[key].filename)
        try:
            result = rescore_directory(Path(temporary))
            items = condition_item_means(Path(temporary), task, run.model, language, False)
        except UserError as exc:
            raise DataError(str(exc)) from None
    rows = [
        r for r in result.rows if (r["task"], r["model"], r["language"], r["cot"]) == (task, run.model, language, False)
    ]
    if not rows or rows[0]["accuracy"] is None or not items:
        skipped = "; ".join(result.skipped)[:200]
        raise DataError(f"{run.model}: no {task} {language} result file counts ({skipped or 'none found'})")
    row = rows[0]
    keyed = {f"{task}-{language}-{qid}": value for qid, value in items.items()}
    notes = [f"skipped {note[:150]}" for note in result.skipped]
    figures: dict[str, float | int | None] = {}
    if task == "EU":
        figures = {"emotion_accuracy": row["emotion_accuracy"], "cause_accuracy": row["cause_accuracy"]}
        figures.update({f"category_{name}": value for name, value in (row["by_category"] or {}).items()})
    else:
        notes.append(EA_ITEMS_NOTE)
    return AtlasScore(
        value=float(row["accuracy"]),
        ci95=mean_interval(list(keyed.values()), scale=100.0),
        n=len(keyed),
        items=keyed if task == "EU" else None,
        scale=100.0,
        settings={"orders": row["n_files"]},
        notes=tuple(notes),
        figures=figures,
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
