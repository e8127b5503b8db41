"""The `empathybench` command: its commands and their options, nothing else. Each command hands its parsed options
to the library (cli_commands.py says what each does); heavy imports stay lazy."""

import atexit
import gc
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from empathybench.cli_commands import InstrumentRescoreGroup, JudgeCalls, judge_settings, parse_options
from empathybench.cli_options import (
    AgainstPublishedOption,
    AllowUnverifiedOption,
    AtlasFileOption,
    AtlasHtmlOption,
    AtlasRunsOption,
    BaseUrlOption,
    BatchFallbackOption,
    BatchOption,
    BatchPollIntervalOption,
    BenchmarkOptionOption,
    BenchOption,
    ComparisonBenchOption,
    ComparisonJsonOption,
    ComparisonLimitOption,
    ComparisonOutOption,
    ConcurrencyOption,
    DataBenchOption,
    DryRunOption,
    EvidenceHtmlOption,
    EvidenceJsonOption,
    FamilyOption,
    JsonEstimateOption,
    JudgeArgOption,
    JudgeBaseUrlOption,
    JudgeOption,
    JudgePriceOption,
    JudgeServerOption,
    LimitOption,
    MaxCostOption,
    MaxReplyBytesOption,
    ModelArgOption,
    ModelOption,
    NoCacheOption,
    PresetOption,
    PriceOption,
    QuietOption,
    RepeatsOption,
    ReportOutOption,
    RunDirOption,
    SeedOption,
    SimulatorArgOption,
    SimulatorBaseUrlOption,
    SimulatorOption,
    SimulatorPriceOption,
    TimeoutOption,
    ValidatedBenchOption,
    ValidationLimitOption,
    ValidationReportsArgument,
)
from empathybench.errors import UserError
from empathybench.models.base import DEFAULT_REQUEST_TIMEOUT_S as DEFAULT_TIMEOUT_S
from empathybench.redaction import RedactingStream

app = typer.Typer(
    help="Run published empathy and emotional-intelligence instruments against any LLM, beside human norms.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help (click's formatter): typer's rich panels print a type beside every flag (`--help <bool>`).
    rich_markup_mode=None,
)


data_app = typer.Typer(
    help="Fetch, verify and locate the pinned upstream data files.", no_args_is_help=True, rich_markup_mode=None
)
rescore_app = typer.Typer(
    cls=InstrumentRescoreGroup,
    help="Score stored upstream result files with EmpathyBench's scorers.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
judge_app = typer.Typer(
    help="Check an LLM judge against published human ratings and against an instrument's published judge.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(data_app, name="data")
app.add_typer(rescore_app, name="rescore")
atlas_app = typer.Typer(
    help="The published models, recomputed from their released outputs: leaderboards with your runs placed among "
    "them, the instruments' agreement, and the build of the atlas itself.",
    rich_markup_mode=None,
)
app.add_typer(judge_app, name="judge")
app.add_typer(atlas_app, name="atlas")

# Everything printed passes through redaction: no API key reaches the terminal, whatever text carried it.
console = Console(file=RedactingStream("stderr"), soft_wrap=True)  # an error stays one line, however long
stdout = Console(file=RedactingStream("stdout"))
InstrumentRescoreGroup.stdout, InstrumentRescoreGroup.console = stdout, console


@app.callback(invoke_without_command=True)
def _default(ctx: typer.Context) -> None:
    """With no command: the quick preset of every benchmark on the embedded model."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(run)


@app.command()
def run(
    model: ModelOption = "local",
    bench: BenchOption = None,
    preset: PresetOption = None,
    limit: LimitOption = None,
    out: RunDirOption = None,
    max_concurrency: ConcurrencyOption = None,
    seed: SeedOption = 0,
    base_url: BaseUrlOption = None,
    option: BenchmarkOptionOption = None,
    allow_unverified: AllowUnverifiedOption = False,
    no_cache: NoCacheOption = False,
    quiet: QuietOption = False,
    judge: JudgeOption = None,
    simulator: SimulatorOption = None,
    repeats: RepeatsOption = 1,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    model_arg: ModelArgOption = None,
    judge_arg: JudgeArgOption = None,
    simulator_arg: SimulatorArgOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    simulator_base_url: SimulatorBaseUrlOption = None,
    dry_run: DryRunOption = False,
    as_json: JsonEstimateOption = False,
    max_cost: MaxCostOption = None,
    price: PriceOption = None,
    judge_price: JudgePriceOption = None,
    simulator_price: SimulatorPriceOption = None,
    batch: BatchOption = False,
    batch_poll_interval: BatchPollIntervalOption = 30.0,
    batch_fallback: BatchFallbackOption = "live",
    max_reply_bytes: MaxReplyBytesOption = None,
) -> None:
    """Run benchmarks against a model and write a run directory."""
    from empathybench.cli_commands import run_command
    from empathybench.run.options import RunOptions, default_preset

    options = RunOptions(
        model=model,
        benchmarks=bench,
        preset=preset or default_preset(model, bench, limit),
        limit=limit,
        out=out,
        max_concurrency=max_concurrency,
        seed=seed,
        base_url=base_url,
        allow_unverified=allow_unverified,
        options=parse_options(option or []),
        use_cache=not no_cache,
        show_progress=not quiet,
        judge=judge,
        judge_base_url=judge_base_url,
        simulator=simulator,
        simulator_args=list(simulator_arg or []),
        simulator_base_url=simulator_base_url,
        simulator_price=simulator_price,
        request_timeout_s=timeout,
        model_args=list(model_arg or []),
        judge_args=list(judge_arg or []),
        max_cost=max_cost,
        price=price,
        judge_price=judge_price,
        batch=batch,
        batch_poll_interval_s=batch_poll_interval,
        batch_fallback=batch_fallback,
        max_reply_bytes=max_reply_bytes,
    )
    run_command(options, repeats, dry_run, as_json, console, stdout)


@app.command("report")
def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="One run directory (re-render) or several (compare)")],
    out: ReportOutOption = None,
    judge: JudgeOption = None,
    judge_arg: JudgeArgOption = None,
    judge_base_url: JudgeServerOption = None,
    no_cache: NoCacheOption = False,
    max_concurrency: ConcurrencyOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    quiet: QuietOption = False,
    dry_run: DryRunOption = False,
    as_json: JsonEstimateOption = False,
    max_cost: MaxCostOption = None,
    judge_price: JudgePriceOption = None,
    batch: BatchOption = False,
    batch_poll_interval: BatchPollIntervalOption = 30.0,
    against_published: AgainstPublishedOption = False,
) -> None:
    """Re-render a run's report, or compare several runs: leaderboard, paired differences, profiles overlaid.

    With --judge, instruments that compare runs with new judge calls do so (e.g. pairwise ratings); --dry-run,
    --max-cost, --judge-price and --batch apply to those calls.
    """
    if against_published:
        from empathybench.cli_commands import report_against_published

        report_against_published(run_dirs, as_json, stdout, alone=judge is None and not dry_run and out is None)
        return
    from empathybench.cli_commands import report_command as report_runs
    from empathybench.cli_commands import report_judge_settings

    calls = JudgeCalls(judge_arg, judge_base_url, judge_price, not no_cache, max_concurrency, timeout, max_cost)
    settings = report_judge_settings(judge, calls, dry_run, as_json, batch, batch_poll_interval)
    report_runs(run_dirs, out, settings, dry_run=dry_run, as_json=as_json, quiet=quiet, console=console, stdout=stdout)


@app.command("list")
def list_command() -> None:
    """Benchmarks, presets, options and model providers."""
    from empathybench.cli_commands import list_instruments

    list_instruments(stdout)


@data_app.command("fetch")
def data_fetch(
    bench: DataBenchOption = None,
    allow_unverified: Annotated[bool, typer.Option(help="Keep files whose checksum differs")] = False,
) -> None:
    """Download (or copy from EMPATHYBENCH_MIRROR) and verify every pinned file of the instruments (without --bench,
    of `empathybench judges` too): a later run reads them from the cache with no network (prepare a machine without
    internet this way)."""
    from empathybench.cli_commands import data_fetch as fetch_files

    fetch_files(bench, allow_unverified, console, stdout)


@data_app.command("verify")
def data_verify(bench: DataBenchOption = None) -> None:
    """Check the cached data files against their pinned hashes (no download)."""
    from empathybench.cli_commands import data_verify as verify_files

    verify_files(bench, stdout)


@data_app.command("where")
def data_where(bench: DataBenchOption = None) -> None:
    """Where data is read from and cached, and the pinned source of each file."""
    from empathybench.cli_commands import data_where as where_files

    where_files(bench, stdout)


@judge_app.command("validate")
def judge_validate(
    judge: Annotated[str, typer.Option("--judge", help="Model spec of the judge to validate")],
    limit: ValidationLimitOption = None,
    seed: Annotated[int, typer.Option(help="Seed for the judge's calls")] = 0,
    judge_base_url: JudgeServerOption = None,
    max_concurrency: ConcurrencyOption = None,
    attempts: Annotated[int, typer.Option(help="Judge asks per item, the first included (1-10)")] = 3,
    no_cache: NoCacheOption = False,
    allow_unverified: AllowUnverifiedOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full figures as JSON instead of tables")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also write the full figures as JSON here")] = None,
    quiet: QuietOption = False,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    judge_arg: JudgeArgOption = None,
    bench: ValidatedBenchOption = None,
) -> None:
    """Have the judge rate an instrument's items with known human ratings; its agreement with the humans."""
    from empathybench.cli_commands import judge_validate as validate

    calls = JudgeCalls(judge_arg, judge_base_url, None, not no_cache, max_concurrency, timeout, None)
    progress = None if quiet else console
    validate(judge, calls, limit, seed, attempts, allow_unverified, progress, out, as_json, console, stdout, bench)


@judge_app.command("compare")
def judge_compare(
    judge: Annotated[str, typer.Option("--judge", help="Model spec of the judge to compare with the published judge")],
    bench: ComparisonBenchOption = None,
    limit: ComparisonLimitOption = None,
    out: ComparisonOutOption = None,
    judge_base_url: JudgeServerOption = None,
    judge_arg: JudgeArgOption = None,
    judge_price: JudgePriceOption = None,
    dry_run: DryRunOption = False,
    max_cost: MaxCostOption = None,
    as_json: ComparisonJsonOption = False,
    max_concurrency: ConcurrencyOption = None,
    no_cache: NoCacheOption = False,
    allow_unverified: AllowUnverifiedOption = False,
    quiet: QuietOption = False,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
) -> None:
    """Re-judge what an instrument's published judge judged (its released outputs) with the judge, beside the
    published verdicts: agreement per criterion, the headline each released model gets under either judge, and a
    verdict against the instrument's margin (consistent, differs, inconclusive). What --limit N counts is the
    instrument's: the dry run says it."""
    from empathybench.cli_commands import judge_compare as compare

    calls = JudgeCalls(judge_arg, judge_base_url, judge_price, not no_cache, max_concurrency, timeout, max_cost)
    compare(bench, judge_settings(judge, calls), limit, out, allow_unverified, dry_run, as_json, quiet, console, stdout)


@atlas_app.callback(invoke_without_command=True)
def atlas_show(
    ctx: typer.Context,
    runs: AtlasRunsOption = None,
    bench: BenchOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboards as JSON")] = False,
    html: AtlasHtmlOption = None,
    atlas_file: AtlasFileOption = None,
) -> None:
    """Per instrument, the published models' recomputed figures with intervals, their published figures, and your
    runs placed among them."""
    if ctx.invoked_subcommand is not None:
        return
    from empathybench.cli_commands import atlas_show as show

    show(runs or [], bench, as_json, html, atlas_file, console, stdout)


@atlas_app.command("build")
def atlas_build(
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the atlas (JSON)")] = Path("atlas.json"),
    bench: BenchOption = None,
    quiet: QuietOption = False,
) -> None:
    """Score every released per-model output the instruments know (read through the pinned fetch code: the mirror
    when EMPATHYBENCH_MIRROR is set, else GitHub at the pinned commits) and write the atlas."""
    from empathybench.cli_commands import atlas_build as build

    build(out, bench, None if quiet else console, stdout)


@atlas_app.command("agreement")
def atlas_agreement(
    as_json: Annotated[bool, typer.Option("--json", help="Print the matrix as JSON")] = False,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Also write the matrix as CSV here")] = None,
    family: FamilyOption = False,
    atlas_file: AtlasFileOption = None,
) -> None:
    """Do the instruments agree? Spearman's rho per pair of instruments over the models both scored, with its
    bootstrap interval and n, and each instrument against a published general-capability figure."""
    from empathybench.cli_commands import atlas_agreement as agreement

    agreement(as_json, csv_out, family, atlas_file, stdout)


@atlas_app.command("model")
def atlas_model(
    name: Annotated[str, typer.Argument(help="A model as any upstream published it, its id, or a family")],
    as_json: Annotated[bool, typer.Option("--json", help="Print it as JSON")] = False,
    atlas_file: AtlasFileOption = None,
) -> None:
    """Everything the atlas holds about one checkpoint: each instrument's figure with its settings, the published
    figure and the difference, the source files and the setting effects measured on it (a family lists its
    checkpoints)."""
    from empathybench.cli_commands import atlas_model as show_model

    show_model(name, as_json, atlas_file, stdout)


@app.command("judges")
def judges_command(
    reports: ValidationReportsArgument = None, as_json: EvidenceJsonOption = False, html: EvidenceHtmlOption = None
) -> None:
    """How far can a judge be trusted? Per judge model and source of evidence, its agreement with people (or with
    the published judge), the interval, n and the unit: MentalAlign-70k's clinical experts and four LLM judges
    (the published tables recomputed, every difference named), the published boards that changed their judge (the
    same models under both), and your own `judge validate` reports and `judge compare` results."""
    from empathybench.cli_commands import judges_evidence

    judges_evidence(reports or [], as_json, html, console, stdout)


def main() -> None:
    # At exit the interpreter scans everything still alive for cycles; frozen objects are skipped. Every file and
    # connection is closed by then, so the scan only costs time: ~0.2 s after the OpenAI SDK, ~0.5 s after
    # Anthropic's (bench/README.md). At exit, not here: a program that calls main() goes on collecting as before.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:
        app()
    except UserError as exc:
        console.print(Text.assemble(("error:", "red"), f" {exc}"))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        console.print("interrupted; finished items are saved, run the same command again to resume")
        sys.exit(130)
