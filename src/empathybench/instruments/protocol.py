"""What an instrument provides: its presets and options, its items, how to run one and summarise them (for run/),
its canned answers for scripted models, its rescore command (for the CLI), its report section (for report/) and its
published models recomputed from their released outputs (for atlas/).

`Instrument[C, P]` is the contract, as a base class: C is the instrument's frozen config, P the payload of one of
its items. Every part an instrument may provide is declared on it with its default.
"""

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Concatenate, Generic, TypeVar

from empathybench.data.fetch import FetchedFile
from empathybench.data.registry import DataFile
from empathybench.engine.engine import Generation as Generation
from empathybench.engine.engine import ItemContext
from empathybench.models.base import Canned
from empathybench.models.base import ChatRequest as ChatRequest
from empathybench.models.base import Draw as Draw
from empathybench.models.base import Message as Message
from empathybench.models.base import Sampling as Sampling

# Re-exported above: what an instrument's code needs from the layers below (asking the model: Message, Sampling,
# Generation; canned answers: ChatRequest, Draw), so a third-party instrument imports only this module and support.

C = TypeVar("C")  # an instrument's config: a frozen dataclass, recorded in run.json and part of the fingerprint
P = TypeVar("P")  # the payload of one item: whatever the instrument needs, never written to disk

# What one item's run returns (the record fields in samples.jsonl) and what summarising all of them returns
# (summary.json `benchmarks.<name>`; the envelope keys: headline_metric, metrics, score, score_ci95, n_items).
ItemFields = dict[str, Any]
Summary = dict[str, Any]


@dataclass(frozen=True)
class BenchItem(Generic[P]):
    id: str
    payload: P  # whatever the benchmark needs; never written to disk by the engine


@dataclass
class PreparedBenchmark(Generic[P]):
    """A benchmark with its preset resolved, its data fetched and its items chosen."""

    name: str
    config: dict[str, Any]  # JSON-able; recorded in run.json and part of the run's fingerprint
    items: list[BenchItem[P]]
    run_item: Callable[[BenchItem[P], ItemContext], Awaitable[ItemFields]]  # the record fields of one item
    summarize: Callable[[list[ItemFields]], Summary]
    data_files: list[FetchedFile] = field(default_factory=list)
    # `summarize` gets the answered records only (status "ok"); True: every record, failed items too (status
    # "error", with `error`, `error_role` and the `roles` the item was given), e.g. to say why items are unscored.
    summarize_failed: bool = False


@dataclass(frozen=True)
class RescoreCommand:
    """`empathybench rescore <instrument> FILE [--json]`: score a stored upstream result file with our scorers.

    The CLI builds the command from this; `run` raises a one-line UserError for a bad file. With `many_files` the
    argument is `FILE...` (one or more, e.g. a model's several result files pooled) and `run` receives them as a
    list of paths.
    """

    help: str  # the command's help, first line first
    argument_help: str  # the help of its FILE argument
    # JSON-able result (or one with notes); called as run(path, **{flag: bool}) with the flags below
    # (run([path, ...], **flags) with many_files)
    run: Callable[Concatenate[Any, ...], "Mapping[str, Any] | RescoreOutput"]
    render: Callable[[Any, Any], None] | None = None  # (result, rich Console): the text output; None: pretty-print
    flags: Mapping[str, str] = field(default_factory=dict)  # boolean --flag name -> its help (default off)
    many_files: bool = False  # the argument takes one or more files


@dataclass(frozen=True)
class DemoPreset:
    """What the `demo` preset (a bare `empathybench run` on the embedded model) runs of an instrument: its quick
    preset cut to `items` items, with these `--option`s (the user's own options win). `Instrument.demo`; the
    default takes 3 items of the quick preset."""

    items: int = 3
    options: Mapping[str, str] = field(default_factory=dict)
    # An instrument that requires a judge runs in the demo with the model as its own judge (labelled self-judged).
    self_judged: bool = False
    # An instrument that requires a simulated person runs in the demo with the model playing the person too
    # (labelled self-simulated).
    self_simulated: bool = False
    # Part of the bare demo although the instrument stays out of a run without --bench (`in_default_run = False`).
    in_bare_demo: bool = False
    # Why an instrument outside the bare demo stays out of it (e.g. "its cut alone takes about 50 s"): the demo's
    # account names it on a line of its own with the command that runs its cut.
    left_out_because: str = ""


@dataclass(frozen=True)
class JudgeValidation:
    """`empathybench judge validate`: a judge rates items with known human ratings; its agreement with them.

    An instrument that uses a judge may offer one as `Instrument.judge_validation`. run/judge.py
    runs it as it runs any instrument's items (the engine with its cache, retries, concurrency and progress):
    `prepare(limit=, seed=, attempts=, allow_unverified=, judge_identity=)` gives the items, `run_item` (which asks
    through `ctx.judge_generate`, tagged "<tag>:judge"; a record with an `error` counts as a failed item) and
    `summarize` (records in item order -> the JSON-able report of `--json` and `--out`; run/judge.py adds `judge`
    and `usage`). Items are seeded `item_seed(seed, prepared.name, item.id)`. `render` prints the report on a rich
    Console; `canned` answers a scripted judge (its requests carry `tag`). `evidence` reads the report's figures of
    the judge's agreement with people for `empathybench judges` (run/judge.py writes them into the report as
    `evidence`, each {"against", "aspect", "statistic", "value", "ci95", "n", "unit": "item" | "model", "headline"}).
    """

    tag: str  # the instrument's name: the request tag of the judge calls and the key of its canned answers
    prepare: Callable[..., "PreparedBenchmark[Any]"]
    render: Callable[[Mapping[str, Any], Any], None]
    canned: Canned | None = None
    evidence: Callable[[Mapping[str, Any]], list[dict[str, Any]]] | None = None


@dataclass(frozen=True)
class RescoreOutput:
    """A rescore result with one-line notes for the terminal's error stream (e.g. the files it left out)."""

    result: Any  # JSON-able: what `--json` prints
    notes: tuple[str, ...] = ()


# --- the atlas: an instrument's published models, recomputed from their released outputs ------------------------


@dataclass(frozen=True)
class PublishedFigure:
    """A figure as its authors published it, and where (repository@commit and path, or a paper)."""

    value: float
    source: str
    ci95: tuple[float, float] | None = None  # the interval published beside it, where one is


@dataclass(frozen=True)
class ReleasedRun:
    """One published run whose raw outputs were released: the model as published, the pinned files that hold its
    outputs (keys of `AtlasSource.pins()`), what is known of its settings, and its published figure."""

    model: str  # the model's name as its upstream published it
    files: tuple[str, ...]  # keys of the atlas pins; all of them are needed to score the run
    settings: Mapping[str, Any] = field(default_factory=dict)  # judge, simulator, sampling, language, ... (JSON-able)
    published: PublishedFigure | None = None
    # The configuration of the instrument's published leaderboard (False: e.g. the same model with another simulated
    # person, kept to measure what that setting changes but left out of rankings and agreement).
    primary: bool = True


@dataclass(frozen=True)
class PublishedOnly:
    """A model with a published figure and no released output the atlas can score (labelled published-only)."""

    model: str
    published: PublishedFigure
    why: str  # e.g. "outputs not released", "released file absent from every reachable copy"
    settings: Mapping[str, Any] = field(default_factory=dict)
    figures: Mapping[str, float | int | None] = field(default_factory=dict)  # other published columns of its row
    # False: a row of a published board other than the instrument's ranked leaderboard (its settings name the board
    # under `board`), shown with its board and used to place runs and measure effects, never ranked with the rest
    primary: bool = True
    notes: tuple[str, ...] = ()  # what applies to this row alone (after `why`), e.g. its judge judged itself


@dataclass(frozen=True)
class BoardPlacement:
    """Where a run of the instrument stands among published boards rather than among the ranked entries: among the
    rows of the board whose `setting` (e.g. "judge") is the run's (the value under `run_field` in its summary entry,
    the same checkpoint through the identity table), by the board's column `figure`; a run whose setting matches
    no board is not ranked, and says so."""

    setting: str  # the board rows' setting to match, e.g. "judge"
    run_field: str  # where the run's summary entry (summary.json `benchmarks.<name>`) holds it, e.g. "judge_model"
    figure: str  # the rows' figure a run's summary metric is comparable with, e.g. "rubric_0_100"


@dataclass(frozen=True)
class AtlasScore:
    """One released run scored by the instrument's own scorer (the code of its `rescore` command).

    `value` is the headline as the instrument's run summary defines it, `items` the per-item values (by item id, no
    item text) with `value ~= scale * mean(items) + offset` where the headline is a mean over items (None where it is
    not, e.g. an Elo), so a user's run can be paired with it item by item.
    """

    value: float
    ci95: tuple[float, float] | None
    n: int  # items (or units) behind the headline
    items: Mapping[str, float] | None = None
    scale: float = 1.0
    offset: float = 0.0
    published: PublishedFigure | None = None  # a figure read from the released file itself (it wins over the run's)
    settings: Mapping[str, Any] = field(default_factory=dict)  # settings read from the files (over the run's)
    notes: tuple[str, ...] = ()  # why the recomputed figure differs from the published one, where known
    figures: Mapping[str, float | int | None] = field(default_factory=dict)  # other results, e.g. success counts


@dataclass(frozen=True)
class ReproductionMargin:
    """How far a run may lie from the published run of its model and still reproduce it (the reproduction check's
    equivalence margin m, in the units of `AtlasSource.summary_metric`): `consistent` when the 95% interval of run
    minus published lies within ±m. `source` says where m comes from: upstream's own repeatability figures where
    published, else the instrument's documented default with its reasoning."""

    value: float
    source: str


@dataclass(frozen=True)
class AtlasSource:
    """`Instrument.atlas`: how an instrument places the field's published models (`empathybench atlas build`).

    `pins()` gives the released files it knows (pinned as any data file, in its own folder), `runs()` the published
    runs they hold and `score(run, paths)` (paths: pin key -> verified local copy) turns one run's files into an
    AtlasScore with the same code as its `rescore` command; a bad file raises a DataError or UserError (one line).
    `published_only()` lists the models with a published figure and nothing released to score.
    """

    metric: str  # what the headline is, e.g. "EQ-Bench v2 score (0-100)"
    pins: Callable[[], "Mapping[str, DataFile]"]
    runs: Callable[[], Sequence[ReleasedRun]]
    score: Callable[[ReleasedRun, Mapping[str, Path]], AtlasScore]
    published_only: Callable[[], Sequence[PublishedOnly]] = tuple
    higher_is_better: bool | None = True  # None: neither direction is better (listed from the highest)
    # The metric of the instrument's run summary the atlas figures are comparable with (summary.json
    # `benchmarks.<name>.metrics.<key>`); None: none is (e.g. published Elo ratings beside a run's rubric score).
    summary_metric: str | None = None
    # A published general-capability figure per model (the model as published there, the figure and its source), where
    # the instrument's upstream sets one beside its own (e.g. an Arena score): what the atlas correlates it with.
    capability: Callable[[], Sequence[tuple[str, PublishedFigure]]] | None = None
    capability_label: str = ""
    reproduction_margin: ReproductionMargin | None = None  # None: a run's check has no margin (only [0, 0] agrees)
    # Upstream's own name map (a run's model name -> the name its leaderboard shows), read from a pinned file, where
    # upstream has one (EQ-Bench 3's MODEL_NAME_SUBS): the identity table must agree with it (test_atlas_identity).
    name_map: Callable[[], Mapping[str, str]] | None = None
    # A run's summary metric is placed among published board rows (None: among the ranked entries).
    board_placement: BoardPlacement | None = None
    # The published figures (besides the headline) whose change between two boards of the instrument the atlas
    # shows, paired over the models on both, e.g. EQ-Bench 3's rubric score when another judge rated the same models.
    board_figures: tuple[str, ...] = ()
    board_headline: str = "published figure"  # what a board's ranking column (its rows' published figure) is


# --- an instrument's report section, as data: report/ draws it (charts, escaping, number formatting) ---------------


@dataclass(frozen=True)
class ItemLink:
    """A cell that links to one item's row in the instrument's samples table."""

    text: str
    item_id: str


@dataclass(frozen=True)
class Marked:
    """A number with a significance marker beside it ("up" ▲, "down" ▼, None: none)."""

    value: float | None
    marker: str | None = None


Cell = str | int | float | bool | ItemLink | Marked | None  # numbers are formatted and text escaped by the renderer


@dataclass(frozen=True)
class ChartPoint:
    """One estimate with its 95% interval (value None: not available)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    series: int = 0  # colour index


@dataclass(frozen=True)
class ChartLine:
    """A labelled reference line, e.g. "random 0"."""

    value: float
    label: str
    style: str = "dashed"  # "dashed" | "solid" | "dotted"


@dataclass(frozen=True)
class StripChart:
    """Estimates with intervals on one axis (the axis widens to show every value)."""

    points: tuple[ChartPoint, ...]
    domain: tuple[float, float]
    title: str
    caption: str = ""
    references: tuple[ChartLine, ...] = ()
    unit: str = ""


@dataclass(frozen=True)
class GroupedBarsChart:
    """One group of bars per category, one bar per series (its points in category order)."""

    categories: tuple[str, ...]
    series: tuple[tuple[str, tuple[ChartPoint, ...]], ...]  # (name, one point per category), in legend order
    title: str
    caption: str = ""
    unit: str = ""
    domain: tuple[float, float] | None = None  # None: from the data


@dataclass(frozen=True)
class HistogramChart:
    values: tuple[float, ...]
    bins: int
    title: str
    caption: str = ""
    unit: str = ""


@dataclass(frozen=True)
class NormalCurveChart:
    """A normal density (e.g. a human norm) with a marker for the model, its interval and reference lines."""

    mean: float
    sd: float
    marker: float | None
    marker_label: str
    title: str
    caption: str = ""
    interval: tuple[float, float] | None = None
    references: tuple[ChartLine, ...] = ()


@dataclass(frozen=True)
class LineChart:
    """Named series over shared x labels (None: a gap)."""

    x_labels: tuple[str, ...]
    series: tuple[tuple[str, tuple[float | None, ...]], ...]  # (name, values), in legend order
    title: str
    caption: str = ""


@dataclass(frozen=True)
class TrajectoryGroup:
    """Paths of one group (e.g. one run): each drawn thin, its `summary` (e.g. the mean) bold and in the legend."""

    name: str
    paths: tuple[tuple[float | None, ...], ...]  # one value per x label (None: the path has ended or has a gap)
    summary: tuple[float | None, ...] | None = None


@dataclass(frozen=True)
class TrajectoryChart:
    """Many paths over shared x labels without a legend entry each (e.g. every conversation's emotion per round),
    grouped (one colour per group: a run, or two runs in a comparison), with horizontal reference lines."""

    x_labels: tuple[str, ...]
    groups: tuple[TrajectoryGroup, ...]
    title: str
    caption: str = ""
    domain: tuple[float, float] | None = None  # None: from the data
    references: tuple[ChartLine, ...] = ()  # horizontal lines (e.g. thresholds)
    unit: str = ""


@dataclass(frozen=True)
class HeatmapChart:
    """A value per row and column on a diverging colour scale centred on `center` (None: no value)."""

    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    values: tuple[tuple[float | None, ...], ...]  # one tuple per row, in column order
    title: str
    caption: str = ""
    center: float = 0.0
    unit: str = ""


@dataclass(frozen=True)
class ScatterChart:
    """Points (x, y, label), optionally with the y = x diagonal."""

    points: tuple[tuple[float, float, str], ...]
    x_label: str
    y_label: str
    title: str
    caption: str = ""
    diagonal: bool = False


@dataclass(frozen=True)
class StackedBarsChart:
    """100%-stacked horizontal bars: one row per label, its shares (percent) in `segments` order."""

    rows: tuple[tuple[str, tuple[float, ...]], ...]
    segments: tuple[str, ...]
    title: str
    caption: str = ""
    colors: tuple[str, ...] | None = None  # one per segment; None: the default palette


@dataclass(frozen=True)
class FactsTable:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    digits: int | tuple[int, ...] = 2  # decimals of float cells (a tuple: per column)
    numeric: tuple[int, ...] = ()  # columns aligned as numbers
    title: str | None = None  # a heading above the table

    def digits_of(self, column: int) -> int:
        """The decimals of `column`'s float cells (2 for a column the tuple leaves out)."""
        if isinstance(self.digits, int):
            return self.digits
        return self.digits[column] if column < len(self.digits) else 2


Chart = (
    StripChart
    | HistogramChart
    | NormalCurveChart
    | LineChart
    | TrajectoryChart
    | GroupedBarsChart
    | HeatmapChart
    | ScatterChart
    | StackedBarsChart
)


@dataclass(frozen=True)
class ReportSection:
    """What an instrument shows in report.html above its metrics table and samples."""

    charts: tuple[Chart, ...] = ()
    tables: tuple[FactsTable, ...] = ()
    note: str | None = None  # a line of text above the charts (e.g. why there are none)
    warning: str | None = None  # a strong banner above everything (e.g. the model judged itself)
    footnote: tuple[Cell, ...] = ()  # a small line below the tables: text and numbers (formatted with digits)
    footnote_digits: int = 2


@dataclass(frozen=True)
class ComparisonOutput:
    """What an instrument's judged comparison of several runs gives the comparison report."""

    title: str  # the heading of its section in comparison.html / .md
    result: Mapping[str, Any]  # JSON-able: comparison.json `instrument_comparisons.<name>`
    section: ReportSection  # drawn like a run report's section (tables, charts as data)
    notes: tuple[str, ...] = ()  # lines for the terminal, printed literally


@dataclass(frozen=True)
class ComparisonJudging:
    """What run/comparisons.py hands back after asking the judge about a PreparedComparison's tasks."""

    verdicts: Mapping[str, Mapping[str, Any]]  # task key -> its entry (from the judgements file or asked now)
    new_keys: frozenset[str]  # asked now
    stored_keys: frozenset[str]  # read from the judgements file
    failures: tuple[str, ...]  # "<task label>: <why>" for calls that could not be answered (asked again next time)
    usage: Mapping[str, Any]  # the engine's counters (calls, cache hits, tokens)
    cost: Mapping[str, Any]  # the judge's tokens and USD of this command (run/cost.py CostMeter.session_record)
    judgements_file: str


@dataclass(frozen=True)
class PreparedComparison:
    """An instrument's judged comparison, prepared: the judge calls to make and how to read them. Pure: it makes no
    call itself; run/comparisons.py owns the judge's backend, engine, cache, cost, batches and the judgements file.

    `tasks`: each has `key` (str, unique: judge + exact prompt; the judgements file's key) and `label` (one line
    naming it in a failure). `judge(task, ctx)` asks through `ctx.judge_generate` (one call) and returns the
    JSON-able entry kept in the judgements file. `finish(judging)` turns the verdicts into the output.
    """

    tasks: Sequence[Any]
    judge: Callable[[Any, ItemContext], Awaitable[Mapping[str, Any]]]
    finish: Callable[[ComparisonJudging], ComparisonOutput]


@dataclass(frozen=True)
class RunComparison:
    """`empathybench report A B C ... --judge SPEC`: an instrument's comparison of several runs that needs new judge
    calls (e.g. pairwise ratings on matched transcripts). Offered as `Instrument.comparison`.

    `prepare(runs, *, judge, judge_identity)` takes the loaded run directories that hold the instrument
    (rundir.reader.RunData, at least two), the judge's spec and identity, and returns a PreparedComparison. Verdicts
    are kept in a judgements file by task key, so a later comparison with one more run asks the judge only about the
    new tasks. A bad input is a one-line UserError. The judge's requests carry `tag` (and `canned` answers a
    scripted judge, and the dry run).
    """

    help: str  # one line: what the comparison computes
    prepare: Callable[..., PreparedComparison]
    tag: str  # the instrument's name: the request tag of the judge calls and the key of its canned answers
    canned: Canned | None = None


@dataclass(frozen=True)
class PreparedJudgeComparison:
    """A judge comparison, prepared: the judge calls to make and how to read them. Pure: it makes no call itself;
    run/judge_compare.py owns the judge's backend, engine, cache, cost and the judgements file.

    `tasks`: each has `key` (str, unique: judge + exact prompt; the judgements file's key) and `label` (one line naming
    it in a failure). `judge(task, ctx)` asks through `ctx.judge_generate` and returns the JSON-able entry kept in the
    judgements file. `finish(judging)` turns the verdicts into the comparison's JSON-able result (the agreement, the
    headlines under both judges, the verdict); run/judge_compare.py adds the judge, the usage, the cost and the data
    files and writes it.
    """

    tasks: Sequence[Any]
    judge: Callable[[Any, ItemContext], Awaitable[Mapping[str, Any]]]
    finish: Callable[[ComparisonJudging], Mapping[str, Any]]
    data_files: Sequence[FetchedFile] = ()
    scope: str = ""  # what is judged, one line (e.g. "2,280 chunks and 120 final judgements of 4 models")


@dataclass(frozen=True)
class JudgeComparison:
    """`empathybench judge compare --bench NAME --judge SPEC`: a new judge re-judges what the instrument's published
    judge judged (released transcripts), beside the published verdicts: their agreement, the headline each released
    model gets under either judge and a verdict against a margin (`stats.equivalence`). Offered as
    `Instrument.judge_comparison`.

    `prepare(*, limit, judge, judge_identity, allow_unverified)` returns a PreparedJudgeComparison (a bad input or a
    missing file is a one-line UserError). `render(result, console)` prints the result on a rich Console. The judge's
    requests carry `tag` (and `canned` answers a scripted judge, and the dry run). `evidence` reads the result's
    figures of the judge's agreement with the published judge for `empathybench judges` (run/judge_compare.py writes
    them into the result file as `evidence`, each {"against", "aspect", "statistic", "value", "ci95", "n", "unit":
    "item" | "model" | "chunk" | "conversation", "headline"}; one headline).
    """

    help: str  # one line: what is re-judged and compared
    limit_help: str  # what `--limit N` bounds
    prepare: Callable[..., PreparedJudgeComparison]
    render: Callable[[Mapping[str, Any], Any], None]
    tag: str  # the instrument's name: the request tag of the judge calls and the key of its canned answers
    canned: Canned | None = None
    evidence: Callable[[Mapping[str, Any]], list[dict[str, Any]]] | None = None


# The generic value of an item when an instrument does not say (`Instrument.item_value`): the first of these
# record fields it has.
VALUE_FIELDS = ("score", "correct", "distance")

# Where an instrument without an `order` goes in a run and the profile: after the built-ins (10, 20, ...).
PLUGIN_ORDER = 1000


def scalar_value(value: Any) -> "float | bool | None":
    """A value as a figure another harness can average: a bool, a finite float, else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


class Instrument(Generic[C, P]):
    """An instrument: what `empathybench run` runs, every report renders and inspect_ai runs as a task.

    Subclass it (C: the instrument's frozen config, P: the payload of one item). Required: `name`, `title`,
    `presets`, `options`, `configure` and `prepare`. Every other part is optional and declared here with its
    default, so nothing outside the instrument's folder needs to ask whether it exists. The registry loads one
    instance per entry point of the group `empathybench.instruments` (docs/write-an-instrument.md).
    """

    # --- required --------------------------------------------------------------------------------------------------
    name: str  # the entry-point name, the key in summary.json and the request tag of its calls
    title: str  # one line for `empathybench list`
    presets: Mapping[str, str]  # preset name -> one-line description (`--preset NAME`)
    options: Mapping[str, str]  # option name -> one-line description (`--option NAME=VALUE`)

    def configure(self, preset: str, options: Mapping[str, str]) -> C:
        """The config a preset and `--option`s give: every mistake is a one-line UserError; reads no data, calls no
        model. Called once per run; its result is what `prepare` receives."""
        raise NotImplementedError(f"instrument {self.name} has no configure()")

    def prepare(
        self, config: C, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[P]:
        """Fetch the data and choose the items of a run of `config` (the result of `configure`): its items, how one
        runs and how their records are summarised. A missing or unverifiable data file is a one-line UserError."""
        raise NotImplementedError(f"instrument {self.name} has no prepare()")

    def prepare_preset(
        self,
        preset: str,
        options: Mapping[str, str] | None = None,
        *,
        limit: int | None = None,
        seed: int = 0,
        allow_unverified: bool = False,
    ) -> PreparedBenchmark[P]:
        """`prepare` of the config `configure(preset, options)` gives: a shorthand for scripts and tests (a run
        configures each instrument once, through run/plan.py)."""
        config = self.configure(preset, options or {})
        return self.prepare(config, preset=preset, limit=limit, seed=seed, allow_unverified=allow_unverified)

    # --- optional: what a run is -----------------------------------------------------------------------------------
    order: int = PLUGIN_ORDER
    """Position in a run and in the profile (built-ins 10, 20, ...; part of a run's fingerprint)."""
    preset_configs: Mapping[str, C] = MappingProxyType({})
    """Preset name -> the config it runs before options (shown by `empathybench list --json`, checked by tests)."""
    limit_unit: str = "items"
    """What `--limit N` bounds, in a few words (e.g. "stories (1 call each)")."""
    in_default_run: bool = True
    """Part of a run without `--bench`; an instrument that needs a role the user must give opts out."""
    required_roles: frozenset[str] = frozenset()
    """Model roles besides the model under test it cannot run without ("judge", "simulator"): a run without them is
    refused in one line, except in the demo when `demo` says the model plays them itself."""
    demo: DemoPreset = DemoPreset()
    """What the demo preset (a bare `empathybench run` on the embedded model) runs of it."""
    canned: Canned | None = None
    """Its answers for `scripted/plausible[-K]` models (requests tagged with its name, "<name>:judge", ...)."""

    def check_options(self, preset: str, options: Mapping[str, str]) -> None:
        """Every `--option` mistake as a one-line UserError; the default builds the config and drops it."""
        self.configure(preset, options)

    def data_pins(self) -> "Mapping[str, DataFile]":
        """Every upstream file the instrument can use, by key (`empathybench data fetch|verify|where`). The default
        reads `pins.json` beside the instrument's module, if its package has one (data.registry.load_pins)."""
        from empathybench.data.registry import load_pins, package_of

        return load_pins(package_of(type(self).__module__))

    def expected_output_tokens(self, request: ChatRequest) -> int | None:
        """The output tokens a real model's answer to `request` is expected to have, for `run --dry-run` (None:
        estimated from the canned answer, right for short structured answers)."""
        return None

    # --- optional: results ----------------------------------------------------------------------------------------
    chart_domain: tuple[float, float] | None = None
    """The axis of its headline charts (None: from the data)."""
    profile_position: int | None = None
    """Its place in the EI profile (None: after the placed instruments, in run order)."""
    profile_title: str | None = None
    """Its short title in the profile and section headings (None: its name)."""
    profile_question: str = ""
    """The question its headline answers, in the profile."""
    rescore: RescoreCommand | None = None
    """Its `empathybench rescore <name> FILE` command."""
    comparison: RunComparison | None = None
    """A comparison of several runs that needs new judge calls (`empathybench report A B --judge SPEC`)."""
    judge_validation: JudgeValidation | None = None
    """`empathybench judge validate`: its judge against published human ratings."""
    judge_comparison: JudgeComparison | None = None
    """`empathybench judge compare`: a judge against its published judge, on the released judged outputs."""
    atlas: AtlasSource | None = None
    """Its published models, scored from their released outputs (`empathybench atlas`)."""

    def report_section(self, result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection | None:
        """Its section in report.html above the metrics table (None: report/ shows the metrics table alone)."""
        return None

    def comparison_section(self, results: Sequence[tuple[str, Mapping[str, Any]]]) -> ReportSection | None:
        """Its section in a comparison of several runs (`empathybench report A B`) from their results (the run's
        label, its summary entry), with no new call (None: the leaderboard and paired differences alone)."""
        return None

    def sample_line(self, record: Mapping[str, Any]) -> str | None:
        """One line of what was parsed from an item's replies, in the samples table (None: the parsed fields)."""
        return None

    def sample_text(self, record: Mapping[str, Any]) -> str | None:
        """The whole of an item (e.g. a conversation's every turn), shown folded under its row; plain text."""
        return None

    def item_value(self, fields: Mapping[str, Any], config: Mapping[str, Any]) -> Mapping[str, "float | bool | None"]:
        """An item's own value(s) from its record fields and the prepared config, e.g. {"score": 7.5} (None: it has
        none, e.g. unparsed); shown per sample where another harness runs the instrument (inspect). The default:
        the first of score / correct / distance the record has, else whether it parsed."""
        for key in VALUE_FIELDS:
            if key in fields:
                return {key: scalar_value(fields[key])}
        return {"parsed": not fields.get("parse_error")}
