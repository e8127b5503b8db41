"""The `empathybench` command. Thin: parses options and calls the library. Heavy imports stay lazy."""

import atexit
import gc
import inspect
import re
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from empathybench.errors import Terminated, UserError
from empathybench.models.base import DEFAULT_REQUEST_TIMEOUT_S as DEFAULT_TIMEOUT_S
from empathybench.redaction import RedactingStream, dumps_redacted, redact

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


class InstrumentRescoreGroup(TyperGroup):
    """`empathybench rescore`: the commands written here, plus every instrument's own `rescore` command.

    The instruments are asked only when the group lists or resolves its commands (never for `empathybench --help`).
    """

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*super().list_commands(ctx), *_instrument_rescore_commands()})

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        return _instrument_rescore_commands().get(cmd_name)


def _instrument_rescore_commands() -> dict[str, Any]:
    from empathybench.instruments.registry import all_benchmarks

    commands: dict[str, Any] = {}
    for instrument in all_benchmarks().values():
        if instrument.rescore is not None:
            commands[instrument.name] = _rescore_command(instrument.name, instrument.rescore)
    return commands


def _rescore_command(name: str, rescore: Any) -> Any:
    """A command from an instrument's RescoreCommand: its FILE argument and --json, like the commands below."""
    single = typer.Typer(add_completion=False, rich_markup_mode=None)

    def command(file: Path, as_json: bool = False, **flags: bool) -> None:
        from empathybench.instruments.protocol import RescoreOutput

        output = rescore.run(file, **flags)  # a bad file is a UserError: one line, from main()
        result, notes = (output.result, output.notes) if isinstance(output, RescoreOutput) else (output, ())
        if as_json or rescore.render is None:
            _emit(result, as_json)
        else:
            rescore.render(result, stdout)
        for note in notes:
            console.print(note, markup=False, highlight=False)

    # The signature typer reads: FILE, the instrument's boolean --flags (default off), then --json.
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(
            "file",
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[Path, typer.Argument(help=rescore.argument_help)],
        ),
        *(
            inspect.Parameter(
                flag, keyword, default=False, annotation=Annotated[bool, typer.Option(f"--{flag}", help=flag_help)]
            )
            for flag, flag_help in rescore.flags.items()
        ),
        inspect.Parameter(
            "as_json", keyword, default=False, annotation=Annotated[bool, typer.Option("--json", help="Print JSON")]
        ),
    ]
    command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    single.command(name, help=rescore.help)(command)
    return typer.main.get_command(single)


rescore_app = typer.Typer(
    cls=InstrumentRescoreGroup,
    help="Score stored upstream result files with EmpathyBench's scorers.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(data_app, name="data")
judge_app = typer.Typer(
    help="Check an LLM judge against published human ratings.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(rescore_app, name="rescore")
app.add_typer(judge_app, name="judge")

MODEL_ARG_OPTION_HELP = (
    "Model argument KEY=VALUE (repeatable): reasoning_effort=low|medium|high, thinking_budget=N, max_tokens=N, "
    "reasoning=true|false, sampling=true|false, token_field=max_tokens|max_completion_tokens"
)
TIMEOUT_HELP = (
    "Seconds one whole request may take (server wait and every byte of the reply), then it is retried as a "
    "timeout; not applied in process (local, llamacpp/), where max_tokens bounds a call"
)
# Everything printed passes through redaction: no API key reaches the terminal, whatever text carried it.
console = Console(file=RedactingStream("stderr"), soft_wrap=True)  # an error stays one line, however long
stdout = Console(file=RedactingStream("stdout"))


# Options that several commands share, declared once.
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display")]
TimeoutOption = Annotated[float, typer.Option("--timeout", min=0.1, max=86400, help=TIMEOUT_HELP)]
JudgeArgOption = Annotated[
    list[str] | None, typer.Option("--judge-arg", help="Model argument KEY=VALUE for the --judge, as -M")
]
DryRunJsonOption = Annotated[bool, typer.Option("--json", help="With --dry-run: print the estimate as JSON")]
BatchPollIntervalOption = Annotated[
    float, typer.Option("--batch-poll-interval", min=0.001, max=3600, help="Seconds between polls of an open batch")
]


def _parse_options(pairs: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or "." not in key:
            raise UserError(f"--option {pair!r} is not BENCHMARK.NAME=VALUE; `empathybench list` shows the options")
        options[key.strip()] = value.strip()
    return options


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def _run_dir_option(value: str) -> Path:
    # An empty --out would silently become the current directory (Path("") is ".").
    if not value.strip():
        raise UserError("--out is empty; give the run directory, e.g. --out runs/my-run")
    return Path(value)


def _interrupted(exc: KeyboardInterrupt) -> typer.Exit:
    """Say where the finished items are and how to resume; 130 for Ctrl-C, 143 for SIGTERM (128 + signal)."""
    run_dir = getattr(exc, "run_dir", None)
    where = f" (run directory {run_dir})" if run_dir is not None else ""
    console.print(f"interrupted; run the same command again to resume{where}", markup=False, highlight=False)
    return typer.Exit(128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT))


@app.callback(invoke_without_command=True)
def _default(ctx: typer.Context) -> None:
    """With no command: the quick preset of every benchmark on the embedded model."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(run)


@app.command()
def run(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="local | openai/<model> | anthropic/<model> | llamacpp/<file.gguf> | scripted/<name>",
        ),
    ] = "local",
    bench: Annotated[
        list[str] | None,
        typer.Option("--bench", "-b", help="Benchmark names (repeat or comma-separate); default: all"),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset", "-p", help="quick | paper | full | demo (default: demo on the embedded model, else quick)"
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            "-n",
            help="At most N items per benchmark (EmotionBench: N situations and at most N runs per measure); "
            "what an item is: `empathybench list`",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", parser=_run_dir_option, help="Run directory; the same command with the same --out resumes"
        ),
    ] = None,
    max_concurrency: Annotated[
        int | None,
        typer.Option(
            "--max-concurrency",
            "-c",
            help="Most calls in flight, 1-256 (default 16 for HTTP, 1 in process): a ceiling; the limit is halved "
            "on 429/503/529 answers and grows back by one at a time",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling and item selection (0 to 4294967295)")] = 0,
    base_url: Annotated[str | None, typer.Option(help="Server URL for openai/ (else OPENAI_BASE_URL)")] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Benchmark option BENCH.NAME=VALUE (see `empathybench list`)"),
    ] = None,
    allow_unverified: Annotated[
        bool,
        typer.Option(help="Accept data files whose checksum differs from the pin (recorded in run.json)"),
    ] = False,
    no_cache: NoCacheOption = False,
    quiet: QuietOption = False,
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="Model spec of the judge for judged benchmarks (default: the model itself)"),
    ] = None,
    repeats: Annotated[
        int,
        typer.Option("--repeats", help="Run N times (1-100) with seeds seed..seed+N-1 and report run-to-run variation"),
    ] = 1,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help=MODEL_ARG_OPTION_HELP)] = None,
    judge_arg: JudgeArgOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Call no model: print the requests, estimated tokens and cost per benchmark, and exit"
        ),
    ] = False,
    as_json: DryRunJsonOption = False,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            help="Budget in USD over the whole run: stop before a request would exceed it (exit 3); the same "
            "command with a larger budget continues",
        ),
    ] = None,
    price: Annotated[
        str | None,
        typer.Option("--price", help="The model's price: input=X,output=Y[,cached=Z] in USD per million tokens"),
    ] = None,
    judge_price: Annotated[str | None, typer.Option("--judge-price", help="The judge's price, as --price")] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send each round of requests as one batch of the provider's batch API (openai/, anthropic/): "
            "half the price, answers within 24 h; a killed run resumes polling the same batch",
        ),
    ] = False,
    batch_poll_interval: BatchPollIntervalOption = 30.0,
    batch_fallback: Annotated[
        str,
        typer.Option(
            "--batch-fallback",
            help="live | fail: a request that no batch answered usably (failed, cut off, malformed) after "
            "re-asks in 2 more batches is asked live, or recorded as failed",
        ),
    ] = "live",
    max_reply_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-reply-bytes",
            help="Refuse any server reply larger than N bytes, decompressed (default: 32 bytes per token of the "
            "request's budget, at least 1 MB, at most 64 MB; or EMPATHYBENCH_MAX_REPLY_BYTES)",
        ),
    ] = None,
) -> None:
    """Run benchmarks against a model and write a run directory."""
    from empathybench.report.terminal import demo_lines, demo_next_step, print_summary
    from empathybench.run.options import RunOptions, default_preset
    from empathybench.run.repeats import execute_repeats

    preset = preset or default_preset(model, bench, limit)
    options = RunOptions(
        model=model,
        benchmarks=bench,
        preset=preset,
        limit=limit,
        out=out,
        max_concurrency=max_concurrency,
        seed=seed,
        base_url=base_url,
        allow_unverified=allow_unverified,
        options=_parse_options(option or []),
        use_cache=not no_cache,
        show_progress=not quiet,
        judge=judge,
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
    if as_json and not dry_run:
        raise UserError("--json prints the --dry-run estimate; add --dry-run (a run's results are in summary.json)")
    if dry_run:
        _print_dry_run(options, repeats, as_json)
        return
    if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        result = execute_repeats(options, repeats, console)
    except KeyboardInterrupt as exc:  # typer would turn it into a silent exit 130
        raise _interrupted(exc) from None
    print_summary(stdout, result.summary)
    stdout.print(Text.assemble("run directory: ", (str(result.directory), "bold")))
    if preset == "demo":
        for line in demo_lines(result.summary, model):
            stdout.print(Text(line), soft_wrap=True)
        stdout.print(demo_next_step(model), markup=False, highlight=False, soft_wrap=True)
    if result.stats.items_failed:
        console.print(
            f"[red]{result.stats.items_failed} items could not be answered; run the same command again to retry them[/]"
        )
        raise typer.Exit(1)


def _print_dry_run(options: Any, repeats: int, as_json: bool) -> None:
    from empathybench.run.cost import render_estimate
    from empathybench.run.dry_run import dry_run

    estimate = dry_run(options, console)
    if repeats > 1:
        estimate["notes"].append(f"this is one run; --repeats {repeats} runs it {repeats} times (other seeds)")
    if as_json:
        _emit(estimate, True)
    else:
        render_estimate(stdout, estimate)


@app.command("report")
def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="One run directory (re-render) or several (compare)")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output name: writes NAME.html and NAME.md (and NAME.json for a comparison); a .html, .md or .json "
            "ending is taken as NAME's",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Judge for the instruments' judged comparisons of several runs (e.g. pairwise ratings)",
        ),
    ] = None,
    judge_arg: JudgeArgOption = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL of an openai/ judge (else OPENAI_BASE_URL)")] = None,
    no_cache: NoCacheOption = False,
    max_concurrency: Annotated[
        int | None, typer.Option("--max-concurrency", "-c", min=1, help="Most judge calls in flight")
    ] = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    quiet: QuietOption = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="With --judge: call no model, print the judge requests, tokens and cost"),
    ] = False,
    as_json: DryRunJsonOption = False,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            help="With --judge: budget in USD for this command's judge calls: stop before a request would exceed it "
            "(exit 3); the same command with a larger budget asks only for the verdicts still missing",
        ),
    ] = None,
    judge_price: Annotated[
        str | None,
        typer.Option("--judge-price", help="The judge's price: input=X,output=Y[,cached=Z] in USD per million tokens"),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="With --judge: send the judge calls as one batch of the provider's batch API (openai/, anthropic/); "
            "a killed command resumes polling the same batch",
        ),
    ] = False,
    batch_poll_interval: BatchPollIntervalOption = 30.0,
) -> None:
    """Re-render a run's report, or compare several runs: leaderboard, paired differences, profiles overlaid.

    With --judge, instruments that compare runs with new judge calls do so (e.g. pairwise ratings).
    """
    from empathybench.report.compare import compare_runs
    from empathybench.report.html import render_comparison, write_run_reports
    from empathybench.report.markdown import render_comparison_markdown
    from empathybench.report.terminal import print_comparison

    if out is not None:
        _check_report_target(out)
        out = _report_target(out)
    runs = _load_runs(run_dirs)
    if judge is not None and len(runs) < 2:
        raise UserError("--judge compares several runs: give at least two run directories")
    judge_only = {
        "--dry-run": dry_run,
        "--max-cost": max_cost is not None,
        "--judge-price": judge_price,
        "--batch": batch,
    }
    if judge is None and any(judge_only.values()):
        raise UserError(f"{next(k for k, v in judge_only.items() if v)} applies to the judge calls of --judge")
    if as_json and not dry_run:
        raise UserError("--json prints the --dry-run estimate; add --dry-run")
    if judge is not None:
        from empathybench.models.registry import check_model_args
        from empathybench.run.comparisons import JudgeSettings

        check_model_args(judge, judge_arg or [], "--judge-arg")
        if base_url is not None:
            from empathybench.run.options import check_base_url

            check_base_url(base_url, "--base-url")
        settings = JudgeSettings(
            judge,
            judge_args=judge_arg or [],
            base_url=base_url,
            use_cache=not no_cache,
            max_concurrency=max_concurrency,
            request_timeout_s=timeout,
            judge_price=judge_price,
            max_cost=max_cost,
            batch=batch,
            batch_poll_interval_s=batch_poll_interval,
        )
        if dry_run:
            from empathybench.run.comparisons import estimate_comparisons, render_comparison_estimate

            estimate = estimate_comparisons(runs, settings, target=out or Path("comparison.html"))
            if as_json:
                _emit(estimate, True)
            else:
                render_comparison_estimate(stdout, estimate)
            return
    if len(runs) == 1:
        run = runs[0]
        # A run read from inspect logs gets its report beside the logs, under a name of its own.
        own_name = "report.html" if run.origin is None else f"empathybench-{_slug(run.label)}.html"
        target = out or run.directory / own_name
        with _writing(target):
            write_run_reports(target, run.summary, run.run_info, run.samples())
        stdout.print(Text.assemble("report: ", (str(target), "bold")))
        return
    comparison = compare_runs(runs)
    target = out or Path("comparison.html")
    written = [target, target.with_suffix(".md"), target.with_suffix(".json")]
    judged: dict[str, Any] = {}
    if judge is not None:
        from empathybench.run.comparisons import judged_comparisons

        judged = judged_comparisons(runs, settings, target=target, console=None if quiet else console)
        comparison["instrument_comparisons"] = {name: dict(output.result) for name, output in judged.items()}
    sections = {name: (output.title, output.section) for name, output in judged.items()}
    with _writing(target):
        html = render_comparison(comparison, [r.summary for r in runs], sections=sections)
        target.write_text(redact(html), encoding="utf-8")
        written[1].write_text(redact(render_comparison_markdown(comparison, sections=sections)), encoding="utf-8")
        written[2].write_text(dumps_redacted(comparison, indent=2) + "\n", "utf-8")
    print_comparison(stdout, comparison, written)
    for output in judged.values():
        for note in output.notes:
            stdout.print(Text(redact(note)), soft_wrap=True)


def _load_runs(paths: list[Path]) -> list[Any]:
    """Run directories and inspect logs (files or directories of `inspect eval empathybench/<name>` logs), in order."""
    from empathybench.rundir.reader import load_run

    runs: list[Any] = []
    for path in paths:
        if (path / "summary.json").exists() or not (path.is_file() or path.is_dir()):
            runs.append(load_run(path))  # a run directory (a missing path is load_run's one-line error)
            continue
        try:
            from empathybench.inspect_bridge.logs import is_inspect_log_path, load_inspect_runs
        except ImportError:
            if path.suffix in (".eval", ".json") or path.is_dir():
                raise UserError(
                    f"{path} is not a run directory; to read inspect logs install the extra: "
                    "pip install 'empathybench[inspect]'"
                ) from None
            raise
        if not is_inspect_log_path(path):
            runs.append(load_run(path))
            continue
        found = load_inspect_runs([path])
        for run in found:
            console.print(Text.assemble("read ", (run.label, "bold"), " from ", Text(str(run.origin))), soft_wrap=True)
        runs.extend(found)
    return runs


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


REPORT_SUFFIXES = (".html", ".htm", ".md", ".json")


def _report_target(out: Path) -> Path:
    """The .html file of `report --out NAME`: NAME.html (a .html/.md/.json ending is NAME's own), its .md and .json
    beside it; never a file without an extension that a browser shows as source."""
    base = out.with_suffix("") if out.suffix.lower() in REPORT_SUFFIXES else out
    return base.with_name(base.name + ".html")


def _check_report_target(out: Path) -> None:
    """`report --out` must name a file in a writable directory; checked before any report is rendered."""
    from empathybench.paths import check_writable_dir

    if out.is_dir():
        raise UserError(f"--out {out} is a directory; give a file name, e.g. {out / 'report.html'}")
    check_writable_dir(out.parent, "the directory of --out")


@contextmanager
def _writing(target: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise UserError(f"cannot write {exc.filename or target}: {exc.strerror or exc}") from None


@app.command("list")
def list_command() -> None:
    """Benchmarks, presets, options and model providers."""
    from rich.padding import Padding

    from empathybench.instruments.registry import all_benchmarks, provider, refused
    from empathybench.models.registry import PROVIDERS

    def line(text: Text, indent: int = 0) -> None:
        # Wrapped at the terminal's width with a hanging indent; every option name stays whole on its own line.
        stdout.print(Padding(text, (0, 0, 0, indent), expand=False))

    for benchmark in all_benchmarks().values():
        line(Text.assemble((benchmark.name, "bold"), " — ", benchmark.title))
        source = provider(benchmark.name)
        if source["distribution"] != "empathybench":
            line(Text(f"plugin: package {source['distribution']} {source['version'] or ''}".rstrip()), 2)
        line(Text(f"--limit N: at most N {getattr(benchmark, 'limit_unit', 'items')}"), 2)
        line(Text("presets (--preset NAME):"), 2)
        for name, text in benchmark.presets.items():
            line(Text.assemble((name, "bold"), f": {text}"), 4)
        line(Text(f"options (--option {benchmark.name}.NAME=VALUE):"), 2)
        for name, text in benchmark.options.items():
            line(Text(f"{benchmark.name}.{name}", "bold"), 4)
            line(Text(text), 8)
        stdout.print()
    if refused():
        line(Text("Refused plugin registrations (not run under these names):", "bold"))
        for refusal in refused():
            line(Text(f"{refusal.name}: {' and '.join(refusal.packages)}: {refusal.reason}"), 2)
        stdout.print()
    line(Text("Model providers (--model / --judge):", "bold"))
    for name, text in PROVIDERS.items():
        line(Text.assemble((name, "bold"), f": {text}"), 2)


def _data_keys(bench: list[str] | None) -> list[str]:
    from empathybench.data.registry import REGISTRY
    from empathybench.instruments.registry import resolve_benchmarks

    if not bench:
        return list(REGISTRY)
    keys: list[str] = []
    for benchmark in resolve_benchmarks(bench):
        keys.extend(getattr(benchmark, "data_keys", ()))
    return keys


@data_app.command("fetch")
def data_fetch(
    bench: Annotated[list[str] | None, typer.Option("--bench", "-b", help="Only these benchmarks' files")] = None,
    allow_unverified: Annotated[bool, typer.Option(help="Keep files whose checksum differs")] = False,
) -> None:
    """Download (or copy from EMPATHYBENCH_MIRROR) and verify the pinned data files."""
    from empathybench.data.fetch import describe_source, fetch
    from empathybench.errors import DataError

    console.print(f"fetching from {describe_source()}", highlight=False, markup=False)
    failures = 0
    for key in _data_keys(bench):
        try:
            fetched = fetch(key, allow_unverified=allow_unverified)
        except DataError as exc:
            failures += 1
            console.print(Text.assemble(("✗ ", "red"), str(exc)))
            continue
        mark = ("✓", "green") if fetched.verified else ("!", "yellow")
        stdout.print(Text.assemble(mark, f" {key}"))
    if failures:
        raise UserError(f"{failures} data files could not be fetched")


@data_app.command("verify")
def data_verify(
    bench: Annotated[list[str] | None, typer.Option("--bench", "-b", help="Only these benchmarks' files")] = None,
) -> None:
    """Check the cached data files against their pinned hashes (no download)."""
    from empathybench.data.fetch import verify_cached

    bad = missing = 0
    for key in _data_keys(bench):
        status, detail = verify_cached(key)
        if status == "ok":
            stdout.print(Text.assemble(("ok", "green"), f"       {key}"))
        elif status == "missing":
            missing += 1
            stdout.print(Text.assemble(("missing", "yellow"), f"  {key}"))
        else:
            bad += 1
            stdout.print(Text.assemble(("mismatch", "red"), f" {key}: {detail}"))
    problems = [f"{bad} do not match their pins"] * bool(bad) + [f"{missing} are missing"] * bool(missing)
    if problems:
        fix = "; run `empathybench data fetch`" if missing else ""
        raise UserError(f"cached data files: {' and '.join(problems)}{fix}")


@data_app.command("where")
def data_where(
    bench: Annotated[list[str] | None, typer.Option("--bench", "-b", help="Only these benchmarks' files")] = None,
) -> None:
    """Where data is read from and cached, and the pinned source of each file."""
    from empathybench.data.fetch import cached_path, describe_source, source_url
    from empathybench.data.registry import REGISTRY
    from empathybench.paths import cache_dir

    stdout.print(f"cache: {cache_dir()}", highlight=False, markup=False)
    stdout.print(f"source: {describe_source()}", highlight=False, markup=False)
    for key in _data_keys(bench):
        entry = REGISTRY[key]
        stdout.print(f"{key}\n  from {source_url(entry)}\n  at   {cached_path(entry)}", highlight=False, markup=False)


def _emit(result: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(dumps_redacted(result, indent=2) + "\n")
    else:
        from rich.pretty import pprint

        pprint(result, console=stdout, expand_all=False)


@judge_app.command("validate")
def judge_validate(
    judge: Annotated[str, typer.Option("--judge", help="Model spec of the judge to validate")],
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="At most N replies, stratified by source and emotion")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for the judge's calls")] = 0,
    base_url: Annotated[str | None, typer.Option(help="Server URL for openai/ (else OPENAI_BASE_URL)")] = None,
    max_concurrency: Annotated[
        int | None,
        typer.Option(
            "--max-concurrency",
            "-c",
            min=1,
            help="Most calls in flight (default 16 for HTTP, 1 in process): a ceiling, lowered on 429/503/529",
        ),
    ] = None,
    attempts: Annotated[int, typer.Option(help="Judge asks per reply, the first included (1-10)")] = 3,
    no_cache: NoCacheOption = False,
    allow_unverified: Annotated[bool, typer.Option(help="Accept data whose checksum differs from the pin")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full figures as JSON instead of tables")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also write the full figures as JSON here")] = None,
    quiet: QuietOption = False,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    judge_arg: Annotated[
        list[str] | None, typer.Option("--judge-arg", help="Model argument KEY=VALUE for the judge, as run's -M")
    ] = None,
) -> None:
    """Rate released replies (Welivita & Pu 2024) with the judge; agreement with the human ratings."""
    from empathybench.instruments.support import MAX_ATTEMPTS
    from empathybench.run.options import MAX_CONCURRENCY

    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise UserError(f"--attempts must be between 1 and {MAX_ATTEMPTS}, not {attempts}")
    if max_concurrency is not None and not 1 <= max_concurrency <= MAX_CONCURRENCY:
        raise UserError(f"--max-concurrency must be between 1 and {MAX_CONCURRENCY}, not {max_concurrency}")
    if out is not None and out.is_dir():
        raise UserError(f"--out {out} is a directory; give a file name, e.g. {out / 'judge-validation.json'}")
    if out is not None:
        from empathybench.paths import check_writable_dir

        check_writable_dir(out.parent, "the directory of --out")  # before the judge is asked anything
    if base_url is not None:
        from empathybench.run.options import check_base_url

        check_base_url(base_url, "--base-url")
    from empathybench.models.registry import check_model_args

    check_model_args(judge, judge_arg or [], "--judge-arg")
    from empathybench.run.judge import installed_judge_validation, validate_judge

    validation = installed_judge_validation()
    report = validate_judge(
        validation,
        judge,
        limit=limit,
        seed=seed,
        base_url=base_url,
        max_concurrency=max_concurrency,
        use_cache=not no_cache,
        allow_unverified=allow_unverified,
        attempts=attempts,
        console=None if quiet else console,
        request_timeout_s=timeout,
        judge_args=judge_arg or [],
    )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps_redacted(report, indent=2) + "\n", encoding="utf-8")
    if as_json:
        _emit(report, as_json=True)
    else:
        validation.render(report, stdout)
    if report["n_failed_calls"]:
        console.print(
            Text(
                f"{report['n_failed_calls']} judge calls failed and are left out of the figures "
                f"(first: {report['call_errors'][0]}); run the same command again to retry them",
                "red",
            )
        )
        raise typer.Exit(1)


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
