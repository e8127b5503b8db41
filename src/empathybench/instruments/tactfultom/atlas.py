"""TactfulToM in the atlas: every released model's outputs (results/clean/<model>[-cot]-<set>.json at commit a5e8635:
the two development models in pins.json, the other six variants in atlas_pins.json), each model's 5 set files pooled
by `file_scored_entries`, `pooled` and `table_row`, the code of `empathybench rescore tactfultom FILE...`, beside
its row of upstream's published table (cases/main_table.txt, pinned, read at build time).

The headline is a run's: the macro accuracy over the 11 question categories (ours; upstream reports categories
only), without chain of thought; the released runs with chain of thought are the same models under another setting
(not primary: they measure what CoT alone moves). The released outputs were made on the legacy dataset (84
conversations), a run asks the final set (100): most question ids recur, but not every question behind them is the
same (contexts, questions, gold answers and options were revised, set 2 rebuilt), and a question's share of the macro
depends on its run's category sizes. The per-item values are therefore each question's share of the macro, keyed
`legacy/<q_id>`: they pair the two published conditions question by question, never a run's items.

Two models of the table (DeepSeek-R1-Turbo, QwQ-32B) have released files too large for every reachable copy (sets
0, 3 and 4, specs/tactfultom.md section 11 item 7): they are published-only, with their row's figure.
"""

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from empathybench.data.fetch import fetch_entry
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.instruments.protocol import (
    AtlasScore,
    AtlasSource,
    PublishedFigure,
    PublishedOnly,
    ReleasedRun,
    ReproductionMargin,
)
from empathybench.instruments.tactfultom.data import SETS
from empathybench.stats.intervals import mean_interval

ATLAS_PINS = "atlas_pins.json"
RESULTS_PREFIX = "tactfultom/results/clean/"
TABLE_KEY = "tactfultom/cases/main_table.txt"
MAX_TABLE_BYTES = 1024 * 1024  # the table is 4 kB
ITEM_PREFIX = "legacy/"  # the released files' question ids, apart from a run's (another dataset version)
ITEM_SCALE = 100.0  # headline = 100 x the mean of the questions' shares (summary.macro_item_values)
# The published figure of a run: the mean of its row's 11 category figures in upstream's pooled table, to 2 decimals
# (the macro is ours; upstream prints the categories).
TABLE_SOURCE = "nii-cl/tactful-tom@a5e86358 cases/main_table.txt (per category; overall_macro, their mean, is ours)"
COT_SUFFIX = "-cot"
# get_original_results.py @0881b0d (specs/tactfultom.md section 4): who served each model, and which models were
# sent with the API's default sampling (names containing o1/o3) instead of temperature 0.2 and max_tokens 8192.
PROVIDERS = {
    "gpt-4o-2024-08-06": "OpenAI API",
    "o1-2024-12-17": "OpenAI API",
    "o3-mini-2025-01-31": "OpenAI API",
    "Llama-3.3-70B-Instruct": "DeepInfra (meta-llama/Llama-3.3-70B-Instruct)",
    "Qwen2.5-72B-Instruct": "DeepInfra (Qwen/Qwen2.5-72B-Instruct)",
    "DeepSeek-V3-0324": "DeepInfra (deepseek-ai/DeepSeek-V3-0324)",
    "DeepSeek-R1-Turbo": "DeepInfra (deepseek-ai/DeepSeek-R1-Turbo)",
    "QwQ-32B": "DeepInfra (Qwen/QwQ-32B)",
}
API_DEFAULT = "API default"
DATASET = "legacy: nii-cl/tactful-tom@a5e86358 dataset/ (84 conversations, 3,544 scored questions)"
ABSENT_WHY = (
    "released outputs of sets 0, 3 and 4 (4 MiB or more each) absent from every reachable copy; "
    "the figure is the published table's row"
)
HEADLINE_NOTE = "overall_macro is ours (the mean of upstream's 11 category accuracies); the categories: figures"
DATASET_NOTE = (
    "made on the legacy dataset (84 conversations, 3,544 scored questions); a run asks the revised final set (100, "
    "4,154): the same figure over other questions, so its items (legacy/<q_id>) do not pair with a run's"
)


def pins() -> Mapping[str, DataFile]:
    """The development models' files (pins.json, which a run's tests read too) and the other released ones."""
    return {**load_pins(__package__), **load_pins(__package__, ATLAS_PINS)}


def _settings(base: str, cot: bool) -> dict[str, object]:
    """What the headline depends on (the free-form requests upstream also sent are not scored: left out, so a run
    without them is not reported as differing). get_original_results.py @0881b0d L23-38, one sample per request."""
    default_sampling = "o1" in base or "o3" in base
    return {
        "cot": [cot],
        "temperature": API_DEFAULT if default_sampling else 0.2,
        "max_tokens": API_DEFAULT if default_sampling else 8192,
        "dataset": DATASET,
        "provider": PROVIDERS.get(base, "unknown"),
    }


@cache
def published_table() -> dict[str, dict[str, float]]:
    """Upstream's pooled table (run name, e.g. `gpt-4o-2024-08-06-cot` -> category -> figure), read from the pinned
    main_table.txt (a prettytable: a header row of category names, one row per run)."""
    from empathybench.instruments.tactfultom.score import CATEGORIES

    path = fetch_entry(pins()[TABLE_KEY]).path
    if path.stat().st_size > MAX_TABLE_BYTES:
        raise DataError(f"{path.name} is larger than upstream's table can be")
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in path.read_text("utf-8").splitlines()
        if line.strip().startswith("|")
    ]
    if not rows or tuple(rows[0][1:]) != CATEGORIES:
        raise DataError(f"{path.name}: not upstream's table (its columns are not the 11 categories)")
    table = {}
    for cells in rows[1:]:
        try:
            table[cells[0]] = dict(zip(CATEGORIES, (float(cell) for cell in cells[1:]), strict=True))
        except ValueError:
            raise DataError(f"{path.name}: a row of {cells[0][:80]!r} is not 11 figures") from None
    return table


def _published(run_name: str) -> PublishedFigure | None:
    row = published_table().get(run_name)
    return None if row is None else PublishedFigure(round(sum(row.values()) / len(row), 2), TABLE_SOURCE)


def runs() -> Sequence[ReleasedRun]:
    """One run per released model and condition with all 5 set files pinned, in the table's order."""
    keys = pins()
    found = []
    for name in sorted(published_table(), key=str.lower):
        files = tuple(f"{RESULTS_PREFIX}{name}-{set_id}.json" for set_id in SETS)
        if not all(key in keys for key in files):
            continue  # not released in full: published-only
        cot = name.endswith(COT_SUFFIX)
        base = name.removesuffix(COT_SUFFIX)
        found.append(ReleasedRun(base, files, _settings(base, cot), _published(name), primary=not cot))
    return found


def published_only() -> Sequence[PublishedOnly]:
    """The table's rows whose set files are not all released."""
    released = {f"{run.model}{COT_SUFFIX if run.settings['cot'] == [True] else ''}" for run in runs()}
    only = []
    for name in sorted(published_table(), key=str.lower):
        figure = _published(name)
        if name in released or figure is None:
            continue
        cot = name.endswith(COT_SUFFIX)
        base = name.removesuffix(COT_SUFFIX)
        only.append(PublishedOnly(base, figure, ABSENT_WHY, _settings(base, cot)))
    return only


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
    published = published_table().get(Path(keys[run.files[0]].filename).stem.rsplit("-", 1)[0])
    if published is not None:
        differing = [c for c in CATEGORIES if abs(table[c] - published[c]) > 0.005]
        if differing:
            notes.append(f"differs from the published row in {', '.join(differing)}")
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
    published_only=published_only,
    summary_metric="overall_macro",
    reproduction_margin=ReproductionMargin(
        2.0,
        "2 percentage points of macro accuracy, a documented default: upstream publishes no run-to-run figure; a "
        "third of what chain of thought moves gpt-4o-2024-08-06 (-6.3 [-8.9, -3.7], the atlas's setting effect)",
    ),
)
