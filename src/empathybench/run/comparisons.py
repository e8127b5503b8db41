"""`empathybench report A B C ... --judge SPEC`: the instruments' judged comparisons of several runs.

An instrument offers one as its optional `comparison` hook (instruments/protocol.py RunComparison): the tasks to judge,
how to judge one through an ItemContext, and how to turn the verdicts into its output. This module does what a run
does around that, and names no instrument: the judge's backend, the engine with the response cache, retries and
adaptive concurrency, the progress display, the cost meter (`--judge-price`, `--max-cost`: stop before exceeding it,
exit 3), `--batch` (one round: every task asks at once; a journal beside the output resumes an open batch) and
`--dry-run` (the requests, tokens and cost, from the real task code against canned answers, no model called).

Every verdict is appended to a judgements file beside the output (`<stem>.<instrument>-judgements.jsonl`) as soon as
it is read, keyed by the task key (judge + exact prompt): a comparison with one more run, or the same command after a
budget stop or a kill, asks the judge only about what the file does not hold.
"""

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from empathybench.engine.batch import BatchJournal, BatchRound
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import (
    DEFAULT_REQUEST_TIMEOUT_S,
    BudgetExhaustedError,
    CallFailedError,
    Engine,
    ItemContext,
    RunStats,
)
from empathybench.engine.progress import RunProgress
from empathybench.errors import UserError
from empathybench.formatting import number
from empathybench.instruments.protocol import ComparisonJudging, ComparisonOutput, PreparedComparison, RunComparison
from empathybench.models.prices import price_table
from empathybench.paths import cache_dir
from empathybench.run.cost import CostMeter, DryRunBackend, RoleTally, RunPrices, budget_stop, no_price_line
from empathybench.run.options import check_cost_and_batch
from empathybench.run.plan import RolePlan

JUDGEMENTS_FORMAT = 1


@dataclass(frozen=True)
class JudgeSettings:
    """How `report --judge` asks its judge (the CLI's options): the judge's role (spec, arguments, endpoint, price;
    run/plan.py plan_role) and how its calls are made."""

    judge: RolePlan
    use_cache: bool = True
    max_concurrency: int | None = None
    request_timeout_s: float | None = None
    max_cost: float | None = None  # USD for the judge calls of this command
    batch: bool = False
    batch_poll_interval_s: float = 30.0


def judgements_path(target: Path, instrument: str) -> Path:
    """Where an instrument keeps its judge's verdicts for the comparison written to `target`."""
    return target.with_name(f"{target.stem}.{instrument}-judgements.jsonl")


def batches_path(target: Path) -> Path:
    """The --batch journal of the comparison written to `target` (engine/batch.py BatchJournal)."""
    return target.with_name(f"{target.stem}.batches.jsonl")


def read_judgements(path: Path) -> dict[str, dict[str, Any]]:
    """The stored verdicts by key; a line cut short by a kill or not ours is skipped."""
    stored: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return stored
    try:
        lines = path.read_text("utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise UserError(f"cannot read the judgements file {path}: {exc.strerror or exc}") from None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("key"), str) and entry.get("format") == JUDGEMENTS_FORMAT:
            stored[entry["key"]] = entry
    return stored


def _pending(prepared: PreparedComparison, stored: Mapping[str, Any]) -> list[Any]:
    """The tasks the judgements file does not answer, each key once, in task order."""
    return list({task.key: task for task in prepared.tasks if task.key not in stored}.values())


def _hooks(runs: Sequence[Any]) -> list[tuple[str, RunComparison, list[Any]]]:
    """(instrument name, its comparison hook, the runs that hold it) for each instrument in at least two runs."""
    from empathybench.instruments.registry import all_benchmarks

    if len(runs) < 2:
        raise UserError("--judge compares several runs: give at least two run directories")
    found: list[tuple[str, RunComparison, list[Any]]] = []
    for name, instrument in all_benchmarks().items():
        hook = instrument.comparison
        holding = [run for run in runs if name in run.summary.get("benchmarks", {})]
        if hook is not None and len(holding) >= 2:
            found.append((name, hook, holding))
    if not found:
        offering = [n for n, i in all_benchmarks().items() if i.comparison is not None]
        raise UserError(
            "--judge: no instrument with a judged comparison is in two of these runs"
            + (f" (offered by: {', '.join(offering)})" if offering else "")
        )
    return found


def judge_prices(settings: JudgeSettings) -> RunPrices:
    """The judge's price (the only model here), and whether the batch discount applies."""
    judge = settings.judge
    return RunPrices(
        {"model": judge.spec, "judge": judge.spec}, {"model": judge.price, "judge": judge.price}, settings.batch
    )


def _no_price(settings: JudgeSettings) -> str:
    return no_price_line(settings.judge.role, settings.judge.spec)


def check_settings(settings: JudgeSettings) -> RunPrices:
    """The settings' one-line errors, before any data is read; the prices."""
    prices = judge_prices(settings)
    check_cost_and_batch(settings.max_cost, settings.batch, settings.batch_poll_interval_s, [settings.judge.spec])
    if settings.max_cost is not None and settings.judge.price is None:
        raise UserError(f"--max-cost needs prices: {_no_price(settings)}")
    return prices


def _backend(settings: JudgeSettings, hook: RunComparison) -> Any:
    return settings.judge.backend({hook.tag: hook.canned} if hook.canned is not None else {})


# --- judging -----------------------------------------------------------------------------------------------------


def judge_engine(
    backend: Any, settings: JudgeSettings, cache: ResponseCache | None, stats: RunStats, meter: CostMeter
) -> Engine:
    """The engine a command's judge is asked through: its concurrency, timeout, budget meter and the cache."""
    return Engine(
        backend,
        cache=cache,
        max_concurrency=settings.max_concurrency,
        stats=stats,
        request_timeout_s=settings.request_timeout_s or DEFAULT_REQUEST_TIMEOUT_S,
        label="judge",
        meter=meter,
    )


def judged_comparisons(
    runs: Sequence[Any], settings: JudgeSettings, *, target: Path, console: Console | None = None
) -> dict[str, ComparisonOutput]:
    """Each instrument's comparison output (instrument name -> output), in profile order.

    A budget stop raises BudgetStopError (exit 3) once the judge calls in flight have finished: their verdicts are
    in the judgements file, and the same command with a larger --max-cost asks only for the rest.
    """
    prices = check_settings(settings)
    hooks = _hooks(runs)
    outputs: dict[str, ComparisonOutput] = {}
    spent = 0.0  # by the instruments judged before, within this command's budget
    cache = ResponseCache(cache_dir() / "responses.sqlite") if settings.use_cache else None
    try:
        for name, hook, holding in hooks:
            # The backend first: a missing key or extra is the error to show, before any data is read.
            backend = _backend(settings, hook)
            prepared = hook.prepare(holding, judge=str(settings.judge.spec), judge_identity=backend.identity())
            path = judgements_path(target, name)
            stored = read_judgements(path)
            pending = _pending(prepared, stored)
            stats = RunStats(items_total=len(pending))
            meter = CostMeter(prices, budget_usd=settings.max_cost, spent_before_usd=spent)
            engine = judge_engine(backend, settings, cache, stats, meter)
            batch_round = None
            if settings.batch:  # every call the cache cannot answer goes into one batch (one round)
                batch_round = BatchRound(
                    BatchJournal(batches_path(target)), stats, poll_interval_s=settings.batch_poll_interval_s
                )
                batch_round.attach(engine)
            progress = RunProgress(console or Console(quiet=True), stats, enabled=console is not None)
            with progress:
                progress.set_description(f"{name} comparison")
                new, failures = asyncio.run(
                    judge_pending(prepared.judge, pending, engine, hook.tag, path, progress, batch_round)
                )
            spent = meter.spent_usd
            if meter.stopped:
                raise budget_stop(meter, len(pending) - len(new) - len(failures), path)
            cost = meter.session_record()
            judging = ComparisonJudging(
                verdicts={**stored, **new},
                new_keys=frozenset(new),
                stored_keys=frozenset(stored) & {task.key for task in prepared.tasks},
                failures=tuple(failures),
                usage=stats.as_dict(),
                cost=cost,
                judgements_file=str(path),
            )
            outputs[name] = _with_cost(prepared.finish(judging), cost, settings)
    finally:
        if cache is not None:
            cache.close()
    return outputs


JudgeTask = Callable[[Any, ItemContext], Awaitable[Mapping[str, Any]]]


async def judge_pending(
    judge: JudgeTask,
    pending: Sequence[Any],
    engine: Engine,
    tag: str,
    path: Path,
    progress: RunProgress,
    batch_round: BatchRound | None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Ask the judge about every pending task at once (the engine's limit, or the batch, holds them); each entry is
    appended to the judgements file as soon as it is read. `judge(task, ctx)`: a prepared comparison's (a run
    comparison's or a judge comparison's) judge of one task."""
    new: dict[str, dict[str, Any]] = {}
    failures: list[str] = []
    stats = engine.stats
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sink = path.open("a", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write the judgements file {path}: {exc.strerror or exc}") from None

    async def one(task: Any) -> None:
        ctx = ItemContext(engine, str(task.key)[:16], 0, judge_engine=engine, tag=tag)
        try:
            with batch_round.item(task.key) if batch_round is not None else contextlib.nullcontext():
                entry = dict(await judge(task, ctx))
        except BudgetExhaustedError:
            return  # --max-cost: asked again by the same command with a larger budget
        except CallFailedError as exc:
            failures.append(f"{task.label}: {exc}")
            stats.items_failed += 1
        else:
            entry = {"format": JUDGEMENTS_FORMAT, "key": task.key, **entry}
            sink.write(json.dumps(entry, ensure_ascii=False) + "\n")
            sink.flush()
            new[task.key] = entry
            stats.items_done += 1
        progress.update()

    try:
        with sink:
            await asyncio.gather(*(one(task) for task in pending))
    finally:
        if batch_round is not None:
            await batch_round.aclose()
        await engine.backend.aclose()
    return new, failures


def cost_line(cost: Mapping[str, Any], settings: JudgeSettings) -> str:
    """One line for the page and comparison.md: the judge's calls, tokens and USD in this command."""
    judge = cost.get("judge") or {}
    usd = judge.get("cost_usd")
    money = (
        "cost unknown (" + _no_price(settings) + ")"
        if usd is None
        else f"cost ${number(usd, 4)}" + (" (batch price)" if settings.batch else "")
    )
    return (
        f"Judge calls made now: {judge.get('calls', 0):,}, {judge.get('input_tokens', 0):,} input and "
        f"{judge.get('output_tokens', 0):,} output tokens, {money}."
    )


def _with_cost(output: ComparisonOutput, cost: Mapping[str, Any], settings: JudgeSettings) -> ComparisonOutput:
    """The output with the judge's tokens and cost in its result (comparison.json) and a line in its section."""
    line = cost_line(cost, settings)
    note = f"{output.section.note} {line}" if output.section.note else line
    return replace(
        output,
        result={**output.result, "cost": dict(cost)},
        section=replace(output.section, note=note),
        notes=(*output.notes, "  " + line),
    )


# --- dry run -----------------------------------------------------------------------------------------------------


def _dry_identity(settings: JudgeSettings, hook: RunComparison) -> tuple[dict[str, Any], bool]:
    """The judge's identity as the real command would see it (task keys depend on it), without calling it, and
    whether it is exact; without its API key (a dry run needs none): the spec's provider, model and base URL."""
    try:
        return _backend(settings, hook).identity(), True
    except UserError:
        return settings.judge.dry_identity(), False


def estimate_comparisons(runs: Sequence[Any], settings: JudgeSettings, *, target: Path) -> dict[str, Any]:
    """What `report --judge` would ask, in requests, tokens and USD, without calling any model (JSON-able).

    Every pending task runs through the instrument's real judge code against canned answers (DryRunBackend); tasks
    already in the judgements file are not counted, as the real command does not ask them.
    """
    from empathybench.instruments.registry import all_benchmarks

    prices = check_settings(settings)
    instruments = all_benchmarks()
    entries: list[dict[str, Any]] = []
    total = RoleTally()
    exact = True
    for name, hook, holding in _hooks(runs):
        identity, exact_identity = _dry_identity(settings, hook)
        exact = exact and exact_identity
        prepared = hook.prepare(holding, judge=str(settings.judge.spec), judge_identity=identity)
        stored = read_judgements(judgements_path(target, name))
        pending = _pending(prepared, stored)
        backend = DryRunBackend(
            identity,
            {hook.tag: hook.canned} if hook.canned is not None else {},
            {hook.tag: instruments[name].expected_output_tokens},
        )
        engine = Engine(backend, cache=None, max_concurrency=64, stats=RunStats(), label="judge")
        tally = RoleTally()
        asyncio.run(dry_judge_pending(prepared.judge, pending, engine, hook.tag, tally))
        total.merge(tally)
        unique = len({task.key for task in prepared.tasks})
        entries.append(
            {
                "name": name,
                "tasks": unique,
                "from_judgements_file": unique - len(pending),
                "judge": tally.as_dict(settings.judge.price, prices.batch),
            }
        )
    table = price_table()
    judge_price = settings.judge.price
    return {
        "judge": str(settings.judge.spec),
        "batch": prices.batch,
        "comparisons": entries,
        "total": {"judge": total.as_dict(judge_price, prices.batch)},
        "prices": {
            "judge": judge_price.as_dict() if judge_price else None,
            "table_as_of": table.as_of,
            **({"batch_factor": table.batch_factor} if prices.batch else {}),
        },
        "notes": [
            *([_no_price(settings)] if judge_price is None else []),
            *judge_estimate_notes(exact=exact),
        ],
    }


def judge_estimate_notes(*, exact: bool, max_tokens_aside: str = "") -> list[str]:
    """The notes under a dry run's estimate of judge calls: verdicts that may be counted again (not `exact`: the
    judge's backend could not be made to name the cached ones), then how the tokens are estimated, `max_tokens_aside`
    said after the requests' max tokens."""
    return [
        *(
            []
            if exact
            else [
                "the judge's backend could not be made (its API key is not set?): verdicts already in the "
                "judgements file may be counted again"
            ]
        ),
        "tokens are estimated (characters/4, 1 per CJK character, +3 per message); output 'exp' is the length of "
        f"scripted verdicts, 'max' the requests' max tokens{max_tokens_aside}; tasks in the judgements file are not "
        "asked again",
    ]


async def dry_judge_pending(
    judge: JudgeTask, pending: Sequence[Any], engine: Engine, tag: str, tally: RoleTally
) -> None:
    """Every pending task through `judge` against the dry-run backend's canned answers; their calls in `tally`."""

    async def one(task: Any) -> None:
        ctx = ItemContext(engine, str(task.key)[:16], 0, judge_engine=engine, tag=tag)
        with contextlib.suppress(Exception):  # canned answers a task cannot take: its calls so far still count
            await judge(task, ctx)
        for call in ctx.calls:
            tally.add(call)

    await asyncio.gather(*(one(task) for task in pending))


def render_comparison_estimate(console: Console, estimate: Mapping[str, Any]) -> None:
    """The dry run as a table on `console` (every value printed literally)."""
    from empathybench.formatting import usd

    batch = " (batch price)" if estimate.get("batch") else ""
    title = f"dry run: judged comparisons by {estimate['judge']}{batch}; no model was called"
    table = Table(title=Text(title), title_justify="left")
    table.add_column("instrument")
    for header in ("in judgements file", "requests", "input tokens", "output tokens exp / max", "cost exp / max"):
        table.add_column(header, justify="right")
    rows = [*estimate["comparisons"], {"name": "total", "from_judgements_file": None, **estimate["total"]}]
    for entry in rows:
        judge = entry["judge"]
        known = entry["from_judgements_file"]
        table.add_row(
            Text(str(entry["name"])),
            "" if known is None else f"{known:,}",
            f"{judge['requests']:,}" + (f" (+{judge['reasks']:,} re-asks)" if judge["reasks"] else ""),
            f"{judge['input_tokens']:,}",
            f"{judge['output_tokens']:,} / {judge['output_tokens_max']:,}",
            f"{usd(judge['cost_usd'])} / {usd(judge['cost_usd_max'])}",
        )
    console.print(table)
    render_judge_price_and_notes(console, estimate)


def render_judge_price_and_notes(console: Console, estimate: Mapping[str, Any]) -> None:
    """The lines under a judge estimate's table: the judge's price where known, then the estimate's notes."""
    price = estimate["prices"].get("judge")
    if isinstance(price, Mapping):
        console.print(
            Text(
                f"judge price: ${price['input_per_mtok']:g} in / ${price['output_per_mtok']:g} out per million tokens "
                f"({price['source']})"
            )
        )
    for note in estimate["notes"]:
        console.print(Text(note))
