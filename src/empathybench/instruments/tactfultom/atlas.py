"""TactfulToM in the atlas: the released outputs of the two development models (results/clean/<model>[-cot]-<set>.json
at commit a5e8635, pinned in pins.json), each model's 5 set files pooled by `file_scored_entries`, `pooled` and
`table_row`, the code of `empathybench rescore tactfultom FILE...`, beside the published table's row.

The headline is a run's: the macro accuracy over the 11 question categories (ours; upstream reports categories
only), without chain of thought; the released runs with chain of thought are the same models under another setting
(not primary: they measure what CoT alone moves). The released outputs were made on the legacy dataset (84
conversations), a run asks the final set (100): most question ids recur, but not every question behind them is the
same (contexts, questions, gold answers and options were revised, set 2 rebuilt), and a question's share of the macro
depends on its run's category sizes. The per-item values are therefore each question's share of the macro, keyed
`legacy/<q_id>`: they pair the two published conditions question by question, never a run's items.

Only the two development models are in the atlas: the other six released models' outputs are kept to check the
instrument and join the atlas once they have served as that check.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.instruments.protocol import AtlasScore, AtlasSource, PublishedFigure, ReleasedRun, ReproductionMargin
from empathybench.instruments.tactfultom.data import SETS
from empathybench.stats.intervals import mean_interval

RESULTS_PREFIX = "tactfultom/results/clean/"
ITEM_PREFIX = "legacy/"  # the released files' question ids, apart from a run's (another dataset version)
ITEM_SCALE = 100.0  # headline = 100 x the mean of the questions' shares (summary.macro_item_values)
# The published table's overall_macro per released run: the mean of its 11 category figures (the macro is ours;
# upstream prints the categories). nii-cl/tactful-tom@a5e86358 cases/main_table.txt, as specs/tactfultom.md section 10
# gives its rows for the development models.
TABLE_SOURCE = "nii-cl/tactful-tom@a5e86358 cases/main_table.txt (per category; overall_macro, their mean, is ours)"
PUBLISHED_MACRO = {
    "gpt-4o-2024-08-06": 62.30,
    "gpt-4o-2024-08-06-cot": 55.99,
    "Llama-3.3-70B-Instruct": 51.52,
    "Llama-3.3-70B-Instruct-cot": 49.40,
}
# get_original_results.py @0881b0d (specs/tactfultom.md section 4): who served each model.
PROVIDERS = {
    "gpt-4o-2024-08-06": "OpenAI API",
    "Llama-3.3-70B-Instruct": "DeepInfra (meta-llama/Llama-3.3-70B-Instruct)",
}
COT_SUFFIX = "-cot"
# What the headline depends on (the free-form requests upstream also sent are not scored: left out, so a run without
# them is not reported as differing). get_original_results.py @0881b0d L23-38, one sample per request.
SETTINGS = {
    "temperature": 0.2,
    "max_tokens": 8192,
    "dataset": "legacy: nii-cl/tactful-tom@a5e86358 dataset/ (84 conversations, 3,544 scored questions)",
}
HEADLINE_NOTE = "overall_macro is ours (the mean of upstream's 11 category accuracies); the categories: figures"
DATASET_NOTE = (
    "made on the legacy dataset (84 conversations, 3,544 scored questions); a run asks the revised final set (100, "
    "4,154): the same figure over other questions, so its items (legacy/<q_id>) do not pair with a run's"
)


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__)


def runs() -> Sequence[ReleasedRun]:
    """One run per released model and condition: its 5 set files."""
    keys = pins()
    found = []
    for model in PUBLISHED_MACRO:
        cot = model.endswith(COT_SUFFIX)
        base = model.removesuffix(COT_SUFFIX)
        files = tuple(f"{RESULTS_PREFIX}{model}-{set_id}.json" for set_id in SETS)
        if not all(key in keys for key in files):
            continue  # not pinned: not in the atlas
        settings = {"cot": [cot], **SETTINGS, "provider": PROVIDERS[base]}
        published = PublishedFigure(PUBLISHED_MACRO[model], TABLE_SOURCE)
        found.append(ReleasedRun(base, files, settings, published, primary=not cot))
    return found


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    """A model's set files pooled as `rescore tactfultom` pools them (the stored clean_result, what upstream's table
    read; original_result read again must agree), with each question's share of the macro."""
    from empathybench.instruments.tactfultom.rescore import file_scored_entries, read_results
    from empathybench.instruments.tactfultom.score import CATEGORIES, category_counts, pooled, rounded, table_row
    from empathybench.instruments.tactfultom.summary import macro_item_values

    keys = pins()
    correct: dict[str, tuple[str, float]] = {}
    counts: dict[str, list[dict[str, tuple[int, int]]]] = {"clean": [], "original": []}
    for key in run.files:
        where = Path(keys[key].filename)  # upstream's pre-step is chosen by the file's name
        try:
            results = read_results(paths[key])
            readings = {reading: file_scored_entries(results, where, reading) for reading in counts}
        except UserError as exc:
            raise DataError(str(exc)) from None
        for reading, scored in readings.items():
            counts[reading].append(category_counts(verdict for _, verdict in scored))
        for entry, verdict in readings["clean"]:
            question_id = entry.get("question_id")
            if not isinstance(question_id, str) or not question_id.isprintable() or len(question_id) > 200:
                raise DataError(f"{where.name}: a scored entry has no question_id")
            if question_id in correct:
                raise DataError(f"{where.name}: question {question_id[:80]!r} is scored twice")
            correct[question_id] = (verdict.category, float(verdict.correct))
    if not correct:
        raise DataError(f"{run.model}: no scored question in its result files")
    row = table_row(pooled(counts["clean"]))
    items = {f"{ITEM_PREFIX}{q}": value for q, value in macro_item_values(correct).items()}
    mean = ITEM_SCALE * sum(items.values()) / len(items)
    if abs(mean - row["overall_macro"]) > 1e-6:  # one scorer, two ways of pooling: they must agree
        raise DataError(f"{run.model}: the questions' shares give {mean}, the pooled row {row['overall_macro']}")
    notes = [HEADLINE_NOTE, DATASET_NOTE]
    if table_row(pooled(counts["original"])) != row:
        notes.append("the stored clean_result and our re-reading of original_result differ; the clean one is scored")
    table = rounded(row)
    return AtlasScore(
        value=float(row["overall_macro"]),
        ci95=mean_interval(list(items.values()), scale=ITEM_SCALE),
        n=len(items),
        items=items,
        scale=ITEM_SCALE,
        notes=tuple(notes),
        figures={
            "overall_micro": table["overall_micro"],
            **{category: table[category] for category in CATEGORIES},
            **{f"n_{category}": row["n"][category] for category in CATEGORIES},
        },
    )


ATLAS = AtlasSource(
    metric="TactfulToM overall accuracy, macro over the 11 question categories (%, ours), without CoT",
    pins=pins,
    runs=runs,
    score=score,
    summary_metric="overall_macro",
    reproduction_margin=ReproductionMargin(
        2.0,
        "2 percentage points of macro accuracy, a documented default: upstream publishes no run-to-run figure; a "
        "third of what chain of thought moves gpt-4o-2024-08-06 (-6.3 [-8.9, -3.7], the atlas's setting effect)",
    ),
)
