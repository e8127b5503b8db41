"""What each command of `empathybench` does, behind its definition in cli.py: each function takes the command's
parsed options and the two consoles (stdout for results, stderr for notices), calls the library and prints."""

import inspect
import re
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from empathybench.errors import Terminated, UserError
from empathybench.redaction import dumps_redacted, redact

REPORT_SUFFIXES = (".html", ".htm", ".md", ".json")


def emit(result: Any, as_json: bool, stdout: Console) -> None:
    """A JSON-able result: as JSON on stdout (secrets redacted), or pretty-printed."""
    if as_json:
        sys.stdout.write(dumps_redacted(result, indent=2) + "\n")
    else:
        from rich.pretty import pprint

        pprint(result, console=stdout, expand_all=False)


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """`--option BENCH.NAME=VALUE` pairs; a malformed one is one line."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or "." not in key:
            raise UserError(f"--option {pair!r} is not BENCHMARK.NAME=VALUE; `empathybench list` shows the options")
        options[key.strip()] = value.strip()
    return options


def run_dir_option(value: str) -> Path:
    # An empty --out would silently become the current directory (Path("") is ".").
    if not value.strip():
        raise UserError("--out is empty; give the run directory, e.g. --out runs/my-run")
    return Path(value)


@dataclass(frozen=True)
class JudgeCalls:
    """How a command's judge is reached and its calls made: its --judge-arg, --judge-base-url and --judge-price, the
    cache, --max-concurrency, --timeout and --max-cost (report --judge and judge compare share them)."""

    args: Sequence[str] | None
    base_url: str | None
    price: str | None
    use_cache: bool
    max_concurrency: int | None
    timeout: float
    max_cost: float | None


def judge_settings(judge: str, calls: JudgeCalls, batch: bool = False, batch_poll_interval: float = 30.0) -> Any:
    """The run/comparisons JudgeSettings of a command's judge options (its role planned as a run plans its roles)."""
    from empathybench.run.comparisons import JudgeSettings
    from empathybench.run.options import check_max_concurrency
    from empathybench.run.plan import plan_role

    check_max_concurrency(calls.max_concurrency)
    role = plan_role("judge", judge, list(calls.args or []), base_url=calls.base_url, price=calls.price)
    return JudgeSettings(
        role, calls.use_cache, calls.max_concurrency, calls.timeout, calls.max_cost, batch, batch_poll_interval
    )


def report_judge_settings(
    judge: str | None, calls: JudgeCalls, dry_run: bool, as_json: bool, batch: bool, batch_poll_interval: float
) -> Any:
    """`report`'s judge options checked (the options of judge calls need --judge; --json needs --dry-run here) and
    made its JudgeSettings; None without --judge."""
    from empathybench.run.options import check_max_concurrency

    judge_only = {"--dry-run": dry_run, "--max-cost": calls.max_cost is not None, "--judge-price": calls.price}
    judge_only["--batch"] = batch
    if judge is None and any(judge_only.values()):
        raise UserError(f"{next(k for k, v in judge_only.items() if v)} applies to the judge calls of --judge")
    if as_json and not dry_run:
        raise UserError("--json prints the --dry-run estimate (or the --against-published check); add one of them")
    if judge is None:
        check_max_concurrency(calls.max_concurrency)
        return None
    return judge_settings(judge, calls, batch, batch_poll_interval)


def raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def interrupted(exc: KeyboardInterrupt, console: Console) -> typer.Exit:
    """Say where the finished items are and how to resume; 130 for Ctrl-C, 143 for SIGTERM (128 + signal)."""
    run_dir = getattr(exc, "run_dir", None)
    where = f" (run directory {run_dir})" if run_dir is not None else ""
    console.print(f"interrupted; run the same command again to resume{where}", markup=False, highlight=False)
    return typer.Exit(128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT))


# --- run ---------------------------------------------------------------------------------------------------------


def run_command(options: Any, repeats: int, dry_run: bool, as_json: bool, console: Console, stdout: Console) -> None:
    """`empathybench run`: the run (or its dry run), the summary in the terminal, the demo's lines."""
    import threading

    from empathybench.report.terminal import demo_lines, demo_next_step, print_summary
    from empathybench.run.options import left_out_of_demo
    from empathybench.run.repeats import execute_repeats

    if as_json and not dry_run:
        raise UserError("--json prints the --dry-run estimate; add --dry-run (a run's results are in summary.json)")
    if dry_run:
        from empathybench.run.cost import render_estimate
        from empathybench.run.dry_run import dry_run as estimate_run

        estimate = estimate_run(options, console, repeats)
        if repeats > 1:
            estimate["notes"].append(f"this is one run; --repeats {repeats} runs it {repeats} times (other seeds)")
        emit(estimate, True, stdout) if as_json else render_estimate(stdout, estimate)
        return
    if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
        signal.signal(signal.SIGTERM, raise_terminated)
    try:
        result = execute_repeats(options, repeats, console)
    except KeyboardInterrupt as exc:  # typer would turn it into a silent exit 130
        raise interrupted(exc, console) from None
    print_summary(stdout, result.summary, result.judges)
    stdout.print(Text.assemble("run directory: ", (str(result.directory), "bold")))
    if options.preset == "demo":
        left_out = left_out_of_demo() if not options.benchmarks else []
        for line in demo_lines(result.summary, options.model, left_out):
            stdout.print(Text(line), soft_wrap=True)
        stdout.print(demo_next_step(options.model), markup=False, highlight=False, soft_wrap=True)
    unscored = [] if options.preset == "demo" else nothing_scored(result.summary)
    for line in unscored:
        console.print(line, markup=False, highlight=False, style="red")
    if result.stats.items_failed:
        console.print(
            f"[red]{result.stats.items_failed} items could not be answered; run the same command again to retry them[/]"
        )
        raise typer.Exit(1)
    if unscored:
        raise typer.Exit(1)


def nothing_scored(summary: Mapping[str, Any]) -> list[str]:
    """One line per instrument of a run that could score none of its items, so has no headline (the demo's tiny model
    aside: its unreadable answers are what the demo shows); why is said once, in its summary lines above."""
    return [
        f"{name}: no item could be scored"
        for name, entry in (summary.get("benchmarks") or {}).items()
        if isinstance(entry, Mapping)
        and entry.get("status") != "skipped"
        and entry.get("n_items")
        and entry.get("score") is None
    ]


# --- report ------------------------------------------------------------------------------------------------------


def report_command(
    paths: list[Path],
    out: Path | None,
    settings: Any,
    *,
    dry_run: bool,
    as_json: bool,
    quiet: bool,
    console: Console,
    stdout: Console,
) -> None:
    """`empathybench report`: one run's report again, or a comparison of several (with the judged comparisons of
    `settings`, run/comparisons.JudgeSettings, when --judge is given)."""
    if out is not None:
        check_report_target(out)
        out = report_target(out)
    runs = load_runs(paths, console)
    if settings is not None and len(runs) < 2:
        raise UserError("--judge compares several runs: give at least two run directories")
    if settings is not None and dry_run:
        from empathybench.run.comparisons import estimate_comparisons, render_comparison_estimate

        estimate = estimate_comparisons(runs, settings, target=out or Path("comparison.html"))
        emit(estimate, True, stdout) if as_json else render_comparison_estimate(stdout, estimate)
        return
    if len(runs) == 1:
        _report_one(runs[0], out, stdout)
        return
    _compare(runs, out or Path("comparison.html"), settings, None if quiet else console, stdout)


def _report_one(run: Any, out: Path | None, stdout: Console) -> None:
    from empathybench.atlas.reproduce import report_standing
    from empathybench.judges.known import report_judges
    from empathybench.report.html import write_run_reports

    # A run read from inspect logs gets its report beside the logs, under a name of its own.
    own_name = "report.html" if run.origin is None else f"empathybench-{_slug(run.label)}.html"
    target = out or run.directory / own_name
    with writing(target):
        standing = report_standing(run.summary, run.run_info)
        samples = run.samples()
        judges = report_judges(run.summary, run.run_info, samples)
        write_run_reports(target, run.summary, run.run_info, samples, standing, judges)
    stdout.print(Text.assemble("report: ", (str(target), "bold")))


def _compare(runs: list[Any], target: Path, settings: Any, progress: Console | None, stdout: Console) -> None:
    from empathybench.report.compare import compare_runs, run_sections
    from empathybench.report.html import render_comparison
    from empathybench.report.markdown import render_comparison_markdown
    from empathybench.report.terminal import print_comparison

    comparison = compare_runs(runs)
    written = [target, target.with_suffix(".md"), target.with_suffix(".json")]
    judged: dict[str, Any] = {}
    if settings is not None:
        from empathybench.run.comparisons import judged_comparisons

        judged = judged_comparisons(runs, settings, target=target, console=progress)
        comparison["instrument_comparisons"] = {name: dict(output.result) for name, output in judged.items()}
    sections = {**run_sections(runs), **{name: (output.title, output.section) for name, output in judged.items()}}
    with writing(target):
        html = render_comparison(comparison, [r.summary for r in runs], sections=sections)
        target.write_text(redact(html), encoding="utf-8")
        written[1].write_text(redact(render_comparison_markdown(comparison, sections=sections)), encoding="utf-8")
        written[2].write_text(dumps_redacted(comparison, indent=2) + "\n", "utf-8")
    print_comparison(stdout, comparison, written)
    for output in judged.values():
        for note in output.notes:
            stdout.print(Text(redact(note)), soft_wrap=True)


def load_runs(paths: list[Path], console: Console) -> list[Any]:
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


def report_target(out: Path) -> Path:
    """The .html file of `report --out NAME`: NAME.html (a .html/.md/.json ending is NAME's own), its .md and .json
    beside it; never a file without an extension that a browser shows as source."""
    base = out.with_suffix("") if out.suffix.lower() in REPORT_SUFFIXES else out
    return base.with_name(base.name + ".html")


def check_report_target(out: Path) -> None:
    """`report --out` must name a file in a writable directory; checked before any report is rendered."""
    from empathybench.paths import check_writable_dir

    if out.is_dir():
        raise UserError(f"--out {out} is a directory; give a file name, e.g. {out / 'report.html'}")
    check_writable_dir(out.parent, "the directory of --out")


@contextmanager
def writing(target: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise UserError(f"cannot write {exc.filename or target}: {exc.strerror or exc}") from None


# --- list, data ----------------------------------------------------------------------------------------------------


def list_instruments(stdout: Console) -> None:
    """`empathybench list`: every instrument with its presets and options, refused plugins, the providers."""
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
        line(Text(f"--limit N: at most N {benchmark.limit_unit}"), 2)
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
    line(Text("Model providers (--model / --judge / --simulator):", "bold"))
    for name, text in PROVIDERS.items():
        line(Text.assemble((name, "bold"), f": {text}"), 2)


def data_files(bench: list[str] | None) -> list[Any]:
    """Every pinned file of the named instruments (None: of every installed one, plugins included, and of the judge
    evidence, `empathybench judges`), each once."""
    from empathybench.data.registry import load_pins
    from empathybench.instruments.registry import all_benchmarks, resolve_benchmarks

    instruments = resolve_benchmarks(bench) if bench else list(all_benchmarks().values())
    pins = [entry for instrument in instruments for entry in instrument.data_pins().values()]
    if not bench:
        pins += load_pins("empathybench.judges").values()
    files: dict[tuple[str, str, str], Any] = {}
    for entry in pins:
        files.setdefault((entry.repo, entry.commit, entry.path), entry)
    return list(files.values())


def data_fetch(bench: list[str] | None, allow_unverified: bool, console: Console, stdout: Console) -> None:
    """`empathybench data fetch`: every pinned file into the cache, verified; a run then needs no network."""
    from empathybench.data.fetch import describe_source, fetch_entry
    from empathybench.errors import DataError

    console.print(f"fetching from {describe_source()}", highlight=False, markup=False)
    failures = 0
    entries = data_files(bench)
    for entry in entries:
        try:
            fetched = fetch_entry(entry, allow_unverified=allow_unverified)
        except DataError as exc:
            failures += 1
            console.print(Text.assemble(("✗ ", "red"), str(exc)))
            continue
        mark = ("✓", "green") if fetched.verified else ("!", "yellow")
        stdout.print(Text.assemble(mark, f" {entry.key}"), soft_wrap=True)
    if failures:
        raise UserError(f"{failures} of {len(entries)} data files could not be fetched")


def data_verify(bench: list[str] | None, stdout: Console) -> None:
    """`empathybench data verify`: the cached copies against their pins, without a download."""
    from empathybench.data.fetch import verify_cached

    bad = missing = 0
    for entry in data_files(bench):
        status, detail = verify_cached(entry)
        if status == "ok":
            stdout.print(Text.assemble(("ok", "green"), f"       {entry.key}"), soft_wrap=True)
        elif status == "missing":
            missing += 1
            stdout.print(Text.assemble(("missing", "yellow"), f"  {entry.key}"), soft_wrap=True)
        else:
            bad += 1
            stdout.print(Text.assemble(("mismatch", "red"), f" {entry.key}: {detail}"), soft_wrap=True)
    problems = [f"{bad} do not match their pins"] * bool(bad) + [f"{missing} are missing"] * bool(missing)
    if problems:
        fix = "; run `empathybench data fetch`" if missing else ""
        raise UserError(f"cached data files: {' and '.join(problems)}{fix}")


def data_where(bench: list[str] | None, stdout: Console) -> None:
    """`empathybench data where`: the cache, the source, and each pinned file's URL and place in the cache."""
    from empathybench.data.fetch import cached_path, describe_source, source_url
    from empathybench.paths import cache_dir

    stdout.print(f"cache: {cache_dir()}", highlight=False, markup=False)
    stdout.print(f"source: {describe_source()}", highlight=False, markup=False)
    for entry in data_files(bench):
        where = f"{entry.key}\n  from {source_url(entry)}\n  at   {cached_path(entry)}"
        stdout.print(where, highlight=False, markup=False, soft_wrap=True)


# --- judge validate ------------------------------------------------------------------------------------------------


def judge_validate(
    judge: str,
    calls: JudgeCalls,
    limit: int | None,
    seed: int,
    attempts: int,
    allow_unverified: bool,
    progress: Console | None,
    out: Path | None,
    as_json: bool,
    console: Console,
    stdout: Console,
    bench: str | None = None,
) -> None:
    """`empathybench judge validate [--bench NAME]`: an installed instrument's validation rated by `judge` (its role
    planned as a run plans it, called as `calls` say; `progress`: where the progress is drawn, None for none),
    figures and failures."""
    from empathybench.instruments.support import MAX_ATTEMPTS
    from empathybench.run.judge import installed_judge_validation, validate_judge
    from empathybench.run.options import check_max_concurrency
    from empathybench.run.plan import plan_role

    role = plan_role("judge", judge, list(calls.args or []), base_url=calls.base_url)
    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise UserError(f"--attempts must be between 1 and {MAX_ATTEMPTS}, not {attempts}")
    check_max_concurrency(calls.max_concurrency)
    settings = {
        "limit": limit,
        "seed": seed,
        "max_concurrency": calls.max_concurrency,
        "use_cache": calls.use_cache,
        "allow_unverified": allow_unverified,
        "attempts": attempts,
        "console": progress,
        "request_timeout_s": calls.timeout,
    }
    if out is not None and out.is_dir():
        raise UserError(f"--out {out} is a directory; give a file name, e.g. {out / 'judge-validation.json'}")
    if out is not None:
        from empathybench.paths import check_writable_dir

        check_writable_dir(out.parent, "the directory of --out")  # before the judge is asked anything
    validation = installed_judge_validation(bench)
    report = validate_judge(validation, role, **settings)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps_redacted(report, indent=2) + "\n", encoding="utf-8")
    if as_json:
        emit(report, True, stdout)
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


def judge_compare(
    bench: str | None,
    settings: Any,
    limit: int | None,
    out: Path | None,
    allow_unverified: bool,
    dry_run: bool,
    as_json: bool,
    quiet: bool,
    console: Console,
    stdout: Console,
) -> None:
    """`empathybench judge compare`: an instrument's published judge beside `settings.judge` (run/comparisons
    JudgeSettings), or its dry run; the result also written to the output directory."""
    from empathybench.run.judge_compare import (
        CompareSettings,
        compare_judge,
        default_out,
        estimate_judge_comparison,
        installed_judge_comparison,
        render_estimate,
    )

    name, hook = installed_judge_comparison(bench)
    compare = CompareSettings(name, hook, limit, out or default_out(name, str(settings.judge.spec)), allow_unverified)
    if dry_run:
        estimate = estimate_judge_comparison(compare, settings)
        emit(estimate, True, stdout) if as_json else render_estimate(stdout, estimate)
        return
    try:
        result = compare_judge(compare, settings, console=None if quiet else console)
    except KeyboardInterrupt as exc:  # typer would turn it into a silent exit 130
        raise interrupted(exc, console) from None
    if as_json:
        emit(result, True, stdout)
    else:
        hook.render(result, stdout)
    if result["tasks"]["failed"]:
        console.print(
            Text(
                f"{result['tasks']['failed']} judge tasks failed and are left out (first: {result['failures'][0]}); "
                "run the same command again to retry them",
                "red",
            )
        )
        raise typer.Exit(1)


# --- rescore: every instrument's own command -------------------------------------------------------------------------


class InstrumentRescoreGroup(TyperGroup):
    """`empathybench rescore`: the commands written here, plus every instrument's own `rescore` command.

    The instruments are asked only when the group lists or resolves its commands (never for `empathybench --help`).
    """

    stdout: Console | None = None  # set by cli.py: where the commands print
    console: Console | None = None

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._rescores()})

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        rescore = self._rescores().get(cmd_name)  # only the command asked for is built
        return None if rescore is None else _rescore_command(cmd_name, rescore, self.stdout, self.console)

    @staticmethod
    def _rescores() -> dict[str, Any]:
        from empathybench.instruments.registry import all_benchmarks

        return {name: b.rescore for name, b in all_benchmarks().items() if b.rescore is not None}


def _rescore_command(name: str, rescore: Any, stdout: Any, console: Any) -> Any:
    """A command from an instrument's RescoreCommand: its FILE argument (FILE... with many_files), its boolean flags
    and --json."""
    single = typer.Typer(add_completion=False, rich_markup_mode=None)

    def command(file: Path | list[Path], as_json: bool = False, **flags: bool) -> None:
        from empathybench.instruments.protocol import RescoreOutput

        output = rescore.run(file, **flags)  # a bad file is a UserError: one line, from main()
        result, notes = (output.result, output.notes) if isinstance(output, RescoreOutput) else (output, ())
        if as_json or rescore.render is None:
            emit(result, as_json, stdout)
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
            annotation=Annotated[
                list[Path] if rescore.many_files else Path, typer.Argument(help=rescore.argument_help)
            ],
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


# --- atlas: the published models, recomputed ------------------------------------------------------------------------


def atlas_build(out: Path, bench: list[str] | None, console: Console | None, stdout: Console) -> None:
    """`empathybench atlas build`: every instrument's released outputs scored, written to `out`."""
    from empathybench.atlas.build import build_atlas, write_atlas
    from empathybench.data.fetch import describe_source
    from empathybench.instruments.registry import all_benchmarks, resolve_benchmarks

    instruments = resolve_benchmarks(bench) if bench else list(all_benchmarks().values())
    if console is not None:
        console.print(f"scoring released outputs read from {describe_source()}", highlight=False, markup=False)

    def note(line: str) -> None:
        if console is not None:
            console.print(Text(line, "yellow"))

    with writing(out):
        atlas = build_atlas(instruments, report=note)
        write_atlas(atlas, out)
    from empathybench.atlas.views import build_lines

    for line in build_lines(atlas):
        stdout.print(Text(line), soft_wrap=True)
    stdout.print(Text(f"wrote {out}"), soft_wrap=True)


def atlas_show(
    runs: list[Path],
    bench: list[str] | None,
    as_json: bool,
    html: Path | None,
    atlas_file: Path | None,
    console: Console,
    stdout: Console,
) -> None:
    """`empathybench atlas`: each instrument's leaderboard of published models, the given runs placed among them."""
    from empathybench.atlas.analysis import leaderboards
    from empathybench.atlas.data import load_atlas
    from empathybench.atlas.views import render_leaderboards
    from empathybench.rundir.reader import load_run

    atlas = load_atlas(atlas_file)
    names = [name.strip() for value in bench or [] for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in atlas["instruments"]]
    if unknown:
        raise UserError(f"the atlas has no instrument {unknown[0]!r}; it has {', '.join(atlas['instruments'])}")
    boards = leaderboards(atlas, [load_run(path) for path in runs], names or None)
    if html is not None:
        from empathybench.atlas.site import write_site

        if html.exists() and not html.is_dir():
            raise UserError(f"--html {html} is a file; give a directory")
        with writing(html):
            written = write_site(html, boards, atlas, _site_judge_evidence(console))
        console.print(Text("wrote " + ", ".join(str(path) for path in written)), soft_wrap=True)
    if as_json:
        emit(boards, True, stdout)
    else:
        render_leaderboards(boards, stdout)


def _site_judge_evidence(console: Console) -> list[dict[str, Any]] | None:
    """The judge evidence of the built-in sources for the atlas site's judges page; None, said in one line, when its
    data cannot be fetched or read (the site goes on without it)."""
    from empathybench.judges.known import builtin_evidence

    try:
        return builtin_evidence()
    except UserError as exc:
        console.print(Text(f"the judges page is left out: {exc}", "yellow"), soft_wrap=True)
        return None


def atlas_agreement(
    as_json: bool, csv_out: Path | None, family: bool, atlas_file: Path | None, stdout: Console
) -> None:
    """`empathybench atlas agreement`: Spearman's rho per pair of instruments, and against capability figures."""
    from empathybench.atlas.analysis import agreement, matrix_rows
    from empathybench.atlas.data import load_atlas
    from empathybench.atlas.views import render_agreement

    result = agreement(load_atlas(atlas_file), family=family)
    if csv_out is not None:
        import csv

        with writing(csv_out), csv_out.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows(matrix_rows(result))
    if as_json:
        emit(result, True, stdout)
    else:
        render_agreement(result, stdout)


def atlas_model(name: str, as_json: bool, atlas_file: Path | None, stdout: Console) -> None:
    """`empathybench atlas model NAME`: one checkpoint across instruments (a family: its checkpoints)."""
    from empathybench.atlas.data import load_atlas
    from empathybench.atlas.model import model_view, render_model

    view = model_view(load_atlas(atlas_file), name)
    if as_json:
        emit(view, True, stdout)
    else:
        render_model(view, stdout)


def report_against_published(run_dirs: Sequence[Path], as_json: bool, stdout: Console, *, alone: bool) -> None:
    """`empathybench report RUN --against-published`: the reproduction check of one run against the atlas (`alone`:
    given without --judge, --dry-run and --out, which it does not take)."""
    if len(run_dirs) != 1 or not alone:
        raise UserError("--against-published checks one run directory; give one, without --judge, --dry-run, --out")
    path = run_dirs[0]
    from empathybench.atlas.data import load_atlas
    from empathybench.atlas.reproduce import check_run
    from empathybench.atlas.views import render_reproduction
    from empathybench.rundir.reader import load_run

    check = check_run(load_atlas(), load_run(path))
    if as_json:
        emit(check, True, stdout)
    else:
        render_reproduction(check, stdout)


# --- judges: the evidence on LLM judges ----------------------------------------------------------------------------


def judges_evidence(
    reports: list[Path], as_json: bool, html: Path | None, console: Console, stdout: Console, resamples: int = 2000
) -> None:
    """`empathybench judges`: the judge evidence table, the built-in sources first (MentalAlign-70k, the atlas's
    boards that changed their judge), then the given validation reports and judge comparisons (`resamples`: the
    bootstrap's, for the item-by-item intervals)."""
    from empathybench.judges.boards import BoardJudgeChangeSource
    from empathybench.judges.evidence import EvidenceSource, evidence_table
    from empathybench.judges.mentalalign import MentalAlignSource
    from empathybench.judges.user_files import user_sources
    from empathybench.judges.views import render_evidence, write_html

    if html is not None and html.exists() and not html.is_dir():
        raise UserError(f"--html {html} is a file; give a directory")
    # The user's files are read first: a file that is neither kind is refused before anything is computed.
    yours = user_sources(reports)
    sources: list[EvidenceSource] = [MentalAlignSource(resamples=resamples), BoardJudgeChangeSource(), *yours]
    document = evidence_table(sources)
    if html is not None:
        with writing(html):
            written = write_html(document, html)
        console.print(Text("wrote " + ", ".join(str(path) for path in written)), soft_wrap=True)
    if as_json:
        emit(document, True, stdout)
    else:
        render_evidence(document, stdout)
